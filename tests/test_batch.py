"""`kata grade DIR --out OUT`: a whole class, N at a time, resumably, into every gradebook format.

All through the real command line, on one small exercise (s1_11_matmul: one public and two hidden
checks) so that a class grades in seconds."""

import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
import zipfile

import jsonschema
import nbformat
import pytest

from tests.conftest import EXERCISES, ROOT, SOLUTIONS, kata, solution_with

EX = ["-e", "s1_11_matmul"]
WRONG = solution_with(
    "s1_11_matmul", "out[i, j] = (A[i, :] * B[:, j]).sum()", "out[i, j] = (A[i, :] * B[:, j]).sum() + 1"
)

# Gradescope's results.json (https://gradescope-autograders.readthedocs.io/en/latest/specs/)
GRADESCOPE = {
    "type": "object",
    "required": ["score", "tests"],
    "properties": {
        "score": {"type": "number"},
        "execution_time": {"type": "number"},
        "output": {"type": "string"},
        "visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
        "stdout_visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
        "extra_data": {"type": "object"},
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "number", "score", "max_score", "status", "output", "visibility"],
                "additionalProperties": False,
                "properties": {
                    "score": {"type": "number"},
                    "max_score": {"type": "number"},
                    "status": {"enum": ["passed", "failed"]},
                    "name": {"type": "string"},
                    "number": {"type": "string"},
                    "output": {"type": "string"},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "visibility": {"enum": ["hidden", "after_due_date", "after_published", "visible"]},
                },
            },
        },
    },
}
# Exercism's test-runner results.json, version 3 (exercism/docs building/tooling/test-runners/interface.md)
EXERCISM = {
    "type": "object",
    "required": ["version", "status"],
    "additionalProperties": False,
    "properties": {
        "version": {"const": 3},
        "status": {"enum": ["pass", "fail", "error"]},
        "message": {"type": ["string", "null"]},
        "tests": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "status"],
                "additionalProperties": False,
                "properties": {
                    "name": {"type": "string"},
                    "status": {"enum": ["pass", "fail", "error"]},
                    "message": {"type": ["string", "null"]},
                    "output": {"type": ["string", "null"]},
                    "test_code": {"type": "string"},
                    "task_id": {"type": "integer", "minimum": 1},
                },
            },
        },
    },
    "allOf": [
        {
            "if": {"properties": {"status": {"const": "error"}}},
            "then": {"required": ["message"], "properties": {"message": {"type": "string"}}},
        },
        {"if": {"properties": {"status": {"enum": ["pass", "fail"]}}}, "then": {"required": ["tests"]}},
    ],
}


def notebook(code: str, exercise: str | None = "s1_11_matmul") -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    if exercise:
        nb.metadata["kata"] = {"exercise": exercise}
    return nbformat.writes(nb)


def zip_of(path, entries: dict[str, bytes | str]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in entries.items():
            zf.writestr(name, data)


def submitted_zip(tmp_path, source: str, out) -> None:
    """A real `kata submit --no-check` zip of a course copy whose s1_11_matmul holds `source`."""
    base = tmp_path / f"course-of-{out.stem}-{out.parent.name}"
    base.mkdir()
    for name in ("course.toml", "solutions", "exercises"):
        shutil.copytree(ROOT / name, base / name) if (ROOT / name).is_dir() else shutil.copy(ROOT / name, base)
    (base / "exercises" / "ch01" / "s1_11_matmul.py").write_text(source)
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "submit", "--no-check", "--out", str(out)],
        cwd=base,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr


