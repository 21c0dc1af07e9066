"""Rosters as the platforms export them, names in any Unicode form, and the LMS gate (issue 26).

The files are shaped as the platforms write them:
- Canvas: Grades → Export, as canvas-lms's lib/gradebook_exporter.rb writes it: header `Student, ID,
  SIS User ID, SIS Login ID, [Integration ID,] Section, <custom columns>, <Title (id)>..., <totals>`,
  a "Manual Posting" row with empty name cells when an assignment posts manually, then the
  `    Points Possible` row (four leading spaces), students by sortable name ("Last, First"), the
  test student "Student, Test" last, with no SIS data.
- Moodle: Grades → Export → Plain text file, as grade/export/txt/grade_export_txt.php writes it
  with the default grade_export_userprofilefields (firstname, lastname, idnumber, institution,
  department, email → `First name, Last name, ID number, Institution, Department, Email address`),
  grade items `Assignment: <name> (Real)`, `Course total (Real)`, `Last downloaded from this course`;
  and the participants page's "Download table data as CSV" (user/action_redir.php:
  `First name, Last name` and the identity fields, by default `Email address`).
Names come in NFC (typed on Linux) and NFD (macOS folder names, many exports).
"""

from __future__ import annotations

import csv
import io
import unicodedata

from grader.course.messages import t
from grader.instructor.batch import store
from grader.instructor.formats import late, lms, roster
from tests.conftest import kata

POLICY = {
    "assignment": "week2",
    "due": "2026-06-01T00:00:00+00:00",
    "per_day": 10.0,
    "max_days": 7.0,
    "grace_minutes": 0.0,
}
NFC_JOSE = unicodedata.normalize("NFC", "josé_garcía")
NFD_JOSE = unicodedata.normalize("NFD", "josé_garcía")

CANVAS = (
    "Student,ID,SIS User ID,SIS Login ID,Integration ID,Section,Notes,Attention (48213),Week 1 (48190),"
    "Current Score,Unposted Current Score,Final Score,Unposted Final Score\n"
    ",,,,,,,Manual Posting,,,,,\n"
    "    Points Possible,,,,,,(read only),100.00,50.00,(read only),(read only),(read only),(read only)\n"
    '"Liddell, Alice",101,S1001,alice,,Section A,,,45.00,90.00,90.00,30.00,30.00\n'
    f'"García, José",102,S1002,{NFD_JOSE},,Section A,,,40.00,80.00,80.00,26.67,26.67\n'
    '"Hatter, Mad",103,S1003,mhatter,,Section B,,N/A,,,,,\n'
    '"Student, Test",9999,,,,Section A,,,,,,,\n'
)
MOODLE_GRADES = (
    "First name,Last name,ID number,Institution,Department,Email address,Assignment: Attention (Real),"
    "Course total (Real),Last downloaded from this course\n"
    "Alice,Liddell,S1001,Wonderland U,CS,alice@uni.example,-,-,1717200000\n"
    f"{unicodedata.normalize('NFD', 'José')},{unicodedata.normalize('NFD', 'García')},S1002,Wonderland U,CS,"
    "jose@uni.example,-,-,1717200000\n"
)


def doc(score: float, source: str, **student) -> dict:
    return {
        "score": score,
        "max_score": 100.0,
        "exercises": [],
        "checks": [],
        "student": {"status": "graded", "reason": "", "source": source, **student},
    }


def table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_a_canvas_gradebook_export_is_read_as_canvas_writes_it():
    r = roster.parse(CANVAS, "Grades-KATA101.csv")
    assert (r.shape, r.key) == ("canvas", "SIS Login ID")
    assert [(s.login, s.canvas_id, s.id, s.name, s.section) for s in r.students] == [
        ("alice", "101", "S1001", "Liddell, Alice", "Section A"),
        (NFC_JOSE, "102", "S1002", "García, José", "Section A"),  # NFD in the file, NFC here
        ("mhatter", "103", "S1003", "Hatter, Mad", "Section B"),
    ]  # no Points Possible, manual posting or test student
    assert r.assignments == ["Attention (48213)", "Week 1 (48190)"]
    records = {"alice": doc(90.0, "alice"), NFC_JOSE: doc(70.0, NFC_JOSE)}
    rows = lms.rows(records, {}, r)
    out = table(lms.canvas_csv(rows, "Attention (48213)", 100))
    assert out[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "Attention (48213)"]
    assert [row[0].strip() for row in out].count("Points Possible") == 1
    assert out[2:] == [
        ["Liddell, Alice", "101", "S1001", "alice", "Section A", "90"],
        ["García, José", "102", "S1002", NFC_JOSE, "Section A", "70"],
        ["Hatter, Mad", "103", "S1003", "mhatter", "Section B", "0"],
    ]


