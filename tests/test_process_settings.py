"""Nothing a worker changes outlives it: the settings of another process (issue 24, part 2).

The fork server runs under its workers' uid, and the same uid may change another process's I/O
priority, nice value, scheduling policy, CPUs and resource limits. An I/O class a hidden check set
on the server was read back in a later public check, and the next student graded in the same batch
slot inherited it. The seccomp filter (grader/worker/runtime/syscalls.py) refuses every call that
changes another process, process group or user; the server's self-check (own_settings) compares
these settings of its own with its start before each fork, as a second line.
"""

import json
import os
import platform
import subprocess
import sys
import textwrap

import pytest

from grader.worker.runtime import syscalls
from tests.conftest import ROOT, SOLUTIONS, kata

CONTEXT = (SOLUTIONS / "ch01" / "s1_12_context.py").read_text()

# What a process reads of its own settings: I/O priority, nice, policy, real-time priority, CPUs, a
# resource limit no worker sets itself, and the whole sched_attr (utilisation clamps, custom slice).
READ = """
import ctypes as _ct, os as _os, platform as _pf, resource as _res, struct as _st

_NR = {"x86_64": (252, 315), "aarch64": (31, 275)}[_pf.machine()]  # ioprio_get, sched_getattr
_libc = _ct.CDLL(None, use_errno=True)


def _settings():
    buf = _ct.create_string_buffer(56)
    attr = list(_st.unpack("=IIQiIQQQII", buf.raw)[1:]) if _libc.syscall(_NR[1], 0, buf, 56, 0) == 0 else None
    return {"ioprio": _libc.syscall(_NR[0], 1, 0), "nice": _os.getpriority(_os.PRIO_PROCESS, 0),
            "policy": _os.sched_getscheduler(0), "rtprio": _os.sched_getparam(0).sched_priority,
            "cpus": sorted(_os.sched_getaffinity(0)), "msgqueue": list(_res.getrlimit(_res.RLIMIT_MSGQUEUE)),
            "attr": attr}
"""

# Each way a worker could change the fork server (its parent), its process group or its user.
# The mark of each is what a later check would read: IDLE I/O class, nice 13, SCHED_BATCH, one CPU,
# a message-queue limit of 12345 bytes, a custom slice and utilisation clamps.
TAMPER = {
    "ioprio": [
        f"_libc.syscall(_NR_SET['ioprio_set'], {w}, {t}, 3 << 13)"  # the IDLE class
        for w, t in ((1, "_server"), (2, "_group"), (3, "_uid"))
    ],
    "nice": [
        f"_os.setpriority({w}, {t}, 13)"
        for w, t in (("_os.PRIO_PROCESS", "_server"), ("_os.PRIO_PGRP", "_group"), ("_os.PRIO_USER", "_uid"))
    ],
    "policy": [
        "_os.sched_setscheduler(_server, _os.SCHED_BATCH, _os.sched_param(0))",
        "_os.sched_setparam(_server, _os.sched_param(0))",
    ],
    # utilisation clamps of 17 alone (KEEP_POLICY|KEEP_PARAMS|UTIL_CLAMP_MIN|MAX), where the kernel has
    # them; then a custom time slice of 3 ms (Linux 6.12), policy and nice as they were
    "attr": [
        "_libc.syscall(_NR_SET['sched_setattr'], _server, _st.pack('=IIQiIQQQII', 56, 0, 0x78, 0, 0, "
        "0, 0, 0, 17, 17), 0)",
        "_libc.syscall(_NR_SET['sched_setattr'], _server, _st.pack('=IIQiIQQQII', 56, _DEFAULT_POLICY, 0, "
        "_DEFAULT_NICE, 0, 3000000, 0, 0, 0, 0), 0)",
    ],
    "cpus": ["_os.sched_setaffinity(_server, {max(_os.sched_getaffinity(0))})"],
    "limits": ["_res.prlimit(_server, _res.RLIMIT_MSGQUEUE, (12345, 12345))"],
}


def _tamperer(kinds) -> str:
    calls = [call for kind in kinds for call in TAMPER[kind]]
    return f"""
_NR_SET = {syscalls.SETTINGS_NR[platform.machine()]!r}
_server = _os.getppid()
_group = _os.getpgid(_server)
_uid = _os.getuid()
_DEFAULT_POLICY, _DEFAULT_NICE = {_defaults()["policy"]!r}, {_defaults()["nice"]!r}
for _call in {calls!r}:
    try:
        exec(_call)
    except OSError:
        pass
"""


def _defaults() -> dict:
    """The settings every process of the grader starts with: this test's own."""
    scope: dict = {}
    exec(READ, scope)
    return json.loads(json.dumps(scope["_settings"]()))


