"""A uid of its own for every sandbox, when the grader runs as root.

RLIMIT_NPROC counts the processes and threads of a real uid across the whole host. If every
sandbox ran as `nobody`, one submission's fork bomb would use up the count for all of them, and a
submission graded beside it (`kata grade --jobs N`, or another `kata grade` on the same machine)
could no longer start a thread. So each sandbox leases a uid nobody else uses, from a range far
above ordinary accounts, for as long as it lives. The lease is an exclusive `flock` on a file in
a root-only folder: the kernel drops it when the holder dies, so a killed grader never leaks one.
"""

from __future__ import annotations

import fcntl
import os
import tempfile

FIRST = 1_879_048_192  # 0x70000000: above login accounts, container subuid ranges and `nobody`
COUNT = 4096
LEASES = "/run/kata-uids"


def _folder() -> str:
    for folder in (LEASES, os.path.join(tempfile.gettempdir(), "kata-uids")):
        try:
            os.makedirs(folder, mode=0o700, exist_ok=True)
            st = os.lstat(folder)
            if st.st_uid == os.getuid() and not (st.st_mode & 0o022) and os.path.isdir(folder):
                return folder
        except OSError:
            continue
    raise OSError("no private folder for uid leases (tried /run and the temporary folder)")


def _in_use(uid: int) -> bool:
    """Whether any process on the host runs as `uid` (one left by a crash of something else)."""
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    return True
            except OSError:
                pass
    return False


def held(uid: int) -> bool:
    """Whether some live process holds the lease on `uid` (a probe: it takes the lock and lets go)."""
    try:
        fd = os.open(os.path.join(_folder(), str(uid)), os.O_RDWR | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return False
    except BlockingIOError:
        return True
    finally:
        os.close(fd)


class Lease:
    """A uid held for one sandbox's life. `uid` is None when not root (a user namespace then
    maps the worker to the grader's own user, and its count of processes is what it is)."""

    def __init__(self, start: int = 0):
        self.uid: int | None = None
        self._fd: int | None = None
        if os.getuid() != 0:
            return
        folder = _folder()
        for i in range(COUNT):
            uid = FIRST + (start + i) % COUNT
            fd = os.open(os.path.join(folder, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                os.close(fd)
                continue
            if _in_use(uid):
                os.close(fd)
                continue
            self.uid, self._fd = uid, fd
            return
        raise OSError(f"all {COUNT} sandbox uids are in use")

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the only descriptor drops the flock
            self._fd = None

    def __del__(self):
        self.release()
