"""The files `kata` writes get the permissions any program's new file gets (0666 & ~umask), so
a course group's teaching assistants can read the gradebook; the few files private by design
(a student's `.kata/` state, caches) stay 0600.

Everything is written through grader/course/atomic.py, which writes a temporary file and
renames it: that temporary file once fixed every output at 0600 whatever the umask."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from grader.course import atomic
from tests.conftest import ROOT, SOLUTIONS


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@contextmanager
def umask(value: int):
    old = os.umask(value)
    try:
        yield
    finally:
        os.umask(old)


def kata_with_umask(value: int, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        umask=value,
        env={**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT)},
    )


# ----------------------------------------------------------------------------- atomic, directly


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o027, 0o077])
def test_a_written_file_gets_0666_less_the_umask(tmp_path, mask):
    with umask(mask):
        atomic.write_json(tmp_path / "report.json", {"score": 1})
        atomic.write_text(tmp_path / "summary.md", "# class\n")
        with atomic.replacing(tmp_path / "book.zip") as tmp:
            tmp.write_bytes(b"PK")
    for name in ("report.json", "summary.md", "book.zip"):
        assert mode(tmp_path / name) == 0o666 & ~mask, name


def test_a_private_file_is_private_from_its_creation_whatever_the_umask(tmp_path):
    with umask(0o000):
        with atomic.replacing(tmp_path / "state.json", mode=0o600) as tmp:
            assert mode(tmp) == 0o600  # nobody else can open it while it is being written either
            tmp.write_text("{}")
        atomic.write_text(tmp_path / "keep.py", "x = 1\n", mode=0o644, keep_mode=True)
        (tmp_path / "keep.py").chmod(0o640)
        atomic.write_text(tmp_path / "keep.py", "x = 2\n", mode=0o644, keep_mode=True)
    assert mode(tmp_path / "state.json") == 0o600
    assert mode(tmp_path / "keep.py") == 0o640  # a file rewritten in place keeps the mode it had


def test_a_checkpoint_written_by_a_library_that_replaces_the_file_follows_the_umask(tmp_path):
    """safetensors' save_file puts a new 0600 file where it was told to write: the mode is set again."""
    import torch

    from grader.capstone.training.outputs import save_checkpoint

    with umask(0o022):
        save_checkpoint(tmp_path, {"w": torch.zeros(2, 2)}, {"step": 1})
    assert mode(tmp_path / "best.safetensors") == 0o644 and mode(tmp_path / "best.json") == 0o644


def test_a_student_s_kata_state_stays_private(tmp_path):
    from grader.student.state import StateFile

    with umask(0o022):
        state = StateFile.open(tmp_path / ".kata" / "progress.json", 1)
        state.data["s1_11_softmax"] = "passing"
        state.save()
    assert mode(tmp_path / ".kata" / "progress.json") == 0o600


# ----------------------------------------------------------------------------- through kata grade


def test_a_class_graded_with_umask_022_leaves_files_the_group_can_read(tmp_path):
    cls = tmp_path / "class"
    (cls / "alice" / "ch01").mkdir(parents=True)
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_matmul.py", cls / "alice" / "ch01")
    out = tmp_path / "out"
    proc = kata_with_umask(0o022, "grade", str(cls), "--out", str(out), "-e", "s1_11_matmul", "--jobs", "1")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    written = [p for p in out.rglob("*") if p.is_file() and not p.name.startswith(".")]
    names = {p.relative_to(out).as_posix() for p in written}
    assert {
        "gradebook.csv",
        "junit.xml",
        "summary.md",
        "students/alice/report.json",
        "students/alice/feedback.html",
    } <= names, names
    assert {p.relative_to(out).as_posix(): oct(mode(p)) for p in written} == {name: oct(0o644) for name in names}


def test_one_submission_s_report_and_page_follow_the_umask(tmp_path):
    sub = tmp_path / "sub" / "ch01"
    sub.mkdir(parents=True)
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_matmul.py", sub)
    proc = kata_with_umask(
        0o027,
        "grade",
        str(sub.parent),
        "-e",
        "s1_11_matmul",
        "--quiet",
        "--json",
        str(tmp_path / "report.json"),
        "--html",
        str(tmp_path / "page.html"),
    )
    assert proc.returncode == 0, proc.stderr
    assert mode(tmp_path / "report.json") == 0o640 and mode(tmp_path / "page.html") == 0o640