def _submission(kinds=()) -> str:
    """The reference answer, off by one for each setting that differs from the defaults when its
    module is imported (before it tampers with anything itself)."""
    code = CONTEXT.replace("    return attn_weights @ values", "    return attn_weights @ values + _SEEN")
    assert code != CONTEXT
    return (
        code
        + READ
        + f"\n_SEEN = sum(v != {_defaults()!r}[k] for k, v in _settings().items())\n"
        + (_tamperer(kinds) if kinds else "")
    )


needs_filter = pytest.mark.skipif(syscalls.program() is None, reason="no seccomp filter for this architecture")


def _score(doc, exercise="s1_12_context"):
    return sum(c["score"] for c in doc["checks"] if c["exercise"] == exercise)


def _max(doc, exercise="s1_12_context"):
    return sum(c["max_score"] for c in doc["checks"] if c["exercise"] == exercise)


@needs_filter
def test_a_batch_slot_starts_every_check_and_every_student_with_the_defaults(tmp_path):
    """One student per kind of change, graded one after another in one slot, and a last one that
    only reads: each of their three checks (the last hidden) is right only when the settings it
    starts with are the defaults, so nothing an earlier check or student set reaches it."""
    cls = tmp_path / "class"
    students = {f"{i}-{kind}": _submission([kind]) for i, kind in enumerate(TAMPER)}
    students["9-reader"] = _submission()
    for name, code in students.items():
        (cls / name / "ch01").mkdir(parents=True)
        (cls / name / "ch01" / "s1_12_context.py").write_text(code)
    out = tmp_path / "out"
    r = kata("grade", str(cls), "--out", str(out), "--jobs", "1", "-e", "s1_12_context")
    assert r.returncode == 0, r.stdout + r.stderr
    docs = {p.parent.name: json.loads(p.read_text()) for p in (out / "students").glob("*/report.json")}
    assert sorted(docs) == sorted(students)
    wrong = {
        name: [c["name"] for c in doc["checks"] if c["status"] != "passed"]
        for name, doc in docs.items()
        if _score(doc) != _max(doc)
    }
    assert not wrong, f"checks that started with settings an earlier one set: {wrong}"
    assert all(_max(doc) > 0 for doc in docs.values())


# Run in a process of its own: start a target (a child, as the fork server is a worker's parent
# the other way round), install the worker's filter, try each call on the target, its group and
# the user, and on itself; print what each returned, and the target's settings before and after.
PROBE = """
import ctypes, json, os, resource, signal, struct, sys, time
sys.path.insert(0, {root!r})
from grader.worker.runtime import syscalls

libc = ctypes.CDLL(None, use_errno=True)
NR = syscalls.SETTINGS_NR[syscalls.platform.machine()]
READ = syscalls.READ_NR[syscalls.platform.machine()]
if os.getuid() == 0:  # a uid of its own: "the user" is then only this probe and its target
    from grader.worker.uids import Lease
    lease = Lease(start=4000)
    os.setgroups([])
    os.setgid(lease.uid)
    os.setuid(lease.uid)
    users = True
else:  # the user's own uid: on a grader without the filter, every process of the user would change
    users = False
target = os.fork()
if target == 0:
    os.setpgid(0, 0)
    time.sleep(60)
    os._exit(0)
os.setpgid(target, target)


def settings(pid):
    return [libc.syscall(READ["ioprio_get"], 1, pid), os.getpriority(os.PRIO_PROCESS, pid),
            os.sched_getscheduler(pid), sorted(os.sched_getaffinity(pid)),
            list(resource.prlimit(pid, resource.RLIMIT_MSGQUEUE))]


def call(fn, *args):
    ctypes.set_errno(0)
    try:
        rc = fn(*args)
    except OSError as e:
        return e.errno
    return ctypes.get_errno() if isinstance(rc, int) and rc < 0 else 0


attr = lambda nice: struct.pack("=IIQiIQQQII", 56, os.SCHED_BATCH, 0, nice, 0, 0, 0, 0, 0, 0)
nice = os.getpriority(os.PRIO_PROCESS, 0)  # raised from here on: lowering it takes a privilege
cpus = {{max(os.sched_getaffinity(0))}}
before = settings(target)
assert syscalls.install()
others = {{
    "ioprio_set process": call(libc.syscall, NR["ioprio_set"], 1, target, 3 << 13),
    "ioprio_set group": call(libc.syscall, NR["ioprio_set"], 2, target, 3 << 13),
    "setpriority process": call(os.setpriority, os.PRIO_PROCESS, target, 13),
    "setpriority group": call(os.setpriority, os.PRIO_PGRP, target, 13),
    "sched_setscheduler": call(os.sched_setscheduler, target, os.SCHED_BATCH, os.sched_param(0)),
    "sched_setparam": call(os.sched_setparam, target, os.sched_param(0)),
    "sched_setaffinity": call(os.sched_setaffinity, target, cpus),
    "sched_setattr": call(libc.syscall, NR["sched_setattr"], target, attr(13), 0),
    "prlimit": call(resource.prlimit, target, resource.RLIMIT_MSGQUEUE, (12345, 12345)),
    "setpgid": call(os.setpgid, target, target),
    "process_madvise": call(libc.syscall, 440, -1, None, 0, 0, 0),
}}
if users:
    others["ioprio_set user"] = call(libc.syscall, NR["ioprio_set"], 3, os.getuid(), 3 << 13)
    others["setpriority user"] = call(os.setpriority, os.PRIO_USER, os.getuid(), 13)
after = settings(target)
own = {{
    "ioprio_set": call(libc.syscall, NR["ioprio_set"], 1, 0, (2 << 13) | 5),
    "setpriority": call(os.setpriority, os.PRIO_PROCESS, 0, min(nice + 1, 19)),
    "nice": call(os.nice, 1),
    "sched_setscheduler": call(os.sched_setscheduler, 0, os.SCHED_BATCH, os.sched_param(0)),
    "sched_setaffinity": call(os.sched_setaffinity, 0, cpus),
    "sched_setattr": call(libc.syscall, NR["sched_setattr"], 0, attr(min(nice + 3, 19)), 0),
    "setrlimit": call(resource.setrlimit, resource.RLIMIT_MSGQUEUE, (12345, 12345)),
    "prlimit read": call(resource.prlimit, target, resource.RLIMIT_MSGQUEUE),
    "getrlimit": call(resource.getrlimit, resource.RLIMIT_NOFILE),
}}
os.kill(target, signal.SIGKILL)
print(json.dumps({{"others": others, "own": own, "before": before, "after": after,
                  "mine": [libc.syscall(READ["ioprio_get"], 1, 0), os.getpriority(os.PRIO_PROCESS, 0),
                           os.sched_getscheduler(0)]}}))
"""


