"""One number everywhere for a late student, and the LMS gate on every LMS write (issue 26, part 6).

feedback.html shows a late student the penalty and the grade the LMS files give (it showed
100/100 for a student whose canvas.csv grade was 80), in English and Chinese; Moodle's feedback
column, summary.md's top and its Roster and Late sections show points as every report does (two
decimals) and follow summary.md's language; `kata gradebook OUT --assignment ID` writes its LMS
files through the same gate and exit status 5 as `kata gradebook OUT`.

The inputs are shaped as the platforms write them: the roster is Canvas's gradebook export
(Grades → Export, canvas-lms lib/gradebook_exporter.rb; tests/test_roster_exports.py's CANVAS,
keyed on SIS Login ID), the submission times the documented timestamp file (`student,submitted_at`
in ISO 8601 with its offset, grader/instructor/formats/late.py); OUT is what `kata grade DIR
--out OUT` stores (batch.json, students/<name>/report.json), so no grading is needed.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata

from grader.course import manifest
from grader.instructor.batch import gradebook, store
from grader.instructor.formats import lms, roster
from tests.conftest import ROOT, kata
from tests.test_roster_exports import CANVAS, NFC_JOSE

COURSE = manifest.load(ROOT)
WEEK1 = COURSE.assignments[0]
DUE = "2027-03-14T23:59:00+08:00"
POLICY = {"assignment": "week1", "due": DUE, "per_day": 10.0, "max_days": 7.0, "grace_minutes": 0.0}
# alice 1 day late, José on time, mhatter 9 days late (more than 7: 0)
TIMES = (
    f"student,submitted_at\nalice,2027-03-15T10:00:00+08:00\n{NFC_JOSE},2027-03-14T20:00:00+08:00\n"
    "mhatter,2027-03-23T12:00:00+08:00\n"
)


def record(name: str, got: float, full: float = 46.0) -> dict:
    """A graded report of one exercise worth `full` raw points, `got` of them scored."""
    return {
        "schema": 1,
        "score": got,
        "max_score": full,
        "submission": name,
        "sandbox": "bubblewrap",
        "lang": "en",
        "exercises": [{"id": WEEK1.exercises[0], "section": "1.1", "title": "x", "score": got, "max_score": full}],
        "checks": [],
        "student": {"status": "graded", "reason": "", "source": name, "name": name},
    }


def stored_run(tmp_path, scores: dict[str, float], **meta):
    out = tmp_path / "out"
    for name, got in scores.items():
        store.write_json(store.record_path(out, name), record(name, got))
    store.write_json(
        out / store.META,
        {"kind": "kata-batch", "format": 1, "title": "kata", "exercises": list(WEEK1.exercises), **meta},
    )
    (tmp_path / "Grades-KATA101.csv").write_text(CANVAS, encoding="utf-8")
    (tmp_path / "times.csv").write_text(TIMES, encoding="utf-8")
    return out


def page(out, name: str) -> str:
    return (out / "students" / name / "feedback.html").read_text(encoding="utf-8")


def canvas(out) -> dict[str, str]:
    rows = list(csv.reader(io.StringIO((out / "canvas.csv").read_text(encoding="utf-8"))))
    return {unicodedata.normalize("NFC", r[3]): r[-1] for r in rows[2:]}


def test_feedback_html_shows_a_late_student_the_penalty_and_the_grade_the_lms_gets(tmp_path, monkeypatch):
    out = stored_run(tmp_path, {"alice": 31.0, NFC_JOSE: 46.0, "mhatter": 46.0}, late=POLICY)
    done = kata(
        "gradebook",
        str(out),
        "--roster",
        str(tmp_path / "Grades-KATA101.csv"),
        "--submitted-at",
        str(tmp_path / "times.csv"),
        "--lms-assignment",
        "Attention (48213)",
    )
    assert done.returncode == 0, done.stdout + done.stderr
    alice, jose, hatter = page(out, "alice"), page(out, NFC_JOSE), page(out, "mhatter")
    assert canvas(out) == {"alice": "27.9", NFC_JOSE: "46", "mhatter": "0"}  # 31 less 10%; 9 days late: 0
    assert "<b>31 / 46</b>" in alice  # the report as graded, then the late policy and the LMS's number
    assert (
        "Submitted 2027-03-15 10:00 UTC+08:00, due 2027-03-14 23:59 UTC+08:00: 1 day(s) late, the late "
        "policy takes 10% off." in alice
    )
    assert re.search(
        r'id="final">Grade in the course&#x27;s gradebook, after the late penalty: '
        r"<b>27.9 / 46</b> \(61%\)",
        alice,
    )
    assert "— 27.9/46</title>" in alice
    assert 'id="late"' not in jose and 'id="final"' not in jose and "— 46/46</title>" in jose  # on time
    assert "9 day(s) late, more than the 7 the late policy accepts: the grade is 0." in hatter
    assert re.search(r'id="final">[^<]*<b>0 / 46</b>', hatter)
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert "- alice: 1 day(s) late: -10% (submitted 2027-03-15T02:00:00+00:00)" in summary
    assert "- mhatter: 9 day(s) late, more than 7: 0 (submitted 2027-03-23T04:00:00+00:00)" in summary

    # the same run in Chinese: the page, Moodle's feedback column and every section of summary.md
    monkeypatch.setenv("KATA_LANG", "zh")
    gradebook.regenerate(out)
    alice, summary = page(out, "alice"), (out / "summary.md").read_text(encoding="utf-8")
    assert (
        "提交于 2027-03-15 10:00 UTC+08:00，截止时间 2027-03-14 23:59 UTC+08:00：迟交 1 天，按迟交规定扣除 10%。"
        in alice
    )
    assert "扣除迟交分数后，记入课程成绩册的成绩: <b>27.9 / 46</b>" in alice
    assert "## 名单" in summary and "## 迟交" in summary and "## Roster" not in summary and "## Late" not in summary
    assert "名单上 3 名学生已提交，0 名未提交；0 份提交不在名单上。" in summary
    assert "- alice：迟交 1 天，扣 10%（提交于 2027-03-15T02:00:00+00:00）" in summary
    assert "- mhatter：迟交 9 天，超过 7 天，记 0 分" in summary
    assert "迟交 2 份，0 份没有可用的提交时间" in summary and "提交平台导出的时间戳文件" in summary
    assert not re.search(r"enrolled|did not|late, |Due |times from", summary)
    moodle = list(csv.reader(io.StringIO((out / "moodle.csv").read_text(encoding="utf-8"))))
    assert moodle[1][1] == "alice" and moodle[1][-1] == "迟交 1 天：扣 10%"


def test_a_fractional_penalty_is_shown_to_two_decimals_as_everywhere():
    """A late policy of 100/46 percent a day (one check's share): Moodle's feedback column and
    summary.md's top show -2.17%, not -2.17391%."""
    policy = {**POLICY, "per_day": 100 / 46}
    r = roster.parse("login,name\nann,Ann\n")
    doc = record("ann", 46.0)
    doc["student"]["mtime"] = "2027-03-15T10:00:00+08:00"
    rows = lms.rows(
        {"ann": doc},
        {"late": policy, "submitted_at": "mtime"},
        r,
        now=__import__("datetime").datetime(2027, 4, 1, tzinfo=__import__("datetime").timezone.utc),
    )
    assert lms.feedback(rows[0]) == "1 day(s) late: -2.17%"
    top = "\n".join(lms.overview(rows, {"late": policy}, lms.Lms(r)))
    assert "ann (-2.17%)" in top and "2.1739" not in top
    assert "-2.17%" in lms.summary_lines(rows, {"late": policy, "submitted_at": "mtime"})


def test_kata_gradebook_for_an_assignment_gates_its_lms_files_as_kata_gradebook_does(tmp_path):
    out = stored_run(tmp_path, {"alice": 31.0, NFC_JOSE: 46.0, "mhatter": 40.0})
    # the whole run: every submission on the Canvas export's lines, but times and no due date: exit 5 (issue 34)
    whole = kata(
        "gradebook",
        str(out),
        "--roster",
        str(tmp_path / "Grades-KATA101.csv"),
        "--submitted-at",
        str(tmp_path / "times.csv"),
        "--lms-assignment",
        "Attention (48213)",
    )
    assert whole.returncode == 5 and "but no due date" in whole.stdout, whole.stdout + whole.stderr
    safe = kata("gradebook", str(out), "--assignment", "week1", "--due", DUE, "--lms-assignment", "Week 1 (48190)")
    assert safe.returncode == 0, safe.stdout + safe.stderr
    sub = out / "assignments" / "week1"
    assert "What the LMS files hold" in safe.stdout
    assert "late penalties applied to 2: alice (-10%), mhatter (-100%)" in safe.stdout
    # 31 of 46 raw points are 67.39 of the assignment's 100; less 10%: 60.65, on the page and in canvas.csv
    assert canvas(sub) == {"alice": "60.65", NFC_JOSE: "100", "mhatter": "0"}
    assert "<b>67.39 / 100</b>" in page(sub, "alice") and "<b>60.65 / 100</b>" in page(sub, "alice")
    # one more folder on no line of the export: the assignment's LMS files are written, exit 5, and why
    store.write_json(store.record_path(out, "zed"), record("zed", 46.0))
    check = kata("gradebook", str(out), "--assignment", "week1", "--due", DUE, "--lms-assignment", "Week 1 (48190)")
    assert check.returncode == 5, check.stdout + check.stderr
    assert "Check before importing" in check.stdout and "'zed'" in check.stdout
    text = (sub / "summary.md").read_text(encoding="utf-8")
    assert text.index("## Check before importing") < text.index("## Roster")
    assert "zed" not in canvas(sub)  # an off-roster submission never reaches the LMS files
    whole = kata("gradebook", str(out))
    assert whole.returncode == 5 and "'zed'" in whole.stdout  # as OUT's own
