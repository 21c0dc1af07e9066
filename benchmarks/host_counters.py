"""How many bits of a hidden input a host-wide counter carries from one check to the next.

    python benchmarks/host_counters.py [--trials 20] [--channels processes,cached,freeram,pid]

Drives the real sandbox as the grader does (grader/worker/client.py: one fork server under
bubblewrap, a fresh worker process per check) with a planted "submission" of three functions,
each called in a worker of its own, as three consecutive checks would call them:

  baseline()      an earlier public check: reads the counters (its value is shown to the student)
  send(ch, s)     a hidden check: moves channel `ch` by the secret byte s
  receive()       a later public check: reads the counters again

and decodes s from what the two public checks returned. Channels:

  processes  /proc/stat `processes` (forks since boot): fork until it is s modulo 256
  cached     /proc/meminfo `Cached`: evict a 320 MiB file of the assets from the page cache
             (posix_fadvise DONTNEED), then read s MiB of it back
  freeram    sysinfo()'s freeram, moved by the same eviction and reading
  pid        the pid of the next worker in the sandbox's own pid namespace: fork s times
  clock      when the next check starts: sleep s * 20 ms (what no file can fix)
  shm        the inode of a new shared anonymous mapping (/proc/self/maps), from the counter of the
             kernel's one internal shmem mount: make s of them (refused in workers since issue 37)
  inode      the inode of a new /proc entry, from the kernel's host-wide get_next_ino counter that
             pipes, sockets and procfs share: stat /proc/self/fd/N of s new descriptors
  (shm and inode pin sender and receiver to CPU 0: both counters are handed out in batches per CPU)

Each channel's constant offset (the forks and pages of the grader's own between two checks) is
calibrated on 3 known bytes first; then `--trials` random bytes are sent. For each channel it
prints how many decode exactly, the largest error, and the bits per check that get through
reliably at that error: log2(256 / (2 * error + 1)), 0 where no byte decodes within 16.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

BIG_MIB = 320
STEP_S = 0.02  # the clock channel's unit
SOURCE = """
import ctypes, os, time

BIG = "/assets/big.bin"
MIB = 1 << 20
STEP_S = <<STEP_S>>


def _field(path, name):
    with open(path) as f:
        for line in f:
            parts = line.replace(":", " ").split()
            if parts and parts[0] == name:
                return int(parts[1])
    return -1


def _sysinfo_freeram_kb():
    buf = ctypes.create_string_buffer(256)
    if ctypes.CDLL(None, use_errno=True).sysinfo(buf) != 0:
        return -1
    freeram = int.from_bytes(buf.raw[40:48], "little")  # struct sysinfo on 64-bit Linux: after uptime, loads, totalram
    unit = int.from_bytes(buf.raw[104:108], "little") or 1
    return freeram * unit // 1024


def _pin():
    try:
        os.sched_setaffinity(0, {0})
    except OSError:
        pass


def _shm_inode():
    import mmap
    try:
        m = mmap.mmap(-1, 4096)
    except OSError:
        return -1
    start = ctypes.addressof(ctypes.c_char.from_buffer(m))
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            if int(fields[0].split("-")[0], 16) == start:
                return int(fields[4])
    return -1


def counters():
    _pin()
    inode = os.stat("/proc/self/status").st_ino
    return {"processes": _field("/proc/stat", "processes"), "cached": _field("/proc/meminfo", "Cached"),
            "freeram": _sysinfo_freeram_kb(), "pid": os.getpid(), "clock": time.time(), "inode": inode,
            "shm": _shm_inode()}


def baseline(channel):
    if channel in ("cached", "freeram"):  # the whole file in the page cache, as a reader before it left it
        with open(BIG, "rb") as f:
            while f.read(8 * MIB):
                pass
    return counters()


