"""Entry point of the sandbox: a small fork server ("zygote").

It imports torch once, drops privileges, then forks one fresh worker process per request,
so that every check gets a clean process in milliseconds instead of a new torch import.
The control channel is a SOCK_SEQPACKET socket inherited as a file descriptor; each worker
gets its own stream socket and its output file, both opened by the grader and passed in with
SCM_RIGHTS: the output file lives on the host outside the sandbox, so the worker can write it
only through its stdout and stderr, up to the output limit.

The fork server cannot be inspected by its workers (not dumpable: no ptrace, no reading its
memory, environment or file descriptors), and it is the "subreaper" of everything they start:
a process a worker leaves behind, even a daemon that double-forked into its own session, is
reparented to the server and killed when that worker ends. Then the working folder (and, inside
bubblewrap, all of /tmp) is emptied: no check sees what an earlier one left, so no state and no
hidden input passes from one check to the next, and each check has the whole /tmp to itself.
Each worker has IPC and network namespaces of its own, and under bubblewrap a /tmp of its own
(private_namespaces); the server checks before every fork that no worker changed it (own_settings);
each worker runs under a seccomp filter
(syscalls.py) against memory and state held outside its limits and past its check, and against
changing the settings of any other process (this server's I/O priority, nice value, scheduling,
CPUs and limits among them).

    python -m kata_worker '<json config>'
"""

from __future__ import annotations

import ctypes
import json
import os
import random
import resource
import signal
import socket
import stat
import sys
import time

MB = 1024 * 1024
INTERNAL_ERROR = 70  # the worker runtime itself failed, not the student's code


def drop_privileges(uid: int | None) -> None:
    if uid is None or os.getuid() != 0:
        return
    os.setgroups([])
    os.setgid(uid)
    os.setuid(uid)


PR_SET_DUMPABLE = 4
PR_SET_NO_NEW_PRIVS = 38
PR_SET_CHILD_SUBREAPER = 36
PR_GET_TIMERSLACK = 30


def prctl(option: int, value: int) -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(option, ctypes.c_ulong(value), 0, 0, 0)
    except (OSError, AttributeError):
        pass


CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000
CLONE_NEWNS = 0x00020000
MS_NOSUID, MS_NODEV, MS_REC, MS_PRIVATE = 0x2, 0x4, 0x4000, 0x40000
MS_RDONLY, MS_REMOUNT, MS_BIND = 0x1, 0x20, 0x1000
MNT_DETACH = 2
O_PATH = getattr(os, "O_PATH", 0o10000000)


def _bind_again(libc, path: str, fd: int) -> bool:
    """Bind the folder held open as `fd` (with every mount under it) at `path` in the new /tmp,
    read-only; its parents made 0755 (the new /tmp is the worker's own, and emptied with it)."""
    parent = os.path.dirname(path)
    try:
        os.makedirs(parent, 0o755, exist_ok=True)
        os.mkdir(path, 0o755)
    except OSError:
        return False
    target = os.fsencode(path)
    if libc.mount(f"/proc/self/fd/{fd}".encode(), target, None, MS_BIND | MS_REC, None) != 0:
        return False
    # Read-only already (bubblewrap's bind, locked in this user namespace); said again all the same.
    libc.mount(None, target, None, MS_REMOUNT | MS_BIND | MS_RDONLY, None)
    return os.statvfs(path).f_flag & os.ST_RDONLY != 0


