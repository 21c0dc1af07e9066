"""A seccomp filter for every worker: the few system calls that hold memory or state outside the
limits and past the end of the check.

RLIMIT_AS bounds what a process maps, but System V shared memory and message queues outlive the
process that filled them (a worker could detach 4 GB of touched shared memory, exit, and do it
again in the next check until the host runs out), and memfd files are RAM the address space does
not count. POSIX message queues and kernel keyrings outlive their process too: a hidden check
could leave its inputs in a queue (mq_open) or a key (add_key into the session or user keyring)
for a later public check to print. A worker never needs any of them, so shmget, msgget, semget,
memfd_create, the mq_* calls, add_key, request_key and keyctl fail with EPERM. System calls of
another ABI (i386 through int 0x80, x32) are refused altogether, so that none of these can be
reached under another number.

Nothing a worker changes may outlive it either: the fork server runs under the worker's uid, and
the same uid may change another process's I/O priority, nice value, scheduling policy, CPUs and
resource limits (an I/O class set on the server carried a hidden check's inputs into a later public
check's message, and into the next student graded in the same batch slot). So every call that
changes the settings of another process, process group or user fails with EPERM (SETTINGS: each is
allowed only in the form that names the calling thread, pid 0), and process_madvise, which acts on
another process's memory, is refused altogether.

Nor may a host-wide counter carry anything: sysinfo (free RAM, buffers, processes of the whole host)
is refused altogether, and so is shared anonymous memory (mmap with MAP_SHARED and MAP_ANONYMOUS):
each such mapping is a new file of the kernel's one internal shmem mount, numbered from a counter
the whole host shares and shown in /proc/self/maps, so a hidden check that made n of them was read
back exactly by a later public check (an outside attack: 16 bits a check). memfd_create and System V
shared memory take their numbers from the same counter and are refused above; a shared mapping of
/dev/zero is the same object, so the sandbox's /dev/zero is /dev/null (grader/worker/sandbox.py).
The kernel numbers other objects from host-wide counters too, and a worker needs none of them: a
socket's cookie (SO_COOKIE, the next value of a counter the host shares, taken when first asked:
a third outside attack read 16 bits a check through it), a network namespace's cookie, the
namespaces themselves. So a worker can make no socket (socket, socketpair; the grader's connection
is made before it starts), cannot ask a socket's or a namespace's cookie (getsockopt SO_COOKIE,
SO_NETNS_COOKIE), cannot make or join a namespace (unshare, setns, clone with a CLONE_NEW* flag;
clone3, whose flags a filter cannot read, answers ENOSYS, so that glibc makes its threads with
clone), cannot get a pidfd (pidfd_open, clone with CLONE_PIDFD), and cannot reach io_uring (which makes sockets without the socket call), the aio ring,
userfaultfd, secret memory or a pidfd (objects numbered from the same kinds of counters).

Installed in each forked worker (no_new_privs, so it works unprivileged, with or without
bubblewrap); on an architecture not listed here no filter is installed.
"""

from __future__ import annotations

import ctypes
import platform
import struct

EPERM = 1
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET = 0x06  # BPF_RET | BPF_K
AND = 0x54  # BPF_ALU | BPF_AND | BPF_K
NR, ARCH, ARGS = 0, 4, 16  # offsets in struct seccomp_data; args[i] is 64 bits, low word first (little-endian)

# audit arch, first number of a foreign ABI (x32) or None, {name: number}
ARCHES = {
    "x86_64": (
        0xC000003E,
        0x40000000,
        {
            "shmget": 29,
            "semget": 64,
            "msgget": 68,
            "memfd_create": 319,
            "mq_open": 240,
            "mq_unlink": 241,
            "mq_timedsend": 242,
            "mq_timedreceive": 243,
            "mq_notify": 244,
            "mq_getsetattr": 245,
            "add_key": 248,
            "request_key": 249,
            "keyctl": 250,
        },
    ),
    "aarch64": (
        0xC00000B7,
        None,
        {
            "shmget": 194,
            "semget": 190,
            "msgget": 186,
            "memfd_create": 279,
            "mq_open": 180,
            "mq_unlink": 181,
            "mq_timedsend": 182,
            "mq_timedreceive": 183,
            "mq_notify": 184,
            "mq_getsetattr": 185,
            "add_key": 217,
            "request_key": 218,
            "keyctl": 219,
        },
    ),
}


