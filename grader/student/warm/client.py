"""The student's side of the warm grader: `grade(course, exercises)` asks the course's server
(starting it when none answers) and returns what grading in this process would have returned.

None means "grade here instead": the warm grader is turned off (KATA_WARM=0), its folder is not
safe to use, or no server could be started. Imports no torch, pytest or checks: a `kata check`
that finds its server running costs a Python start-up, the checks, and drawing the result.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

from ...checking.results import GradeResult
from ...checking.submission import SubmissionError
from ...course.manifest import Course, Exercise
from ...course.messages import language
from . import address

START_TIMEOUT = 120.0  # torch's import and the sandbox's start on a busy machine


class Unavailable(Exception):
    """No server answers and none could be started."""


# The server imports the very grader package this process imported. `python -m grader...` from the
# course folder would import whatever `grader/` sits there first: in an installed bundle that is
# the source folder pip built from, whose stamp never matches, so every request found it stale.
BOOT = (
    "import sys; sys.path[0] = sys.argv.pop(1); from grader.student.warm.server import main; "
    "raise SystemExit(main(sys.argv[1:]))"
)


def _spawn(course: Course, path: Path) -> subprocess.Popen:
    log = open(path.with_suffix(".log"), "wb")
    try:
        return subprocess.Popen(
            [sys.executable, "-c", BOOT, str(address.GRADER.parent), str(course.root)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,
            cwd=str(course.root),
            close_fds=True,
        )
    finally:
        log.close()


def _server(course: Course, path: Path) -> socket.socket:
    """A connection to the course's server, started when none answers."""
    conn = address.connect(path)
    if conn is not None:
        return conn
    proc = _spawn(course, path)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        conn = address.connect(path)
        if conn is not None:
            return conn
        if proc.poll() not in (None, 0):  # it failed; 0: another server holds the course (wait for it)
            break
        time.sleep(0.05)
    raise Unavailable(
        path.with_suffix(".log").read_text(errors="replace")[-2000:] if path.with_suffix(".log").exists() else ""
    )


def request(course: Course, message: dict, start: bool = True) -> dict | None:
    """Send one request to the course's server and return its reply (None: no server, and
    `start` was False). A stale server stops; a new one is started and asked again."""
    path = address.socket_path(course)
    if path is None:
        raise Unavailable("no private folder for the warm grader's socket")
    message = dict(message, stamp=address.stamp(course))
    for _ in range(3):
        conn = _server(course, path) if start else address.connect(path)
        if conn is None:
            return None
        with conn:
            address.send(conn, message)
            try:
                reply = address.receive(conn)
            except ConnectionError:  # the server died during the request: start one again
                reply = {"ok": False, "error": "stale"}
        if reply.get("error") != "stale":
            return reply
        if not start:
            return None
    raise Unavailable("the warm grader kept stopping")


def grade(course: Course, exercises: list[Exercise]) -> tuple[GradeResult, dict[str, str]] | None:
    """The public checks of `exercises` on exercises/, graded by the course's warm server:
    (result, sha of each file as graded). None: grade in this process instead."""
    if not address.enabled():
        return None
    try:
        reply = request(course, {"op": "grade", "lang": language(), "exercises": [ex.id for ex in exercises]})
    except (Unavailable, OSError):
        return None
    if reply.get("ok"):
        return GradeResult.from_dict(reply["result"]), dict(reply.get("shas", {}))
    error, reason = reply.get("error"), str(reply.get("reason", ""))
    if error == "submission":
        raise SubmissionError(reason)
    if error == "sandbox":
        from ...worker.sandbox import SandboxUnavailable

        raise SandboxUnavailable(reason)
    if error == "interrupted":
        raise KeyboardInterrupt
    raise RuntimeError(f"the warm grader failed: {reason}")


def ping(course: Course) -> bool:
    """Keep the course's server alive (kata watch, between saves); False when none answers."""
    if not address.enabled():
        return False
    try:
        return bool((request(course, {"op": "ping"}, start=False) or {}).get("ok"))
    except (Unavailable, OSError):
        return False


def stop(course: Course) -> bool:
    """Stop the course's server; False when none was running."""
    path = address.socket_path(course)
    conn = address.connect(path) if path is not None else None
    if conn is None:
        return False
    with conn:
        try:
            address.send(conn, {"op": "stop"})
            address.receive(conn)
        except (ConnectionError, OSError):
            pass
    return True
