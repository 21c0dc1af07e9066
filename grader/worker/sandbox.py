"""How the worker is walled in: the bubblewrap command line and the resource limits.

Under bubblewrap the worker sees a fresh root holding only the system libraries, the Python
installation, a read-only copy of the submission (/sub), its own runtime (/opt/kata) and a
private writable /tmp of a fixed size holding its working directory (/tmp/work); no network,
no view of other processes, and never the grader's checks, fixtures or the solutions. Without
bubblewrap it runs with limits only, and the report says the sandbox was weaker, but only when
asked for explicitly (`--sandbox limits-only`, KATA_SANDBOX=none): a missing bubblewrap, or one
that cannot start, stops the grading with SandboxUnavailable.
"""

from __future__ import annotations

import os
import shutil
import site
import sys
import sysconfig
from dataclasses import dataclass, field

from . import host_view

NOBODY = 65534  # the uid of a sandbox started as root when no uid of its own is given (uids.py)


@dataclass
class Limits:
    """Per-worker-process limits. Wall time is enforced per call by the client."""

    memory_mb: int = 6144
    cpu_s: int = 300
    output_mb: int = 16
    nproc: int | None = None  # set from the current user's process count when not root
    nofile: int = 256
    disk_mb: int = 256  # the sandbox's writable /tmp (and /tmp/work in it): a tmpfs of this size

    def as_dict(self) -> dict:
        return {
            "memory_mb": self.memory_mb,
            "cpu_s": self.cpu_s,
            "output_mb": self.output_mb,
            "nproc": self.nproc,
            "nofile": self.nofile,
        }


EXIT = 4  # the exit status of a command that stopped because the sandbox could not start
# The report's name for limits-only grading by a grader running as root, where the worker ran as a
# leased uid of its own that could read none of the course's hidden files, and every process of
# that uid was killed before the results were written (own_uid_wall). Plain "limits-only": the
# worker ran as the grader's own user (or could read the course), so its score could be forged.
LIMITS_ONLY_UID = "limits-only (own uid)"
LIMITS_ONLY = ("none", "limits", "limits-only", "0", "off")  # KATA_SANDBOX values that ask for limits only


class SandboxUnavailable(Exception):
    """The sandbox cannot start here: a grader error (nothing is graded, no score), never a fault
    charged to the student's code. The message names the cause and what to do."""


def limits_only_asked() -> bool:
    """Limits-only grading was asked for explicitly (`--sandbox limits-only`, KATA_SANDBOX=none)."""
    return os.environ.get("KATA_SANDBOX", "").lower() in LIMITS_ONLY


def bwrap_path() -> str | None:
    """bubblewrap's path; None when limits-only was asked for. Without bubblewrap and without
    that explicit choice: SandboxUnavailable, never a silent fall back to limits only."""
    if limits_only_asked():
        return None
    found = shutil.which("bwrap")
    if found is None:
        from ..course.messages import t

        raise SandboxUnavailable(t("sandbox_missing"))
    return found


def _python_roots() -> list[str]:
    """Directories that hold the interpreter and every importable site-packages."""
    roots = {sys.base_prefix, sys.prefix, sys.exec_prefix, sys.base_exec_prefix}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(p)
    for p in site.getsitepackages():
        roots.add(p)
    for p in sys.path:  # site-packages a .pth file adds (a venv layered on a shared one)
        if os.path.basename(p.rstrip(os.sep)) in ("site-packages", "dist-packages"):
            roots.add(p)
    exe = os.path.realpath(sys.executable)
    roots.add(os.path.dirname(os.path.dirname(exe)))
    # Keep only existing, outermost directories.
    roots = sorted({os.path.realpath(r) for r in roots if os.path.isdir(r)})
    outer: list[str] = []
    for r in roots:
        if not any(r == o or r.startswith(o + os.sep) for o in outer):
            outer.append(r)
    return outer


def install_records() -> list[str]:
    """Files of the Python installation that name host folders of installed projects: an editable
    install's finder and .pth (`{'grader': '/home/teacher/course/grader'}`), an .egg-link, and
    pip's direct_url.json (`file:///home/teacher/course`). The sandbox sees them empty."""
    import glob

    found = []
    for root in _python_roots():
        for pattern in ("__editable__*", "*.egg-link", "*.dist-info/direct_url.json"):
            for base in {
                root,
                *glob.glob(os.path.join(root, "lib", "python3*", "site-packages")),
                *glob.glob(os.path.join(root, "lib", "python3*", "dist-packages")),
            }:
                found += [f for f in glob.glob(os.path.join(base, pattern)) if os.path.isfile(f)]
    return sorted(set(found))


