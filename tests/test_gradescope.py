"""`kata export gradescope OUT.zip`: the autograder zip, and its run_autograder run for real on
a /autograder tree laid out in a temporary folder (AUTOGRADER_ROOT), with this venv's Python
standing in for the one setup.sh would install (setup.sh's apt and pip steps are not run)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader.course import manifest as course_module
from grader.instructor.exports.gradescope import gradescope_results
from tests.conftest import EXERCISES, ROOT, SOLUTIONS

pytestmark = pytest.mark.slow  # a whole autograder run: CI's second step

COURSE = course_module.load(ROOT)
N_CHECKS = sum(len(ex.checks) for ex in COURSE.exercises)
SOFTMAX = COURSE.get("s1_11_softmax")
TEST_KEYS = {"name", "number", "score", "max_score", "status", "output", "visibility"}


def export(tmp_path: Path, *args: str) -> Path:
    out = tmp_path / "autograder.zip"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "export", "gradescope", str(out), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KATA_LANG": "en"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def autograder(tmp_path: Path, zip_path: Path) -> Path:
    """/autograder with the zip unpacked in source/ (as Gradescope does), empty submission/ and results/."""
    root = tmp_path / "autograder"
    for d in ("source", "submission", "results"):
        (root / d).mkdir(parents=True)
    with zipfile.ZipFile(zip_path) as zf:
        zf.extractall(root / "source")
    for name in ("setup.sh", "run_autograder"):
        (root / "source" / name).chmod(0o755)
    return root


def run_autograder(root: Path) -> dict:
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "AUTOGRADER_ROOT": str(root), "KATA_PYTHON": sys.executable},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads((root / "results" / "results.json").read_text())


def test_the_zip_holds_setup_run_autograder_and_every_check_but_no_solution(tmp_path):
    out = export(tmp_path)
    with zipfile.ZipFile(out) as zf:
        names = set(zf.namelist())
        modes = {i.filename: stat.S_IMODE(i.external_attr >> 16) for i in zf.infolist()}
        setup = zf.read("setup.sh").decode()
        config = json.loads(zf.read("kata/gradescope.json"))
        edition = json.loads(zf.read("kata/grader/release.json"))
    assert {
        "setup.sh",
        "run_autograder",
        "kata/course.toml",
        "kata/pyproject.toml",
        "kata/grader/checks/bert_reference.py",
        "kata/grader/fixtures/s1_11_softmax.safetensors",
    } <= names
    assert {f"kata/grader/checks/test_{ex.id}.py" for ex in COURSE.exercises} <= names  # hidden checks included
    assert not [n for n in names if n.startswith(("kata/solutions/", "kata/tests/"))]
    assert modes["setup.sh"] & 0o111 and modes["run_autograder"] & 0o111
    assert "bubblewrap" in setup and '"torch==2.13.0"' in setup and "download.pytorch.org/whl/cpu" in setup
    assert "pip install -q -e" in setup and "chmod -R go-rwx kata/grader/checks kata/grader/fixtures" in setup
    assert config["hidden_visibility"] == "after_published" and edition["edition"] == "autograder"
    (tmp_path / "setup.sh").write_text(setup)
    assert subprocess.run(["bash", "-n", str(tmp_path / "setup.sh")]).returncode == 0


def test_run_autograder_grades_loose_files_into_results_json(tmp_path):
    root = autograder(tmp_path, export(tmp_path))
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_softmax.py", root / "submission")  # uploaded on their own
    (root / "submission" / "notes").mkdir()
    shutil.copy(EXERCISES / "ch01" / "s1_13_causal_mask.py", root / "submission" / "notes")  # a stub, in a folder
    res = run_autograder(root)
    assert res["score"] == SOFTMAX.points
    assert len(res["tests"]) == N_CHECKS
    assert all(TEST_KEYS <= set(t) for t in res["tests"])
    assert len({t["number"] for t in res["tests"]}) == N_CHECKS
    softmax = [t for t in res["tests"] if "s1_11_softmax ›" in t["name"]]
    assert len(softmax) == len(SOFTMAX.checks) and all(t["status"] == "passed" for t in softmax)
    assert sum(t["max_score"] for t in res["tests"]) == COURSE.max_score
    # keyed by exercise too: two exercises may each have a check of the same name, one public and one hidden
    hidden = {(ex.id, c.name.removeprefix("test_")) for ex in COURSE.exercises for c in ex.checks if c.hidden}
    for t in res["tests"]:
        exercise, check = t["name"].split(" ", 1)[1].split(" › ", 1)
        assert t["visibility"] == ("after_published" if (exercise, check) in hidden else "visible"), t
    causal = [t for t in res["tests"] if "s1_13_causal_mask ›" in t["name"]]
    assert causal and all(t["status"] == "failed" and "not implemented yet" in t["output"] for t in causal)
    missing = next(t for t in res["tests"] if "s1_01_next_token ›" in t["name"])
    assert missing["score"] == 0 and "missing from the submission" in missing["output"]
    assert res["output"].startswith(f"Public checks: {sum(not c.hidden for c in SOFTMAX.checks)} of ")
    assert "once the grades are published" in res["output"]


def test_run_autograder_grades_a_zip_and_reports_a_broken_one(tmp_path):
    root = autograder(tmp_path, export(tmp_path, "--hidden-visibility", "hidden", "--results-lang", "zh"))
    with zipfile.ZipFile(root / "submission" / "kata-submission.zip", "w") as zf:
        zf.write(SOLUTIONS / "ch01" / "s1_11_softmax.py", "exercises/ch01/s1_11_softmax.py")
    res = run_autograder(root)
    assert res["score"] == SOFTMAX.points and len(res["tests"]) == N_CHECKS
    assert {t["visibility"] for t in res["tests"]} == {"visible", "hidden"}
    assert "公开检查" in res["output"]

    (root / "submission" / "kata-submission.zip").write_bytes(b"PK\x03\x04 this is not a zip")
    res = run_autograder(root)  # exit 0: Gradescope shows the student results.json
    assert res["score"] == 0 and res["tests"] == []
    assert "无法评分你的提交" in res["output"]


def test_results_of_a_report_follow_gradescopes_fields():
    doc = {
        "score": 1.0,
        "sandbox": "limits-only",
        "notes": ["ch01/x.py: symbolic link skipped"],
        "exercises": [{"id": "s1_11_softmax", "section": "1.11"}],
        "checks": [
            {
                "exercise": "s1_11_softmax",
                "name": "test_a",
                "status": "passed",
                "score": 1.0,
                "max_score": 1.0,
                "message": "",
                "listing": ["1.11/softmax"],
                "visibility": "public",
            },
            {
                "exercise": "s1_11_softmax",
                "name": "test_b",
                "status": "skipped",
                "score": 0.0,
                "max_score": 2.0,
                "message": "gpt2.tiktoken is missing",
                "listing": [],
                "visibility": "hidden",
            },
        ],
    }
    res = gradescope_results(doc, "after_due_date", lang="en")
    a, b = res["tests"]
    assert (a["number"], a["status"], a["visibility"]) == ("1.1", "passed", "visible")
    assert (b["number"], b["status"], b["visibility"]) == ("1.2", "failed", "after_due_date")
    assert b["output"] == "skipped (scores 0): gpt2.tiktoken is missing"
    assert "limits only" in res["output"] and "symbolic link skipped" in res["output"]
    assert "after the due date" in res["output"] and "1 of 1 pass (1/1 points)" in res["output"]
    with pytest.raises(ValueError):
        gradescope_results(doc, "sometimes")


FAKE_BWRAP = "#!/bin/sh\necho 'bwrap: Creating new namespace failed: Operation not permitted' >&2\nexit 1\n"


def _with_broken_bwrap(tmp_path: Path) -> dict:
    """The environment of a container where bubblewrap cannot make its namespaces."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(FAKE_BWRAP)
    (bin_dir / "bwrap").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "KATA_SANDBOX"}
    return {**env, "PATH": f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"}


def test_where_the_sandbox_cannot_start_gradescope_records_no_score_unless_limits_only_was_chosen(tmp_path):
    """Fail closed: a container that allows no namespaces gets no results.json (Gradescope then
    records no score and shows the log), never a zero charged to every student. Limits-only is the
    instructor's explicit choice at export, and every result says so."""
    env = _with_broken_bwrap(tmp_path)
    root = autograder(tmp_path / "a", export(tmp_path / "a"))
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_softmax.py", root / "submission")
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "AUTOGRADER_ROOT": str(root), "KATA_PYTHON": sys.executable},
    )
    assert proc.returncode == 4, proc.stdout + proc.stderr
    assert "Creating new namespace failed" in proc.stderr and "Traceback" not in proc.stderr
    assert not (root / "results" / "results.json").exists()

    (tmp_path / "b").mkdir()
    root = autograder(tmp_path / "b", export(tmp_path / "b", "--grading-sandbox", "limits-only"))
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_softmax.py", root / "submission")
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "AUTOGRADER_ROOT": str(root), "KATA_PYTHON": sys.executable},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    res = json.loads((root / "results" / "results.json").read_text())
    assert res["score"] == SOFTMAX.points
    assert "resource limits only" in res["output"]


