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

# audit arch, first number of a foreign ABI (x32) or None, {name: number}
ARCHES = {
    "x86_64": (0xC000003E, 0x40000000, {"shmget": 29, "semget": 64, "msgget": 68, "memfd_create": 319,
                                        "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
                                        "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245,
                                        "add_key": 248, "request_key": 249, "keyctl": 250}),
    "aarch64": (0xC00000B7, None, {"shmget": 194, "semget": 190, "msgget": 186, "memfd_create": 279,
                                   "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183,
                                   "mq_notify": 184, "mq_getsetattr": 185,
                                   "add_key": 217, "request_key": 218, "keyctl": 219}),
}


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
    if spawn:
        numbers = SPAWN[machine]
    body = [(LD_ABS, 0, 0, 4)]  # seccomp_data.arch
    body.append((JEQ, 1, 0, audit))  # ours: go on; another ABI: refuse
    body.append(None)  # ret deny, filled below
    body.append((LD_ABS, 0, 0, 0))  # seccomp_data.nr
    tests = ([(JGE, foreign)] if foreign else []) + [(JEQ, nr) for nr in numbers.values()]
    for i, (op, k) in enumerate(tests):
        body.append((op, len(tests) - i, 0, k))  # jump over the rest and the allow, to the deny
    body.append((RET, 0, 0, RET_ALLOW))
    body.append((RET, 0, 0, RET_ERRNO | EPERM))
    body[2] = (RET, 0, 0, RET_ERRNO | EPERM)
    return b"".join(struct.pack("=HBBI", *ins) for ins in body)


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
