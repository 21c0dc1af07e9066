"""Where a course's warm grader listens, the stamp that says whether it still grades what this
process would, and the wire format (a 4-byte length, then UTF-8 JSON).

The socket lives in a folder only this user can enter: $KATA_WARM_DIR, else
$XDG_RUNTIME_DIR/kata-warm, else /tmp/kata-warm-<uid>. A folder that is a link, belongs to
someone else or is open to others is not used (the commands then grade in their own process).
The sandbox never sees it: its /tmp is its own and the runtime folder is not mounted.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import socket
import stat
import struct
import sys
from pathlib import Path

from ...course.manifest import Course

MAX_MESSAGE = 64 * 1024 * 1024
GRADER = Path(__file__).resolve().parents[2]  # the grader package: its code is part of the stamp
# The environment the server's grading depends on (read when it starts). KATA_LANG is not here:
# each request says its language.
STAMPED_ENV = (
    "KATA_SANDBOX",
    "KATA_CGROUPS",
    "KATA_ASSETS_DIR",
    "KATA_CACHE_DIR",
    "KATA_DATA_DIR",
    "KATA_OFFLINE",
    "KATA_IMDB",
)


def enabled() -> bool:
    return os.environ.get("KATA_WARM", "1").strip().lower() not in ("0", "off", "no", "false")


def idle_seconds() -> float:
    try:
        return max(1.0, float(os.environ.get("KATA_WARM_IDLE", "600")))
    except ValueError:
        return 600.0


def folder() -> Path | None:
    """The private folder for sockets, created if needed; None when it is not safe to use."""
    given = os.environ.get("KATA_WARM_DIR")
    if given:
        path = Path(given)
    elif os.environ.get("XDG_RUNTIME_DIR"):
        path = Path(os.environ["XDG_RUNTIME_DIR"]) / "kata-warm"
    else:
        path = Path("/tmp") / f"kata-warm-{os.getuid()}"
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError:
        return None
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        return None
    return path


def socket_path(course: Course) -> Path | None:
    """The course's socket: one server per course folder and user."""
    base = folder()
    if base is None:
        return None
    name = hashlib.sha256(os.fsencode(os.path.realpath(course.root))).hexdigest()[:20]
    path = base / f"{name}.sock"
    return path if len(os.fsencode(path)) < 100 else None  # AF_UNIX paths are short


def _files(top: Path):
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for f in sorted(filenames):
            yield os.path.join(dirpath, f)


def stamp(course: Course) -> str:
    """What the server's grading was loaded from: the grader's code, the course's manifest, checks,
    fixtures and assets (names, sizes, times) and the environment it reads. A server whose stamp
    differs from a client's stops, and the client starts a new one."""
    h = hashlib.sha256()
    h.update(os.fsencode(sys.executable) + b"\0" + os.fsencode(os.path.realpath(course.root)) + b"\0")
    h.update(os.fsencode(shutil.which("bwrap") or "") + b"\0")  # the sandbox the server started
    for name in STAMPED_ENV:
        h.update(f"{name}={os.environ.get(name, '')}\0".encode("utf-8", "surrogateescape"))
    tops = [GRADER, course.root / "course.toml", course.checks_dir, course.fixtures_dir, course.assets_dir]
    seen: set[str] = set()
    for top in tops:
        paths = list(_files(top)) if top.is_dir() else [str(top)]
        for p in paths:
            if p in seen:
                continue
            seen.add(p)
            try:
                st = os.stat(p)
            except OSError:
                continue
            h.update(os.fsencode(p) + f"\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    return h.hexdigest()


def connect(path: Path) -> socket.socket | None:
    """A connection to the server listening at `path`; None when none answers there."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(str(path))
    except OSError:
        s.close()
        return None
    return s


def answers(path: Path) -> bool:
    conn = connect(path)
    if conn is not None:
        conn.close()
    return conn is not None


def send(sock: socket.socket, message: dict) -> None:
    data = json.dumps(message).encode("utf-8")
    sock.sendall(struct.pack(">I", len(data)) + data)


def _exactly(sock: socket.socket, n: int) -> bytes:
    chunks = []
    while n:
        chunk = sock.recv(min(n, 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def receive(sock: socket.socket) -> dict:
    (n,) = struct.unpack(">I", _exactly(sock, 4))
    if n > MAX_MESSAGE:
        raise ConnectionError(f"a message of {n} bytes is too long")
    message = json.loads(_exactly(sock, n).decode("utf-8"))
    if not isinstance(message, dict):
        raise ConnectionError("a message is not an object")
    return message