# The calls that change a process's settings, each with the forms allowed (any of them; all of a
# form's (argument, value) pairs must match, compared as 64-bit values): those naming the calling
# thread itself. Every other form fails with EPERM: another pid, a process group, a user.
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
SETTINGS = {
    "ioprio_set": [((0, IOPRIO_WHO_PROCESS), (1, 0))],  # (which, who, ioprio)
    "setpriority": [((0, PRIO_PROCESS), (1, 0))],  # (which, who, nice)
    "sched_setparam": [((0, 0),)],  # (pid, param)
    "sched_setscheduler": [((0, 0),)],  # (pid, policy, param)
    "sched_setaffinity": [((0, 0),)],  # (pid, size, mask)
    "sched_setattr": [((0, 0),)],  # (pid, attr, flags): nice, policy, utilisation clamps
    "prlimit64": [((0, 0),), ((2, 0),)],  # (pid, resource, new, old): its own, or only reading
    "migrate_pages": [((0, 0),)],  # (pid, maxnode, old, new)
    "move_pages": [((0, 0),)],  # (pid, count, pages, nodes, status, flags)
    "setpgid": [((0, 0),)],  # (pid, pgid): its own group only
}
SETTINGS_NR = {
    "x86_64": {
        "ioprio_set": 251,
        "setpriority": 141,
        "sched_setparam": 142,
        "sched_setscheduler": 144,
        "sched_setaffinity": 203,
        "sched_setattr": 314,
        "prlimit64": 302,
        "migrate_pages": 256,
        "move_pages": 279,
        "setpgid": 109,
    },
    "aarch64": {
        "ioprio_set": 30,
        "setpriority": 140,
        "sched_setparam": 118,
        "sched_setscheduler": 119,
        "sched_setaffinity": 122,
        "sched_setattr": 274,
        "prlimit64": 261,
        "migrate_pages": 238,
        "move_pages": 239,
        "setpgid": 154,
    },
}
# sysinfo: free RAM, buffers and the process count of the whole host, which a check moves (evict a
# file from the page cache) and a later one reads; /proc's files of the same are fixed inside the
# sandbox (host_view.py). glibc's one use of it that Python reaches (qsort's memory estimate) is made
# once, by the fork server, before any worker starts.
REFUSED = {
    "x86_64": {
        "process_madvise": 440,
        "sysinfo": 99,
        "socket": 41,
        "socketpair": 53,
        "unshare": 272,
        "setns": 308,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "io_setup": 206,
        "userfaultfd": 323,
        "memfd_secret": 447,
        "pidfd_open": 434,
    },
    "aarch64": {
        "process_madvise": 440,
        "sysinfo": 179,
        "socket": 198,
        "socketpair": 199,
        "unshare": 97,
        "setns": 268,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "io_setup": 0,
        "userfaultfd": 282,
        "memfd_secret": 447,
        "pidfd_open": 434,
    },
}
# Answered ENOSYS rather than EPERM: glibc then makes the thread with clone, whose flags are read.
NOT_THERE = {"x86_64": {"clone3": 435}, "aarch64": {"clone3": 435}}
ENOSYS = 38
CLONE_NR = {"x86_64": 56, "aarch64": 220}
# clone's first argument: NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET, and PIDFD (a pidfd's
# inode is the host-wide pidfs number of the process: a fourth outside attack read it through clone)
CLONE_NEW_FLAGS = 0x7E020000 | 0x1000
GETSOCKOPT_NR = {"x86_64": 55, "aarch64": 209}
SOL_SOCKET, SO_COOKIE, SO_NETNS_COOKIE = 1, 57, 71
# mmap's flags (its fourth argument): a mapping both shared (MAP_SHARED or MAP_SHARED_VALIDATE, the
# type bits) and anonymous is refused; private and file-backed mappings are not.
MMAP_NR = {"x86_64": 9, "aarch64": 222}
MAP_TYPE_AND_ANONYMOUS = 0x0F | 0x20
SHARED_ANONYMOUS = (0x01 | 0x20, 0x03 | 0x20)
# What the fork server reads of itself to notice a change all the same (own_settings in __main__.py).
READ_NR = {"x86_64": {"ioprio_get": 252, "sched_getattr": 315}, "aarch64": {"ioprio_get": 31, "sched_getattr": 275}}


# A second filter, for a worker graded under a forbidden list: no thread, no process, no new program.
# The guard that refuses the forbidden functions is per thread and per process, so code that ran
# elsewhere would run unguarded. (The worker itself starts none: torch runs on one thread there.)
SPAWN = {
    "x86_64": {"clone": 56, "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone3": 435},
    "aarch64": {"clone": 220, "execve": 221, "execveat": 281, "clone3": 435},
}


