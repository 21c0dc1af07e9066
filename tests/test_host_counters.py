"""No counter the whole host shares passes from one check to the next (issue 37, item 3).

A hidden check's code moves a host-wide counter by its secret input; a later public check's code
reads the counter and returns it into its message. Through the real sandbox, one fresh worker per
check as the grader runs them. `benchmarks/host_counters.py` measures the bits per check.
"""

import os
import shutil

import pytest

from grader.worker.client import Sandbox
from grader.worker.host_view import files
from grader.worker.proxy import Remote

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")

MIB = 1 << 20
SECRET = 173
SOURCE = '''
import ctypes, os

COVERED = %r


def _field(path, name):
    with open(path) as f:
        for line in f:
            parts = line.replace(":", " ").split()
            if parts and parts[0] == name:
                return int(parts[1])


def _sysinfo():
    libc = ctypes.CDLL(None, use_errno=True)
    buf = ctypes.create_string_buffer(256)
    return [libc.sysinfo(buf), ctypes.get_errno()]


def receive():
    texts = {}
    for path in COVERED:
        try:
            with open(path) as f:
                texts[path] = f.read()
        except OSError as e:
            texts[path] = e.strerror
    return {"processes": _field("/proc/stat", "processes"), "cached": _field("/proc/meminfo", "Cached"),
            "texts": texts, "cpus": os.cpu_count(), "sysinfo": _sysinfo(), "mem_total": _field("/proc/meminfo", "MemTotal")}


def send(secret):
    """Fork until `processes` is the secret modulo 256; evict a file from the page cache and read
    `secret` MiB of it back."""
    first = _field("/proc/stat", "processes")
    for n in range(300):
        now = _field("/proc/stat", "processes")
        if now %% 256 == secret or (n == 8 and now == first):  # reached, or it does not move
            break
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
    fd = os.open("/assets/big.bin", os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    for _ in range(secret):
        os.read(fd, 1 << 20)
    os.close(fd)
    return 0
''' % (sorted(files()),)


def _planted(tmp_path, source: str):
    """A submission folder whose ch01/counters.py is `source`, readable by the sandbox's uid."""
    sub = tmp_path / "sub" / "ch01"
    sub.mkdir(parents=True)
    (sub / "counters.py").write_text(source)
    for p in (tmp_path, tmp_path / "sub", sub):
        os.chmod(p, 0o755)
    os.chmod(sub / "counters.py", 0o644)
    return tmp_path / "sub"


def _call(box, name, *args):
    worker = box.spawn()
    try:
        remote = Remote(worker, "counters", 60.0, assets=box.assets)
        remote._import("ch01/counters.py", [], "")
        return getattr(remote, name)(*args)
    finally:
        worker.close()


@needs_bwrap
def test_a_host_wide_counter_moved_by_a_hidden_check_reads_the_same_in_the_next(tmp_path):
    sub, assets = tmp_path / "sub" / "ch01", tmp_path / "assets"
    sub.mkdir(parents=True)
    assets.mkdir()
    (sub / "counters.py").write_text(SOURCE)
    with open(assets / "big.bin", "wb") as f:
        f.write(os.urandom(MIB) * 256)
        os.fsync(f.fileno())
    for p in (tmp_path, tmp_path / "sub", sub, assets):
        os.chmod(p, 0o755)
    for p in (sub / "counters.py", assets / "big.bin"):
        os.chmod(p, 0o644)
    with Sandbox(tmp_path / "sub", assets_dir=str(assets)) as box:
        assert box.kind == "bubblewrap"
        before = _call(box, "receive")  # an earlier public check
        _call(box, "send", SECRET)  # a hidden check
        after = _call(box, "receive")  # a later public check
    assert after["processes"] == before["processes"]  # before the fix: moved to SECRET (mod 256)
    assert after["cached"] == before["cached"]
    for path, text in before["texts"].items():
        assert after["texts"][path] == text, path
    with open("/proc/meminfo") as f:  # what programs ask of it stays true
        assert f"{after['mem_total']} kB" in f.readline()
    assert after["cpus"] == os.cpu_count()
    assert after["sysinfo"] == [-1, 1]  # sysinfo() of the whole host: refused (EPERM), no figure at all


