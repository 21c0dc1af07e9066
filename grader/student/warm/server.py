"""The warm grader of one course: `python -m grader.student.warm.server ROOT`.

Started by client.py, detached from the terminal. It loads the course, imports what grading
needs (torch, pytest, hypothesis, the checking code), starts one sandbox on a staging folder it
owns and only then listens, so a client that connects is answered at once. Requests are served
one at a time:

    {"op": "grade", "stamp": ..., "lang": "en" | "zh", "exercises": [ids]}
        exercises/ is copied as `kata check` copies it (grader/checking/submission.py), the copy
        put in the staging folder the sandbox sees, and the public checks of those exercises run
        (grader/checking/runner.py). Reply: {"ok": true, "result": ..., "shas": ...}, or
        {"ok": false, "error": "submission" | "sandbox" | "internal", "reason": ...}.
    {"op": "ping"}   keeps the server alive (kata watch); {"op": "stop"}   stops it.

A request whose stamp is not the server's gets {"ok": false, "error": "stale"} and the server
stops: the grader, the course or the environment changed since it started. A client that hangs
up during a grading (Ctrl-C, q in kata watch) interrupts it; the sandbox is then started afresh.
The server stops after KATA_WARM_IDLE seconds without a request, or when its course is gone.
"""
from __future__ import annotations

import dataclasses
import fcntl
import hashlib
import os
import select
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

from ...course import manifest
from . import address


class Server:
    def __init__(self, course: manifest.Course, sock_path: Path):
        self.course = course
        self.sock_path = sock_path
        self.stamp = address.stamp(course)
        self.listener: socket.socket | None = None
        self.box = None
        self.stage: str | None = None
        self.lock = threading.Lock()  # orders "the grading is done" and "the client hung up"
        self.done = True
        self.hung_up = False

    # -- life
    def start(self) -> None:
        import hypothesis  # noqa: F401  (what the checks import, loaded once)
        import pytest  # noqa: F401
        import safetensors.torch  # noqa: F401
        import torch  # noqa: F401

        from ...checking import runner

        self.runner = runner
        self.stage = tempfile.mkdtemp(prefix="kata-warm-")
        os.chmod(self.stage, 0o755)  # the worker may run as another user
        self.sub_dir = os.path.join(self.stage, "sub")
        os.mkdir(self.sub_dir, 0o755)
        self.box = runner.sandbox_at(self.course, self.sub_dir)
        self.box.launch()
        try:
            self.box.wait_ready()
        except Exception as e:  # SandboxUnavailable, a fault: each request says so, then the server stops
            self.start_error = e
        else:
            self.start_error = None
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
        if self.box is not None:
            self.box.close()
            self.box = None
        if self.stage:
            shutil.rmtree(self.stage, ignore_errors=True)
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

    def _failure(self, e: BaseException) -> dict:
        from ...checking.submission import SubmissionError
        from ...worker.sandbox import SandboxUnavailable

        if isinstance(e, SandboxUnavailable):
            return {"ok": False, "error": "sandbox", "reason": str(e)}
        if isinstance(e, SubmissionError):
            return {"ok": False, "error": "submission", "reason": str(e)}
        return {"ok": False, "error": "internal",
                "reason": f"{type(e).__name__}: {e}\n{traceback.format_exc(limit=-4)}"[-4000:]}

    def grade(self, conn: socket.socket, msg: dict) -> dict:
        from ...checking.submission import open_submission

        course = self.course
        ids = msg.get("exercises")
        known = {ex.id: ex for ex in course.exercises}
        if not isinstance(ids, list) or not all(isinstance(i, str) and i in known for i in ids):
            return {"ok": False, "error": "internal", "reason": "unknown exercises"}
        lang = msg.get("lang")
        os.environ["KATA_LANG"] = lang if lang in ("en", "zh") else "en"
        self.done, self.hung_up = False, False
        watcher = threading.Thread(target=self._watch_hangup, args=(conn,), daemon=True)
        try:
            with open_submission(course.exercises_dir, course.chapter, course.exercises) as sub:
                _mirror(sub.root, self.sub_dir)
                staged = dataclasses.replace(sub, root=Path(self.sub_dir), _tmp=None)
                shas = {}
                for i in ids:
                    p = staged.path(known[i].file)
                    if p.is_file():
                        shas[i] = hashlib.sha256(p.read_bytes()).hexdigest()
                watcher.start()
                try:
                    result = self.runner.run(course, staged, [known[i] for i in ids], public_only=True, box=self.box)
                finally:
                    with self.lock:  # from here on the watcher interrupts nothing
                        self.done = True
            return {"ok": True, "result": result.as_dict(), "shas": shas}
        except KeyboardInterrupt:
            self._fresh_sandbox()
            return {"ok": False, "error": "interrupted"}
        except Exception as e:
            if self.hung_up:  # pytest turned the interruption into an exit code
                self._fresh_sandbox()
                return {"ok": False, "error": "interrupted"}
            return self._failure(e)
        finally:
            self.done = True
            if watcher.is_alive():
                watcher.join(timeout=1)

    def _watch_hangup(self, conn: socket.socket) -> None:
        """The client hung up during the grading (Ctrl-C, q): stop the checks as Ctrl-C would."""
        while not self.done:
            ready, _, _ = select.select([conn], [], [], 0.1)
            if not ready:
                continue
            try:
                gone = conn.recv(1, socket.MSG_PEEK) == b""
            except OSError:
                gone = True
            if not gone:
                continue
            with self.lock:
                if not self.done:
                    self.hung_up = True
                    os.kill(os.getpid(), signal.SIGINT)
            return

    def _fresh_sandbox(self) -> None:
        """After an interrupted grading a worker may be left: start the sandbox over (lazily:
        the next grading waits for it)."""
        if self.box is not None:
            self.box.close()
            self.box.launch()


def _mirror(src: Path, dst: str) -> None:
    """Make `dst` hold exactly what `src` holds. `dst` itself stays (the sandbox's /sub is a
    bind mount of it)."""
    for name in os.listdir(dst):
        path = os.path.join(dst, name)
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.unlink(path)
    for name in os.listdir(src):
        s, d = os.path.join(src, name), os.path.join(dst, name)
        if os.path.isdir(s):
            shutil.copytree(s, d, symlinks=True)
        else:
            shutil.copy2(s, d)


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
            if time.monotonic() > deadline:
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