def rows(out) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """A class folder with good, wrong, broken and unsafe submissions of every kind, graded once."""
    tmp = tmp_path_factory.mktemp("batch")
    cls = tmp / "class"
    cls.mkdir()
    shutil.copytree(SOLUTIONS, cls / "alice")  # a folder shaped like exercises/, with files that are no exercise
    (cls / "alice" / "notes.txt").write_text("todo")
    (cls / "alice" / "ch01" / "helper.py").write_text("x = 1\n")
    submitted_zip(tmp, WRONG, cls / "alice.zip")  # `kata submit` zip, and the name alice is taken
    (cls / "bob").mkdir()  # a learning platform's layout: one folder per student holding the zip
    submitted_zip(tmp, (SOLUTIONS / "ch01" / "s1_11_matmul.py").read_text(), cls / "bob" / "kata-submission.zip")
    shutil.copytree(EXERCISES, cls / "carol" / "exercises")  # a project folder with the stubs, and a broken notebook
    (cls / "carol" / "exercises" / "ch01" / "s1_11_matmul.ipynb").write_text("{ not json")
    (cls / "dave.zip").write_bytes(b"PK\x03\x04 this is not really a zip")
    zip_of(cls / "eve.zip", {"ch01/s1_11_matmul.py": "x = 1\n", "../../escape.py": "print('out')\n"})
    zip_of(cls / "frank.zip", {"ch01/s1_11_matmul.py": "#" + " " * 4_000_000 + "\n"})
    (cls / "gina.ipynb").write_text(notebook((SOLUTIONS / "ch01" / "s1_11_matmul.py").read_text()))
    (cls / "hank_s1_11_matmul.ipynb").write_text('{"cells": [ {"cell_type": "code", ')
    (cls / "ivan" / "s1_11").mkdir(parents=True)  # nbgrader's submitted/<student>/<assignment>/<id>.ipynb
    (cls / "ivan" / "s1_11" / "s1_11_matmul.ipynb").write_text(notebook(WRONG, exercise=None))
    (cls / "README.txt").write_text("grading notes")
    shutil.copytree(SOLUTIONS, cls / ".zoe")  # a submission hidden by its name: said, not silently dropped
    (cls / ".DS_Store").write_bytes(b"\0\0\0\1Bud1")  # what tools leave: nothing to say
    (cls / ".git").mkdir()
    out = tmp / "out"
    proc = kata("grade", str(cls), "--out", str(out), "--jobs", "2", "--gradescope-hidden", "hidden", *EX)
    return cls, out, proc


def test_every_submission_gets_one_row_with_a_reason_when_not_graded(graded):
    cls, out, proc = graded
    assert proc.returncode == 1, proc.stdout + proc.stderr  # some submissions could not be graded
    book = rows(out)
    assert set(book) == {
        "alice",
        "alice-2",
        "bob",
        "carol",
        "dave",
        "eve",
        "frank",
        "gina",
        "hank_s1_11_matmul",
        "ivan",
    }
    assert (book["alice"]["source"], book["alice-2"]["source"]) == ("alice", "alice.zip")
    full = {"s1_11_matmul": "5", "total": "5", "max_score": "5", "percent": "100.0", "status": "graded"}
    for name in ("alice", "bob", "gina"):
        assert {k: book[name][k] for k in full} == full, name
    # a matmul off by one everywhere: graded, and no point (its refusal check needs right values too)
    assert book["alice-2"]["status"] == "graded" and book["alice-2"]["total"] == "0"
    assert book["ivan"]["status"] == "graded" and book["ivan"]["total"] == "0"
    assert book["carol"]["status"] == "graded" and book["carol"]["total"] == "0"
    reasons = {n: book[n]["reason"] for n in ("dave", "eve", "frank", "hank_s1_11_matmul")}
    assert all(book[n]["status"] == "refused" and book[n]["total"] == "0" for n in reasons)
    assert reasons["dave"].startswith("dave.zip: not a readable zip file")
    assert reasons["eve"].startswith("eve.zip: entry '../../escape.py' points outside the archive")
    assert reasons["frank"].startswith(
        "frank.zip: entry 'ch01/s1_11_matmul.py' expands 1026x (limit 100x): looks like a zip bomb"
    )
    assert "hank_s1_11_matmul.ipynb: not a readable notebook: invalid JSON" in reasons["hank_s1_11_matmul"]
    assert not (cls.parent / "escape.py").exists() and not (cls / "escape.py").exists()
    summary = (out / "summary.md").read_text()
    for name, reason in reasons.items():
        assert f"| {name} |" in summary and reason.split(":")[-1].strip() in summary
    assert "| README.txt | not a submission" in summary
    assert "| .zoe | not graded: its name starts with a dot, which hides it; rename it" in summary
    assert ".DS_Store" not in summary and ".git" not in summary
    notes = summary[summary.index("## Notes") :]  # one line per kind of note, with its students
    assert re.search(r"- 1 student: not graded: not an exercise of the course: … .*\(alice\)$", notes, re.M)
    assert re.search(
        r"- 1 student: ch01/s1_11_matmul.ipynb: not a readable notebook: invalid JSON at line 1.*"
        r"\(carol\)$",
        notes,
        re.M,
    )
    assert "alice.zip: the name 'alice' is taken by alice; graded as 'alice-2'" in summary
    assert "10 submissions: 6 graded, 4 refused" in proc.stdout + summary


