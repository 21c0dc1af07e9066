"""A term's gradebook: the roster (missing and unknown students), submission times and the late
policy, and the Canvas and Moodle import files in their documented columns."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta

import pytest

from grader.instructor.formats import csvbook, late, lms, roster
from tests.conftest import EXERCISES, ROOT, SOLUTIONS

POLICY = {
    "assignment": "week1",
    "due": "2027-03-14T23:59:00+08:00",
    "per_day": 10.0,
    "max_days": 7.0,
    "grace_minutes": 15.0,
}


def kata(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KATA_LANG": "en", "KATA_WARM": "0"}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True, timeout=900, env=env
    )


def table(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def book_rows(text: str) -> dict[str, str]:
    """gradebook.csv: student -> its reason."""
    return {r["student"]: r["reason"] for r in csv.DictReader(io.StringIO(text))}


def test_a_roster_takes_the_usual_column_names_and_says_what_is_wrong_with_a_line():
    r = roster.parse(
        "\ufeffUser Name,SIS_User_ID,Full Name,Email Address,Section\nAlice,S1,Alice L,a@x,A\n\nbob,S2,Bob,b@x,B\n"
    )
    assert [(s.login, s.id, s.name, s.email, s.section) for s in r.students] == [
        ("Alice", "S1", "Alice L", "a@x", "A"),
        ("bob", "S2", "Bob", "b@x", "B"),
    ]
    assert r.get("alice").id == "S1"  # matched without case
    with pytest.raises(roster.RosterError, match=r"r.csv:1: no column saying which submission is whose"):
        roster.parse("name,email\nA,a@x\n", "r.csv")
    with pytest.raises(roster.RosterError, match=r"r.csv:3: ALICE is already on line 2"):
        roster.parse("login\nalice\nALICE\n", "r.csv")
    with pytest.raises(roster.RosterError, match=r"r.csv:2: the login cell is empty"):
        roster.parse("login,name\n,Nobody\n", "r.csv")


def test_a_roster_that_is_not_utf8_names_the_line(tmp_path):
    (tmp_path / "r.csv").write_bytes(b"login,name\nalice,Alice\nb\xe9a,Bea\n")
    with pytest.raises(roster.RosterError, match=r"r.csv:3: not UTF-8"):
        roster.read(tmp_path / "r.csv")


@pytest.mark.parametrize(
    "at, days, penalty",
    [
        ("2027-03-14T23:59:00+08:00", 0, 0),  # on the minute
        ("2027-03-14T16:10:00Z", 0, 0),  # within the 15 minutes of grace
        ("2027-03-14T16:15:00Z", 1, 10),  # a minute past the grace: a started day
        ("2027-03-16T02:00:00Z", 2, 20),  # 34 hours
        ("2027-03-21T16:14:00Z", 7, 70),  # the last day that still scores
        ("2027-03-21T16:15:00Z", 8, 100),  # more than 7 days: 0
    ],
)
def test_the_late_policy_counts_started_days_after_the_grace(at, days, penalty):
    got = late.assess(at, POLICY)
    assert (got.days, got.penalty) == (days, penalty)
    assert bool(got.reason) == bool(days)


def test_a_timestamp_file_needs_times_with_their_offset(tmp_path):
    good = tmp_path / "t.csv"
    good.write_text("Login,Submission Time\nAlice,2027-03-14T20:00:00+08:00\n")
    assert late.read_times(good) == {"Alice": "2027-03-14T12:00:00+00:00"}  # as written: matched later (names.py)
    bad = tmp_path / "b.csv"
    bad.write_text("student,submitted_at\nalice,2027-03-14 20:00\n")
    with pytest.raises(late.TimesError, match=r"b.csv:2: '2027-03-14 20:00' is not a time"):
        late.read_times(bad)


def doc(score: float, status: str = "graded", **extra) -> dict:
    return {
        "score": score,
        "max_score": 100.0,
        "exercises": [],
        "checks": [],
        "student": {"status": status, "reason": "", "mtime": "2027-03-10T00:00:00+00:00"},
        **extra,
    }


def test_lms_files_have_the_documented_columns_and_no_formula_cells():
    records = {"alice": doc(90.0), "=cmd": doc(50.0, manifest={"changed": ["ch01/s1_11_softmax.py"]})}
    r = roster.parse(
        'login,canvas_id,id,name,email,section\nalice,101,S1,"Liddell, Alice",a@x,A\ndana,104,S4,Dana,d@x,B\n'
    )
    rows = lms.rows(records, {"late": POLICY, "submitted_at": "mtime"}, r)
    canvas = table(lms.canvas_csv(rows, "kata week1", 100))
    assert canvas[0] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "kata week1"]
    assert canvas[1] == ["Points Possible", "", "", "", "", "100"]
    assert canvas[2:] == [["Liddell, Alice", "101", "S1", "alice", "A", "90"], ["Dana", "104", "S4", "dana", "B", "0"]]
    # "=cmd" is on no roster line: no LMS identity, so in neither file (summary.md lists it); without a
    # roster its row is there, the folder's name its login, and no cell starts a formula
    alone = table(lms.canvas_csv(lms.rows(records, {"late": POLICY, "submitted_at": "mtime"}, None), "kata week1", 100))
    assert ["'=cmd", "", "", "'=cmd", "", "50"] in alone[2:]
    moodle = table(lms.moodle_csv(rows, "kata week1"))
    assert moodle[0] == ["Email address", "Username", "ID number", "Full name", "kata week1", "kata week1 (feedback)"]
    assert moodle[2][:5] == ["d@x", "dana", "S4", "Dana", "0"] and moodle[2][5] == "no submission"
    assert len(moodle) == 3  # alice, dana: "=cmd" is on no roster line
    gb = book_rows(csvbook.gradebook(records, [], rows))
    assert "not on the roster" in gb["'=cmd"] and "changed after kata submit: ch01/s1_11_softmax.py" in gb["'=cmd"]


def test_a_class_graded_with_a_roster_times_and_a_due_date(tmp_path):
    cls = tmp_path / "class"
    for name, src in (("alice", SOLUTIONS), ("bob", SOLUTIONS), ("carl", EXERCISES)):
        shutil.copytree(src, cls / name)
    (tmp_path / "roster.csv").write_text(
        "login,canvas_id,id,name,email\nalice,101,S1,Alice,a@x\nbob,102,S2,Bob,b@x\ndana,104,S4,Dana,d@x\n"
    )
    (tmp_path / "times.csv").write_text(
        "student,submitted_at\nalice,2027-03-14T20:00:00+08:00\nbob,2027-03-16T10:00:00+08:00\n"
    )
    out = tmp_path / "out"
    proc = kata(
        "grade",
        str(cls),
        "--out",
        str(out),
        "-a",
        "week1",
        "-e",
        "s1_02_anatomy",
        "--due",
        "2027-03-14T23:59:00+08:00",
        "--roster",
        str(tmp_path / "roster.csv"),
        "--submitted-at",
        str(tmp_path / "times.csv"),
        "-j",
        "2",
    )
    assert proc.returncode == 5, proc.stdout + proc.stderr  # written; carl is on no roster line: check first
    assert "Check before importing" in proc.stdout and "'carl'" in proc.stdout
    book = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    assert list(book) == ["alice", "bob", "dana", "carl"]  # the roster's order, then who is not on it
    assert (book["alice"]["total"], book["alice"]["final"], book["alice"]["reason"]) == ("100", "100", "")
    assert (book["bob"]["late_days"], book["bob"]["late_penalty"], book["bob"]["final"]) == ("2", "20", "80")
    assert book["dana"]["status"] == "missing" and book["dana"]["final"] == "0"
    assert "not on the roster" in book["carl"]["reason"] and "no submission time" in book["carl"]["reason"]
    canvas = table((out / "canvas.csv").read_text())
    assert canvas[2:4] == [["Alice", "101", "S1", "alice", "", "100"], ["Bob", "102", "S2", "bob", "", "80"]]
    summary = (out / "summary.md").read_text()
    assert "- no submission: dana" in summary and "- bob: 2 day(s) late: -20%" in summary
    # carl handed in the stubs: not attempted, apart from the students who tried and failed
    assert "| 1.2 | s1_02_anatomy | 1 | 2 | 0 |" in summary
    assert (out / "heatmap.png").read_bytes()[:4] == b"\x89PNG"
    assert '"attempted": false' in (out / "students" / "carl" / "report.json").read_text()
    # the reports students see are not penalised; the gradebook is
    assert '"score": 100.0' in (out / "students" / "bob" / "report.json").read_text()
    # a later due date and the files' own times, from the stored run: nothing is graded again (a day
    # after the newest file time: a file time more than a year before the due date is no time)
    newest = max(
        json.loads((out / "students" / n / "report.json").read_text())["student"]["mtime"]
        for n in ("alice", "bob", "carl")
    )
    later = (datetime.fromisoformat(newest) + timedelta(days=1)).isoformat()
    again = kata("gradebook", str(out), "--due", later, "--submitted-at", "mtime")
    assert again.returncode == 5, again.stderr  # carl still on no line; times the students control
    book = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    assert book["bob"]["final"] == "100" and book["carl"]["late_days"] == "0"
    # a roster that cannot be used stops the command before anything is written
    (tmp_path / "bad.csv").write_text("name\nA\n")
    bad = kata("gradebook", str(out), "--roster", str(tmp_path / "bad.csv"))
    assert bad.returncode == 2 and "bad.csv:1: no column saying which submission is whose" in bad.stderr
    assert (out / "roster.csv").read_text().startswith("login,canvas_id")


def test_due_and_roster_need_a_class_and_due_needs_an_assignment(tmp_path):
    one = kata("grade", str(SOLUTIONS), "--roster", "r.csv")
    assert one.returncode == 2 and "--roster" in one.stderr
    cls = tmp_path / "class"
    shutil.copytree(EXERCISES, cls / "zed")
    no = kata("grade", str(cls), "--out", str(tmp_path / "o"), "-e", "s1_02_anatomy", "--due", "2027-01-01T00:00Z")
    assert no.returncode == 2 and "--assignment" in no.stderr
