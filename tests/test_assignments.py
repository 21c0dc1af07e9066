"""Assignments (course.toml `[[assignment]]`): a term's weeks, each graded, exported and put in
the gradebook on its own, its points scaled to what the assignment is worth; `-e` takes an id,
a section (1.11) or an id prefix (s1_11)."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from grader.course import manifest
from grader.course.assignments import AssignmentError, Assignment, parse
from grader.course.commandline import select
from grader.reports.assignment import view
from tests.conftest import EXERCISES, ROOT, SOLUTIONS

COURSE = manifest.load(ROOT)


def kata(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KATA_LANG": "en", "KATA_WARM": "0"}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True, timeout=900, env=env
    )


def test_the_course_weeks_cover_every_exercise_once_in_book_order():
    weeks = COURSE.assignments
    assert [a.id for a in weeks] == ["week1", "week2", "week3", "week4"]
    ids = [e for a in weeks for e in a.exercises]
    assert ids == [ex.id for ex in COURSE.exercises]
    assert all(a.points == 100 and a.title_zh for a in weeks)


@pytest.mark.parametrize(
    "table, words",
    [
        ({"id": "w", "title": "t", "title_zh": "t", "sections": ["1.11"], "colour": "red"}, "unknown key(s) colour"),
        ({"id": "w", "title": "t", "sections": ["1.11"]}, "missing key 'title_zh'"),
        ({"id": "w", "title": "t", "title_zh": "t"}, "give sections"),
        ({"id": "w", "title": "t", "title_zh": "t", "sections": ["1.6"]}, "section '1.6' has no exercise"),
        ({"id": "w", "title": "t", "title_zh": "t", "exercises": ["s1_11_softmaxx"]}, "'s1_11_softmaxx' is not in"),
        ({"id": "s1_11_softmax", "title": "t", "title_zh": "t", "sections": ["1.11"]}, "also an exercise id"),
        ({"id": "w 1", "title": "t", "title_zh": "t", "sections": ["1.11"]}, "id must be"),
        ({"id": "w", "title": "t", "title_zh": "t", "sections": ["1.11"], "points": 0}, "points must be a positive"),
        ({"id": "w", "title": "t", "title_zh": "t", "sections": ["1.11"], "points": "10"}, "points must be a positive"),
        (
            {"id": "w", "title": "t", "title_zh": "t", "sections": ["1.11"], "due": datetime(2027, 3, 14, 23, 59)},
            "needs its UTC offset",
        ),
        (
            {"id": "w", "title": "t", "title_zh": "t", "sections": ["1.11"], "due": datetime(2027, 3, 14).date()},
            "with a time and UTC offset",
        ),
        ({"id": "w", "title": "t", "title_zh": "t", "sections": ["1.11"], "due": "next friday"}, "is not a date-time"),
    ],
)
def test_a_bad_assignment_table_is_refused_naming_the_entry_and_what_is_wrong(table, words):
    with pytest.raises(AssignmentError) as e:
        parse([table], COURSE.exercises)
    assert f"[[assignment]] #1 ({table['id']})" in str(e.value) and words in str(e.value)


def test_a_duplicate_id_is_refused_and_due_keeps_its_offset():
    good = {
        "id": "w",
        "title": "t",
        "title_zh": "t",
        "sections": ["§1.11"],
        "exercises": ["s1_12_context"],
        "due": datetime(2027, 3, 14, 23, 59, tzinfo=timezone(timedelta(hours=8))),
        "points": 10,
    }
    a = parse([good], COURSE.exercises)[0]
    assert a.exercises == ["s1_11_matmul", "s1_11_attention_scores", "s1_11_softmax", "s1_12_context"]
    assert a.due.utcoffset() == timedelta(hours=8)
    with pytest.raises(AssignmentError, match="duplicate assignment id 'w'"):
        parse([good, good], COURSE.exercises)


def test_a_course_toml_with_a_bad_assignment_does_not_load(tmp_path):
    root = tmp_path / "course"
    root.mkdir()
    text = (ROOT / "course.toml").read_text(encoding="utf-8")
    (root / "course.toml").write_text(
        text + '\n[[assignment]]\nid = "week9"\ntitle = "x"\ntitle_zh = "x"\nsections = ["9.9"]\n', encoding="utf-8"
    )
    with pytest.raises(manifest.CourseError, match=r"\[\[assignment\]\] #5 \(week9\): section '9.9'"):
        manifest.load(root, check_files=False)


def ids(chosen) -> list[str]:
    return [ex.id for ex in chosen]


def test_e_takes_an_id_a_section_or_a_prefix_and_keeps_the_course_order():
    assert ids(select(COURSE, ["s1_11_softmax"])) == ["s1_11_softmax"]
    assert ids(select(COURSE, ["1.12", "1.11"])) == [
        "s1_11_matmul",
        "s1_11_attention_scores",
        "s1_11_softmax",
        "s1_12_scaled_attention",
        "s1_12_context",
        "s1_12_self_attention",
    ]
    assert ids(select(COURSE, ["§1.5"])) == ["s1_05_embeddings", "s1_05_positions"]
    assert len(select(COURSE, ["s1_23"])) == 13  # the §1.23 exercises and the one beyond the book
    assert ids(select(COURSE, ["s1_23_self"])) == ["s1_23_self_attention"]  # a prefix ends at a word


def test_e_that_names_nothing_or_falls_outside_the_assignment_stops_with_a_reason(capsys):
    for bad in (["s1_1"], ["1.6"], ["softmax"]):
        with pytest.raises(SystemExit) as e:
            select(COURSE, bad)
        assert e.value.code == 2
        assert f"no exercise '{bad[0]}'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        select(COURSE, ["1.11"], "week1")
    assert "assignment week1 does not include" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        select(COURSE, [], "week7")
    err = capsys.readouterr().err
    assert "no assignment 'week7'" in err and "week1, week2, week3, week4" in err
    assert ids(select(COURSE, ["1.11"], "week2")) == ["s1_11_matmul", "s1_11_attention_scores", "s1_11_softmax"]


def test_a_report_seen_as_an_assignment_keeps_its_exercises_and_scales_every_number():
    doc = {
        "score": 7.0,
        "max_score": 30.0,
        "exercises": [
            {"id": "a", "score": 5.0, "max_score": 10.0},
            {"id": "b", "score": 2.0, "max_score": 10.0},
            {"id": "c", "score": 0.0, "max_score": 10.0},
        ],
        "checks": [
            {"exercise": "a", "score": 5.0, "max_score": 10.0},
            {"exercise": "b", "score": 2.0, "max_score": 4.0},
            {"exercise": "b", "score": 0.0, "max_score": 6.0},
            {"exercise": "c", "score": 0.0, "max_score": 10.0},
        ],
    }
    a = Assignment("w", "t", "t", ["a", "b"], points=50.0)
    v = view(doc, a)
    assert (v["score"], v["max_score"]) == (17.5, 50.0)
    assert [c["max_score"] for c in v["checks"]] == [25.0, 10.0, 15.0]
    assert sum(c["score"] for c in v["checks"]) == v["score"]
    assert v["assignment"]["raw_score"] == 7.0 and v["assignment"]["raw_max_score"] == 20.0
    assert doc["max_score"] == 30.0  # the stored report is not changed
    assert view(v, a) == v  # seen twice: the same
    unscaled = view(doc, Assignment("w", "t", "t", ["a"]))
    assert (unscaled["score"], unscaled["max_score"]) == (5.0, 10.0)


def test_kata_grade_with_an_assignment_scales_to_its_points(tmp_path):
    sub = tmp_path / "sub"
    shutil.copytree(EXERCISES, sub)
    for name in ("s1_11_matmul", "s1_11_softmax", "s1_12_context"):
        shutil.copy(SOLUTIONS / "ch01" / f"{name}.py", sub / "ch01")
    proc = kata("grade", str(sub), "--assignment", "week2", "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    a = doc["assignment"]
    assert a["id"] == "week2" and a["raw_max_score"] == sum(
        COURSE.get(e).points for e in COURSE.assignments[1].exercises
    )
    assert a["raw_score"] == 5 + 13 + 5
    # in hundredths: each solved exercise is worth its exact share within half a hundredth (points.py)
    assert doc["max_score"] == 100 and doc["score"] == pytest.approx(100 * 23 / a["raw_max_score"], abs=0.015)
    assert doc["score"] == round(doc["score"], 2) == sum(round(c["score"] * 100) for c in doc["checks"]) / 100
    assert {e["id"] for e in doc["exercises"]} == set(COURSE.assignments[1].exercises)
    assert "Assignment week2" in proc.stdout and f"Score: {round(doc['score'], 2):g} / 100" in proc.stdout


def test_a_class_graded_for_an_assignment_and_its_gradebook_from_a_stored_run(tmp_path):
    cls = tmp_path / "class"
    shutil.copytree(SOLUTIONS, cls / "alice")
    shutil.copytree(EXERCISES, cls / "bob")
    out = tmp_path / "out"
    proc = kata("grade", str(cls), "--out", str(out), "--assignment", "week1", "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr  # both graded (bob's stubs score 0)
    rows = {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}
    week1 = COURSE.assignments[0].exercises
    assert [c for c in next(iter(rows.values())) if c.startswith("s1_")] == week1
    assert rows["alice"]["total"] == "100" and rows["alice"]["max_score"] == "100"
    assert rows["bob"]["total"] == "0" and rows["bob"]["max_score"] == "100"
    # the same run's formats for the assignment, written apart; another assignment was not graded
    again = kata("gradebook", str(out), "--assignment", "week1")
    assert again.returncode == 0, again.stderr
    sub = out / "assignments" / "week1"
    assert (sub / "gradebook.csv").read_text() == (out / "gradebook.csv").read_text()
    assert (sub / "students" / "alice" / "feedback.html").is_file()
    other = kata("gradebook", str(out), "--assignment", "week2")
    assert other.returncode == 2 and "did not grade all of assignment week2" in other.stderr
    # a rerun into OUT for another assignment is another run: refused without --force
    clash = kata("grade", str(cls), "--out", str(out), "--assignment", "week2")
    assert clash.returncode == 2 and "assignment" in clash.stderr


def test_gradescope_grades_only_the_assignment_and_scales_it(tmp_path):
    import zipfile

    from grader.instructor.exports.gradescope import grade_upload

    proc = kata("export", "gradescope", str(tmp_path / "week2.zip"), "-a", "week2")
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(tmp_path / "week2.zip") as zf:
        config = json.loads(zf.read("kata/gradescope.json"))
    assert config["assignment"] == "week2" and config["exercises"] == COURSE.assignments[1].exercises

    upload = tmp_path / "upload"
    shutil.copytree(SOLUTIONS, upload)
    results = tmp_path / "results.json"
    week2 = COURSE.assignments[1]
    assert grade_upload(upload, results, {"assignment": "week2", "exercises": week2.exercises}) == 0
    res = json.loads(results.read_text())
    assert {tag for test in res["tests"] for tag in test["tags"][:1]} == set(week2.exercises)
    assert sum(test["max_score"] for test in res["tests"]) == pytest.approx(100)
    assert res.get("score", sum(test["score"] for test in res["tests"])) == pytest.approx(100)


def test_nbgrader_export_of_an_assignment_is_one_nbgrader_assignment_worth_its_points():
    from grader.instructor.exports.export_nbgrader import plan

    week1 = COURSE.assignments[0]
    files, groups = plan(COURSE, select(COURSE, [], "week1"), assignment=week1)
    assert list(groups) == ["week1"]
    points = 0.0
    for rel, text in files.items():
        if rel.endswith(".ipynb"):
            assert rel.startswith("source/week1/")
            points += sum(c["metadata"].get("nbgrader", {}).get("points", 0) for c in json.loads(text)["cells"])
    assert points == pytest.approx(100, abs=0.01)
