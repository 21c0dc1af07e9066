"""What one grading slot does: hold a sandbox, and grade the submissions the scheduler sends it,
one at a time.

Started by run.py from a `multiprocessing` fork server that imported this module (and with it
torch, pytest, hypothesis and the checking code) once. A slot starts its sandbox once, on a
staging folder of its own, and keeps it for every submission it grades: bubblewrap, Python and
torch's import in the sandbox are paid once per slot, not once per submission.

For each submission the slot forks a grading process. That process opens the submission, copies
it into the staging folder (the sandbox's /sub), runs the checks and sends one message back. The
slot itself runs no check, so no submission inherits the grader-side state another one left
(check modules, random generators): each is graded as if it came first. Inside the sandbox every
check still gets a fresh worker from a fork server that never ran student code, in an IPC
namespace of its own, with /tmp emptied after it (worker/runtime/__main__.py): what a check of
one submission can leave behind, no check of the next one sees, exactly as between two checks of
one submission. A sandbox a submission's code brought down is started again before the next.

Messages: scheduler -> slot: an Entry to grade, or None (stop). Slot -> scheduler, one per entry:
{"status": "graded", "doc": report, "reason": ...} or {"status": "refused" | "error", "reason": ...}.
The slot ignores Ctrl-C (the scheduler decides what an interruption means) and dies, closing its
sandbox, as soon as the scheduler is gone; its grading process dies with it.
"""

from __future__ import annotations

import ctypes
import gc
import json
import multiprocessing
import multiprocessing.connection
import os
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
from ...checking.asset_gate import AssetUnavailable
from ...checking.submission import SubmissionError, open_submission
from ...course import files
from ...course.messages import t
from ...reports.assignment import view
from ...reports.report import to_dict
from ...authoring.attempts import attempted, mark, warm
from . import scratch
from .discover import submission_path

_box = None
PR_SET_PDEATHSIG = 1


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
            files.remove_tree(tempfile.tempdir)  # nobody else will: the scheduler is gone
        os._exit(3)

    threading.Thread(target=watch, daemon=True, name="kata-parent-watch").start()


def serve(
    course, exercise_ids: list[str], public_only: bool, time_limit: float | None, threads: int, conn, assignment=None
) -> None:
    """The slot's life: start the sandbox, then grade each entry received on `conn` until None."""
    global _box
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _watch_parent()
    torch.set_num_threads(max(1, threads))
    exercises = [course.get(i) for i in exercise_ids]
    if time_limit:
        for ex in exercises:
            ex.time_limit_s = min(ex.time_limit_s, time_limit)
    stage = tempfile.mkdtemp(prefix="kata-stage-")  # 0700: other users of the machine stay out
    sub_dir = os.path.join(stage, "sub")
    os.mkdir(sub_dir, 0o755)  # the worker's uid reads the copy through /sub
    box = _box = runner.sandbox_at(course, sub_dir)
    try:
        try:
            box.launch()  # the fork server imports torch while this process loads the checks
        except Exception:  # SandboxUnavailable, ...: each entry says so below
            pass
        runner.preload(course)
        runner.import_preloads(exercises)
        warm(course, exercises)
        gc.collect()
        gc.freeze()  # what is loaded now is every grading's: their collections never walk it
        while True:
            try:
                entry = conn.recv()
            except (EOFError, OSError):
                return
            if entry is None:
                return
            _grade_entry(course, entry, exercises, public_only, box, sub_dir, assignment, conn)
            if not box.alive():  # a submission's code brought the fork server down: a new one for the next
                box.close()
                try:
                    box.launch()
                except Exception:
                    pass
            box.startup_s = 0.0  # the next submission waits for no start-up
    finally:
        _box = None
        box.close()
        files.remove_tree(stage)


def _grade_entry(course, entry, exercises, public_only: bool, box, sub_dir: str, assignment, conn) -> None:
    """One submission, graded in a process forked for it, which sends its message on `conn`. The
    slot meanwhile waits for its sandbox to be ready (its first start takes a second) and hands
    that on: a submission refused as it is opened (a bad zip) is answered at once."""
    go_read, go_write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the grading process: grade, send, leave without running any clean-up of the slot's
        code = 1
        try:
            os.close(go_write)
            ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # dies with the slot
            if os.getppid() == 1:
                os._exit(3)
            started = box.proc.pid if box.proc else None
            conn.send(
                grade(
                    course, entry, exercises, public_only, box, sub_dir, assignment, ready=lambda: _ready(box, go_read)
                )
            )
            if box.proc is not None and box.proc.pid != started:  # a sandbox this process started again: its own
                box.close()
            code = 0
        finally:
            os._exit(code)
    os.close(go_read)
    try:
        box.wait_ready()  # here, not in the fork: a forked copy would take the one "ready" message with it
        word = json.dumps({"ok": box.readiness()})
    except Exception as e:  # SandboxUnavailable (the batch then says the sandbox cannot start), a fault
        word = json.dumps({"error": f"{type(e).__name__}: {e}"[:1000]})
    try:
        with os.fdopen(go_write, "w") as f:
            f.write(word)
    except OSError:  # it has answered already (refused): nobody listens
        pass
    _, status = os.waitpid(pid, 0)
    if not (os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0):
        how = (
            f"killed by signal {os.WTERMSIG(status)}"
            if os.WIFSIGNALED(status)
            else f"exit status {os.WEXITSTATUS(status)}"
        )
        conn.send({"status": "error", "reason": t("batch_died", how=how)})


class _NotReady(Exception):
    """The slot's sandbox could not start; str() is the reason as the batch records it."""


def _ready(box, go_read: int) -> None:
    """Wait for the slot to say its sandbox is ready, and take what it learnt; _NotReady if not."""
    with os.fdopen(go_read) as f:
        said = json.loads(f.read() or '{"error": "the slot ended"}')
    if "error" in said:
        raise _NotReady(said["error"])
    box.adopt(said["ok"])


def grade(course, entry, exercises, public_only: bool, box, sub_dir: str, assignment=None, ready=lambda: None) -> dict:
    """Open `entry`, stage it where `box` sees it, run the checks: the message for the scheduler.
    `ready()` returns once the sandbox can be used (raises _NotReady when it cannot start)."""
    try:
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
            staged = sub.staged_at(sub_dir)
            ready()
            result = runner.run(course, staged, exercises, public_only=public_only, box=box)
            flags = attempted(course, staged, exercises)
        doc = mark(to_dict(course, result), flags)
        if assignment is not None:
            doc = view(doc, assignment)
        doc["submission"] = runner.printable(entry.source, lines=False)  # the entry's name in DIR, never a host path
        return {"status": "graded", "doc": doc, "reason": runner.printable("; ".join(links), lines=False)}
    except SubmissionError as e:
        return {"status": "refused", "reason": str(e)}
    except (_NotReady, AssetUnavailable) as e:  # the grader's, not the submission's: the next run grades it again
        return {"status": "error", "reason": str(e)}
    except Exception as e:  # the grader itself failed on this submission: say so, go on with the others
        tb = traceback.format_exc(limit=-3)
        return {"status": "error", "reason": f"{type(e).__name__}: {e}"[:1000], "traceback": tb[-4000:]}
