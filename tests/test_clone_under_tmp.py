"""A course works wherever it lives, and set-up proves it (issue 26, part 4).

A clone under /tmp graded the reference 400/476 and `./setup.sh` said OK: inside the sandbox each
worker mounts a /tmp of its own, which hid a venv living under /tmp (ModuleNotFoundError for sklearn,
torch._dynamo, torch.utils.serialization: whatever a check imports after the fork server started).

The slow test that does what a new instructor does (the course in a folder under /tmp whose names
hold a space and non-ASCII letters, then `./setup.sh`, whose main job must grade the reference to
full marks) is tests/test_assets_wheels.py's, which installs there from a workshop archive with
every package index unreachable: one setup.sh for both. The tests here give `kata grade --expect`
(what setup.sh runs) a reference that scores less and stubs that score something.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KATA = [sys.executable, "-c", "import sys; from grader.cli import main; sys.exit(main())"]


def _env(**extra) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KATA_", "PIP_", "VIRTUAL_ENV"))}
    env.update(KATA_LANG="en", **extra)
    return env


def _course_with(tmp_path: Path, exercise: str, code: str | None) -> Path:
    """A submission folder holding the reference's `exercise`, replaced by `code` when given."""
    sub = tmp_path / "ref"
    (sub / "ch01").mkdir(parents=True)
    src = ROOT / "solutions/ch01" / f"{exercise}.py"
    (sub / "ch01" / f"{exercise}.py").write_text(
        code if code is not None else src.read_text(encoding="utf-8"), encoding="utf-8"
    )
    return sub


def test_grade_expect_full_exits_1_naming_the_check_a_reference_fails(tmp_path):
    """What setup.sh runs: before, `kata grade solutions` exited 0 whatever the score."""
    code = (ROOT / "solutions/ch01/s1_13_causal_mask.py").read_text(encoding="utf-8")
    broken = code.replace("torch.tril(", "torch.triu(")
    assert broken != code
    sub = _course_with(tmp_path, "s1_13_causal_mask", broken)
    done = subprocess.run(
        [*KATA, "grade", str(sub), "-e", "s1_13_causal_mask", "--expect", "full", "--quiet"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "the reference solutions must score full marks" in done.stderr
    assert "s1_13_causal_mask::test_" in done.stderr


def test_grade_expect_full_passes_the_reference_and_expect_zero_refuses_it(tmp_path):
    sub = _course_with(tmp_path, "s1_13_causal_mask", None)
    full = subprocess.run(
        [*KATA, "grade", str(sub), "-e", "s1_13_causal_mask", "--expect", "full", "--quiet"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert full.returncode == 0, full.stdout + full.stderr
    assert "full marks" in full.stdout
    zero = subprocess.run(
        [*KATA, "grade", str(sub), "-e", "s1_13_causal_mask", "--expect", "zero", "--quiet"],
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert zero.returncode == 1
    assert "the stubs must score nothing" in zero.stderr and "s1_13_causal_mask::test_" in zero.stderr