def test_a_canvas_export_with_first_and_last_names_and_semicolons_is_read_too():
    """Canvas's "show first and last name" setting and a locale whose CSV uses `;` (CSVWithI18n)."""
    text = (
        "LastName;FirstName;ID;SIS User ID;SIS Login ID;Section;Attention (48213)\n"
        "    Points Possible;;;;;;100,00\nLiddell;Alice;101;S1001;alice;A;\n"
    )
    r = roster.parse(text)
    assert r.shape == "canvas" and [(s.login, s.name, s.canvas_id) for s in r.students] == [
        ("alice", "Liddell, Alice", "101")
    ]


def test_moodle_exports_are_read_keyed_on_what_they_hold():
    grades = roster.parse(MOODLE_GRADES, "KATA101 Grades.csv")
    assert (grades.shape, grades.key) == ("moodle", "ID number")  # no username column: the ID number
    assert [(s.login, s.name, s.email) for s in grades.students] == [
        ("S1001", "Alice Liddell", "alice@uni.example"),
        ("S1002", "José García", "jose@uni.example"),
    ]
    rows = lms.rows({"S1001": doc(90.0, "S1001")}, {}, grades)
    moodle = table(lms.moodle_csv(rows, "Attention"))
    # the Username column holds a Moodle username or nothing: never the ID number it was keyed on
    assert moodle[1][:5] == ["alice@uni.example", "", "S1001", "Alice Liddell", "90"]
    participants = roster.parse("\ufeffFirst name,Last name,Email address\nAlice,Liddell,alice@uni.example\n")
    assert (participants.shape, participants.key, participants.students[0].login) == (
        "moodle",
        "Email address (before @)",
        "alice",
    )
    with_username = roster.parse(
        "First name,Last name,Username,ID number,Email address\nAlice,Liddell,aliddell,S1001,alice@uni.example\n"
    )
    assert with_username.key == "Username" and with_username.students[0].login == "aliddell"
    assert (
        table(lms.moodle_csv(lms.rows({"aliddell": doc(1.0, "aliddell")}, {}, with_username), "A"))[1][1] == "aliddell"
    )


def test_a_name_in_nfd_matches_its_nfc_folder_everywhere():
    """The roster and the platform's timestamps in NFD, the folder in NFC (or the other way)."""
    r = roster.parse(f"login,name\n{NFD_JOSE},José\n")
    records = {NFC_JOSE: doc(100.0, NFC_JOSE), "ann": doc(50.0, "ann")}
    rows = lms.rows(
        records,
        {"late": POLICY, "submitted_at": "file"},
        r,
        {unicodedata.normalize("NFD", NFC_JOSE): "2026-06-01T12:00:00+00:00"},
    )
    jose = next(x for x in rows if x.source == NFC_JOSE)
    assert jose.on_roster and jose.status == "graded" and jose.late.days == 1 and jose.final == 90.0
    assert not any(x.status == "missing" for x in rows)
    assert r.get(NFC_JOSE) is not None  # and the roster's own look-up
    # the other way round: NFD folder, NFC files
    rows = lms.rows(
        {NFD_JOSE: doc(100.0, NFD_JOSE)},
        {"late": POLICY, "submitted_at": "file"},
        roster.parse(f"login\n{NFC_JOSE}\n"),
        {NFC_JOSE: "2026-05-30T00:00:00+00:00"},
    )
    assert [(x.status, x.on_roster, x.no_time) for x in rows] == [("graded", True, "")]


def test_a_timestamp_file_in_nfd_is_one_student_and_look_alikes_show_their_code_points(tmp_path):
    f = tmp_path / "times.csv"
    f.write_text(
        f"student,submitted_at\n{NFD_JOSE},2026-05-30T00:00:00Z\n{NFC_JOSE},2026-05-31T00:00:00Z\n", encoding="utf-8"
    )
    assert late.read_times(f) == {NFC_JOSE: "2026-05-31T00:00:00+00:00"}  # one student, the latest time
    cyrillic = "jos\u0435"  # Cyrillic е, not Latin e
    rows = lms.rows(
        {"jose": doc(100.0, "jose")},
        {"late": POLICY, "submitted_at": "file"},
        None,
        {cyrillic: "2026-05-30T00:00:00+00:00"},
    )
    why = rows[0].no_time
    assert "'jose'" in why and "'jos\u0435'" in why
    assert "U+0065 LATIN SMALL LETTER E" in why and "U+0435 CYRILLIC SMALL LETTER IE" in why


