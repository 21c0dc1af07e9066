"""The trusted side of the worker: start the sandboxed fork server, get fresh worker processes
from it, send requests with a time limit, and turn every fault into a plain-words reason.
"""

from __future__ import annotations

import itertools
import json
import os
import select
import shutil
import stat
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

from ..course import files
from ..course.messages import Msg, t
from . import cgroups, sandbox, uids
from .runtime import wire
from .runtime.__main__ import children

RUNTIME_SRC = Path(__file__).resolve().parent / "runtime"


class WorkerFault(Exception):
    """The worker process hung, crashed, exited or broke the wire. `reason` is for students.

    `hidden_reason` is what a hidden check says instead: only the grader's own limits (the time
    limit, the memory limit) or that the worker ended, never an exit code, a signal number or
    any text the worker chose, which code that has seen the hidden inputs could set to them."""

    def __init__(self, kind: str, reason: str, hidden_reason: str | None = None):
        super().__init__(reason)
        self.kind = kind
        self.reason = reason
        self.hidden_reason = hidden_reason or t("fault_hidden")


LIMIT_SIGNALS = (signal.SIGXCPU, signal.SIGXFSZ)  # the grader's CPU and output limits: a hidden check may name them
SIGNAL_REASONS = {  # catalog keys (grader/course/messages.py)
    signal.SIGXCPU: "signal_xcpu",
    signal.SIGXFSZ: "signal_xfsz",
    signal.SIGSEGV: "signal_segv",
    signal.SIGABRT: "signal_abrt",
    signal.SIGKILL: "signal_kill",
}


