"""A cgroup for every sandbox, where the machine lets the grader make one.

The worker's rlimits bound each process (its address space), not their sum: eight children of
one submission could each take their limit and together push the host into swapping or wake its
OOM killer, which may pick the grader or a neighbour. A cgroup bounds the whole sandbox: the
memory of all its processes and of its /tmp (a tmpfs is charged as shared memory), and the
number of its tasks. The kernel then kills inside that sandbox only.

Works with cgroup v1 (the `memory` and `pids` hierarchies) and with cgroup v2 where the
grader's own cgroup delegates the `memory` and `pids` controllers (`cgroup.subtree_control`).
Where the machine counts it (cgroup v1's `cpuacct` hierarchy, v2's `cpu.stat`), the group also
gives the sandbox's CPU time, which the grading budget counts (budget.py).
The group is made below the grader's own cgroup, so the host's accounting of the grader still
covers it. Elsewhere (an unprivileged container, say) `Group.create` returns None and the
per-process limits are all there is; SECURITY.md says so.
"""

from __future__ import annotations

import os
import signal
import time

from . import uids

ROOT = "/sys/fs/cgroup"
MB = 1024 * 1024


def _own_paths() -> dict[str, str]:
    """controller (or "" for the v2 hierarchy) -> this process's cgroup path."""
    paths: dict[str, str] = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                _, controllers, path = line.rstrip("\n").split(":", 2)
                for c in controllers.split(",") if controllers else [""]:
                    paths[c] = path
    except (OSError, ValueError):
        pass
    return paths


def _sweep(parent: str) -> None:
    """Remove the empty groups a killed grader left in `parent`: those whose uid lease nobody
    holds any more (a live sandbox's group is never touched, even while still empty)."""
    try:
        names = [n for n in os.listdir(parent) if n.startswith("kata-")]
    except OSError:
        return
    for name in names:
        uid = name.split("-")[1]
        if uid.isdigit() and not uids.held(int(uid)):
            try:
                os.rmdir(os.path.join(parent, name))
            except OSError:
                pass  # processes still in it, or gone already


def _writable_dir(path: str) -> bool:
    return os.path.isdir(path) and os.access(path, os.W_OK | os.X_OK)


class Group:
    """One sandbox's cgroup: `wrap` a command to start it inside, `limit_memory` before each
    worker, `oom_kills` after a fault, `remove` at the end."""

    def __init__(self, version: int, dirs: dict[str, str]):
        self.version = version
        self.dirs = dirs  # controller -> folder of this group (v2: both keys name one folder)

    @classmethod
    def create(cls, name: str, max_tasks: int) -> "Group | None":
        """A new group `name` ("kata-<leased uid>-<anything>"), or None where none can be made."""
        if os.getuid() != 0 or os.environ.get("KATA_CGROUPS", "").lower() in ("0", "off", "no"):
            return None
        own = _own_paths()
        made: list[str] = []
        try:
            v1 = {c: os.path.join(ROOT, c) for c in ("memory", "pids")}
            if all(c in own and _writable_dir(v1[c] + own[c]) for c in v1):
                dirs = {c: os.path.join(v1[c] + own[c], name) for c in v1}
                for c in v1:
                    _sweep(v1[c] + own[c])
                for d in dirs.values():
                    os.mkdir(d, 0o700)
                    made.append(d)
                # CPU time, where the cpuacct hierarchy is there to count it (the grading budget's;
                # optional: without it only wall time is counted)
                acct = ROOT + "/cpuacct"
                if "cpuacct" in own and _writable_dir(acct + own["cpuacct"]):
                    _sweep(acct + own["cpuacct"])
                    d = os.path.join(acct + own["cpuacct"], name)
                    os.mkdir(d, 0o700)
                    made.append(d)
                    dirs["cpuacct"] = d
                group = cls(1, dirs)
            elif "" in own and os.path.exists(os.path.join(ROOT, "cgroup.controllers")):
                parent = ROOT + own[""]
                with open(os.path.join(parent, "cgroup.subtree_control")) as f:
                    if not {"memory", "pids"} <= set(f.read().split()):
                        return None
                _sweep(parent)
                d = os.path.join(parent, name)
                os.mkdir(d, 0o700)
                made.append(d)
                group = cls(2, {"memory": d, "pids": d, "cpuacct": d})  # cpu.stat: in every v2 group
            else:
                return None
            group._write("pids", "pids.max", str(max_tasks))
            return group
        except OSError:
            for d in made:
                try:
                    os.rmdir(d)
                except OSError:
                    pass
            return None

    def _write(self, controller: str, file: str, value: str) -> None:
        with open(os.path.join(self.dirs[controller], file), "w") as f:
            f.write(value)

    def _read(self, controller: str, file: str) -> str:
        with open(os.path.join(self.dirs[controller], file)) as f:
            return f.read()

    def wrap(self, argv: list[str]) -> list[str]:
        """`argv` started inside the group: a shell joins it, then execs the command, so no
        process of the sandbox ever runs outside (no race with the command's first fork)."""
        procs = sorted({os.path.join(d, "cgroup.procs") for d in self.dirs.values()})
        joins = " && ".join(f"echo $$ > '{p}'" for p in procs)
        return ["/bin/sh", "-c", f'{joins} && exec "$@"', "kata-sandbox", *argv]

    def usage_mb(self) -> float:
        name = "memory.usage_in_bytes" if self.version == 1 else "memory.current"
        try:
            return int(self._read("memory", name)) / MB
        except (OSError, ValueError):
            return 0.0

    def limit_memory(self, mb: float) -> bool:
        """Cap the memory of everything in the group (processes, page cache, its tmpfs). False when
        the cap could not be set."""
        name = "memory.limit_in_bytes" if self.version == 1 else "memory.max"
        try:
            self._write("memory", name, str(int(mb * MB)))
            return True
        except OSError:
            return False  # under the current usage: the next worker starts later, and is limited then

    def cpu_s(self) -> float | None:
        """CPU seconds used so far by every process that ever ran in the group; None where it is not counted."""
        if "cpuacct" not in self.dirs:
            return None
        try:
            if self.version == 1:
                return int(self._read("cpuacct", "cpuacct.usage")) / 1e9
            for line in self._read("cpuacct", "cpu.stat").splitlines():
                key, _, value = line.partition(" ")
                if key == "usage_usec":
                    return int(value) / 1e6
        except (OSError, ValueError):
            pass
        return None

    def oom_kills(self) -> int:
        """How many processes the kernel killed in this group for want of memory, so far."""
        name = "memory.oom_control" if self.version == 1 else "memory.events"
        try:
            for line in self._read("memory", name).splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def remove(self) -> None:
        """Kill whatever is left in the group, then remove it."""
        for d in sorted(set(self.dirs.values())):
            deadline = time.monotonic() + 5
            while True:
                try:
                    with open(os.path.join(d, "cgroup.procs")) as f:
                        pids = [int(p) for p in f.read().split()]
                except OSError:
                    pids = []
                for pid in pids:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
                try:
                    os.rmdir(d)
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        break
                    time.sleep(0.02)
