"""The term's roster, due dates and LMS files under the outside attack of round 15 (F1-F4, F6-F8):
a look-alike folder or a generated name never takes a student's roster line or platform time, a
submission without a usable time is said loudly, student-set times are called what they are, a
`;` never splits a cell into a formula, a URL never becomes a link, and one student's manifest
time never stops the class's files."""

from __future__ import annotations

import csv
import io
import re
import shutil
from datetime import datetime, timezone

import pytest

from grader.course.messages import t
from grader.instructor.batch import gradebook, store
from grader.instructor.formats import csvbook, late, lms, roster, summary
from tests.conftest import EXERCISES, SOLUTIONS, kata

MATMUL = "s1_11_matmul"  # one public and two hidden checks, graded in seconds
POLICY = {
    "assignment": "week2",
    "due": "2026-06-01T00:00:00+00:00",
    "per_day": 10.0,
    "max_days": 7.0,
    "grace_minutes": 0.0,
}
FORMULA = ("=", "+", "-", "@")


def doc(score: float, source: str, **student) -> dict:
    return {
        "score": score,
        "max_score": 100.0,
        "exercises": [],
        "checks": [],
        "student": {"status": "graded", "reason": "", "source": source, **student},
    }


def book(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def test_f1_a_look_alike_folder_never_takes_a_roster_line_or_its_platform_time(tmp_path):
    """`alice/` holds the stub; ` alice/` and `ALICE/` a full answer, and sort first. Neither of
    `CAROL/` and ` carol/` is carol's exactly: her line goes to none of them."""
    cls = tmp_path / "class"
    for name, src in (
        ("alice", EXERCISES),
        (" alice", SOLUTIONS),
        ("ALICE", SOLUTIONS),
        ("CAROL", SOLUTIONS),
        (" carol", SOLUTIONS),
    ):
        (cls / name / "ch01").mkdir(parents=True)
        shutil.copy(src / "ch01" / f"{MATMUL}.py", cls / name / "ch01")
    (tmp_path / "roster.csv").write_text("login,canvas_id,id,name\nalice,101,S1,Alice\ncarol,103,S3,Carol\n")
    (tmp_path / "times.csv").write_text(
        "student,submitted_at\nalice,2026-05-30T00:00:00Z\ncarol,2026-05-30T00:00:00Z\n"
    )
    out = tmp_path / "out"
    proc = kata(
        "grade",
        str(cls),
        "--out",
        str(out),
        "-a",
        "week2",
        "-e",
        MATMUL,
        "-j",
        "2",
        "--force",
        "--due",
        "2026-06-01T00:00:00Z",
        "--roster",
        str(tmp_path / "roster.csv"),
        "--submitted-at",
        str(tmp_path / "times.csv"),
        timeout=300,
    )
    assert proc.returncode == 5, proc.stdout + proc.stderr  # graded (--force: 1 of 5 on the roster); check first
    rows = book((out / "gradebook.csv").read_text())
    by_source = {r["source"]: r for r in rows if r["source"]}
    alice = next(r for r in rows if r["id"] == "S1")
    assert (alice["source"], alice["total"], alice["status"]) == ("alice", "0", "graded")  # her own stub
    assert alice["submitted_at"] == "2026-05-30T00:00:00+00:00" and alice["reason"] == ""
    for look in (" alice", "ALICE"):
        assert by_source[look]["id"] == "" and "looks like roster login alice" in by_source[look]["reason"]
        assert "no submission time: late policy not applied" in by_source[look]["reason"]  # nor her time
    carol = next(r for r in rows if r["id"] == "S3")
    assert (carol["status"], carol["final"], carol["source"]) == ("contested", "0", "")
    assert carol["reason"].startswith("2 submissions claim this roster line (") and "' carol'" in carol["reason"]
    for claimant in (" carol", "CAROL"):
        assert "claims roster login carol" in by_source[claimant]["reason"]
        assert "the row carol is claimed by" in by_source[claimant]["reason"]
    canvas = {r[2]: r for r in csv.reader(io.StringIO((out / "canvas.csv").read_text()))}
    assert canvas["S1"][-1] == "0" and canvas["S3"][-1] == "0"  # no one's 100 in their LMS rows
    md = (out / "summary.md").read_text()
    top = md[: md.index("Scores of the graded")]
    assert "## Check before importing" in top and "- carol: 'CAROL' (graded as CAROL), ' carol' (graded as" in top
    assert "looks like alice" in top


def test_f1_an_exact_name_wins_whatever_the_order_and_two_look_alikes_win_nothing():
    from grader.instructor.formats import names

    p = names.pair(
        ["alice", "carol", "frank"],
        {" alice": " alice", "alice-2": "alice", "C1": "CAROL", "C2": "carol ", "frank": "frank\u200b"},
    )
    assert p.owner == {"alice": "alice-2", "frank": "frank"} and p.loosely == {"frank": "frank"}
    assert p.lookalike == {" alice": ("alice", "alice-2")} and p.contested == {"carol": ["C1", "C2"]}
    with pytest.raises(roster.RosterError, match=r"r.csv:3: alice\u200b differs from line 2"):
        roster.parse("login\nalice\nalice\u200b\n", "r.csv")


def test_f2_a_generated_name_never_matches_a_roster_login():
    """`bob/` and `bob.zip` are graded as bob and bob-2; the roster's bob-2 submitted nothing."""
    records = {
        "bob": doc(0.0, "bob", mtime="2026-05-01T00:00:00+00:00"),
        "bob-2": doc(100.0, "bob.zip", mtime="2026-05-01T00:00:00+00:00"),
    }
    r = roster.parse("login,id,name\nbob,S2,Bob\nbob-2,S9,Bob Two\n")
    table = lms.rows(records, {"late": POLICY, "submitted_at": "file"}, r, {"bob": "2026-05-01T00:00:00+00:00"})
    canvas = {row[2]: row for row in csv.reader(io.StringIO(lms.canvas_csv(table, "kata week2", 100)))}
    assert canvas["S9"][-1] == "0" and canvas["S2"][-1] == "0"
    # no other row of the LMS files carries a login an LMS could match to Bob Two (or to anyone)
    canvas_logins = [row[3] for row in csv.reader(io.StringIO(lms.canvas_csv(table, "kata week2", 100)))][2:]
    moodle_logins = [row[1] for row in csv.reader(io.StringIO(lms.moodle_csv(table, "kata week2")))][1:]
    assert sorted(canvas_logins) == sorted(moodle_logins) == ["bob", "bob-2"]  # the roster's two lines only
    no_roster = lms.rows(records, {"late": POLICY, "submitted_at": "file"}, None, {"bob": "2026-05-01T00:00:00+00:00"})
    logins = [(row[1], row[4]) for row in csv.reader(io.StringIO(lms.moodle_csv(no_roster, "kata week2")))][1:]
    # without a roster: bob.zip's made-up name is no login, and bob/ and bob.zip contest bob, as with a roster
    assert sorted(logins) == [("", "0"), ("", "100")], logins
    rows = book(csvbook.gradebook(records, [], table))
    assert [(x["student"], x["status"]) for x in rows[:2]] == [("bob", "contested"), ("bob-2", "missing")]
    assert "('bob', 'bob.zip')" in rows[0]["reason"]
    assert all("claims roster login bob" in x["reason"] for x in rows[2:])


def test_a_late_entry_renamed_because_a_made_up_name_took_its_own_keeps_its_login():
    """Sixth outside attack (c1): `alice/` and `alice.zip` graded as alice and alice-2; `alice-2/`,
    handed in late, is graded as alice-2-2 on the resume. Without a roster its login is its folder's
    own name, which no other entry has (it came out empty); alice.zip's made-up alice-2 is still
    no login, and alice/ and alice.zip, which both claim alice, are contested: neither gets it."""
    t = "2026-05-01T00:00:00+00:00"
    records = {
        "alice": doc(100.0, "alice", mtime=t),
        "alice-2": doc(50.0, "alice.zip", mtime=t),
        "alice-2-2": doc(75.0, "alice-2", mtime=t),
    }
    table = lms.rows(records, {"late": POLICY, "submitted_at": "file"}, None, {})
    moodle = [(row[1], row[4]) for row in csv.reader(io.StringIO(lms.moodle_csv(table, "kata week2")))][1:]
    canvas = [(row[3], row[5]) for row in csv.reader(io.StringIO(lms.canvas_csv(table, "kata week2", 100)))][2:]
    assert sorted(moodle) == sorted(canvas) == [("", "100"), ("", "50"), ("alice-2", "75")], (moodle, canvas)


def test_two_folders_alike_but_for_case_get_no_login_without_a_roster():
    """Seventh outside attack (B1): `alice/` (the real alice, 0) and `ALICE/` (someone else, 13/13)
    are graded as alice-2 and ALICE; ALICE kept its own name as login, and an LMS that matches
    logins ignoring case (Moodle's are lowercase) would give its 13 to alice. Alike names are
    contested, as a roster line is: neither row gets a login, whichever the grader renamed."""
    t = "2026-05-01T00:00:00+00:00"
    for records in (
        {"ALICE": doc(100.0, "ALICE", mtime=t), "alice-2": doc(0.0, "alice", mtime=t)},
        {"alice": doc(0.0, "alice", mtime=t), "ALICE-2": doc(100.0, "ALICE", mtime=t)},
        {
            "alice": doc(0.0, "alice", mtime=t),
            " alice": doc(100.0, " alice.zip", mtime=t),
            "bob": doc(50.0, "bob", mtime=t),
        },
    ):
        table = lms.rows(records, {"late": POLICY, "submitted_at": "file"}, None, {})
        moodle = [(row[1], row[4]) for row in csv.reader(io.StringIO(lms.moodle_csv(table, "kata week2")))][1:]
        canvas = [(row[3], row[5]) for row in csv.reader(io.StringIO(lms.canvas_csv(table, "kata week2", 100)))][2:]
        logins = sorted(login for login, _ in moodle if login)
        assert logins == sorted(login for login, _ in canvas if login) == (["bob"] if "bob" in records else []), moodle


def test_f3_student_set_file_times_are_called_so_and_impossible_ones_are_no_time():
    now = datetime(2026, 12, 3, tzinfo=timezone.utc)
    records = {
        "zed": doc(100.0, "zed", mtime="1980-01-01T00:00:00+00:00"),  # a zip's epoch, restored by unzip
        "yan": doc(100.0, "yan", mtime="2027-06-01T00:00:00+00:00"),  # after this gradebook
        "xia": doc(100.0, "xia", mtime="2026-05-31T12:00:00+00:00"),
    }  # plausible: taken as it is
    meta = {"late": POLICY, "submitted_at": "mtime"}
    table = lms.rows(records, meta, now=now)
    why = {r.name: r.reason for r in table}
    assert (
        "no submission time: late policy not applied (mtime: 1980-01-01T00:00:00+00:00 is more than a year"
        in why["zed"]
    )
    assert "(mtime: 2027-06-01T00:00:00+00:00 is in the future)" in why["yan"] and why["xia"] == ""
    md = "\n".join(lms.attention_lines(table, meta)) + lms.summary_lines(table, meta)
    assert "Submission times come from `mtime`" in md and "the student controls them" in md
    assert "times from mtime: the newest modification time" in md
    help_text = " ".join(kata("grade", "--help").stdout.split())
    assert "extraction keeps from the student's machine: not for grades unless the platform writes" in help_text


def test_f4_no_usable_time_is_said_in_the_gradebook_the_lms_feedback_and_the_summary_s_top(monkeypatch):
    records = {"ann": doc(90.0, "ann", mtime="2026-05-01T00:00:00+00:00"), "bea": doc(100.0, "bea")}
    meta = {"late": POLICY, "submitted_at": "mtime"}
    table = lms.rows(records, meta)
    rows = {r["student"]: r for r in book(csvbook.gradebook(records, [], table))}
    assert rows["bea"]["reason"] == "no submission time: late policy not applied (mtime: none recorded)"
    assert rows["bea"]["final"] == "100" and rows["ann"]["reason"] == ""
    moodle = list(csv.reader(io.StringIO(lms.moodle_csv(table, "kata week2"))))
    # Moodle's feedback column is the student's: no instructor diagnostics there (issue 26)
    assert moodle[2][0:2] == ["", "bea"] and moodle[2][5] == ""
    md = summary.markdown(records, summary.stats(records), {}, None, lms.attention_lines(table, meta))
    top = md[: md.index("Scores of the graded")]
    assert "**No usable submission time: late policy not applied** to 1 submission" in top
    assert "- bea: mtime: none recorded" in top
    monkeypatch.setenv("KATA_LANG", "zh")
    assert lms.rows(records, meta)[1].reason.startswith("没有提交时间：未应用迟交规则")
    assert t("late_no_time", "en", why="x") == "no submission time: late policy not applied (x)"


def test_f6_a_semicolon_never_splits_a_cell_into_a_formula():
    name = "x;=2+3;y"
    records = {"x_2_3_y": doc(100.0, name, reason="a;@SUM(1+1)"), "bob": doc(50.0, "bob")}
    table = lms.rows(records, {}, roster.parse("login\nbob\n"))
    no_roster = lms.rows(records, {}, None)  # with a roster, x;=2+3;y is on no line and in no LMS file
    gb, canvas, moodle = (
        csvbook.gradebook(records, [], table),
        lms.canvas_csv(no_roster, "w;+1", 100),
        lms.moodle_csv(no_roster, "kata"),
    )
    assert '"x;\'=2+3;y"' in gb and ";'@SUM(1+1)\"" in gb  # quoted, neutral after ;
    assert "SUM" not in moodle  # the record's reason is the instructor's: not in Moodle's feedback column
    assert canvas.startswith('Student,ID,SIS User ID,SIS Login ID,Section,"w;\'+1"\n')
    assert {r["source"] for r in book(gb)} == {"x;'=2+3;y", "bob"}  # one cell for a comma-separated reader
    for text in (gb, canvas, moodle):
        for line in text.splitlines():  # Excel in a locale whose list separator is ;
            for cell in [*line.split(";"), *next(csv.reader([line], delimiter=";"))]:
                assert not cell.strip('"').startswith(FORMULA), (line, cell)


def test_f7_a_url_in_student_text_is_no_link_in_summary_md():
    url = "../see https://evil.example/t.png www.evil.example mallory@evil.example"
    records = {
        "zevil": {**doc(0.0, "zevil.zip", status="refused", reason=f"entry '{url}' points outside"), "exercises": []},
        "www.evil.example": doc(100.0, "www.evil.example"),
        "WWW": doc(100.0, "WWW.evil.example"),
    }
    table = lms.rows(records, {}, roster.parse("login\nwww.evil.example\n"))  # WWW: a look-alike, at the top
    md = summary.markdown(
        records,
        summary.stats(records),
        {"skipped": [{"source": "www.evil.example.txt", "reason": "not a submission"}]},
        None,
        lms.attention_lines(table, {}),
    ) + lms.summary_lines(table, {})
    assert "https\\://evil.example" in md and "www\\.evil.example" in md and "'WWW\\.evil.example'" in md
    assert not re.search(r"(?i)(https?|ftp)://|www\.|(?<!\\)@", md)  # what a GFM viewer would link
    mistune = pytest.importorskip("mistune")
    html = mistune.create_markdown(plugins=["url", "table"])(md)
    assert "<a " not in html and "https://evil.example" in html  # shown, not linked


def test_f8_a_manifest_time_out_of_range_stops_nobody_s_gradebook(tmp_path):
    records = {
        f"m{i}": {**doc(100.0, f"m{i}.zip"), "manifest": {"created": created}}
        for i, created in enumerate(
            ("0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", 1e308, ["x"], "2026-05-30T00:00:00+00:00")
        )
    }
    meta = {"late": POLICY, "submitted_at": "manifest", "exercises": []}
    out = tmp_path / "out"
    out.mkdir()
    gradebook.write_class(out, records, meta)
    rows = {r["student"]: r for r in book((out / "gradebook.csv").read_text())}
    for i in range(4):
        assert (
            rows[f"m{i}"]["final"] == "100"
            and "no submission time: late policy not applied (manifest: " in rows[f"m{i}"]["reason"]
        )
    assert rows["m4"]["submitted_at"] == "2026-05-30T00:00:00+00:00" and rows["m4"]["reason"] == ""
    assert "- m0: manifest: 0001-01-01T00:00:00+14:00 is not a usable time" in (out / "summary.md").read_text()
    assert (out / "canvas.csv").is_file() and (out / "moodle.csv").is_file()
    # the same from the stored run, and a platform file with such a time says which line
    for name, d in records.items():
        store.write_json(store.record_path(out, name), d)
    store.write_json(out / store.META, meta)
    assert kata("gradebook", str(out)).returncode == 5  # written, but check before importing: no usable times
    (tmp_path / "t.csv").write_text("student,submitted_at\nm0,9999-12-31T23:59:59-14:00\n")
    with pytest.raises(late.TimesError, match=r"t.csv:2: '9999-12-31T23:59:59-14:00' is not a time"):
        late.read_times(tmp_path / "t.csv")