@needs_filter
def test_the_filter_refuses_changing_another_process_and_allows_changing_itself():
    """The worker's filter, installed for real in a process of its own: every call aimed at another
    process, its group or the user fails with EPERM and leaves the other's settings as they were;
    the same calls aimed at the caller itself (pid 0, as Python, torch and OpenMP make them) work."""
    r = subprocess.run([sys.executable, "-c", PROBE.format(root=str(ROOT))], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["others"] == {name: 1 for name in got["others"]}  # EPERM, each one
    assert got["after"] == got["before"]
    assert got["own"] == {name: 0 for name in got["own"]}
    assert got["mine"][0] == (2 << 13) | 5 and got["mine"][2] == os.SCHED_BATCH


def _run(prog: bytes, nr: int, arch: int, args=()) -> int:
    """What the kernel would answer: classic BPF as seccomp runs it, on one call."""
    import struct

    data = struct.pack("=iIQ6Q", nr, arch, 0, *[a & (2**64 - 1) for a in [*args, 0, 0, 0, 0, 0, 0][:6]])
    code = [struct.unpack_from("=HBBI", prog, i) for i in range(0, len(prog), 8)]
    pc = acc = 0
    while True:
        op, jt, jf, k = code[pc]
        if op == syscalls.LD_ABS:
            acc, pc = struct.unpack_from("=I", data, k)[0], pc + 1
        elif op == syscalls.AND:
            acc, pc = acc & k, pc + 1
        elif op in (syscalls.JEQ, syscalls.JGE):
            pc += 1 + (jt if (acc == k if op == syscalls.JEQ else acc >= k) else jf)
        elif op == syscalls.RET:
            return k
        else:
            raise AssertionError(f"an instruction the filter should not hold: {op:#x}")


@pytest.mark.parametrize("machine", sorted(syscalls.ARCHES))
def test_the_filter_decides_each_call_by_its_arguments(machine):
    """The program's decisions on both architectures, argument by argument: a pid of 0 (both
    32-bit halves) passes, any other target, process group or user is refused, and so is a pid
    whose high half is set; the earlier refusals (IPC, keys, another ABI) still hold."""
    prog = syscalls.program(machine)
    audit = syscalls.ARCHES[machine][0]
    nr = syscalls.SETTINGS_NR[machine]
    allow, deny = syscalls.RET_ALLOW, syscalls.RET_ERRNO | syscalls.EPERM
    cases = [
        ("ioprio_set", (1, 0, 3 << 13), allow),
        ("ioprio_set", (1, 7, 3 << 13), deny),
        ("ioprio_set", (2, 0, 3 << 13), deny),
        ("ioprio_set", (3, 0, 3 << 13), deny),
        ("ioprio_set", (1, 1 << 32, 0), deny),
        ("ioprio_set", (1 | (1 << 32), 0, 0), deny),
        ("setpriority", (0, 0, 19), allow),
        ("setpriority", (0, 2, 19), deny),
        ("setpriority", (1, 0, 19), deny),
        ("setpriority", (2, 0, 19), deny),
        ("setpriority", (0, -1, 19), deny),
        ("prlimit64", (0, 7, 1234, 0), allow),
        ("prlimit64", (9, 7, 0, 1234), allow),
        ("prlimit64", (9, 7, 1234, 0), deny),
        ("prlimit64", (9, 7, 1 << 40, 0), deny),
        ("setpgid", (0, 0), allow),
        ("setpgid", (0, 5), allow),
        ("setpgid", (5, 5), deny),
    ]
    for name in (
        "sched_setparam",
        "sched_setscheduler",
        "sched_setaffinity",
        "sched_setattr",
        "migrate_pages",
        "move_pages",
    ):
        cases += [(name, (0, 1, 2), allow), (name, (2, 1, 2), deny), (name, (1 << 32, 1, 2), deny)]
    for name, args, want in cases:
        assert _run(prog, nr[name], audit, args) == want, (name, args)
    for name, number in {**syscalls.ARCHES[machine][2], **syscalls.REFUSED[machine]}.items():
        assert _run(prog, number, audit, (0, 0, 0)) == deny, name
    assert _run(prog, nr["ioprio_set"], audit ^ 1, (1, 0, 0)) == deny  # another ABI
    untouched = {
        "x86_64": (0, 1, 39, 63, 96),
        "aarch64": (63, 64, 172, 160, 169),
    }  # read, write, getpid, uname, gettimeofday
    for number in untouched[machine]:
        assert _run(prog, number, audit, (5, 6, 7)) == allow
    # calls decided by an argument: shared anonymous memory, a new namespace or a pidfd, a cookie
    mmap, clone, getsockopt = syscalls.MMAP_NR[machine], syscalls.CLONE_NR[machine], syscalls.GETSOCKOPT_NR[machine]
    for flags, want in (
        (0x22, allow),
        (0x01, allow),
        (0x02, allow),
        (0x21, deny),
        (0x23, deny),
        (0x21 | 1 << 32, deny),
        (0x40021, deny),
    ):
        assert _run(prog, mmap, audit, (0, 4096, 3, flags, -1, 0)) == want, hex(flags)
    for flags, want in (
        (0x3D0F00 | 17, allow),
        (17, allow),
        (0x10000000 | 17, deny),
        (0x40000000, deny),
        (0x20000, deny),
        (0x1000 | 17, deny),
    ):
        assert _run(prog, clone, audit, (flags, 0, 0)) == want, hex(flags)
    for level, name, want in ((1, 7, allow), (1, 57, deny), (1, 71, deny), (6, 57, allow)):  # SOL_SOCKET; SOL_TCP
        assert _run(prog, getsockopt, audit, (3, level, name, 0, 0)) == want, (level, name)
    assert _run(prog, syscalls.NOT_THERE[machine]["clone3"], audit, (0, 88)) == syscalls.RET_ERRNO | syscalls.ENOSYS
    spawn = syscalls.program(machine, spawn=True)  # the second filter refuses only what it did
    for name, number in syscalls.SPAWN[machine].items():
        assert _run(spawn, number, audit) == deny, name
    assert _run(spawn, nr["ioprio_set"], audit, (1, 7, 0)) == allow


def test_the_fork_server_notices_a_change_of_its_own_settings():
    """The second line: the server's snapshot of itself covers the I/O priority and the whole
    sched_attr, so a change the filter did not stop is seen before the next fork."""
    script = textwrap.dedent(f"""
        import ctypes, os, sys
        sys.path.insert(0, {str(ROOT)!r})
        from grader.worker.runtime import __main__ as server, syscalls
        libc = ctypes.CDLL(None, use_errno=True)
        nr = syscalls.SETTINGS_NR[syscalls.platform.machine()]
        start = server.own_settings()
        assert server.own_settings() == start
        changed = []
        if libc.syscall(nr["ioprio_set"], 1, 0, (3 << 13)) == 0:  # IDLE
            changed.append(server.own_settings() != start)
        start = server.own_settings()
        os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0))
        changed.append(server.own_settings() != start)
        print(changed)
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[True, True]"