def private_namespaces(tmp_mb: int | None = None, tmp_binds: list[str] | tuple = ()) -> bool:
    """Move this worker into namespaces of its own, so that nothing an earlier check left in a
    namespace the sandbox shares is reachable, and no counter that check moved can be read:
    - IPC: no System V or POSIX IPC object (the seccomp filter refuses making them as well);
    - network: no socket, TIME_WAIT connection or traffic counter (/proc/net) of an earlier check,
      which could carry its hidden inputs into a later check's message;
    - with `tmp_mb` (under bubblewrap): a mount namespace whose /tmp is a new tmpfs of that size,
      so no file and no inode number (tmpfs counts them up) of an earlier check is seen either.
      `tmp_binds`: the sandbox's read-only binds inside its /tmp (a Python or venv that lives under
      /tmp on the host: a clone in /tmp); the new /tmp would cover them, so each is bound again
      at its place in it, with every mount under it (recursive: what the sandbox hides there
      stays hidden, and read-only stays read-only). Where that fails the new /tmp is taken away
      again, and the worker shares the server's, which the server empties after every check.
    Unprivileged, that takes a user namespace of its own too: its uid and gid are mapped to
    themselves, and the capabilities the new namespace grants are dropped at once. False where the
    kernel refuses (no unprivileged user namespaces): the filter alone then keeps IPC empty, and
    the server's wipe of /tmp stays. Called after set_limits, so the new namespace counts
    processes against the same limit."""
    libc = ctypes.CDLL(None, use_errno=True)
    uid, gid = os.getuid(), os.getgid()
    flags = CLONE_NEWUSER | CLONE_NEWIPC | CLONE_NEWNET | (CLONE_NEWNS if tmp_mb else 0)
    if libc.unshare(flags) != 0:
        flags = CLONE_NEWUSER | CLONE_NEWIPC
        if libc.unshare(flags) != 0:
            return False
    for name, text in (("uid_map", f"{uid} {uid} 1"), ("setgroups", "deny"), ("gid_map", f"{gid} {gid} 1")):
        try:
            with open(f"/proc/self/{name}", "w") as f:
                f.write(text)
        except OSError:
            pass
    if flags & CLONE_NEWNS:
        # Private first, so the new /tmp never reaches the sandbox's own view; then a new tmpfs.
        # The binds under /tmp are held open first (O_PATH), to be bound again from there.
        held = []
        for path in tmp_binds:
            try:
                held.append((path, os.open(path, O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)))
            except OSError:
                pass
        try:
            if (
                libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) == 0
                and libc.mount(
                    b"tmpfs", b"/tmp", b"tmpfs", MS_NOSUID | MS_NODEV, f"size={int(tmp_mb)}m,mode=1777".encode()
                )
                == 0
            ):
                os.mkdir("/tmp/work", 0o1777)
                os.chmod("/tmp/work", 0o1777)
                if not all(_bind_again(libc, path, fd) for path, fd in held):
                    libc.umount2(b"/tmp", MNT_DETACH)  # the server's /tmp, binds and all, as without CLONE_NEWNS
        finally:
            for _path, fd in held:
                os.close(fd)

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    none = (Data * 2)()  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words of each set, all zero
    if libc.capset(ctypes.byref(Header(0x20080522, 0)), none) != 0:
        os._exit(INTERNAL_ERROR)  # never run student code holding capabilities
    return True


_RLIMITS = sorted(name for name in dir(resource) if name.startswith("RLIMIT_"))  # looked up once: checked per fork


def _libc():
    global _LIBC
    if _LIBC is None:
        _LIBC = ctypes.CDLL(None, use_errno=True)
    return _LIBC


_LIBC = None


def _kernel_settings() -> tuple:
    """This thread's I/O priority (class and level), real-time priority and its whole sched_attr
    (policy, flags, nice, deadline parameters and, where the kernel has them, utilisation clamps):
    what a worker could set on this server by ioprio_set or sched_setattr. None where unreadable."""
    import platform
    import struct

    from .syscalls import READ_NR

    numbers = READ_NR.get(platform.machine(), {})
    libc = _libc()
    ioprio = attr = None
    try:
        if "ioprio_get" in numbers:
            ioprio = libc.syscall(numbers["ioprio_get"], 1, 0)  # IOPRIO_WHO_PROCESS, this thread
        if "sched_getattr" in numbers:
            buf = ctypes.create_string_buffer(56)  # struct sched_attr, SCHED_ATTR_SIZE_VER1
            if libc.syscall(numbers["sched_getattr"], 0, buf, 56, 0) == 0:
                attr = struct.unpack("=IIQiIQQQII", buf.raw)[1:]  # its size aside
    except (OSError, AttributeError):
        pass
    try:
        param = os.sched_getparam(0).sched_priority
    except OSError:
        param = None
    return ioprio, param, attr