class Sandbox:
    """One fork server for one submission. Use as a context manager."""

    def __init__(
        self,
        submission_dir: str | Path,
        limits: sandbox.Limits | None = None,
        hide: list[str] | None = None,
        start_timeout: float = 60.0,
        assets_dir: str | None = None,
    ):
        self.submission_dir = str(Path(submission_dir).resolve())
        self.limits = limits or sandbox.Limits()
        if self.limits.nproc is None:
            self.limits.nproc = sandbox.default_nproc()
        self.hide = list(hide or [])
        self.assets_dir = str(assets_dir) if assets_dir else None
        self.assets: str | None = None  # the assets folder as the worker sees it, if any
        self.assets_unmatched: list[str] = []  # pinned assets whose staged copy did not match (left out)
        self.start_timeout = start_timeout
        self.proc: subprocess.Popen | None = None
        self.ctl: socket.socket | None = None
        self.tmp: str | None = None
        self.kind = "none"
        self.startup_s = 0.0
        self._seq = itertools.count()
        self.ready: dict = {}
        self._server: int | None = None  # the fork server's host pid, once looked up
        self._lease: uids.Lease | None = None  # the uid this sandbox's processes run as (root only)
        self._wall: int | None = None  # limits-only as root: the uid whose processes close() kills
        self.group: cgroups.Group | None = None  # bounds the memory and tasks of the whole sandbox
        self._baseline_mb = 0.0  # the fork server's own memory, charged to the group
        self._memory_cap: float | None = None  # the group's memory cap in MB, as last set
        self._cpu_done = 0.0  # CPU seconds of the groups of earlier starts (a restart makes a new group)
        self.proven = False  # started once: a later failure to start is a fault, the first is SandboxUnavailable
        self._owner = os.getpid()  # the process that started the fork server (its parent)

    # ------------------------------------------------------------------ lifecycle
    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.close()

    def start(self) -> None:
        """Launch the fork server and wait until it is ready."""
        self.launch()
        self.wait_ready()

    def launch(self) -> None:
        """Launch the fork server without waiting (its torch import overlaps other work)."""
        self._t0 = time.perf_counter()
        self.tmp = tempfile.mkdtemp(prefix="kata-worker-")
        runtime = os.path.join(self.tmp, "runtime")
        shutil.copytree(RUNTIME_SRC, os.path.join(runtime, "kata_worker"), ignore=shutil.ignore_patterns("__pycache__"))
        # The workers' output files: on the host, in a folder the sandbox never sees. Each worker
        # gets its own, opened here and passed in as its stdout/stderr, and removed when it ends.
        self.logs = os.path.join(self.tmp, "logs")
        os.mkdir(self.logs, 0o700)
        self.workdir = os.path.join(self.tmp, "work")  # limits-only: the writable folder, on the host
        os.mkdir(self.workdir)
        os.chmod(self.tmp, 0o755)
        os.chmod(self.workdir, 0o1777)
        if self._lease is None:
            self._lease = uids.Lease(start=os.getpid())
        assets = None
        if self.assets_dir and os.path.isdir(self.assets_dir):
            # Staged beside the runtime: a bind mount shows its source folder in the sandbox's
            # /proc/self/mountinfo, and the course's own assets folder names the course's path.
            assets = os.path.join(self.tmp, "assets")
            self.assets_unmatched = []
            shutil.copytree(self.assets_dir, assets, symlinks=False, copy_function=self._stage, ignore=self._unstaged)
            for folder, _dirs, _files in os.walk(assets):  # copytree kept the folders' modes (000 shut the worker out)
                os.chmod(folder, 0o755)
        try:
            p = sandbox.plan(
                runtime,
                self.submission_dir,
                self.workdir,
                self.hide,
                assets,
                tmp_mb=self.limits.disk_mb,
                uid=self._lease.uid,
                proc_dir=os.path.join(self.tmp, "proc"),
            )
        except sandbox.SandboxUnavailable:
            self.close()
            raise
        self.kind = p.kind
        self.assets = p.assets
        argv = p.argv
        uid = p.uid
        self._wall = uid if p.kind != "bubblewrap" else None
        if self._wall is not None and not self._raise_wall(uid, runtime, assets):
            self._wall = uid = None  # its Python is out of that uid's reach: as before, the grader's own user
        if self._wall is not None:
            sandbox._WALLED.add(self._wall)
        if p.kind == "bubblewrap" or self._wall is not None:
            self.group = cgroups.Group.create(
                f"kata-{self._lease.uid or os.getpid()}-{os.path.basename(self.tmp)}",
                max_tasks=(self.limits.nproc or 512) + 64,
            )
        self._memory_cap = None
        if self.group is not None:
            self.group.limit_memory(self.limits.memory_mb + self.limits.disk_mb)  # until the first worker
            argv = self.group.wrap(argv)
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        config = {
            "ctl_fd": child.fileno(),
            "submission": p.submission,
            "workdir": p.workdir,
            "private_tmp": p.kind == "bubblewrap",
            "tmp_mb": self.limits.disk_mb,
            "uid": uid,
            "tmp_binds": p.tmp_binds,
            "limits": self.limits.as_dict(),
        }
        self._owner = os.getpid()
        self.proc = subprocess.Popen(
            argv + [json.dumps(config)],
            pass_fds=[child.fileno()],
            env=sandbox.clean_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=open(os.path.join(self.tmp, "sandbox.log"), "wb"),
            start_new_session=True,
        )
        child.close()
        self.ctl = parent
        self.ready = {}

    def _unstaged(self, folder: str, names: list[str]) -> list[str]:
        """What the sandbox's copy leaves out (shutil.copytree's ignore): a link (dangling, or to a
        host path the sandbox cannot see) and anything but a plain file or folder (a pipe, a device).
        A pinned asset left out is unmatched, so that grading the exercises that read it stops."""
        from ..course import pins

        out = []
        for name in names:
            path = os.path.join(folder, name)
            try:
                st = os.lstat(path)
            except OSError:
                st = None
            if st is None or not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                out.append(name)
                if pins.pin(name) is not None:
                    self.assets_unmatched.append(name)
        return out

    def _stage(self, src: str, dst: str) -> None:
        """One file of the assets folder into the sandbox's own copy (shutil.copytree's copy_function):
        the files the course pins as a verified copy, the others as a link or a copy."""
        from ..course import pins

        name = os.path.basename(src)
        if pins.pin(name) is None:
            _link_or_copy(src, dst)
        elif not _stage_pinned(src, dst):
            self.assets_unmatched.append(name)

    def _raise_wall(self, uid: int, runtime: str, assets: str | None) -> bool:
        """Limits-only as root: the fork server runs as `uid` with no namespace to hide anything
        (sandbox.py, the uid wall). What it needs (the runtime, the assets, the submission's copy)
        is made reachable to that uid; the report says "limits-only (own uid)" only when none of
        the paths to hide is readable by it (sandbox.secrets: the course's checks, fixtures,
        solutions and settings, file by file, and those of every grader package the worker's own
        Python reaches) and none it must not write is writable (the results folder), else plain
        "limits-only", whose score could be forged. False where that uid cannot run the grader's
        Python (an interpreter under /root): the worker then runs as the grader's user, as plain
        limits-only always did."""
        for top in filter(None, (runtime, assets)):
            for dirpath, _dirs, names in os.walk(top):
                os.chmod(dirpath, 0o755)
                for name in names:
                    path = os.path.join(dirpath, name)
                    if not os.path.islink(path):
                        os.chmod(path, os.stat(path).st_mode & 0o7777 | 0o444)
        sandbox.open_path(self.submission_dir, uid)
        needed = [sandbox.sandbox_python(), *sandbox._python_roots(), runtime, self.submission_dir]
        reached = sandbox.readable_by(uid, needed)
        if reached is None or len(reached) < len(needed):
            return False
        # The proof covers every copy of something hidden as this grader sees it, not only the
        # course it runs from: the grader package the worker's own Python imports (an editable
        # install of a readable checkout let a worker read its checks, fixtures and solutions into
        # a public message while the report said "own uid"), and what the Gradescope step guards.
        leaked = sandbox.readable_by(uid, sandbox.secrets(self.hide))
        written = sandbox.writable_by(uid, sandbox.guarded_writes())
        self.kind = sandbox.LIMITS_ONLY_UID if leaked == [] and written == [] else "limits-only"
        return True

    def wait_ready(self) -> None:
        if self.ready:
            return
        if self.ctl is None:
            self.launch()
        try:
            self.ready = self._ctl_reply(self.start_timeout)
        except WorkerFault:
            log = Path(self.tmp, "sandbox.log").read_text(errors="replace")[-2000:].strip()
            kind = self.kind
            self.close()
            if not self.proven and kind == "bubblewrap":  # the sandbox itself, not the student's code
                lines = [line for line in log.splitlines() if line.startswith("bwrap:")] or log.splitlines()[-1:]
                raise sandbox.SandboxUnavailable(
                    t("sandbox_failed", cause=lines[-1] if lines else "no message")
                ) from None
            raise WorkerFault("start", t("fault_start", log=log)) from None
        self.proven = True
        self.startup_s = time.perf_counter() - self._t0
        if self.group is not None:
            self._baseline_mb = self.group.usage_mb()

    def readiness(self) -> dict:
        """What wait_ready learnt, for a process forked before it was ready (adopt)."""
        return {"ready": self.ready, "startup_s": self.startup_s, "baseline_mb": self._baseline_mb}

    def adopt(self, readiness: dict) -> None:
        """Take what the process that waited for the fork server's "ready" learnt (readiness):
        a copy forked before that, which must not wait for the one message itself."""
        self.ready, self.proven = readiness["ready"], True
        self.startup_s, self._baseline_mb = readiness["startup_s"], readiness["baseline_mb"]

    def cpu_seconds(self) -> float | None:
        """CPU seconds of every process this sandbox has run, across restarts; None where its
        cgroup does not count CPU time (or there is no cgroup)."""
        used = self.group.cpu_s() if self.group is not None else None
        return None if used is None else self._cpu_done + used

    def alive(self) -> bool:
        if self.proc is None:
            return False
        if self._owner != os.getpid():  # a process forked from the owner (the warm grader's lanes):
            return _running(self.proc.pid)  # poll() there says ECHILD, which Popen takes for "exited"
        return self.proc.poll() is None

    def close(self) -> None:
        """End the fork server and everything it started, and remove the sandbox's folder. Limits-only
        as root, the sweep of the leased uid (every process of it killed and waited for) comes first
        and is in a `finally` that nothing here skips: a submission that killed its fork server and
        left a daemon and a folder tree 3,000 deep once made the removal raise before the sweep, and
        the daemon outlived the grading. The folder is removed without recursion (files.remove_tree)."""
        try:
            self._sweep()
        finally:
            try:
                if self.proc is not None:
                    try:
                        os.killpg(self.proc.pid, signal.SIGKILL)
                    except (ProcessLookupError, PermissionError):
                        pass
                    self.proc.wait()
                    self.proc = None
                if self.ctl is not None:
                    self.ctl.close()
                    self.ctl = None
                self.ready = {}
                self._server = None
            finally:
                try:
                    # again: a fork server killed while it still ran as root forked nothing as that
                    # uid, but one killed just after dropping to it may have; none is left after this
                    self._sweep()
                    self._wall = None
                finally:
                    if self.tmp:
                        files.remove_tree(self.tmp)
                        self.tmp = None
                    if self.group is not None:
                        self._cpu_done += self.group.cpu_s() or 0.0
                        self.group.remove()
                        self.group = None
                    if self._lease is not None:  # every process of that uid is gone (or its sandbox's pid namespace)
                        self._lease.release()
                        self._lease = None

    def _sweep(self) -> None:
        """Limits-only as root: no pid namespace ends with the fork server, so every process of the
        leased uid (a setsid daemon, an orphan of a fork server the submission killed) is killed and
        waited for, before the caller writes any result."""
        if getattr(self, "_wall", None) is not None and sandbox.kill_uid(self._wall):
            sandbox._WALLED.discard(self._wall)

    def restart(self) -> None:
        self.close()
        self.start()

    # ------------------------------------------------------------------ control
    def _server_pid(self) -> int | None:
        """The fork server's pid on the host: the process itself without bubblewrap, else the
        first process under bubblewrap's own two (the outer one and the namespace's init)."""
        if self.proc is None or self.kind != "bubblewrap":
            return self.proc.pid if self.proc else None
        pid = self.proc.pid
        for _ in range(3):
            kids = children(pid)
            if not kids:
                return None
            pid = min(kids)
            try:
                if Path(f"/proc/{pid}/comm").read_text().strip() != "bwrap":
                    return pid
            except OSError:
                return None
        return None

    def _ctl_reply(self, timeout: float) -> dict:
        """The fork server's next reply. Its workers run as its user and may stop it (SIGSTOP):
        a stopped server is continued instead of waited for."""
        deadline = time.monotonic() + timeout
        while True:
            ready, _, _ = select.select([self.ctl], [], [], max(0.0, min(0.25, deadline - time.monotonic())))
            if ready:
                break
            if time.monotonic() >= deadline:
                raise WorkerFault("timeout", t("fault_server_silent"))
            if self.ready:  # started: its pid can be looked up (while starting, bwrap is still setting up)
                self._continue_server()
        data = self.ctl.recv(65536)
        if not data:
            raise WorkerFault("crash", t("fault_server_stopped"))
        return json.loads(data)

    def _continue_server(self) -> None:
        if self._server is None:
            self._server = self._server_pid()
        if self._server is None:
            return
        try:
            state = Path(f"/proc/{self._server}/stat").read_text().rsplit(")", 1)[1].split()[0]
            if state in ("T", "t"):
                os.kill(self._server, signal.SIGCONT)
        except (OSError, IndexError):
            pass

    def _ctl(self, msg: dict, fds=(), timeout: float = 10.0) -> dict:
        if not self.alive():
            raise WorkerFault("crash", t("fault_server_stopped"))
        try:
            socket.send_fds(self.ctl, [json.dumps(msg).encode()], list(fds))
            return self._ctl_reply(timeout)
        except OSError as e:
            raise WorkerFault("crash", t("fault_server_unreachable", error=e)) from None

    def spawn(self, limits: sandbox.Limits | None = None, preload: tuple[str, ...] = ()) -> "Worker":
        """A fresh worker process; restarts the fork server once if it died. `preload`: modules the
        fork server imports first, once, for this worker and every later one (an exercise's `preload`)."""
        msg: dict = {"op": "spawn"}
        if preload:
            msg["preload"] = list(preload)
        if limits is not None:
            if limits.nproc is None:
                limits.nproc = self.limits.nproc
            msg["limits"] = limits.as_dict()
        for attempt in (0, 1):
            try:
                self.wait_ready()
                oom_before = self._limit_group(limits or self.limits)
                ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
                log = os.path.join(self.logs, f"out-{next(self._seq)}.log")
                out = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
                try:
                    reply = self._ctl(msg, [theirs.fileno(), out])
                finally:
                    theirs.close()
                    os.close(out)
                if "pid" not in reply:
                    os.unlink(log)
                    raise WorkerFault("crash", t("fault_server_stopped"))
                return Worker(self, ours, int(reply["pid"]), log, limits or self.limits, oom_before)
            except WorkerFault:
                if attempt:
                    raise
                self.restart()
        raise AssertionError("unreachable")

    def _limit_group(self, limits: sandbox.Limits) -> int:
        """Cap the sandbox's total memory for the next worker: the fork server's own, plus the
        worker's limit, plus /tmp. Returns the group's count of OOM kills so far."""
        if self.group is None:
            return 0
        cap = self._baseline_mb + limits.memory_mb + self.limits.disk_mb
        if cap != self._memory_cap:  # the same exercise's next check keeps the cap it has
            # The last worker may still be ending (kill(status=False) does not wait): any answer
            # of the fork server comes after it has reaped it, so none of its memory counts here.
            self._ctl({"op": "sync"})
            self._memory_cap = cap if self.group.limit_memory(cap) else None
        return self.group.oom_kills()

    def running(self, pid: int) -> bool:
        """Whether worker `pid` is still alive, asked of the fork server (its parent)."""
        try:
            return bool(self._ctl({"op": "status", "pid": pid}).get("running"))
        except WorkerFault:
            return False

    def kill(self, pid: int, status: bool = True) -> dict:
        """End worker `pid`; its wait status when `status` (how a worker that died by itself ended),
        else the fork server answers at once and reaps it (the teardown of a worker holding torch
        takes milliseconds) while the grader goes on."""
        try:
            return self._ctl({"op": "kill", "pid": pid, "wait": status})
        except WorkerFault:
            self.restart()  # the fork server itself is gone or wedged: start over
            return {"signal": signal.SIGKILL, "server_restarted": True}


