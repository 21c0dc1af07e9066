"""Entry point of the sandbox: a small fork server ("zygote").

It imports torch once, drops privileges, then forks one fresh worker process per request,
so that every check gets a clean process in milliseconds instead of a new torch import.
The control channel is a SOCK_SEQPACKET socket inherited as a file descriptor; each worker
gets its own stream socket, passed in with SCM_RIGHTS.

    python -m kata_worker '<json config>'
"""
from __future__ import annotations

import json
import os
import resource
import signal
import socket
import sys

MB = 1024 * 1024
INTERNAL_ERROR = 70  # the worker runtime itself failed, not the student's code


def drop_privileges(uid: int | None) -> None:
    if uid is None or os.getuid() != 0:
        return
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


def set_limits(limits: dict) -> None:
    def cap(which, value):
        if value is None:
            return
        try:
            resource.setrlimit(which, (int(value), int(value)))
        except (ValueError, OSError):
            pass

    cap(resource.RLIMIT_AS, limits.get("memory_mb") and limits["memory_mb"] * MB)
    cpu = limits.get("cpu_s")
    if cpu:
        try:
            resource.setrlimit(resource.RLIMIT_CPU, (int(cpu), int(cpu) + 2))
        except (ValueError, OSError):
            pass
    cap(resource.RLIMIT_FSIZE, limits.get("output_mb") and limits["output_mb"] * MB)
    cap(resource.RLIMIT_NPROC, limits.get("nproc"))
    cap(resource.RLIMIT_NOFILE, limits.get("nofile", 256))
    cap(resource.RLIMIT_CORE, 0)


def child(conn: socket.socket, config: dict, log_name: str, limits: dict | None) -> None:
    os.setpgid(0, 0)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; the output limit must stop the worker
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    log = os.open(os.path.join(config["workdir"], log_name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    set_limits(limits or config.get("limits", {}))
    os.chdir(config["workdir"])
    from .serve import Session

    Session(conn, config["submission"]).serve()


def describe(status: int) -> dict:
    """A wait status as the client reads it."""
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return {"exitcode": os.WEXITSTATUS(status)}


def main() -> None:
    config = json.loads(sys.argv[1])
    ctl = socket.socket(fileno=int(config["ctl_fd"]))
    import torch  # noqa: F401  (the expensive import every worker shares)
    import safetensors.torch  # noqa: F401

    from . import serve  # noqa: F401
    from .guard import Guard, OpGuard

    torch.set_num_threads(1)
    # Enter the guards once so that any lazy set-up they need is shared by every forked worker.
    with Guard("warm-up", ["torch.softmax"]), OpGuard("warm-up", ["aten::_softmax"]):
        (torch.ones(2, 2) @ torch.ones(2, 2)).exp().sum()
    drop_privileges(config.get("uid"))
    statuses: dict[int, dict] = {}

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            statuses[pid] = describe(status)

    ctl.send(json.dumps({"ready": True, "pid": os.getpid(), "uid": os.getuid(),
                         "torch": torch.__version__}).encode())
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(ctl, 65536, 1)
        except (ConnectionError, OSError):
            return
        if not data:
            return
        msg = json.loads(data)
        op = msg.get("op")
        if op == "spawn":
            conn = socket.socket(fileno=fds[0])
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    ctl.close()
                    child(conn, config, msg["log"], msg.get("limits"))
                except BaseException:
                    import traceback
                    traceback.print_exc()
                    code = INTERNAL_ERROR
                finally:
                    os._exit(code)
            conn.close()
            reply = {"pid": pid}
        elif op == "kill":
            pid = int(msg["pid"])
            for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    target()
                except (ProcessLookupError, PermissionError):
                    pass
            try:
                _, status = os.waitpid(pid, 0)
                statuses[pid] = describe(status)
            except ChildProcessError:
                pass
            reply = statuses.get(pid, {"signal": signal.SIGKILL})
        elif op == "status":
            pid = int(msg["pid"])
            if pid not in statuses:
                try:
                    got, status = os.waitpid(pid, 0 if msg.get("wait") else os.WNOHANG)
                    if got:
                        statuses[pid] = describe(status)
                except ChildProcessError:
                    pass
            reply = statuses.get(pid, {"running": True})
        else:
            reply = {"error": f"unknown op {op!r}"}
        reap()
        ctl.send(json.dumps(reply).encode())


if __name__ == "__main__":
    main()