def test_a_damaged_asset_gives_no_score_and_says_which(tmp_path):
    """Issue 37: an image whose gpt2.tiktoken is missing or damaged is the grader's fault, so no
    results.json (Gradescope records no score and shows the log, which names the asset and the
    repair), never an "internal error" with a trace charged to the student as 0."""
    from tests.test_asset_pins_grading import REAL, _assets, _no_host_path
    from tests.test_assets import _swap_two_ranks

    if not (REAL / "gpt2.tiktoken").is_file():
        pytest.skip("the course's .kata/assets is not fetched (`kata assets fetch`)")
    assets = _assets(tmp_path, _swap_two_ranks((REAL / "gpt2.tiktoken").read_bytes()))
    root = autograder(tmp_path, export(tmp_path, "-e", "s1_04_byte_bpe"))
    shutil.copy(SOLUTIONS / "ch01" / "s1_04_byte_bpe.py", root / "submission")
    proc = subprocess.run(
        ["bash", str(root / "source" / "run_autograder")],
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **os.environ,
            "AUTOGRADER_ROOT": str(root),
            "KATA_PYTHON": sys.executable,
            "KATA_ASSETS_DIR": str(assets),
            "KATA_LANG": "en",
        },
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "gpt2.tiktoken" in proc.stderr and "kata assets fetch" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (root / "results" / "results.json").exists()
    _no_host_path(proc.stdout + proc.stderr, assets)