def _running(pid: int) -> bool:
    """Whether `pid` runs (not a zombie), asked of /proc: for a process that is not our child."""
    if not os.path.isdir("/proc/self"):  # no /proc (macOS): alive, or a zombie its parent has not reaped
        try:
            os.kill(pid, 0)
            return True
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


def _stage_pinned(src: str, dst: str) -> bool:
    """Copy a pinned asset (never a link: a file changed in place later would change the sandbox's
    too) and keep the copy only when it matches the course's pin; False when it did not."""
    from ..course import pins

    shutil.copyfile(src, dst)
    os.chmod(dst, 0o644)  # the worker's uid reads it, whatever the course's file allows
    if pins.matches(Path(dst), os.path.basename(src)):
        return True
    os.unlink(dst)
    return False


def _link_or_copy(src: str, dst: str) -> None:
    """A hard link where the two folders share a file system (no copy of the data), else a copy."""
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)


class Worker:
    """One worker process: import an exercise, call into it. Not reusable after a fault."""

    POLL_S = 0.5  # how often a long call asks whether its worker still lives

    def __init__(
        self, box: Sandbox, sock: socket.socket, pid: int, log_path: str, limits: sandbox.Limits, oom_before: int = 0
    ):
        self.box = box
        self.oom_before = oom_before
        self.limits = limits
        self.sock = sock
        self.pid = pid
        self.log_path = log_path
        self.ids = itertools.count(1)
        self.dead = False
        self.fault: WorkerFault | None = None
        self.deadline: float | None = None  # of the last request (time.monotonic())
        self.deadline_s = 0.0  # its time limit in seconds

    def output_tail(self, n: int = 2000) -> str:
        try:
            with open(self.log_path, "rb") as f:
                f.seek(0, os.SEEK_END)
                size = f.tell()
                f.seek(max(0, size - n))
                return f.read().decode(errors="replace")
        except OSError:
            return ""

    MAX_QUESTIONS = 10_000  # calls of forwarded helpers one request may make (a flood ends the worker)

    def request(self, msg: dict, tensors=None, timeout: float = 10.0, stop=None, answer=None):
        """Send one request and wait for its reply. Returns (reply, tensors) or raises WorkerFault.
        `stop()`: asked between waits (every POLL_S); True ends the call as a "budget" fault (the
        submission's grading budget ran out while it ran). `answer(question, tensors, deadline)`:
        while the request runs, the worker may ask the grader questions (a call of a forwarded
        given helper, runtime/given.py's Forwarded); each is answered with the (message, tensors)
        this returns, at most MAX_QUESTIONS of them, all within the request's own time limit. A
        question where none is expected, or one too many, is a wire fault."""
        if self.fault is not None:  # repeat the first fault: retries see one consistent reason
            raise self.fault
        if self.dead:
            raise WorkerFault("crash", t("fault_stopped_earlier"))
        rid = next(self.ids)
        msg = dict(msg, id=rid)
        deadline = time.monotonic() + timeout
        self.deadline, self.deadline_s = deadline, timeout  # the reply's values are decoded by then too (decode())
        asked = 0
        try:
            self.sock.settimeout(timeout)
            wire.send(self.sock, msg, tensors)
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise socket.timeout
                # Wait in slices, and between them ask whether the worker still lives: children it
                # forked hold its socket open, so its death alone may never close the socket.
                if not select.select([self.sock], [], [], min(remaining, self.POLL_S))[0]:
                    if stop is not None and stop():
                        self._end()
                        self.fault = WorkerFault("budget", t("fault_budget"), t("fault_budget"))
                        raise self.fault
                    if not self.box.running(self.pid):
                        raise EOFError("the worker died")
                    continue
                reply, out = wire.recv(self.sock, deadline=deadline)
                if "callback" in reply:
                    asked += 1
                    if answer is None or asked > self.MAX_QUESTIONS:
                        raise wire.WireError(
                            f"the worker asked the grader more than {self.MAX_QUESTIONS if answer else 0} "
                            "questions in one call"
                        )
                    said, more = answer(reply, out, deadline)
                    self.sock.settimeout(max(0.001, deadline - time.monotonic()))
                    wire.send(self.sock, said, more)
                    continue
                if reply.get("id") == rid:
                    return reply, out
                # A reply to another request id: the worker wrote on its socket out of turn.
                raise wire.WireError("the worker answered out of turn")
        except (socket.timeout, TimeoutError, wire.Overtime):
            self._end()
            said = t("fault_timeout", seconds=f"{timeout:g}")
            self.fault = WorkerFault("timeout", said, said)
        except (EOFError, ConnectionError, BrokenPipeError):
            status = self._end()
            self.fault = WorkerFault("crash", *self._death_reason(status))
        except wire.WireError as e:
            self._end()
            self.fault = WorkerFault("wire", t("fault_wire", error=e))
        raise self.fault

    def decode(self, value, tensors):
        """The values of the last reply, decoded by that call's deadline. A reply that is not the
        wire format, or too long to decode, ends the worker: a WorkerFault like any other."""
        try:
            return wire.decode(value, tensors, deadline=self.deadline)
        except wire.WireError as e:
            self._end()
            if isinstance(e, wire.Overtime):
                said = t("fault_timeout", seconds=f"{self.deadline_s:g}")
                self.fault = WorkerFault("timeout", said, said)
            else:
                self.fault = WorkerFault("wire", t("fault_wire", error=e))
            raise self.fault from None

    def _death_reason(self, status: dict) -> tuple[str, str | None]:
        """Why the worker died, and what a hidden check may say of it (None: only that it ended)."""
        if "exitcode" in status:
            return t("fault_exit", code=status["exitcode"]), None
        sig = status.get("signal")
        group = self.box.group
        if sig is not None and group is not None and group.oom_kills() > self.oom_before:
            said = t("fault_memory_total", memory_mb=self.limits.memory_mb)  # the grader's limit
            return said, said
        if sig is not None:
            try:
                key = SIGNAL_REASONS.get(signal.Signals(sig), "signal_other")
            except ValueError:
                key = "signal_other"
            said = t("fault_signal", why=Msg.key(key, signal=sig, output_mb=self.limits.output_mb))
            return said, (said if sig in LIMIT_SIGNALS else None)
        return t("fault_stopped"), None

    def _end(self, status: bool = True) -> dict:
        self.dead = True
        try:
            self.sock.close()
        except OSError:
            pass
        return self.box.kill(self.pid, status)

    def close(self) -> None:
        if not self.dead:
            self._end(status=False)  # the check is over: how the worker ends tells nobody anything
        try:  # up to output_mb of the host's disk per worker, and only while it runs
            os.unlink(self.log_path)
        except OSError:
            pass
