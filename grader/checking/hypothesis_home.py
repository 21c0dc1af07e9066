"""Where Hypothesis keeps its files while the grader runs: a folder of the grader's own.

Hypothesis keeps files (`.hypothesis/constants/`, its example database) under the working
directory, and reads them back. An instructor may run `kata grade` inside the folder being graded
(`cd alice && kata grade .` once wrote 57 files into it), and a student's folder could hand such
files in. So every grading process uses one private folder, named in HYPOTHESIS_STORAGE_DIRECTORY
so that the processes a batch forks use it too, and removed when the process that made it ends.
Importing this module imports nothing heavy (`kata`'s every command calls it).
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

ENV = "HYPOTHESIS_STORAGE_DIRECTORY"
PREFIX = "kata-hypothesis-"  # then the pid of the process that made it
_MADE: list[str] = []


def _remove_stale() -> None:
    """The folders of processes that ended without removing theirs (killed, or forked children that
    leave by os._exit): each names its maker's pid, and one whose maker is gone is removed."""
    from ..course.files import remove_tree

    top = tempfile.gettempdir()
    try:
        names = os.listdir(top)
    except OSError:
        return
    for name in names:
        pid = name[len(PREFIX) :].split("-", 1)[0]
        if not name.startswith(PREFIX) or not pid.isdigit():
            continue
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            remove_tree(os.path.join(top, name))
        except OSError:
            continue


def private_hypothesis_home() -> str:
    """The private folder (made on the first call in a process tree), also given to Hypothesis
    when it is already imported."""
    home = os.environ.get(ENV, "")
    if not home or not os.path.isdir(home) or not os.path.basename(home).startswith(PREFIX):
        _remove_stale()
        home = tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-")
        _MADE.append(home)
        atexit.register(shutil.rmtree, home, True)
        os.environ[ENV] = home
    import sys

    if "hypothesis.configuration" in sys.modules:
        sys.modules["hypothesis.configuration"].set_hypothesis_home_dir(home)
    return home