def test_one_report_per_student_and_the_gradescope_exercism_junit_html_formats(graded):
    _, out, _ = graded
    students = sorted(p.name for p in (out / "students").iterdir())
    assert len(students) == 10
    for name in students:
        d = out / "students" / name
        report = json.loads((d / "report.json").read_text())
        assert report["student"]["name"] == name and report["schema"] == 1
        gs = json.loads((d / "gradescope" / "results.json").read_text())
        jsonschema.validate(gs, GRADESCOPE)
        assert gs["score"] == report["score"]
        ex = json.loads((d / "exercism" / "results.json").read_text())
        jsonschema.validate(ex, EXERCISM)
        assert (d / "feedback.html").read_text().startswith("<!DOCTYPE html>")
        if report["student"]["status"] == "graded":
            assert [t["visibility"] for t in gs["tests"]] == ["visible", "hidden", "visible"]
            assert [t["number"] for t in gs["tests"]] == ["1.1", "1.2", "1.3"]
            assert sum(t["score"] for t in gs["tests"]) == gs["score"]
            assert {t["task_id"] for t in ex["tests"]} == {11}  # §1.11
        else:
            assert gs["tests"] == [] and report["student"]["reason"] in gs["output"]
            assert ex["status"] == "error" and ex["message"] == report["student"]["reason"]
    wrong = json.loads((out / "students" / "alice-2" / "exercism" / "results.json").read_text())
    assert wrong["status"] == "fail" and [t["status"] for t in wrong["tests"]] == ["fail", "fail", "fail"]
    stub = json.loads((out / "students" / "carol" / "exercism" / "results.json").read_text())
    assert [t["status"] for t in stub["tests"]] == ["error", "error", "fail"]  # NotImplementedError: the code raised
    assert json.loads((out / "students" / "gina" / "exercism" / "results.json").read_text())["status"] == "pass"

    root = ET.parse(out / "junit.xml").getroot()
    assert root.tag == "testsuites" and len(root) == 10
    suites = {s.get("name"): s for s in root}
    for s in suites.values():
        cases = s.findall("testcase")
        assert int(s.get("tests")) == len(cases)
        assert int(s.get("failures")) == sum(c.find("failure") is not None for c in cases)
        assert int(s.get("errors")) == sum(c.find("error") is not None for c in cases)
    assert int(root.get("tests")) == sum(int(s.get("tests")) for s in root)
    assert (suites["alice-2"].get("failures"), suites["alice-2"].get("errors")) == ("3", "0")
    assert (suites["carol"].get("failures"), suites["carol"].get("errors")) == ("1", "2")
    assert "zip bomb" in suites["frank"].find("testcase/error").text
    for png in ("histogram.png", "failures.png"):
        assert (out / png).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.rglob("*.part"))


def here(*args: str) -> tuple[int, str, str]:
    """The `kata` command line run in this process (the same argparse and code path, without a new
    interpreter's imports): for commands that grade nothing."""
    from grader.cli import main

    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("KATA_LANG", "en")
        mp.setattr(sys, "stdout", out)
        mp.setattr(sys, "stderr", err)
        try:
            code = main(list(args))
        except SystemExit as e:
            code = e.code
    return code, out.getvalue(), err.getvalue()