def sandbox_python() -> str:
    """The interpreter as the sandbox can reach it: its folder with every link resolved (a venv
    reached through a linked folder is bound at its real place), its own name kept (a venv's
    `bin/python` is itself a link to the base interpreter, and only by that name is it the venv's)."""
    folder, name = os.path.split(os.path.abspath(sys.executable))
    return os.path.join(os.path.realpath(folder), name)


SYSTEM_DIRS = ["/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin"]
SYSTEM_FILES = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/localtime",
    "/etc/nsswitch.conf",
    "/etc/passwd",
    "/etc/group",
]


@dataclass
class SandboxPlan:
    argv: list[str]
    kind: str  # "bubblewrap" or "limits-only"
    submission: str  # path of the submission as the worker sees it
    workdir: str  # path of the writable directory as the worker sees it
    uid: int | None  # uid the worker drops to (when started as root)
    hidden: list[str] = field(default_factory=list)
    assets: str | None = None  # the read-only assets folder as the worker sees it
    # Read-only binds that sit inside the sandbox's /tmp (a Python installation or venv living under
    # /tmp: a clone in /tmp). Each worker's own new /tmp would cover them; it binds them again.
    tmp_binds: list[str] = field(default_factory=list)


def plan(
    runtime_dir: str,
    submission_dir: str,
    workdir: str,
    hide: list[str],
    assets_dir: str | None = None,
    tmp_mb: int = 256,
    uid: int | None = None,
    proc_dir: str | None = None,
) -> SandboxPlan:
    """The command that starts the worker's fork server, with or without bubblewrap.

    runtime_dir: host folder holding the package `kata_worker`; submission_dir: host copy of the
    submission; workdir: the host folder the worker may write when there is no bubblewrap; hide:
    host paths it must never see; assets_dir: read-only data the exercises may load (tokenizer
    files), seen at /assets; tmp_mb: size of the sandbox's writable /tmp; uid: the uid the worker
    drops to when started as root (a leased one, see uids.py; `nobody` when None); proc_dir: a
    new host folder for the fixed files that cover /proc's host-wide counters (host_view.py).

    Under bubblewrap nothing the worker can write is on the host's disk: /tmp (holding the
    working folder /tmp/work) is a tmpfs of tmp_mb, and its stdout/stderr are files the grader
    opened and passed in. Without bubblewrap (limits only) `workdir` is a host folder: each file
    is capped by RLIMIT_FSIZE, but not their number, so a student can fill the host's disk.
    """
    assets_dir = assets_dir if assets_dir and os.path.isdir(assets_dir) else None
    uid = (uid if uid is not None else NOBODY) if os.getuid() == 0 else None
    python = sandbox_python()
    bwrap = bwrap_path()
    if bwrap is None:
        argv = [
            python,
            "-I",
            "-B",
            "-c",
            f"import sys; sys.path.insert(0, {runtime_dir!r}); import runpy; "
            "runpy.run_module('kata_worker', run_name='__main__', alter_sys=True)",
        ]
        # As root, the fork server still drops to the leased uid: with no namespace to hide them,
        # file permissions keep the course and the results from it (see the Sandbox's uid wall).
        return SandboxPlan(argv, "limits-only", submission_dir, workdir, uid, assets=assets_dir)

    argv = [
        bwrap,
        "--unshare-net",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "kata-worker",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        # a shared mapping of /dev/zero is a file of the kernel's one shmem mount, numbered from a
        # counter the host shares (runtime/syscalls.py): /dev/zero reads as /dev/null, maps nothing
        "--dev-bind",
        "/dev/null",
        "/dev/zero",
        "--size",
        str(tmp_mb * 1024 * 1024),
        "--perms",
        "1777",
        "--tmpfs",
        "/tmp",
        "--perms",
        "1777",
        "--dir",
        "/tmp/work",
    ]
    if os.getuid() != 0:
        argv += ["--unshare-user"]
    for d in SYSTEM_DIRS:
        if os.path.exists(d):
            argv += ["--ro-bind", d, d] if not os.path.islink(d) else ["--symlink", os.readlink(d), d]
    for f in SYSTEM_FILES:
        if os.path.exists(f):
            argv += ["--ro-bind", f, f]
    if proc_dir is not None:  # no counter the whole host shares carries a check's inputs to a later one
        argv += host_view.write(proc_dir)
    if os.path.isdir("/sys/devices/system/cpu"):
        argv += ["--ro-bind", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
        argv += host_view.sys_cpu_counters(proc_dir) if proc_dir is not None else []
    made: set[str] = set()
    tmp_binds = []
    for root in _python_roots():
        if root in ("/tmp", "/tmp/work") or root.startswith("/tmp/work/"):  # the sandbox's own folders
            raise SandboxUnavailable(_python_in_tmp_work(root))
        argv += _parents(root, made) + ["--ro-bind", root, root]
        if root.startswith("/tmp/"):
            tmp_binds.append(root)
    for f in install_records():  # host paths to the course and its code, written by pip: empty in the sandbox
        argv += ["--ro-bind", "/dev/null", f]
    hidden = []
    for h in hide:
        h = os.path.realpath(h)
        if os.path.isdir(h) and any(h == r or h.startswith(r + os.sep) for r in _python_roots()):
            argv += ["--tmpfs", h]  # e.g. an installed copy of grader/ inside site-packages
            hidden.append(h)
    argv += _parents("/opt/kata", made)
    if assets_dir:
        argv += ["--ro-bind", assets_dir, "/assets"]
    argv += [
        "--ro-bind",
        runtime_dir,
        "/opt/kata",
        "--ro-bind",
        submission_dir,
        "/sub",
        "--chdir",
        "/tmp/work",
        "--setenv",
        "HOME",
        "/tmp/work",
        python,
        "-I",
        "-B",
        "-c",
        "import sys; sys.path.insert(0, '/opt/kata'); import runpy; "
        "runpy.run_module('kata_worker', run_name='__main__', alter_sys=True)",
    ]
    return SandboxPlan(
        argv, "bubblewrap", "/sub", "/tmp/work", uid, hidden, "/assets" if assets_dir else None, tmp_binds
    )


def _python_in_tmp_work(root: str) -> str:
    from ..course.messages import t

    return t("sandbox_python_in_tmp_work", path=root)


def _parents(path: str, made: set[str]) -> list[str]:
    """bwrap creates missing parent directories with mode 0700, which the unprivileged worker
    cannot enter; create them readable first."""
    out: list[str] = []
    parts = path.strip("/").split("/")[:-1]
    for i in range(1, len(parts) + 1):
        d = "/" + "/".join(parts[:i])
        if d not in made and not any(d == s or d.startswith(s + "/") for s in SYSTEM_DIRS):
            made.add(d)
            out += ["--perms", "0755", "--dir", d]
    return out


def clean_env() -> dict[str, str]:
    """The worker's whole environment: nothing of the grader's (tokens, paths) leaks in."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",  # numpy's OpenBLAS: no thread pool to stop and start at every fork
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUNBUFFERED": "1",
        "HOME": "/tmp",
    }


def default_nproc() -> int | None:
    """RLIMIT_NPROC counts every process of the real user. Root drops to a uid of the sandbox's
    own inside it (uids.py), so a fixed cap works; other users get their current count plus a
    margin."""
    if os.getuid() == 0:
        return 512
    uid = os.getuid()
    count = 0
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if os.stat(f"/proc/{pid}").st_uid == uid:
                    count += len(os.listdir(f"/proc/{pid}/task"))
            except OSError:
                pass
    return count + 256


# ----------------------------------------------------------------------------- the uid wall
# Limits-only grading by a grader that runs as root (Gradescope's container, most Docker images,
# where bubblewrap cannot make its namespaces): no namespace hides anything, so the wall is the
# uid. The fork server and its workers run as a leased uid of their own (uids.py), in a session
# and process group of their own; what they must not read (the course: hidden checks, fixtures,
# solutions) must be unreadable to that uid by its file permissions, which `readable_by` proves
# before grading; and before any result is written every process of that uid is killed and waited
# for (`kill_uid`): a daemon the submission left, even one whose fork server it killed, cannot
# outlive the grading and rewrite the results. The helpers run as that uid in a short-lived
# Python of their own (`-I -S`), started by the grader, never forked from it.


def _as_uid(uid: int, code: str, *args: str, timeout: float = 30.0) -> str | None:
    """What `code` printed, run as `uid`; None where that uid cannot start this Python."""
    import subprocess

    try:
        proc = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code, *args],
            user=uid,
            group=uid,
            extra_groups=[],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=clean_env(),
            cwd="/",
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout if proc.returncode == 0 else None


_PROBE = """
import json, os, sys
found = []
for path in json.loads(sys.argv[1]):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").close()
        found.append(path)
    except OSError:
        pass
print(json.dumps(found))
"""


def readable_by(uid: int, paths: list[str]) -> list[str] | None:
    """The paths among `paths` that `uid` can read (a folder: list). Asked of a process running as
    that uid, so every folder above each path and its ACLs count as the kernel counts them. None
    where no process of that uid could run this Python to ask."""
    import json

    out = _as_uid(uid, _PROBE, json.dumps([str(p) for p in paths]))
    try:
        return list(json.loads(out)) if out is not None else None
    except ValueError:
        return None


def open_path(path: str, gid: int) -> None:
    """Let the worker's uid (and group `gid`) reach `path`, a folder the grader made for it (a
    submission's copy), through the private folders above it: each grader-made folder from the
    first `kata-*` one down that others cannot enter gets `gid` as its group and search (not read)
    permission for it; nothing above that first `kata-*` folder is ever changed."""
    parts = os.path.realpath(path).split(os.sep)[1:-1]
    chain = ["/" + os.path.join(*parts[:i]) for i in range(1, len(parts) + 1)]
    first = next((i for i, d in enumerate(chain) if os.path.basename(d).startswith("kata-")), None)
    if first is None:
        return
    for d in chain[first:]:
        st = os.lstat(d)
        if st.st_uid != os.getuid() or not os.path.isdir(d) or os.path.islink(d) or st.st_mode & 0o001:
            continue
        if st.st_gid in (os.getgid(), gid):
            os.chown(d, -1, gid, follow_symlinks=False)
            os.chmod(d, (st.st_mode & 0o7777) | 0o010)
        else:  # another sandbox's group (a shared folder of a batch's run): search only, no listing
            os.chmod(d, (st.st_mode & 0o7777) | 0o001)


def processes_of(uid: int) -> list[int]:
    """Live processes (not zombies) whose real, effective, saved or file uid is `uid`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/status") as f:
                fields = dict(line.split(":", 1) for line in f.read().splitlines() if ":" in line)
        except (OSError, ValueError):
            continue
        if fields.get("State", "").strip()[:1] in ("Z", "X"):
            continue
        if str(uid) in fields.get("Uid", "").split():
            found.append(int(entry))
    return found


_KILL_ALL = "import os, signal\ntry:\n    os.kill(-1, signal.SIGKILL)\nexcept OSError:\n    pass\n"


def kill_uid(uid: int, timeout: float = 10.0) -> bool:
    """Kill every process of `uid` and wait until none lives: kill(-1, SIGKILL) from a process of
    that uid reaches every process it may signal, whatever its session, group or parent (a setsid
    daemon, an orphan of a killed fork server), and none can fork while the kernel walks them.
    True once none is left (a process killed in the kernel's uninterruptible sleep may take a
    moment, but runs no more code of its own)."""
    import signal
    import time

    deadline = time.monotonic() + timeout
    while True:
        if not processes_of(uid):
            return True
        _as_uid(uid, _KILL_ALL, timeout=max(1.0, deadline - time.monotonic()))
        for pid in processes_of(uid):  # and, as root, each one found (where that uid cannot run Python)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not processes_of(uid):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


# What the uid wall must hold besides the sandbox's `hide` list, named by whoever knows (the
# Gradescope step: its settings file, the results folder): `guard(read=..., write=...)`.
_GUARDED: dict[str, list[str]] = {"read": [], "write": []}


def guard(read=(), write=()) -> None:
    """Paths a limits-only sandbox run as root must prove its uid can neither read (`read`) nor
    write into (`write`) before its report may say "limits-only (own uid)"."""
    _GUARDED["read"] += [os.path.abspath(p) for p in read]
    _GUARDED["write"] += [os.path.abspath(p) for p in write]


_FIND_GRADER = """
import importlib.util, json
try:
    spec = importlib.util.find_spec("grader")
    found = list(spec.submodule_search_locations or []) if spec is not None else []
except Exception:
    found = []
print(json.dumps(found))
"""


def installed_graders() -> list[str]:
    """Every `grader` package the worker's Python reaches by itself: the one it imports as the
    worker starts (`-I`, no PYTHONPATH: an editable install points it at the teacher's checkout,
    whatever copy the grader itself runs from) and the folders its install records name (an
    editable finder, a .pth, an .egg-link, pip's direct_url.json). Their hidden checks, fixtures
    and solutions are as secret as the running course's."""
    import json
    import re
    import subprocess

    found: list[str] = []
    try:
        proc = subprocess.run(
            [sandbox_python(), "-I", "-B", "-c", _FIND_GRADER],
            capture_output=True,
            text=True,
            timeout=60,
            env=clean_env(),
            cwd="/",
        )
        found += [str(p) for p in json.loads(proc.stdout or "[]")]
    except (OSError, ValueError, subprocess.SubprocessError):
        pass
    for record in install_records():
        try:
            with open(record, encoding="utf-8", errors="replace") as f:
                text = f.read(1_000_000)
        except OSError:
            continue
        named = re.findall(r"file://(/[^\s'\"]+)", text)
        named += re.findall(r"['\"](/[^'\"\n]+)['\"]", text)
        named += [line.strip() for line in text.splitlines() if line.strip().startswith("/")]
        found += named
    out = []
    for p in found:
        p = os.path.realpath(p)
        package = p if os.path.basename(p) == "grader" else os.path.join(p, "grader")
        if package not in out:
            out.append(package)
    return out


def _tree(top: str, limit: int = 20_000) -> list[str]:
    """`top` and every folder and file under it (a grader-made tree), no link followed, iteratively."""
    out, stack = [], [top]
    while stack and len(out) < limit:
        folder = stack.pop()
        out.append(folder)
        try:
            with os.scandir(folder) as it:
                for e in it:
                    if e.is_dir(follow_symlinks=False):
                        stack.append(e.path)
                    else:
                        out.append(e.path)
        except OSError:
            pass
    return out


def secrets(hide: list[str]) -> list[str]:
    """Every path whose reading by the worker's uid would leak something hidden, as this grader
    sees them: each of `hide` (the running course: its grader package, solutions, root), the
    `grader` packages and course folders the worker's Python reaches by itself (installed_graders),
    and what `guard` named. A folder's files are listed one by one: a folder others may enter but
    not list still lets a file be read by its known name."""
    out: list[str] = []

    def course(root: str, package: str) -> None:
        for sub in (
            os.path.join(package, "checks"),
            os.path.join(package, "fixtures"),
            os.path.join(root, "solutions"),
        ):
            out.extend(_tree(sub))
        out.extend(os.path.join(root, name) for name in ("course.toml", "gradescope.json"))

    for h in hide:
        h = os.path.realpath(h)
        if os.path.isdir(os.path.join(h, "checks")):  # a grader package
            out.append(h)
            course(os.path.dirname(h), h)
        elif os.path.isfile(os.path.join(h, "course.toml")) or os.path.isdir(os.path.join(h, "grader")):  # a course
            out.append(h)
            course(h, os.path.join(h, "grader"))
        else:
            out.extend(_tree(h))
    for package in installed_graders():
        course(os.path.dirname(package), package)
    for p in _GUARDED["read"]:
        out.extend(_tree(os.path.realpath(p)))
    seen: set[str] = set()
    return [p for p in out if not (p in seen or seen.add(p))]


_WRITE_PROBE = """
import json, os, sys
print(json.dumps([p for p in json.loads(sys.argv[1]) if os.access(p, os.W_OK)]))
"""


def writable_by(uid: int, paths: list[str]) -> list[str] | None:
    """The paths among `paths` that `uid` may write (a folder: create or remove a name in it),
    asked of a process running as that uid; None where none could run this Python."""
    import json

    out = _as_uid(uid, _WRITE_PROBE, json.dumps([str(p) for p in paths]))
    try:
        return list(json.loads(out)) if out is not None else None
    except ValueError:
        return None


def guarded_writes() -> list[str]:
    """What `guard` named as never to be written by the worker: each folder and what is in it."""
    out: list[str] = []
    for p in _GUARDED["write"]:
        out.extend(_tree(os.path.realpath(p), limit=1000))
    return out


# The uids of limits-only sandboxes run as root that have not been swept yet (Sandbox.close
# sweeps its own); `sweep_walled` sweeps what is left, for a caller about to write a result.
_WALLED: set[int] = set()


def sweep_walled() -> bool:
    """Kill and wait for every process of every leased uid a sandbox of this process walled in and
    did not sweep yet; True when none is left."""
    done = True
    for uid in sorted(_WALLED):
        if kill_uid(uid):
            _WALLED.discard(uid)
        else:
            done = False
    return done
