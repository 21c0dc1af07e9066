"""The warm grader of one course: `python -m grader.student.warm.server ROOT`.

Started by client.py, detached from the terminal. It loads the course, imports what grading
needs (torch, pytest, hypothesis, the checking code), starts its sandboxes on a staging folder
it owns and only then listens, so a client that connects is answered at once. Requests are
served one at a time:

    {"op": "grade", "stamp": ..., "lang": "en" | "zh", "exercises": [ids]}
        exercises/ is copied as `kata check` copies it (grader/checking/submission.py) into the
        staging folder the sandboxes see, and the public checks of those exercises run
        (grader/checking/runner.py). Reply: {"ok": true, "result": ..., "shas": ...}, or
        {"ok": false, "error": "submission" | "sandbox" | "internal" | "interrupted", "reason": ...}.
    {"op": "ping"}   keeps the server alive (kata watch); {"op": "stop"}   stops it.

The checks run in lanes, one per core (at most 2): lane k is a process forked from the server
for this request that takes the checks as they come free (grader/checking/lanes.py; `kata grade`
takes whole exercises) in a sandbox of its own, on the one budget, so two checks
run side by side without sharing a /tmp, a process namespace or a worker; within a lane each
check still gets a fresh worker from a fork server that never ran student code, as in `kata
grade`. The server itself runs no check: each request starts from the state it loaded.

A request whose stamp is not the server's gets {"ok": false, "error": "stale"} and the server
stops: the grader, the course or the environment changed since it started. A client that hangs
up during a grading (Ctrl-C, q in kata watch) stops the lanes; their sandboxes start afresh.
The server stops after KATA_WARM_IDLE seconds without a request, or when its course is gone.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import select
import signal
import socket
import sys
import tempfile
import time
import traceback
from pathlib import Path

from ...course import files, manifest
from . import address


class Server:
    def __init__(self, course: manifest.Course, sock_path: Path):
        self.course = course
        self.sock_path = sock_path
        self.stamp = address.stamp(course)
        self.listener: socket.socket | None = None
        self.boxes: list = []  # one sandbox per lane
        self.stage: str | None = None

    # -- life
    def start(self) -> None:
        import hypothesis  # noqa: F401  (what the checks import, loaded once)
        import pytest  # noqa: F401
        import safetensors.torch  # noqa: F401
        import torch  # noqa: F401

        from ...checking import runner

        self.runner = runner
        self.stage = tempfile.mkdtemp(prefix="kata-warm-")
        os.chmod(self.stage, 0o700)  # other users of the machine stay out; the sandboxes mount sub/ at /sub
        self.sub_dir = os.path.join(self.stage, "sub")
        os.mkdir(self.sub_dir, 0o755)
        self.boxes = [runner.sandbox_at(self.course, self.sub_dir) for _ in range(lanes())]
        for box in self.boxes:  # the fork servers import torch while this process loads the checks
            box.launch()
        runner.preload(self.course)
        self.start_error = None
        try:
            for box in self.boxes:
                box.wait_ready()
        except Exception as e:  # SandboxUnavailable, a fault: each request says so, then the server stops
            self.start_error = e
        self.listen()

    def listen(self) -> None:
        tmp = self.sock_path.with_name(self.sock_path.name + f".{os.getpid()}")
        try:
            tmp.unlink()
        except FileNotFoundError:
            pass
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(tmp))
        os.chmod(tmp, 0o600)
        listener.listen(16)
        os.replace(tmp, self.sock_path)  # clients connect only to a server that is ready
        self.listener = listener

    def close(self) -> None:
        if self.listener is not None:
            try:  # ours to remove: no other server binds it while this one holds the lock
                self.sock_path.unlink()
            except OSError:
                pass
            self.listener.close()
            self.listener = None
        for box in self.boxes:
            box.close()
        self.boxes = []
        if self.stage:
            files.remove_tree(self.stage)
            self.stage = None

    def serve(self) -> None:
        idle = address.idle_seconds()
        while True:
            ready, _, _ = select.select([self.listener], [], [], idle)
            if not ready or not self.course.root.is_dir():
                return  # idle, or the course folder is gone
            try:
                conn, _ = self.listener.accept()
            except OSError:
                continue
            with conn:
                try:
                    if not self.handle(conn):
                        return
                except (ConnectionError, OSError, ValueError):
                    continue  # a client that went away or spoke nonsense: the next one

    # -- one request
    def handle(self, conn: socket.socket) -> bool:
        """Serve one request; False when the server should stop."""
        conn.settimeout(10)
        msg = address.receive(conn)
        conn.settimeout(None)
        op = msg.get("op")
        if op == "stop":
            address.send(conn, {"ok": True})
            return False
        if msg.get("stamp") != self.stamp:
            print(f"stopping: a client's stamp differs from this server's (grader at {address.GRADER})", flush=True)
            address.send(conn, {"ok": False, "error": "stale"})
            return False
        if op == "ping":
            address.send(conn, {"ok": True, "pid": os.getpid()})
            return True
        if op != "grade":
            address.send(conn, {"ok": False, "error": "internal", "reason": f"unknown request {op!r}"})
            return True
        if self.start_error is not None:
            address.send(conn, self._failure(self.start_error))
            return False
        reply = self.grade(conn, msg)
        address.send(conn, reply)
        return reply.get("error") != "sandbox"

    @staticmethod
    def _failure(e: BaseException) -> dict:
        from ...checking.submission import SubmissionError
        from ...worker.sandbox import SandboxUnavailable

        if isinstance(e, SandboxUnavailable):
            return {"ok": False, "error": "sandbox", "reason": str(e)}
        if isinstance(e, SubmissionError):
            return {"ok": False, "error": "submission", "reason": str(e)}
        return {
            "ok": False,
            "error": "internal",
            "reason": f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-4)}"[-4000:],
        }

    def grade(self, conn: socket.socket, msg: dict) -> dict:
        from ...checking.submission import open_submission

        course = self.course
        ids = msg.get("exercises")
        known = {ex.id: ex for ex in course.exercises}
        if not isinstance(ids, list) or not all(isinstance(i, str) and i in known for i in ids):
            return {"ok": False, "error": "internal", "reason": "unknown exercises"}
        exercises = [known[i] for i in ids]
        lang = msg.get("lang")
        os.environ["KATA_LANG"] = lang if lang in ("en", "zh") else "en"
        t0 = time.perf_counter()
        try:
            with open_submission(course.exercises_dir, course.chapter, course.exercises) as sub:
                staged = sub.staged_at(self.sub_dir)
                shas = {}
                for ex in exercises:
                    p = staged.path(ex.file)
                    if p.is_file():
                        shas[ex.id] = hashlib.sha256(p.read_bytes()).hexdigest()
                checks = sum(1 for ex in exercises for c in ex.checks if not c.hidden)
                lanes = self.boxes[: max(1, min(len(self.boxes), checks))]
                self.runner.import_preloads(exercises)  # once, here: every later request's lanes share them
                replies = self._run_lanes(conn, staged, exercises, lanes)
        except Exception as e:  # the submission could not be read (SubmissionError), ...
            return self._failure(e)
        if replies is None:  # the client hung up
            return {"ok": False, "error": "interrupted"}
        for reply in replies:
            if not reply.get("ok"):
                return reply
        from ...checking import lanes as lanes_mod

        merged = lanes_mod.merge(
            course, [dict(r["result"], budget=r.get("budget")) for r in replies], time.perf_counter() - t0
        )
        return {"ok": True, "result": merged.as_dict(), "shas": shas}

    def _run_lanes(self, conn: socket.socket, staged, exercises, lanes) -> list[dict] | None:
        """Grade in one forked process per lane, each with its own sandbox, side by side. This
        process runs no check itself: every grading starts from the state the server loaded.
        None when the client hung up (the lanes are stopped and their sandboxes started afresh)."""
        for box in lanes:  # one started again after the last request: ready here, not in a lane, whose
            box.wait_ready()  # copy of the sandbox would take the fork server's one "ready" with it
        from ...checking.lanes import Lane, Shared

        shared = Shared(len(lanes), by_check=True)  # checks as they come free (one exercise's side by side), one budget
        children: dict[int, tuple[int, int]] = {}  # read end -> (lane, pid)
        for k, box in enumerate(lanes):
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the lane: grade, write the reply, leave without running any clean-up
                os.close(r)
                _lane(self.runner, self.course, staged, exercises, box, Lane(shared, k), w)
            os.close(w)
            children[r] = (k, pid)
        out: dict[int, bytes] = {k: b"" for k, _ in children.values()}
        open_fds = set(children)
        hung_up = False
        while open_fds and not hung_up:
            ready, _, _ = select.select([*open_fds, conn], [], [], 1.0)
            for fd in ready:
                if fd is conn:
                    try:
                        hung_up = conn.recv(1, socket.MSG_PEEK) == b""
                    except OSError:
                        hung_up = True
                    continue
                chunk = os.read(fd, 1 << 20)
                if chunk:
                    out[children[fd][0]] += chunk
                else:
                    open_fds.discard(fd)
        for fd, (k, pid) in children.items():
            if hung_up:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            os.waitpid(pid, 0)
            os.close(fd)
        for box in lanes:  # a lane that was stopped, or whose fork server a student's code killed
            if hung_up or not box.alive():
                box.close()
                box.launch()
        if hung_up:
            return None
        replies = []
        for k in range(len(lanes)):
            try:
                replies.append(json.loads(out[k].decode("utf-8")))
            except ValueError:
                replies.append({"ok": False, "error": "internal", "reason": f"lane {k} ended without a result"})
        return replies


def _lane(runner, course, staged, exercises, box, lane, w: int) -> None:
    """One lane's process (forked): grade the checks it takes and write the reply to `w`."""
    from ...checking.lanes import serve_lane

    serve_lane(
        box,
        w,
        lambda: runner.run(course, staged, exercises, public_only=True, box=box, lane=lane, skip_missing_assets=True),
        Server._failure,
    )


def lanes() -> int:
    """How many checks run side by side: one per core, at most 2 (each lane holds a sandbox whose
    fork server has torch loaded); KATA_WARM_LANES overrides."""
    try:
        return max(1, int(os.environ["KATA_WARM_LANES"]))
    except (KeyError, ValueError):
        return max(1, min(2, os.cpu_count() or 1))


def lock(sock_path: Path, wait: float = 15.0):
    """The course's server lock, held for the server's life. A server that is stopping (stale, idle)
    still holds it for a moment: wait for it. None when another server keeps it (one started at
    the same moment by another command, which then serves both)."""
    fd = os.open(str(sock_path.with_suffix(".lock")), os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except OSError:
            if time.monotonic() > deadline or address.answers(sock_path):  # another server serves the course
                os.close(fd)
                return None
            time.sleep(0.05)


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    course = manifest.load(Path(argv[0]), require_stubs=False)
    sock_path = address.socket_path(course)
    if sock_path is None:
        return 2
    held = lock(sock_path)
    if held is None:  # another server for this course is starting or running
        return 0
    server = Server(course, sock_path)
    try:
        server.start()
        server.serve()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