def test_the_top_of_summary_md_says_what_the_lms_gets_and_whether_it_is_safe(monkeypatch):
    r = roster.parse(CANVAS, "Grades-KATA101.csv")
    meta = {"late": POLICY, "submitted_at": "file"}
    times = {"alice": "2026-06-01T12:00:00+00:00", NFD_JOSE: "2026-05-30T00:00:00+00:00"}
    records = {"alice": doc(90.0, "alice"), NFC_JOSE: doc(70.0, NFC_JOSE)}
    info = lms.Lms(r, "Attention (48213)")
    rows = lms.rows(records, meta, r, times)
    assert lms.gate(rows, meta, info) == []  # safe: everyone matched, every time usable
    top = "\n".join(lms.attention_lines(rows, meta, info))
    assert "## What the LMS files hold" in top and "Check before importing" not in top
    assert "a Canvas gradebook export, keyed on SIS Login ID; 2 of 2 submissions matched" in top
    assert "1 enrolled without a submission, 0 in the LMS files: mhatter" in top
    assert "late penalties applied to 1: alice (-10%)" in top
    # an off-roster submission and a column Canvas does not have: not safe, and why
    records["a1ice"] = doc(100.0, "a1ice")
    rows = lms.rows(records, meta, r, times)
    bad = lms.Lms(r, "kata week2")
    problems = "\n".join(lms.gate(rows, meta, bad))
    assert "on no roster line" in problems and "'a1ice'" in problems and "closest roster login alice" in problems
    assert "U+0031 DIGIT ONE vs U+006C LATIN SMALL LETTER L" in problems
    assert "kata week2 is no assignment of the Canvas export" in problems and "Attention (48213)" in problems
    monkeypatch.setenv("KATA_LANG", "zh")
    top = "\n".join(lms.attention_lines(rows, meta, bad))
    assert "## 导入前请检查" in top and "不在名单上的提交" in top and "已扣除迟交分数 1 人" in top
    assert t("gate_intro_check", "en", code=lms.EXIT_CHECK).endswith(
        "(kata exits with status 5 until nothing is left here)."
    )


def test_moodle_feedback_carries_no_instructor_diagnostics():
    r = roster.parse("login,name\nann,Ann\nbea,Bea\ncid,Cid\n")
    records = {
        "ann": doc(90.0, "ann", mtime="2026-06-01T12:00:00+00:00"),
        "bea": {**doc(80.0, "bea"), "manifest": {"changed": ["ch01/s1_11_softmax.py"]}},
    }
    rows = lms.rows(records, {"late": POLICY, "submitted_at": "mtime"}, r)
    feedback = {row[1]: row[5] for row in table(lms.moodle_csv(rows, "A"))[1:]}
    assert feedback == {"ann": "1 day(s) late: -10%", "bea": "", "cid": "no submission"}


def stored_run(out, names: list[str]) -> None:
    """OUT as `kata grade DIR --out OUT` leaves it, for `kata gradebook OUT` (no grading needed)."""
    for name in names:
        store.write_json(store.record_path(out, name), doc(100.0, name))
    store.write_json(out / store.META, {"kind": "kata-batch", "format": 1, "exercises": [], "title": "kata"})


def test_kata_gradebook_with_a_canvas_export_exits_by_whether_the_lms_files_are_safe(tmp_path):
    out, export = tmp_path / "out", tmp_path / "Grades-KATA101.csv"
    export.write_text(CANVAS, encoding="utf-8")
    stored_run(out, ["alice", NFC_JOSE, "mhatter"])
    ok = kata("gradebook", str(out), "--roster", str(export), "--lms-assignment", "Attention (48213)")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "a Canvas gradebook export, keyed on SIS Login ID; 3 of 3 submissions matched" in ok.stdout
    canvas = table((out / "canvas.csv").read_text())
    assert canvas[0][-1] == "Attention (48213)" and canvas[2][:4] == ["Liddell, Alice", "101", "S1001", "alice"]
    assert "What the LMS files hold" in (out / "summary.md").read_text()
    # one more folder that is on no line of the export: written, but exit 5 and said on the console
    stored_run(out, ["alice", NFC_JOSE, "mhatter", "zed"])
    check = kata("gradebook", str(out))
    assert check.returncode == 5 and "Check before importing" in check.stdout and "'zed'" in check.stdout
    assert (out / "summary.md").read_text().index("## Check before importing") < (out / "summary.md").read_text().index(
        "## Roster"
    )


def test_a_roster_that_is_not_this_class_s_stops_grading_and_names_the_closest(tmp_path):
    cls = tmp_path / "class"
    for name in ("Alice Liddell", "José García", "Mad Hatter"):  # folders by display name, not login
        (cls / name / "ch01").mkdir(parents=True)
        (cls / name / "ch01" / "s1_11_matmul.py").write_text("x = 1\n")
    export = tmp_path / "Grades-KATA101.csv"
    export.write_text(CANVAS, encoding="utf-8")
    out = tmp_path / "out"
    proc = kata("grade", str(cls), "--out", str(out), "-e", "s1_11_matmul", "--roster", str(export), timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert (
        "Grades-KATA101.csv (a Canvas gradebook export, keyed on SIS Login ID) matches 1 of 3" in proc.stderr
    )  # José, loosely
    assert "'Alice Liddell' → 'alice'" in proc.stderr and "--force" in proc.stderr
    assert not (out / "students").exists()  # nothing graded
    stored_run(out, ["Alice Liddell", "Mad Hatter"])
    again = kata("gradebook", str(out), "--roster", str(export))
    assert again.returncode == 2 and "matches 0 of 2" in again.stderr and not (out / "roster.csv").exists()
