"""A course works wherever it lives, and set-up proves it (issue 26, part 4).

A clone under /tmp graded the reference 400/476 and `./setup.sh` said OK: inside the sandbox each
worker mounts a /tmp of its own, which hid a venv living under /tmp (ModuleNotFoundError for sklearn,
torch._dynamo, torch.utils.serialization: whatever a check imports after the fork server started).

The slow test does what a new instructor does: the course's tracked files (as `git clone` gives them,
taken from the working tree so that the code under test is this one) in a folder under /tmp whose
name has a space and a non-ASCII letter, a venv of its own inside it, then `./setup.sh`. The venv is
made the cheap way, with no download: a copy of this test's own venv whose files are hard links where
the file system allows (a venv is relocatable but for its scripts and the kata's editable install,
which setup.sh's own `pip install -e` rewrites, offline here: PIP_NO_INDEX with no build isolation).
GPT-2's ranks come from tiktoken's cache folder (TIKTOKEN_CACHE_DIR), as `gpt2 fetch` reads it.
The fast tests give `kata grade --expect` (what setup.sh runs) a reference that scores less and
stubs that score something.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from grader.capstone import gpt2

ROOT = Path(__file__).resolve().parents[1]
KATA = [sys.executable, "-c", "import sys; from grader.cli import main; sys.exit(main())"]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KATA_", "PIP_", "VIRTUAL_ENV"))}
    env.update(KATA_LANG="en", **extra)
    return env


def _link_or_copy(src, dst, *, follow_symlinks=True):
    try:
        os.link(src, dst, follow_symlinks=False)
    except OSError:
        shutil.copy2(src, dst, follow_symlinks=follow_symlinks)
    return dst


def _tracked_tree(dest: Path) -> None:
    """The course's tracked files, as a clone holds them (their working-tree text), modes kept."""
    names = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    for name in filter(None, names.decode().split("\0")):
        src = ROOT / name
        if src.is_file() and not src.is_symlink():
            (dest / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / name)


@pytest.mark.slow
def test_setup_in_a_clone_under_tmp_with_a_space_and_a_non_ascii_name_grades_the_reference_to_full_marks():
    """On the code before the fix: setup.sh exited 0 with the reference below full marks (the
    workers' /tmp hid the venv); now every check of the reference passes and setup says so."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed: the bug lives in the sandbox's /tmp")
    if not gpt2.have_asset():
        pytest.skip("gpt2.tiktoken is not fetched here (setup.sh fetches it)")
    top = Path(tempfile.mkdtemp(prefix="kata clone é ", dir="/tmp"))
    try:
        course = top / "Kurs für Transformer"
        course.mkdir()
        _tracked_tree(course)
        shutil.copytree(sys.prefix, course / ".venv", symlinks=True, copy_function=_link_or_copy,
                        ignore=shutil.ignore_patterns("__pycache__"))
        cache = top / "tiktoken-cache"  # where `gpt2 fetch` finds a local copy instead of PyPI
        cache.mkdir()
        shutil.copy2(gpt2.asset_path(), cache / gpt2.R50K_CACHE_KEY)
        env = _env(PYTHON=sys.executable, TIKTOKEN_CACHE_DIR=str(cache), PIP_NO_INDEX="1",
                   PIP_NO_BUILD_ISOLATION="0", TMPDIR="/tmp")
        done = subprocess.run(["./setup.sh"], cwd=course, env=env, capture_output=True, text=True, timeout=3000)
        out = done.stdout + done.stderr
        assert done.returncode == 0, out[-6000:]
        assert "full marks" in out, out[-6000:]
        assert "ModuleNotFoundError" not in out, out[-6000:]
        # the kata command runs the clone's own interpreter: pip writes it as the shebang, or, for a path
        # with a space (this one), as a `#!/bin/sh` line that execs it by its quoted path
        head = (course / ".venv/bin/kata").read_text(errors="replace").splitlines()[:2]
        assert head[0] == f"#!{course}/.venv/bin/python" or f'"{course}/.venv/bin/python"' in head[1], head
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _course_with(tmp_path: Path, exercise: str, code: str | None) -> Path:
    """A submission folder holding the reference's `exercise`, replaced by `code` when given."""
    sub = tmp_path / "ref"
    (sub / "ch01").mkdir(parents=True)
    src = ROOT / "solutions/ch01" / f"{exercise}.py"
    (sub / "ch01" / f"{exercise}.py").write_text(code if code is not None else src.read_text(encoding="utf-8"),
                                                  encoding="utf-8")
    return sub


def test_grade_expect_full_exits_1_naming_the_check_a_reference_fails(tmp_path):
    """What setup.sh runs: before, `kata grade solutions` exited 0 whatever the score."""
    code = (ROOT / "solutions/ch01/s1_13_causal_mask.py").read_text(encoding="utf-8")
    broken = code.replace("torch.tril(", "torch.triu(")
    assert broken != code
    sub = _course_with(tmp_path, "s1_13_causal_mask", broken)
    done = subprocess.run([*KATA, "grade", str(sub), "-e", "s1_13_causal_mask", "--expect", "full", "--quiet"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the reference solutions must score full marks" in done.stderr
    assert "s1_13_causal_mask::test_" in done.stderr


def test_grade_expect_full_passes_the_reference_and_expect_zero_refuses_it(tmp_path):
    sub = _course_with(tmp_path, "s1_13_causal_mask", None)
    full = subprocess.run([*KATA, "grade", str(sub), "-e", "s1_13_causal_mask", "--expect", "full", "--quiet"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert full.returncode == 0, full.stdout + full.stderr
    assert "full marks" in full.stdout
    zero = subprocess.run([*KATA, "grade", str(sub), "-e", "s1_13_causal_mask", "--expect", "zero", "--quiet"],
                          cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=600)
    assert zero.returncode == 1
    assert "the stubs must score nothing" in zero.stderr and "s1_13_causal_mask::test_" in zero.stderr
