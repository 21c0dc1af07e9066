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