def program(machine: str | None = None, spawn: bool = False) -> bytes | None:
    """The filter as an array of struct sock_filter, or None for an unknown architecture.
    spawn=True: the filter that refuses threads, processes and exec instead."""
    machine = machine or platform.machine()
    arch = ARCHES.get(machine)
    if arch is None:
        return None
    audit, foreign, numbers = arch
    rules: dict[int, list] = {}
    if spawn:
        numbers = SPAWN[machine]
    else:
        numbers = {**numbers, **REFUSED[machine]}
        rules = {SETTINGS_NR[machine][name]: forms for name, forms in SETTINGS.items()}
    # Instructions as (code, jump if true, jump if false, k), a jump being a label or None (the next one).
    body: list[tuple] = [(LD_ABS, None, None, ARCH), (JEQ, None, "deny", audit), (LD_ABS, None, None, NR)]
    if foreign:
        body.append((JGE, "deny", None, foreign))
    body += [(JEQ, "deny", None, nr) for nr in numbers.values()]
    body += [(JEQ, f"nr{nr}", None, nr) for nr in rules]
    if not spawn:
        body += [(JEQ, "enosys", None, nr) for nr in NOT_THERE[machine].values()]
        body.append((JEQ, "mmap", None, MMAP_NR[machine]))
        body.append((JEQ, "clone", None, CLONE_NR[machine]))
        body.append((JEQ, "getsockopt", None, GETSOCKOPT_NR[machine]))
    body.append((RET, None, None, RET_ALLOW))
    if not spawn:
        body += ["mmap", (LD_ABS, None, None, ARGS + 8 * 3), (AND, None, None, MAP_TYPE_AND_ANONYMOUS)]
        body += [(JEQ, "deny", None, flags) for flags in SHARED_ANONYMOUS]
        body.append((RET, None, None, RET_ALLOW))
        body += [
            "clone",
            (LD_ABS, None, None, ARGS),
            (AND, None, None, CLONE_NEW_FLAGS),
            (JEQ, None, "deny", 0),
            (RET, None, None, RET_ALLOW),
        ]
        body += [
            "getsockopt",
            (LD_ABS, None, None, ARGS + 8),
            (JEQ, None, "allow", SOL_SOCKET),
            (LD_ABS, None, None, ARGS + 16),
            (JEQ, "deny", None, SO_COOKIE),
            (JEQ, "deny", None, SO_NETNS_COOKIE),
            "allow",
            (RET, None, None, RET_ALLOW),
        ]
        body += ["enosys", (RET, None, None, RET_ERRNO | ENOSYS)]
    for nr, forms in rules.items():
        body.append(f"nr{nr}")
        for i, form in enumerate(forms):
            other = f"nr{nr}.{i + 1}" if i + 1 < len(forms) else "deny"
            if i:
                body.append(f"nr{nr}.{i}")
            for arg, value in form:
                for half in (0, 1):  # the low 32 bits, then the high ones
                    body.append((LD_ABS, None, None, ARGS + 8 * arg + 4 * half))
                    body.append((JEQ, None, other, (value >> (32 * half)) & 0xFFFFFFFF))
            body.append((RET, None, None, RET_ALLOW))
    body.append("deny")
    body.append((RET, None, None, RET_ERRNO | EPERM))
    return assemble(body)


def assemble(body: list) -> bytes:
    """Instructions and labels (strings) to struct sock_filter, jumps resolved to offsets."""
    where, n = {}, 0
    for item in body:
        if isinstance(item, str):
            where[item] = n
        else:
            n += 1
    out, n = [], 0
    for item in body:
        if isinstance(item, str):
            continue
        code, jt, jf, k = item
        jumps = [0 if j is None else where[j] - n - 1 for j in (jt, jf)]
        assert all(0 <= j < 256 for j in jumps), "a jump out of reach of classic BPF"
        out.append(struct.pack("=HBBI", code, jumps[0], jumps[1], k))
        n += 1
    return b"".join(out)


def install(spawn: bool = False) -> bool:
    """Filter this process and its future children. False when it could not be installed.
    spawn=True: refuse threads, processes and exec from now on (see SPAWN)."""
    prog = program(spawn=spawn)
    if prog is None:
        return False

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    fprog = SockFprog(len(prog) // 8, prog)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return False
    return libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) == 0
