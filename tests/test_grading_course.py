"""The course that grades is the grader's own (issue 25): `--course DIR`, else the course this
kata is installed from; never a course.toml found in or above the graded folder or the working
directory. A student's handed-in project folder that carries its own course.toml (every
forbidden list deleted) once scored 13/13 on s1_11_softmax with `cd alice && kata grade .`."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, kata

CHEAT = (
    (ROOT / "solutions/ch01/s1_11_softmax.py")
    .read_text()
    .replace(
        "def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:\n",
        "def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:\n    return torch.softmax(x, dim=dim)\n",
        1,
    )
)


def student_project(where: Path) -> Path:
    """A handed-in project folder with its own course: every forbidden list deleted, solutions/
    of empty files (the instructor edition's shape), its own .kata/ and an answer that calls
    torch.softmax."""
    alice = where / "alice"
    alice.mkdir()
    toml = (ROOT / "course.toml").read_text()
    toml = re.sub(r"(?ms)^forbidden(_ops)? = \[.*?\]\n", "", toml)
    (alice / "course.toml").write_text(toml)
    shutil.copytree(ROOT / "exercises", alice / "exercises")
    (alice / "exercises/ch01/s1_11_softmax.py").write_text(CHEAT)
    (alice / "solutions/ch01").mkdir(parents=True)
    for f in (ROOT / "solutions/ch01").glob("*.py"):
        (alice / "solutions/ch01" / f.name).write_text("")
    (alice / ".kata/assets").mkdir(parents=True)
    return alice


def tree(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted(folder.rglob("*"))
    }


def test_a_students_course_toml_is_ignored_and_named_and_nothing_is_written_into_the_folder(tmp_path):
    alice = student_project(tmp_path)
    before = tree(alice)
    assert not re.search(r"(?m)^forbidden(_ops)? =", (alice / "course.toml").read_text())
    out = tmp_path / "r.json"
    proc = kata("grade", ".", "-e", "s1_11_softmax", "--json", str(out), "--quiet", cwd=alice)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["course"]["name"] == ROOT.name and re.fullmatch(r"[0-9a-f]{16}", doc["course"]["fingerprint"])
    assert str(ROOT) not in out.read_text()  # a report shows no path of the grading machine
    softmax = [c for c in doc["checks"] if c["exercise"] == "s1_11_softmax"]
    assert softmax and doc["max_score"] == 13
    assert doc["score"] < 13 and any("torch.softmax" in c["message"] for c in softmax), doc["score"]
    assert (
        f"graded with the course at {ROOT}" in proc.stderr and f"the course.toml in {alice} is ignored" in proc.stderr
    )
    assert tree(alice) == before  # nothing written into the graded folder, its .kata/ included


def test_course_picks_another_course_and_the_report_records_it(tmp_path):
    other = tmp_path / "other"
    shutil.copytree(
        ROOT, other, ignore=shutil.ignore_patterns(".git", ".venv", ".kata", "tests", "benchmarks", "grader")
    )
    (other / "course.toml").write_text((ROOT / "course.toml").read_text() + "# a TA's copy\n")
    out = tmp_path / "r.json"
    proc = kata(
        "grade", str(ROOT / "solutions"), "-e", "s1_11_softmax", "--course", str(other), "--json", str(out), "--quiet"
    )
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(out.read_text())
    assert doc["course"]["name"] == "other"
    assert kata("grade", str(ROOT / "solutions"), "-e", "s1_11_softmax", "--json", str(out), "--quiet").returncode == 0
    ours = json.loads(out.read_text())["course"]
    assert ours.get("name") == ROOT.name and ours.get("fingerprint") != doc["course"]["fingerprint"]


def test_a_course_that_is_not_there_stops_the_command(tmp_path):
    for argv in (
        ["grade", str(ROOT / "solutions")],
        ["similarity", str(tmp_path), "--out", str(tmp_path / "o")],
        ["export", "gradescope", str(tmp_path / "x.zip")],
    ):
        proc = kata(*argv, "--course", str(tmp_path / "nowhere"))
        assert proc.returncode == 2 and "no course.toml there" in proc.stderr, (argv, proc.stderr)


PLANTED_GRADER = """import os
open(os.path.join({markers!r}, "grader-" + str(os.getpid())), "w").write(os.getcwd())
raise ImportError("the student's grader package")
"""


def test_nothing_in_a_student_folder_runs_or_steers_a_class_grading_started_inside_it(tmp_path):
    """An instructor standing in a student's folder: `kata grade CLASS --out OUT` and `kata gradebook
    OUT`. A `grader/` package there once ran as root in the batch's processes (multiprocessing's
    forkserver runs `python -c`, which puts the working directory first on sys.path) and rewrote
    the student's report to 13/13; its `matplotlibrc` coloured the class summary red, and with
    `text.usetex: True` stopped `kata gradebook`; Hypothesis wrote `.hypothesis/` into the folder
    graded."""
    kata_script = Path(sys.executable).parent / "kata"
    if not kata_script.exists():
        pytest.skip("no kata console script beside this Python (pip install -e .)")
    markers = tmp_path / "markers"
    markers.mkdir()
    cls = tmp_path / "class"
    cls.mkdir()
    alice = student_project(cls)
    (alice / "grader").mkdir()
    (alice / "grader" / "__init__.py").write_text(PLANTED_GRADER.format(markers=str(markers)))
    (alice / "matplotlibrc").write_text(
        "axes.facecolor: red\nfigure.facecolor: red\nsavefig.facecolor: red\ntext.usetex: True\n"
    )
    bob = cls / "bob"
    shutil.copytree(ROOT / "solutions", bob / "exercises")
    before = {name: tree(cls / name) for name in ("alice", "bob")}
    out = tmp_path / "out"
    env = {**os.environ, "KATA_LANG": "en"}
    env.pop("PYTHONPATH", None)
    proc = subprocess.run(
        [str(kata_script), "grade", str(cls), "--out", str(out), "-e", "s1_11_softmax", "--jobs", "1"],
        cwd=alice,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    again = subprocess.run(
        [str(kata_script), "gradebook", str(out)], cwd=alice, capture_output=True, text=True, timeout=300, env=env
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert not list(markers.iterdir()), "the student's grader/ package ran"
    scores = {
        row["login"] if "login" in row else row[next(iter(row))]: row
        for row in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))
    }
    report = {name: json.loads((out / "students" / name / "report.json").read_text()) for name in ("alice", "bob")}
    assert report["bob"]["score"] == 13 and report["alice"]["score"] < 13, (report["alice"]["score"], scores)
    assert {name: tree(cls / name) for name in ("alice", "bob")} == before  # no .hypothesis/, nothing written
    import matplotlib.image

    for png in sorted(out.glob("*.png")):
        corner = matplotlib.image.imread(str(png))[0, 0][:3]
        assert corner.min() > 0.9, f"{png.name}: the corner is {corner}, not white"