def own_settings() -> tuple:
    """What this process's workers inherit from it and could change in it, being its uid: its
    resource limits, scheduling priority, policy, real-time priority, CPUs and utilisation clamps,
    I/O priority, autogroup, OOM score and timer slack (`resource.prlimit(2, RLIMIT_AS, ...)` from
    a worker lowered the memory of every later one; an I/O class set by ioprio_set carried a hidden
    check's inputs into later checks). The seccomp filter refuses a worker these calls on any other
    process (syscalls.SETTINGS); this is the second line, compared before every fork."""
    limits = []
    for name in _RLIMITS:
        try:
            limits.append((name, resource.getrlimit(getattr(resource, name))))
        except (ValueError, OSError):
            pass
    files = []
    for f in ("autogroup", "oom_score_adj"):
        try:
            with open(f"/proc/self/{f}") as fh:
                files.append(fh.read().split("#")[-1].strip())  # "/autogroup-12 nice 0": the id may not matter
        except OSError:
            files.append(None)
    try:
        slack = _libc().prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)
    except (OSError, AttributeError):
        slack = None
    return (
        tuple(limits),
        os.getpriority(os.PRIO_PROCESS, 0),
        os.sched_getscheduler(0),
        tuple(sorted(os.sched_getaffinity(0))),
        tuple(files),
        slack,
        _kernel_settings(),
    )


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


def child(conn: socket.socket, config: dict, log: int, limits: dict | None) -> None:
    os.setpgid(0, 0)
    prctl(PR_SET_DUMPABLE, 1)  # its own /proc entries stay its own (the server is not dumpable)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGXFSZ, signal.SIG_DFL)  # Python ignores it; the output limit must stop the worker
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    # Every worker starts from the same generator states, so that a submission graded twice
    # draws the same "random" numbers. Python's generator is seeded from the OS again in every
    # forked child, so it is seeded here; torch's and numpy's are inherited as seed_generators()
    # left them in the server, which never draws from them (seeding them here took 15 ms a check).
    random.seed(0)
    set_limits(limits or config.get("limits", {}))
    private_namespaces(config.get("tmp_mb") if config.get("private_tmp") else None, config.get("tmp_binds") or ())
    from .syscalls import install

    install()
    os.chdir(config["workdir"])
    from .serve import Session

    Session(conn, config["submission"]).serve()


def seed_generators() -> None:
    """torch's and numpy's default generators as seed 0 leaves them, for every worker to inherit."""
    random.seed(0)
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(0)
    if "numpy" in sys.modules:
        sys.modules["numpy"].random.seed(0)


def describe(status: int) -> dict:
    """A wait status as the client reads it."""
    if os.WIFSIGNALED(status):
        return {"signal": os.WTERMSIG(status)}
    return {"exitcode": os.WEXITSTATUS(status)}


def children(pid: int | None = None) -> set[int]:
    """The direct children of `pid` (default: this server: its workers, and whatever they left
    behind, as their subreaper)."""
    pid = pid or os.getpid()
    found: set[int] = set()
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                found.update(int(c) for c in f.read().split())
        return found
    except FileNotFoundError:  # a kernel without CONFIG_PROC_CHILDREN: read every parent pid
        pass
    except (OSError, ValueError):
        return found
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as f:
                if entry.isdigit() and int(f.read().rsplit(")", 1)[1].split()[1]) == pid:
                    found.add(int(entry))
        except (OSError, ValueError, IndexError):
            pass
    return found


