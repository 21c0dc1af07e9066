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
_MADE: list[str] = []


def private_hypothesis_home() -> str:
    """The private folder (made on the first call in a process tree), also given to Hypothesis
    when it is already imported."""
    home = os.environ.get(ENV, "")
    if not home or not os.path.isdir(home) or not os.path.basename(home).startswith("kata-hypothesis-"):
        home = tempfile.mkdtemp(prefix="kata-hypothesis-")
        _MADE.append(home)
        atexit.register(shutil.rmtree, home, True)
        os.environ[ENV] = home
    import sys

    if "hypothesis.configuration" in sys.modules:
        sys.modules["hypothesis.configuration"].set_hypothesis_home_dir(home)
    return home
