"""`kata reset ID`: put an exercise's stub back, keeping a backup of what it replaces.

The stub is generated from the solution (`stubs.stub_text`), exactly as `kata stubs` writes
it. The file it replaces, if any, is first copied to `.kata/backups/<time>/<file>`; a file
that already equals the stub is left alone.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from ..authoring.stubs import stub_text, write_stubs
from ..course.manifest import Course, Exercise


@dataclass
class Reset:
    exercise: Exercise
    changed: bool
    backup: Path | None  # where the replaced file went (None: there was none to keep)


def backup_folder(course: Course) -> Path:
    """A fresh folder under .kata/backups/, never one an earlier backup used."""
    base = course.root / ".kata" / "backups"
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        folder = base / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            continue
    raise OSError(f"{base}: no free backup folder name for {stamp}")


def reset(course: Course, exercises: list[Exercise]) -> list[Reset]:
    """Restore the stubs of `exercises`; the files replaced share one backup folder."""
    folder = backup_folder(course)
    done = []
    try:
        for ex in exercises:
            target = course.exercises_dir / ex.file
            if target.is_file() and target.read_bytes() == stub_text(course, ex).encode("utf-8"):
                done.append(Reset(ex, False, None))
                continue
            existed = target.is_file()
            write_stubs(course, only={ex.id}, backup_dir=folder)
            backup = folder / ex.file
            done.append(Reset(ex, True, backup if existed and backup.is_file() else None))
    finally:
        if not any(p.is_file() for p in folder.rglob("*")):  # nothing needed keeping
            shutil.rmtree(folder, ignore_errors=True)
    return done
