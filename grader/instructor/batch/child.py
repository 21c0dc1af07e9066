"""What one grading process does: open one submission and grade it in its own sandbox.

Started by run.py from a `multiprocessing` fork server that imported this module (and with it
torch, pytest, hypothesis and the checking code) once. The process sends one message back on
its pipe, {"status": "graded", "doc": report} or {"status": "refused" | "error", "reason": ...},
and writes nothing itself. It ignores Ctrl-C (the scheduler decides what an interruption means)
and dies, closing its sandbox, as soon as the scheduler that started it is gone.
"""
from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import tempfile
import threading
import traceback
from pathlib import Path

import hypothesis  # noqa: F401  (imported once in the fork server: the checks use it)
import pytest  # noqa: F401
import safetensors.torch  # noqa: F401
import torch

from ...checking import runner
from ...checking.submission import SubmissionError, open_submission
from ...reports.assignment import view
from ..formats.attempts import attempted, mark
from ...reports.report import to_dict
from . import scratch
from .discover import submission_path

_box = None


def _watch_parent() -> None:
    """Exit when the scheduler dies (its end of our sentinel pipe closes), SIGKILL included."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch():
        multiprocessing.connection.wait([parent.sentinel])
        box = _box
        if box is not None:
            box.close()
        if tempfile.tempdir and os.path.basename(os.path.dirname(tempfile.tempdir)).startswith(scratch.PREFIX):
            shutil.rmtree(tempfile.tempdir, ignore_errors=True)  # nobody else will: the scheduler is gone
        os._exit(3)

    threading.Thread(target=watch, daemon=True, name="kata-parent-watch").start()


def grade(course, entry, exercise_ids: list[str], public_only: bool, time_limit: float | None,
          threads: int, conn, assignment=None) -> None:
    global _box
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent()
    torch.set_num_threads(max(1, threads))
    try:
        exercises = [course.get(i) for i in exercise_ids]
        if time_limit:
            for ex in exercises:
                ex.time_limit_s = min(ex.time_limit_s, time_limit)
        with submission_path(entry, course.chapter, [ex.id for ex in course.exercises]) as path:
            try:
                sub = open_submission(path, course.chapter, course.exercises)
            except SubmissionError as e:  # name the entry as the class folder has it, not by absolute path
                path = Path(path)
                inside = path != entry.path and path.is_relative_to(entry.path)
                shown = f"{entry.source}/{path.relative_to(entry.path).as_posix()}" if inside else entry.source
                raise SubmissionError(str(e).replace(str(path), shown)) from None
        with sub:
            sub.notes.extend(entry.notes + list(sub.problems.values()))  # for the class summary
            links = entry.notes + sub.links  # symbolic links skipped: the gradebook's reason column says so
            box = _box = runner.sandbox_for(course, sub)
            box.launch()
            try:
                result = runner.run(course, sub, exercises, public_only=public_only, box=box)
            finally:
                box.close()
                _box = None
            flags = attempted(course, sub, exercises)
        doc = mark(to_dict(course, result), flags)
        if assignment is not None:
            doc = view(doc, assignment)
        doc["submission"] = runner.printable(entry.source, lines=False)  # the entry's name in DIR, never a host path
        message = {"status": "graded", "doc": doc, "reason": runner.printable("; ".join(links), lines=False)}
    except SubmissionError as e:
        message = {"status": "refused", "reason": str(e)}
    except Exception as e:  # the grader itself failed on this submission: say so, go on with the others
        tb = traceback.format_exc(limit=-3)
        message = {"status": "error", "reason": f"{type(e).__name__}: {e}"[:1000], "traceback": tb[-4000:]}
    conn.send(message)
    conn.close()
