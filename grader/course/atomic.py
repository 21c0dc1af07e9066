"""Writing a file so that a reader, or a run killed mid-write, sees all of it or none of it.

Every file the grader writes for someone to read back (reports, batch records and gradebooks,
feedback pages, state files, checkpoints, caches, zips) is written here, in four steps:

1. into a temporary file `.<name>.<random><suffix>` in the target's own folder (the same file
   system, so that step 3 is atomic), created with the mode any program's new file gets
   (0666 & ~umask: a course group's teaching assistants read a gradebook as they read any other
   file), or with `mode` where the caller asks for one (0600 for the files kept private by
   design: a student's `.kata/` state, caches); a private file is private from its creation on;
2. flushed to the disk (fsync): a full disk shows up here, not later as a short file;
3. renamed over the target (os.replace): a reader sees the old file or the new one, never half;
   `durable`: the folder is flushed too, so the rename itself survives a power cut;
4. on any failure (an error, Ctrl-C) the temporary file is removed and the target is left as
   it was. Only SIGKILL between 1 and 3 can leave a temporary file, named so that its owner can
   find it (the batch store's `.part` files, which the next run removes).

Any OSError on the way (a full disk, a quota, a read-only file system, no permission, a folder
where the file should go) becomes a `WriteError` naming the file and the reason in the user's
language; `kata` reports it in plain words and exits with status 3 (`EXIT`).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import secrets
import stat
from pathlib import Path

from .messages import t

EXIT = 3  # the exit status of a command that could not write one of its files
TMP = ".tmp"
NEW = 0o666  # a new file's mode before the umask: what open(path, "w") asks for
FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)  # more space (or a higher quota) makes it work
REASONS = {
    errno.ENOSPC: "write_reason_full",
    errno.EDQUOT: "write_reason_quota",
    errno.EFBIG: "write_reason_too_big",
    errno.EROFS: "write_reason_read_only",
    errno.EACCES: "write_reason_denied",
    errno.EPERM: "write_reason_denied",
    errno.EISDIR: "write_reason_folder",
}


class WriteError(OSError):
    """A file could not be written. `path`: the file (not the temporary one); `reason`: why, in
    words (the user's language); `errno` as the system gave it; `full`: more disk space helps."""

    def __init__(self, path: str | os.PathLike, cause: OSError):
        code = cause.errno
        reason = t(REASONS[code]) if code in REASONS else (cause.strerror or str(cause))
        super().__init__(code, reason, str(path))
        self.path = Path(path)
        self.reason = reason

    @property
    def full(self) -> bool:
        return self.errno in FULL

    def __str__(self) -> str:
        return t("write_failed", path=self.path, reason=self.reason)


@contextlib.contextmanager
def replacing(
    path: str | os.PathLike,
    *,
    mode: int | None = None,
    keep_mode: bool = False,
    suffix: str = TMP,
    durable: bool = False,
):
    """`with replacing(path) as tmp:` write the file `tmp` (by its name: savefig, save_file,
    zipfile, tarfile...); when the block ends without an error, `tmp` becomes `path`.
    `mode`: the new file's permissions (None: 0666 & ~umask, as `open(path, "w")` gives);
    `keep_mode`: the target's, when it exists."""
    path = Path(path)
    tmp = None
    try:
        try:
            try:
                kind = os.lstat(path).st_mode
            except FileNotFoundError:
                kind = None
            if kind is not None and not (stat.S_ISREG(kind) or stat.S_ISDIR(kind) or stat.S_ISLNK(kind)):
                # a device, a pipe or a socket: renaming over it would put a file in its place
                # (`kata assets pack /dev/full` as root replaced the device and said "wrote")
                raise WriteError(path, OSError(errno.EINVAL, t("write_reason_special")))
            path.parent.mkdir(parents=True, exist_ok=True)
            while True:  # named before it exists: Ctrl-C between creating and naming it leaves none
                tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}{suffix}"
                try:
                    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, NEW if mode is None else 0o600)
                    break
                except FileExistsError:  # another writer's: never ours to remove
                    tmp = None
            try:  # the mode the umask gave it, set again at the end: a writer may replace `tmp`
                if mode is None:  # (safetensors' save_file leaves a 0600 file there)
                    mode = stat.S_IMODE(os.fstat(fd).st_mode)
            finally:
                os.close(fd)
            yield tmp
            _commit(tmp, path, _mode(path, mode, keep_mode), durable)
            tmp = None
        except WriteError:
            raise
        except OSError as e:
            raise WriteError(path, e) from e
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                tmp.unlink()


def write_bytes(path: str | os.PathLike, data: bytes, **how) -> Path:
    """Write `data` to `path` atomically (see the module's docstring; `how`: as `replacing`)."""
    with replacing(path, **how) as tmp, open(tmp, "wb") as f:
        f.write(data)
    return Path(path)


def write_text(path: str | os.PathLike, text: str, **how) -> Path:
    return write_bytes(path, text.encode("utf-8"), **how)


def write_json(path: str | os.PathLike, doc, *, indent: int = 2, sort_keys: bool = False, **how) -> Path:
    """`doc` as JSON (UTF-8, not ASCII-escaped) and a final newline."""
    return write_text(path, json.dumps(doc, indent=indent, ensure_ascii=False, sort_keys=sort_keys) + "\n", **how)


def _mode(path: Path, mode: int, keep: bool) -> int:
    if keep:
        with contextlib.suppress(OSError):
            return path.stat().st_mode & 0o7777
    return mode


def _commit(tmp: Path, path: Path, mode: int, durable: bool) -> None:
    fd = os.open(tmp, os.O_RDONLY)
    try:
        os.fsync(fd)  # a delayed-allocation file system reports a full disk here, not at write()
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    if durable:
        with contextlib.suppress(OSError):
            dfd = os.open(path.parent, os.O_RDONLY)
            try:
                os.fsync(dfd)
            finally:
                os.close(dfd)