def test_kata_gradebook_writes_the_formats_again_from_the_stored_reports(graded, tmp_path):
    _, first, _ = graded
    out = tmp_path / "copy"
    shutil.copytree(first, out)
    keep = {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()}
    for p in out.rglob("*"):  # everything but the records
        if p.is_file() and p.name not in ("report.json", "batch.json"):
            p.unlink()
    code, stdout, stderr = here("gradebook", str(out))
    assert code == 5, stderr  # dave.zip and eve.zip are refused: 0 in the LMS files, so check before importing
    assert "Submissions not graded" in stdout and "dave" in stdout
    assert "Wrote 38 files for 10 students" in stdout  # 3 per student, 8 for the class
    assert {p.relative_to(out): p.read_bytes() for p in out.rglob("*") if p.is_file()} == keep
    here("gradebook", str(out), "--gradescope-hidden", "after_published")
    gs = json.loads((out / "students" / "alice" / "gradescope" / "results.json").read_text())
    assert [t["visibility"] for t in gs["tests"]] == ["visible", "after_published", "visible"]
    code, _, stderr = here("gradebook", str(tmp_path))
    assert code == 2 and "no grading results here" in stderr
    record = out / "students" / "bob" / "report.json"
    doc = json.loads(record.read_text())
    doc["student"]["course"] = "an-older-course"
    record.write_text(json.dumps(doc))
    here("gradebook", str(out))
    assert "## Graded with another course version" in (out / "summary.md").read_text()
    assert "grades them again: bob." in (out / "summary.md").read_text()


def test_one_submission_or_a_class_is_never_ambiguous(graded, tmp_path):
    cls, _, _ = graded
    proc = kata("grade", str(cls), *EX)  # the real command: a single submission that cannot be opened
    assert (
        proc.returncode == 2 and "looks like a class folder (10 submissions: alice, alice.zip, bob, ...)" in proc.stderr
    )
    assert "add --out OUT" in proc.stderr
    code, _, stderr = here("grade", str(SOLUTIONS), "--out", str(tmp_path / "o"), *EX)
    assert code == 2 and "is one submission (it holds ch01/), not a class folder" in stderr
    assert not (tmp_path / "o").exists()
    code, _, stderr = here("grade", str(cls), "--jobs", "2", "--force", *EX)
    assert code == 2 and "--jobs, --force only apply to a class folder: add --out OUT" in stderr
    code, _, stderr = here("grade", str(cls), "--out", str(tmp_path / "o"), "--json", "x.json", *EX)
    assert code == 2 and "--json and --html are for one submission" in stderr
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    code, _, stderr = here("grade", str(cls), "--out", str(foreign), *EX)
    assert code == 2 and "is not empty and holds no kata grading results" in stderr
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


def test_two_runs_never_write_into_one_folder_at_once(graded, tmp_path):
    from grader.instructor.batch import store

    cls, first, _ = graded
    out = tmp_path / "out"
    shutil.copytree(first, out)
    with store.locked(out):  # as if another `kata grade ... --out OUT` were running
        code, _, stderr = here("grade", str(cls), "--out", str(out), *EX)
        assert code == 2 and "another `kata grade` or `kata gradebook` is writing into" in stderr
        code, _, stderr = here("gradebook", str(out))
        assert code == 2 and "is writing into" in stderr
    code, stdout, _ = here("gradebook", str(out))
    assert code == 5 and "Wrote" in stdout  # written; 5: the class's refused submissions are to check before importing


def test_names_that_are_not_utf8_neither_stop_the_class_nor_move_on_a_rerun(tmp_path):
    """A file, a submission and a stray entry named in bytes that are not UTF-8 (a zip from an
    old Windows machine, a mangled upload): the class is graded, the names shown escaped."""
    cls, out = tmp_path / "class", tmp_path / "out"
    raw = os.fsencode(cls)
    shutil.copytree(SOLUTIONS, cls / "alice")
    with open(os.fsencode(cls / "alice" / "ch01") + b"/notes\xff.txt", "w") as f:
        f.write("todo")
    shutil.copytree(SOLUTIONS, os.fsdecode(raw + b"/b\xffob"))
    with open(raw + b"/read\xffme.txt", "w") as f:
        f.write("grading notes")

    def grade_class(*more):  # what it prints names the entries as they are: not UTF-8
        return subprocess.run(
            [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), *EX, *more],
            capture_output=True,
            text=True,
            errors="replace",
            cwd=ROOT,
            env={**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT)},
        )

    proc = grade_class("--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    book = rows(out)
    assert {n: (r["status"], r["source"], r["total"]) for n, r in book.items()} == {
        "alice": ("graded", "alice", "5"),
        "b_ob": ("graded", "b\\udcffob", "5"),
    }
    meta = json.loads((out / "batch.json").read_text())
    assert [s["source"] for s in meta["skipped"]] == ["read\udcffme.txt"]
    again = grade_class()
    assert again.returncode == 0 and "2 of 2 submissions already graded" in again.stdout, again.stdout + again.stderr
