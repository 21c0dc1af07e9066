"""Where a grading run's processes keep their temporary files: one folder per run in the
system's temporary folder, one subfolder per grading process.

A grading process that is killed (past --timeout, Ctrl-C, a full disk, a SIGKILL from outside)
cannot clean up after itself: its copy of the submission and its sandbox's folder would stay in
/tmp forever. So the scheduler removes a process's subfolder once that process has ended, the
whole folder when the run ends, and a run whose scheduler was killed too leaves a folder that
the next run removes: it is stale once nobody holds the lock the scheduler took on it.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import time
from pathlib import Path

from ...course import files

PREFIX = "kata-run-"
HELD = ".held"
GRACE_S = 60  # a folder without its lock file, younger than this, may be a run still starting


def sweep(base: str | Path) -> list[Path]:
    """Remove the run folders in `base` that no live scheduler holds; return them."""
    gone = []
    for folder in Path(base).glob(PREFIX + "*"):
        try:
            if not folder.is_dir() or folder.is_symlink() or folder.stat().st_uid != os.getuid():
                continue
            fd = os.open(folder / HELD, os.O_RDWR | os.O_CLOEXEC)
        except FileNotFoundError:  # killed before it took its lock, or still starting
            try:
                if time.time() - folder.stat().st_mtime > GRACE_S:
                    files.remove_tree(folder)
                    gone.append(folder)
            except OSError:
                pass
            continue
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a run in progress
        finally:
            os.close(fd)
        files.remove_tree(folder)
        gone.append(folder)
    return gone


class Scratch:
    """This run's folder, locked for as long as the scheduler lives."""

    def __init__(self, base: str | None = None):
        base = base or tempfile.gettempdir()
        sweep(base)
        self.root = Path(tempfile.mkdtemp(prefix=PREFIX, dir=base))
        # Locked under another name first, then renamed: a sweep never finds it unlocked.
        self._fd: int | None = os.open(self.root / (HELD + ".new"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        fcntl.flock(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        os.rename(self.root / (HELD + ".new"), self.root / HELD)
        self._n = 0

    def folder(self) -> Path:
        """A new subfolder for one grading process."""
        self._n += 1
        path = self.root / str(self._n)
        path.mkdir(mode=0o700)
        return path

    def remove(self, folder: Path) -> None:
        files.remove_tree(folder)

    def close(self) -> None:
        files.remove_tree(self.root)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
