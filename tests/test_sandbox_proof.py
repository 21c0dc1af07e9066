"""The sandbox is proven before grading (fail closed): a bubblewrap that cannot start, or none at
all, stops `kata grade` (one submission or a class) and `kata check` with a plain error naming the
cause and what a machine must allow, a non-zero exit and no score. Limits-only grading happens only
when asked for (`--sandbox limits-only`, KATA_SANDBOX=none), and the report says so."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.worker.sandbox import EXIT

ROOT = Path(__file__).resolve().parent.parent
HAS_BWRAP = shutil.which("bwrap") is not None

FAKE_BWRAP = """#!/bin/sh
echo "bwrap: Creating new namespace failed: Operation not permitted" >&2
exit 1
"""


def kata(*args: str, path: str, cwd: Path = ROOT, timeout: float = 300) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "KATA_SANDBOX"}
    env.update(KATA_LANG="en", PYTHONPATH=str(ROOT), PATH=path)
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env
    )


@pytest.fixture
def broken_bwrap(tmp_path) -> str:
    """A PATH whose first bwrap fails to make its namespaces, as in a locked-down container."""
    bin_dir = tmp_path / "fakebin"
    bin_dir.mkdir()
    fake = bin_dir / "bwrap"
    fake.write_text(FAKE_BWRAP)
    fake.chmod(0o755)
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


@pytest.fixture
def no_bwrap(tmp_path) -> str:
    """A PATH with no bwrap on it (the grader needs nothing else from PATH)."""
    empty = tmp_path / "emptybin"
    empty.mkdir()
    return str(empty)


def _says_the_cause_and_the_way_out(proc: subprocess.CompletedProcess, *cause: str) -> None:
    assert proc.returncode == EXIT, (proc.returncode, proc.stdout[-2000:], proc.stderr[-2000:])
    assert "Traceback" not in proc.stderr, proc.stderr
    for words in cause:
        assert words in proc.stderr, proc.stderr
    assert "--sandbox limits-only" in proc.stderr and "KATA_SANDBOX=none" in proc.stderr, proc.stderr
    assert "Score" not in proc.stdout, proc.stdout


def test_a_bwrap_that_cannot_start_stops_kata_grade_with_no_score(broken_bwrap, tmp_path):
    out = tmp_path / "report.json"
    proc = kata("grade", str(ROOT / "solutions"), "-e", "s1_11_matmul", "--json", str(out), path=broken_bwrap)
    _says_the_cause_and_the_way_out(proc, "Creating new namespace failed", "user namespaces", "SYS_ADMIN")
    assert not out.exists()


def test_a_bwrap_that_cannot_start_makes_every_student_of_a_batch_an_error_graded_again_next_run(
    broken_bwrap, tmp_path
):
    klass, out = tmp_path / "class", tmp_path / "out"
    for name in ("alice", "bob"):
        shutil.copytree(ROOT / "solutions", klass / name / "exercises")
    proc = kata("grade", str(klass), "--out", str(out), "-e", "s1_11_matmul", "--jobs", "1", path=broken_bwrap)
    _says_the_cause_and_the_way_out(proc, "Creating new namespace failed")
    for name in ("alice", "bob"):
        doc = json.loads((out / "students" / name / "report.json").read_text())
        assert doc["student"]["status"] == "error", doc["student"]
        assert "Creating new namespace failed" in doc["student"]["reason"]
        assert not doc.get("checks") and not doc.get("score"), doc
    if HAS_BWRAP:  # the next run, where the sandbox starts, grades them: no error record is kept as final
        again = kata(
            "grade", str(klass), "--out", str(out), "-e", "s1_11_matmul", "--jobs", "1", path=os.environ.get("PATH", "")
        )
        assert again.returncode == 0, again.stderr[-2000:]
        for name in ("alice", "bob"):
            doc = json.loads((out / "students" / name / "report.json").read_text())
            assert doc["student"]["status"] == "graded" and doc["score"] == doc["max_score"] > 0


def test_a_bwrap_that_cannot_start_stops_kata_check_and_limits_only_is_an_explicit_choice(broken_bwrap):
    proc = kata("check", "s1_11_matmul", path=broken_bwrap)
    _says_the_cause_and_the_way_out(proc, "Creating new namespace failed")
    asked = kata("check", "s1_11_matmul", "--sandbox", "limits-only", path=broken_bwrap)
    assert asked.returncode != EXIT and "Traceback" not in asked.stderr, asked.stderr[-2000:]
    assert "limits only" in asked.stdout, asked.stdout[-2000:]


def test_without_bwrap_grading_stops_unless_limits_only_is_asked_for(no_bwrap, tmp_path):
    out = tmp_path / "report.json"
    proc = kata("grade", str(ROOT / "solutions"), "-e", "s1_11_matmul", "--json", str(out), path=no_bwrap)
    _says_the_cause_and_the_way_out(proc, "bubblewrap (bwrap)", "was not found", "apt install bubblewrap")
    assert not out.exists()
    asked = kata(
        "--sandbox",
        "limits-only",
        "grade",
        str(ROOT / "solutions"),
        "-e",
        "s1_11_matmul",
        "--json",
        str(out),
        path=no_bwrap,
    )
    assert asked.returncode == 0, asked.stderr[-2000:]
    report = json.loads(out.read_text())
    assert report["sandbox"] == "limits-only" and report["score"] == report["max_score"] > 0
