"""A course copied without .kata/ is whole, or says what is missing (issue 26, part 5).

Students and TAs copy the course folder (course.toml, exercises/, solutions/) and leave .kata/
behind, then run the kata installed from the original in the copy. Before: 5 of 6 s1_04_byte_bpe
checks showed `– 0/N` with no reason in `kata check` (the sandbox got the copy's missing
.kata/assets while the checks read the original's), and `kata assets status` reported the
original course's assets as the copy's. Each test runs the real `kata` command in a copy under a
temporary folder whose name has a space and a non-ASCII letter.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.capstone import gpt2

ROOT = Path(__file__).resolve().parents[1]
KATA = [sys.executable, "-c", "import sys; from grader.cli import main; sys.exit(main())"]
EXERCISE = "s1_04_byte_bpe"

needs_asset = pytest.mark.skipif(
    not (ROOT / ".kata/assets" / gpt2.ASSET_NAME).is_file(),
    reason="gpt2.tiktoken is not fetched in this course (setup.sh fetches it)",
)


def _copy(tmp_path: Path) -> Path:
    """The course as a TA copies it: course.toml, exercises/ and solutions/, no .kata/; the
    exercise solved with the reference."""
    copy = tmp_path / "cópia do curso"
    copy.mkdir()
    shutil.copy2(ROOT / "course.toml", copy / "course.toml")
    for folder in ("exercises", "solutions"):
        shutil.copytree(ROOT / folder, copy / folder)
    shutil.copy2(ROOT / "solutions/ch01" / f"{EXERCISE}.py", copy / "exercises/ch01" / f"{EXERCISE}.py")
    return copy


def _kata(copy: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("KATA_")}
    return subprocess.run(
        [*KATA, *args],
        cwd=copy,
        env={**clean, "KATA_LANG": "en", "COLUMNS": "200", **env},
        capture_output=True,
        text=True,
        timeout=600,
    )


@needs_asset
def test_a_copy_without_kata_folder_gets_the_assets_its_checks_read(tmp_path):
    done = _kata(_copy(tmp_path), "check", EXERCISE)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "6 of 6 public checks pass" in out, out


def test_kata_check_prints_the_reason_of_every_skipped_check(tmp_path):
    """No assets anywhere (KATA_ASSETS_DIR names an empty folder): each skipped check says why and
    names the command that fetches them, and no host path (issue 37)."""
    empty = tmp_path / "no assets"
    empty.mkdir()
    done = _kata(_copy(tmp_path), "check", EXERCISE, KATA_ASSETS_DIR=str(empty))
    lines = done.stdout.splitlines()
    skipped = [i for i, line in enumerate(lines) if line.lstrip().startswith("–")]
    assert len(skipped) >= 3, done.stdout + done.stderr
    for i in skipped:
        said = " ".join(line.strip() for line in lines[i + 1 : i + 4])  # the reason, wrapped under its check
        assert f"{gpt2.ASSET_NAME} (.kata/assets/{gpt2.ASSET_NAME}) is missing, is not a regular file" in said, (
            done.stdout
        )
        assert "kata assets fetch" in said, done.stdout
    assert str(empty) not in done.stdout + done.stderr


@needs_asset
def test_assets_status_in_a_copy_names_the_folder_its_sandbox_gets(tmp_path):
    copy = _copy(tmp_path)
    done = _kata(copy, "assets", "status")
    assert done.returncode == 0, done.stdout + done.stderr
    first = done.stdout.splitlines()[0]
    assert f"Course {copy}:" in first and ".kata/assets holds no GPT-2 ranks" in first, done.stdout
    assert str(ROOT / ".kata/assets") in first, done.stdout
    # with assets of its own, the copy's are the ones reported
    own = copy / ".kata/assets"
    own.mkdir(parents=True)
    shutil.copy2(ROOT / ".kata/assets" / gpt2.ASSET_NAME, own / gpt2.ASSET_NAME)
    done = _kata(copy, "assets", "status")
    assert done.stdout.splitlines()[0] == f"Course {copy}: its sandbox gets the assets in .kata/assets", done.stdout
    assert f"✔ {gpt2.ASSET_NAME}" in done.stdout and f".kata/assets/{gpt2.ASSET_NAME}" in done.stdout, done.stdout