def sweep(live: set[int], statuses: dict[int, dict], budget_s: float = 2.0) -> int:
    """Kill every child that is not a live worker: the processes an ended worker left running
    (threads die with their process; children, grandchildren and daemons come back here). Each
    round kills the current strays and reaps them, which makes their own children ours."""
    killed = 0
    deadline = time.monotonic() + budget_s
    while time.monotonic() < deadline:
        strays = children() - live
        if not strays:
            break
        for pid in strays:
            for target in (os.killpg, os.kill):
                try:
                    target(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        for pid in strays:
            try:
                _, status = os.waitpid(pid, 0)
                statuses.setdefault(pid, describe(status))
                killed += 1
            except ChildProcessError:
                pass
    return killed


def _quietly(fn, *args, **kwargs) -> bool:
    try:
        fn(*args, **kwargs)
        return True
    except OSError:
        return False


def empty_folder(folder: str, keep: frozenset = frozenset()) -> None:
    """Delete everything in `folder` but the names in `keep`, never crossing into another file
    system: when the grader's Python lives under /tmp (a checkout in /tmp), its read-only bind
    mounts sit inside the sandbox's /tmp, and walking them after every check cost seconds.

    Every subfolder is first moved up into `folder` itself, and emptied there: a tree nested
    thousands deep, whose paths are longer than the kernel takes (PATH_MAX), is taken apart one
    level at a time, through two descriptors and names of one component, so none of it survives
    into the next check."""
    try:
        top = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return
    try:
        dev = os.fstat(top).st_dev
        todo = [n for n in os.listdir(top) if n not in keep]
        moved = 0
        while todo:
            name = todo.pop()
            try:
                st = os.lstat(name, dir_fd=top)
            except OSError:
                continue
            if st.st_dev != dev:
                continue  # a mount point: not ours to empty
            if not stat.S_ISDIR(st.st_mode):
                _quietly(os.unlink, name, dir_fd=top)
                continue
            if st.st_mode & stat.S_IRWXU != stat.S_IRWXU:  # a folder the worker made unreadable: open it up
                _quietly(os.chmod, name, stat.S_IRWXU, dir_fd=top)
            try:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
            except OSError:
                continue
            try:
                for child in os.listdir(fd):
                    try:
                        cst = os.lstat(child, dir_fd=fd)
                    except OSError:
                        continue
                    if cst.st_dev != dev:
                        continue
                    if not stat.S_ISDIR(cst.st_mode):
                        _quietly(os.unlink, child, dir_fd=fd)
                        continue
                    for _ in range(64):  # up into `folder`, under a name not taken there
                        moved += 1
                        up = f".kata-wipe-{moved}"
                        if _quietly(os.rename, child, up, src_dir_fd=fd, dst_dir_fd=top):
                            todo.append(up)
                            break
            finally:
                os.close(fd)
            _quietly(os.rmdir, name, dir_fd=top)
    finally:
        os.close(top)


def wipe(config: dict) -> None:
    """Empty the working folder, and /tmp too when it is the sandbox's own (bubblewrap)."""
    work = os.path.realpath(config["workdir"])
    empty_folder(work)
    if config.get("private_tmp"):
        # The folders that lead to a bind under /tmp (a venv in a clone under /tmp) stay, emptied
        # of everything else: moved or removed, they would take the bind from later workers.
        keep: dict[str, set[str]] = {"/tmp": {os.path.basename(work)} if os.path.dirname(work) == "/tmp" else set()}
        for path in config.get("tmp_binds") or ():
            while os.path.dirname(path) != path and path != "/tmp":
                keep.setdefault(os.path.dirname(path), set()).add(os.path.basename(path))
                path = os.path.dirname(path)
        for folder in sorted(keep, key=len):
            empty_folder(folder, frozenset(keep[folder]))


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
    # And one frame each way, as a call makes: what the codecs set up on first use is set up once.
    from . import wire

    doc, tensors = wire.encode([torch.ones(2), 1.5, (1, "a")])
    frame = wire.pack({"ok": True, "value": doc}, tensors)
    wire.decode(doc, wire.load_tensors(frame[wire.HEADER.size + wire.HEADER.unpack(frame[: wire.HEADER.size])[0] :]))
    # Everything loaded so far is shared with every worker, copy-on-write: frozen out of the cyclic
    # garbage collector, a worker's collections never walk (and so never copy) torch's objects.
    seed_generators()
    import gc

    gc.collect()
    gc.freeze()
    drop_privileges(config.get("uid"))
    prctl(PR_SET_NO_NEW_PRIVS, 1)  # nothing it or a worker runs regains a privilege (a setuid program)
    prctl(PR_SET_DUMPABLE, 0)
    prctl(PR_SET_CHILD_SUBREAPER, 1)
    statuses: dict[int, dict] = {}
    live: set[int] = set()
    settings = own_settings()
    tried: set[str] = set()  # modules a spawn asked to be shared (an exercise's `preload`), imported once

    def reap():
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            statuses[pid] = describe(status)
            live.discard(pid)

    ctl.send(json.dumps({"ready": True, "pid": os.getpid(), "uid": os.getuid(), "torch": torch.__version__}).encode())
    while True:
        try:
            data, fds, _flags, _addr = socket.recv_fds(ctl, 65536, 2)
        except (ConnectionError, OSError):
            return
        if not data:
            return
        msg = json.loads(data)
        op = msg.get("op")
        cleanup = False
        if op == "spawn":
            if len(fds) != 2:
                for fd in fds:
                    os.close(fd)
                ctl.send(json.dumps({"error": "spawn needs a socket and an output file"}).encode())
                continue
            if own_settings() != settings:
                # A worker changed this server (its limits, priority, CPUs...), which every later
                # worker would inherit, in this submission and the next: stop, and the grader
                # starts a new sandbox for the next check.
                for fd in fds:
                    os.close(fd)
                ctl.send(json.dumps({"error": "the fork server was changed by a worker"}).encode())
                return
            wanted = [m for m in msg.get("preload") or () if isinstance(m, str) and m not in tried]
            if wanted:  # imported here, by the grader's word, before this worker: every later one shares them
                for name in wanted:
                    tried.add(name)
                    try:
                        __import__(name)
                    except Exception:  # not installed, or broken: the exercise that imports it says so
                        pass
                seed_generators()  # whatever an import drew, every worker starts from the same states
                settings = own_settings()
            conn = socket.socket(fileno=fds[0])
            log = fds[1]
            pid = os.fork()
            if pid == 0:
                code = 0
                try:
                    ctl.close()
                    child(conn, config, log, msg.get("limits"))
                except BaseException:
                    import traceback

                    traceback.print_exc()
                    code = INTERNAL_ERROR
                finally:
                    os._exit(code)
            conn.close()
            os.close(log)
            live.add(pid)
            reply = {"pid": pid}
        elif op == "kill":
            pid = int(msg["pid"])
            for target in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
                try:
                    target()
                except (ProcessLookupError, PermissionError):
                    pass
            if msg.get("wait", True):  # how it ended is asked for: wait for it
                try:
                    _, status = os.waitpid(pid, 0)
                    statuses[pid] = describe(status)
                except ChildProcessError:
                    pass
            reply = dict(statuses.get(pid, {"signal": signal.SIGKILL}))
            cleanup = True  # after the reply: the grader goes on while this server cleans up
        elif op == "sync":  # answered once the requests before it are done, their clean-up included
            reply = {"ok": True}
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
        if cleanup:
            # The ended worker, what it left (its processes) and, once no worker lives, every file
            # in /tmp. Done before this server reads its next request, so no worker it forks later
            # sees any of it; done after the reply, so the grader's own work overlaps it.
            try:
                _, status = os.waitpid(pid, 0)
                statuses.setdefault(pid, describe(status))
            except ChildProcessError:
                pass
            live.discard(pid)
            sweep(live, statuses)
            if not live:
                wipe(config)


if __name__ == "__main__":
    main()