def send(channel, secret):
    if channel == "processes":
        first = _field("/proc/stat", "processes")
        for n in range(512):  # 256 are enough where the counter moves
            now = _field("/proc/stat", "processes")
            if now % 256 == secret or (n == 8 and now == first):  # reached, or it does not move
                break
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
    elif channel == "clock":
        time.sleep(secret * STEP_S)
    elif channel == "pid":
        for _ in range(secret):
            pid = os.fork()
            if pid == 0:
                os._exit(0)
            os.waitpid(pid, 0)
    elif channel == "shm":
        import mmap
        _pin()
        for _ in range(secret):
            try:
                mmap.mmap(-1, 4096).close()
            except OSError:
                pass
    elif channel == "inode":
        _pin()
        fds = [os.open("/dev/null", os.O_RDONLY) for _ in range(secret)]
        for fd in fds:
            os.stat(f"/proc/self/fd/{fd}")
        for fd in fds:
            os.close(fd)
    else:
        fd = os.open(BIG, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.lseek(fd, 0, 0)
        for _ in range(secret):
            os.read(fd, MIB)
        os.close(fd)
    return 0


def receive():
    return counters()
""".replace("<<STEP_S>>", repr(STEP_S))


def raw(channel: str, before: dict, after: dict) -> int:
    """What the student computes from the two public checks' values, before the offset."""
    if channel == "processes":
        return after["processes"] % 256
    if channel in ("pid", "shm", "inode"):
        return after[channel] - before[channel]
    if channel == "clock":
        return round((after["clock"] - before["clock"]) / STEP_S)
    if channel == "cached":
        return round((after["cached"] - before["cached"]) / 1024) + BIG_MIB
    return BIG_MIB - round((after["freeram"] - before["freeram"]) / 1024)  # freeram


def planted(folder: Path) -> tuple[Path, Path]:
    sub, assets = folder / "sub", folder / "assets"
    (sub / "ch01").mkdir(parents=True)
    (sub / "ch01" / "counters.py").write_text(SOURCE)
    assets.mkdir()
    with open(assets / "big.bin", "wb") as f:
        block = os.urandom(1 << 20)
        for _ in range(BIG_MIB):
            f.write(block)
        f.flush()
        os.fsync(f.fileno())  # clean pages: only those can be evicted
    for p in (folder, sub, sub / "ch01", assets):
        os.chmod(p, 0o755)
    for p in (sub / "ch01" / "counters.py", assets / "big.bin"):
        os.chmod(p, 0o644)
    return sub, assets


def call(box, name: str, *args):
    from grader.worker.proxy import Remote

    worker = box.spawn()
    try:
        remote = Remote(worker, "counters", 60.0, assets=box.assets)
        remote._import("ch01/counters.py", [], "")
        return getattr(remote, name)(*args)
    finally:
        worker.close()


def trial(box, channel: str, secret: int) -> int:
    before = call(box, "baseline", channel)
    call(box, "send", channel, secret)
    after = call(box, "receive")
    return raw(channel, before, after)


def measure(box, channel: str, trials: int, rng: random.Random) -> dict:
    offsets = [trial(box, channel, s) - s for s in (17, 130, 201)]
    offset = int(statistics.median(offsets))
    errors = []
    for _ in range(trials):
        secret = rng.randrange(256)
        decoded = trial(box, channel, secret) - offset
        errors.append(abs((decoded - secret + 128) % 256 - 128) if channel == "processes" else abs(decoded - secret))
    worst = max(errors)
    bits = math.log2(256 / (2 * worst + 1)) if worst <= 16 else 0.0
    return {"exact": sum(e == 0 for e in errors), "trials": trials, "worst": worst, "bits": bits, "offsets": offsets}


def main(argv: list[str] | None = None) -> int:
    from grader.worker.client import Sandbox

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--trials", type=int, default=20)
    ap.add_argument("--channels", default="processes,cached,freeram,pid,clock,shm,inode")
    ap.add_argument("--seed", type=int, default=37)
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="kata-counters-", dir=os.environ.get("KATA_BENCH_DIR")) as folder:
        sub, assets = planted(Path(folder))
        with Sandbox(sub, assets_dir=str(assets)) as box:
            print(f"sandbox: {box.kind}; {args.trials} random bytes per channel")
            for channel in args.channels.split(","):
                t0 = time.monotonic()
                r = measure(box, channel, args.trials, rng)
                print(
                    f"{channel:<10} exact {r['exact']:>2}/{r['trials']}  worst error {r['worst']:>3}  "
                    f"bits/check {r['bits']:.1f}  (calibration offsets {r['offsets']}, {time.monotonic() - t0:.0f} s)",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    sys.exit(main())
