"""What the sandbox's /proc shows of the host: fixed files in place of every host-wide counter.

A check's code can move a counter the whole host shares (fork until /proc/stat's `processes` is
a hidden input modulo 256; evict or read a file to move /proc/meminfo's `Cached`), and a later
check's code can read it and return it to a public check's message: a hidden input carried past
every wipe, whatever namespace each check has. So under bubblewrap each such file is covered by
a read-only file written here, whose content depends only on what never changes while the host
runs (its number of CPUs, its MemTotal, the names of its counters): every check reads the same
bytes, whatever any check did. Binds over procfs files are locked in the worker's own user
namespace: it can neither unmount them nor mount a procfs of its own (the kernel refuses one
while a file of the visible one is covered). `benchmarks/host_counters.py` measures what each
counter carried through the real sandbox before and after.

What no file here can cover: the sysinfo() system call (free RAM, buffers, process count), which
the workers' seccomp filter refuses (runtime/syscalls.py); the pid counter of the sandbox's own pid
namespace, which its checks share; the timing of reads (a file's pages in the page cache); and
when each check starts.
"""

from __future__ import annotations

import os

PRESSURE = "some avg10=0.00 avg60=0.00 avg300=0.00 total=0\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n"
# Shown empty: each line of theirs is host-wide (disk I/O, file locks, free pages by zone and order).
EMPTY = ("/proc/diskstats", "/proc/locks", "/proc/zoneinfo", "/proc/buddyinfo")


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def _names(text: str) -> list[str]:
    """The first word of each line: the names of a counter file's counters."""
    return [line.split()[0] for line in text.splitlines() if line.split()]


def stat(cpus: int) -> str:
    zeros = " 0" * 10
    lines = [f"cpu {zeros}"] + [f"cpu{i}{zeros}" for i in range(cpus)]
    lines += [
        "intr 0",
        "ctxt 0",
        "btime 0",
        "processes 1",
        "procs_running 1",
        "procs_blocked 0",
        "softirq 0" + " 0" * 10,
    ]
    return "\n".join(lines) + "\n"


def meminfo(host: str) -> str:
    """The host's names in its order; MemTotal (and the page sizes) kept, all of it free, every
    other amount 0."""
    kb = {}
    for line in host.splitlines():
        name, _, rest = line.partition(":")
        if rest.split():
            kb[name] = rest.split()[0]
    total = kb.get("MemTotal", "0")
    out = []
    for name in kb:
        value = total if name in ("MemTotal", "MemFree", "MemAvailable", "CommitLimit") else "0"
        if name == "Hugepagesize":
            value = kb[name]
        unit = "" if name.startswith("HugePages_") else " kB"
        out.append(f"{name + ':':<16}{value:>8}{unit}")
    return "\n".join(out) + "\n"


def per_cpu(host: str, cpus: int) -> str:
    """/proc/softirqs or /proc/interrupts: the CPU header, each of the host's rows at 0."""
    header = "".join(f"{'CPU' + str(i):>11}" for i in range(cpus))
    rows = [name for name in _names(host) if name.endswith(":")]
    zeros = f"{0:>11}" * cpus
    return "\n".join([" " * 10 + header] + [f"{name:>11}{zeros}" for name in rows]) + "\n"


def files(cpus: int | None = None) -> dict[str, str]:
    """Each covered path in the sandbox and the text it shows there."""
    cpus = cpus or os.cpu_count() or 1
    file_max = (_read("/proc/sys/fs/file-nr").split() or ["", "", "65536"])[-1]
    out = {
        "/proc/stat": stat(cpus),
        "/proc/meminfo": meminfo(_read("/proc/meminfo")),
        "/proc/loadavg": "0.00 0.00 0.00 1/1 1\n",
        "/proc/uptime": "1000.00 1000.00\n",
        "/proc/vmstat": "".join(f"{name} 0\n" for name in _names(_read("/proc/vmstat"))),
        "/proc/softirqs": per_cpu(_read("/proc/softirqs"), cpus),
        "/proc/interrupts": per_cpu(_read("/proc/interrupts"), cpus),
        "/proc/schedstat": "version 15\ntimestamp 0\n",
        "/proc/sys/fs/file-nr": f"0\t0\t{file_max}\n",
        "/proc/sys/fs/inode-nr": "0\t0\n",
        "/proc/sys/fs/inode-state": "0\t0\t0\t0\t0\t0\t0\n",
        "/proc/sys/fs/dentry-state": "0\t0\t45\t0\t0\t0\n",
    }
    out.update({path: "" for path in EMPTY})
    for name in ("cpu", "io", "memory", "irq"):
        out[f"/proc/pressure/{name}"] = PRESSURE
    return out


def write(folder: str, cpus: int | None = None) -> list[str]:
    """Write the covering files under `folder` (readable by any uid) and return bubblewrap's
    arguments that bind them, to follow `--proc /proc`. A path the host's /proc lacks is left
    alone (bubblewrap cannot bind over nothing); /proc/pressure is covered as a folder."""
    os.makedirs(folder, 0o755, exist_ok=True)
    args: list[str] = []
    for path, text in files(cpus).items():
        if not os.path.exists(path):
            continue
        src = os.path.join(folder, path.strip("/").replace("/", "."))
        if path.startswith("/proc/pressure/"):
            os.makedirs(os.path.join(folder, "pressure"), 0o755, exist_ok=True)
            src = os.path.join(folder, "pressure", os.path.basename(path))
        with open(src, "w", encoding="ascii") as f:
            f.write(text)
        os.chmod(src, 0o444)
        if not path.startswith("/proc/pressure/"):
            args += ["--ro-bind", src, path]
    if os.path.isdir("/proc/pressure"):
        os.chmod(os.path.join(folder, "pressure"), 0o755)
        args += ["--ro-bind", os.path.join(folder, "pressure"), "/proc/pressure"]
    return args


def sys_cpu_counters(folder: str, cpu_dir: str = "/sys/devices/system/cpu") -> list[str]:
    """bubblewrap's arguments that hide the per-CPU idle and frequency statistics under the bound
    /sys/devices/system/cpu (how often and how long each CPU slept, how often its clock changed:
    counters a check's CPU use moves) behind an empty read-only folder made in `folder`; the
    topology and the online CPUs, which os.cpu_count and torch read, stay."""
    empty = os.path.join(folder, "empty")
    os.makedirs(empty, 0o755, exist_ok=True)
    os.chmod(empty, 0o555)
    args: list[str] = []
    try:
        names = sorted(os.listdir(cpu_dir))
    except OSError:
        return args
    for name in names:
        for sub in ("cpuidle", "cpufreq"):
            path = os.path.join(cpu_dir, name, sub)
            if name[3:].isdigit() and name.startswith("cpu") and os.path.isdir(path) and not os.path.islink(path):
                args += ["--ro-bind", empty, path]
    return args