SHM_SOURCE = '''
import ctypes, mmap, os


def _maps_inode(m):
    start = ctypes.addressof(ctypes.c_char.from_buffer(m))
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            if int(fields[0].split("-")[0], 16) == start:
                return int(fields[4])
    return -1


def shared_inode():
    """The number of a new shared anonymous mapping's file, from the counter of the kernel's one
    internal shmem mount (the outside attack's receiver); the error where it is refused."""
    os.sched_setaffinity(0, {0})  # the counter is taken in batches per CPU
    try:
        m = mmap.mmap(-1, 4096)
    except OSError as e:
        return ["refused", e.errno]
    try:
        return ["inode", _maps_inode(m)]
    finally:
        del m


def send(n):
    os.sched_setaffinity(0, {0})
    made = 0
    for _ in range(n):
        try:
            mmap.mmap(-1, 4096).close()
            made += 1
        except OSError:
            pass
    return made


def dev_zero():
    with open("/dev/zero", "rb") as f:
        read = len(f.read(8))
        try:
            mmap.mmap(f.fileno(), 4096, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
            shared = "mapped"
        except (OSError, ValueError) as e:
            shared = "OSError" if isinstance(e, OSError) else type(e).__name__
    return [read, shared]


def private():
    m = mmap.mmap(-1, 1 << 20, flags=mmap.MAP_PRIVATE)
    m[:5] = b"hello"
    return bytes(m[:5]).decode()
'''


@needs_bwrap
def test_shared_anonymous_memory_carries_no_number_from_one_check_to_the_next(tmp_path):
    """The outside attack of issue 37's second round: a hidden check made n shared anonymous mappings
    (mmap.mmap(-1, 4096)); each is a file of the kernel's one shmem mount, numbered from a counter
    the host shares, and a later public check read the next number in /proc/self/maps: 16 bits a
    check, exact. Shared anonymous mappings are refused (EPERM) and /dev/zero maps nothing, so the
    counter cannot be moved or read; private mappings, which every allocator uses, work as before."""
    with Sandbox(_planted(tmp_path, SHM_SOURCE)) as box:
        assert box.kind == "bubblewrap"
        before = _call(box, "shared_inode")
        made = _call(box, "send", 40)
        after = _call(box, "shared_inode")
        zero = _call(box, "dev_zero")
        private = _call(box, "private")
    assert before == after == ["refused", 1], (before, after)  # before the fix: ["inode", N], then N + 40 + ...
    assert made == 0
    assert zero == [0, "OSError"]  # /dev/zero reads as /dev/null: no shared mapping of it either
    assert private == "hello"


COOKIE_SOURCE = '''
import ctypes, os, socket


def probes():
    """What the third outside attack read and moved: a socket's cookie (SO_COOKIE), a new network
    namespace and its cookie, io_uring; and what a worker must still do: a thread, a fork."""
    out = {}
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        out["socket"] = int.from_bytes(s.getsockopt(socket.SOL_SOCKET, 57, 8), "little")
    except OSError as e:
        out["socket"] = e.errno
    try:
        a, b = socket.socketpair()
        out["socketpair"] = "made"
    except OSError as e:
        out["socketpair"] = e.errno
    libc = ctypes.CDLL(None, use_errno=True)
    out["unshare_user"] = ctypes.get_errno() if libc.unshare(0x10000000) else 0
    out["unshare_net"] = ctypes.get_errno() if libc.unshare(0x40000000) else 0
    out["io_uring"] = libc.syscall(425, 8, ctypes.create_string_buffer(120)) if os.uname().machine in (
        "x86_64", "aarch64") else -1
    out["io_uring_errno"] = ctypes.get_errno()
    import threading
    seen = []
    t = threading.Thread(target=lambda: seen.append(1))
    t.start()
    t.join()
    out["thread"] = seen == [1]
    pidfd = ctypes.c_int(-1)
    if os.uname().machine == "x86_64":  # clone(CLONE_PIDFD | SIGCHLD, stack 0, &pidfd, ...): a pidfd without pidfd_open
        child = libc.syscall(56, 0x1000 | 17, 0, ctypes.byref(pidfd), 0, 0)
        if child == 0:
            os._exit(0)
        out["clone_pidfd"] = ctypes.get_errno() if child < 0 else "made"
        if child > 0:
            os.waitpid(child, 0)
    else:
        out["clone_pidfd"] = 1
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    out["fork"] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    return out
'''


@needs_bwrap
def test_no_socket_cookie_or_new_namespace_in_a_worker(tmp_path):
    """The third outside attack of issue 37: a hidden check made n sockets and asked each its
    cookie (SO_COOKIE, a counter the whole host shares, 16 bits a check read back exactly), or made
    n network namespaces (their cookies, about 5 bits). A worker makes no socket, asks no cookie and
    makes no namespace; io_uring (sockets without the socket call) is refused; threads and forks work."""
    with Sandbox(_planted(tmp_path, COOKIE_SOURCE)) as box:
        got = _call(box, "probes")
    assert got["socket"] == 1 and got["socketpair"] == 1, got  # EPERM; before: a cookie, "made"
    assert got["unshare_user"] == 1 and got["unshare_net"] == 1, got
    assert got["io_uring"] == -1 and got["io_uring_errno"] == 1, got
    assert got["thread"] is True and got["fork"] == 7, got
    assert got["clone_pidfd"] == 1, got  # the fourth attack: a pidfd's inode is the host's process count
