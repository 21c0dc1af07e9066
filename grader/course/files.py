"""What is physically inside a submitted folder, found without following a single symbolic link.

A submission is only the regular files inside it. `Path.is_dir()`, `is_file()`, `os.walk` and
`shutil.copytree` follow links (a student's `exercises -> /course/solutions` would be read as
theirs), so every reader of a submission asks this module instead:

    walk(top)               every regular file under `top` (Found), and every link or special
                            file met on the way (Left, with why), in a stable order; never enters
                            a linked folder
    kind(path)              "dir" | "file" | "link" | "special" | "missing", from lstat
    real_dir(base, *parts)  base/parts... is a folder, and so is every step on the way (no link)
    lookup(base, rel)       the regular file at base/rel when no step of `rel` is a link, else None
    walk_dirs(folder)       the real folders directly in `folder`, never a link

Every function takes `lstat` of each name it looks at; nothing here opens a file.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

SKIP_DIRS = ("__pycache__", ".git")


@dataclass(frozen=True)
class Found:
    """A regular file: its path relative to the top (POSIX form) and its lstat."""

    rel: str
    path: Path
    st: os.stat_result


@dataclass(frozen=True)
class Left:
    """Something that is not graded: `why` is "link" (a symbolic link, to a file or a folder) or
    "special" (a FIFO, socket or device)."""

    rel: str
    path: Path
    why: str


def kind(path: str | Path) -> str:
    try:
        mode = os.lstat(path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "missing"
    except OSError:  # a name too long, a permission refused: nothing that can be graded
        return "missing"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISREG(mode):
        return "file"
    return "special"


def real_dir(base: str | Path, *parts: str) -> bool:
    """`base/parts...` is a folder and no step from `base` on is a link (`base` itself included)."""
    here = Path(base)
    if kind(here) != "dir":
        return False
    for part in parts:
        here = here / part
        if kind(here) != "dir":
            return False
    return True


def lookup(base: str | Path, rel: str) -> Found | None:
    """The regular file `rel` (a POSIX path) under `base`, reached without a link, `..` or an
    absolute path; None otherwise."""
    pure = PurePosixPath(rel)
    parts = [p for p in pure.parts if p not in ("", ".")]
    if pure.is_absolute() or not parts or ".." in parts or "\\" in rel or "\0" in rel:
        return None
    try:
        if not real_dir(base, *parts[:-1]):
            return None
        path = Path(base, *parts)
        st = os.lstat(path)
    except (OSError, ValueError, UnicodeError):  # a NUL or a lone surrogate in a name from a manifest: no such file
        return None
    return Found("/".join(parts), path, st) if stat.S_ISREG(st.st_mode) else None


def walk(top: str | Path, skip_dirs: tuple[str, ...] = SKIP_DIRS):
    """Yield Found for every regular file under the folder `top` and Left for every link and
    special file, never entering a linked folder. Order: a folder's own entries by name, then its
    subfolders by name (as `os.walk` with sorted names). Folders named in `skip_dirs` are passed
    over silently. `top` itself must be a real folder (see `real_dir`)."""
    top = Path(top)
    stack = [(top, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:  # unreadable: nothing in it can be graded
            continue
        subdirs = []
        for e in entries:
            rel = prefix + e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if e.name not in skip_dirs:
                    subdirs.append((Path(e.path), rel + "/"))
            elif stat.S_ISLNK(st.st_mode):
                yield Left(rel, Path(e.path), "link")
            elif stat.S_ISREG(st.st_mode):
                yield Found(rel, Path(e.path), st)
            else:
                yield Left(rel, Path(e.path), "special")
        stack.extend(reversed(subdirs))


def links_in(top: str | Path, limit: int = 5, entries: int = 2000) -> list[str]:
    """The first `limit` symbolic links under `top` (relative paths), looking at no more than
    `entries` names: what a refusal names when a submission holds nothing but links."""
    found = []
    for n, item in enumerate(walk(top, skip_dirs=())):
        if n >= entries:
            break
        if isinstance(item, Left) and item.why == "link":
            found.append(item.rel)
            if len(found) >= limit:
                break
    return found


def _entries(folder: str | Path) -> list:
    """The entries directly in `folder` (os.DirEntry, by name); none when it is not a real folder."""
    if kind(folder) != "dir":
        return []
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name)
    except OSError:
        return []


def walk_one(folder: str | Path):
    """The regular files directly in `folder` (Found, by name); none when it is not a real folder."""
    for e in _entries(folder):
        try:
            st = e.stat(follow_symlinks=False)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            yield Found(e.name, Path(e.path), st)


def open_no_follow(path, flags):
    """An `opener` for open(): fails on a link (a file the walk found regular that became one)."""
    return os.open(path, flags | os.O_NOFOLLOW)


def walk_dirs(folder: str | Path):
    """The real folders directly in `folder` (os.DirEntry, by name), links left out; none when
    `folder` is not a real folder."""
    for e in _entries(folder):
        try:
            if e.is_dir(follow_symlinks=False):
                yield e
        except OSError:
            continue


def remove_tree(path: str | Path, budget_s: float = 300.0) -> bool:
    """Remove `path` and everything under it; True when it is gone. For every folder a submission
    could write or shape (a worker's folder, a staged copy, a batch's scratch): no link is ever
    followed (a link is removed, never entered), nothing recurses (shutil.rmtree does, and a tree
    3,000 folders deep raised RecursionError in root's cleanup and failed the grading), and no path
    longer than one name is ever handed to the kernel, so a tree deeper than PATH_MAX goes too.

    The worker's own wipe (runtime `empty_folder`) does the same: every subfolder is moved up into
    the folder being removed, under a name of its own, and emptied there, through descriptors. It
    never raises; a mount point inside is left (and the call says False), and after `budget_s` of
    work (a writer that keeps adding, which the grader's sweep of the uid rules out) it gives up
    and says False rather than stop the grading."""
    import time

    path = os.path.abspath(os.fspath(path))
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    if not stat.S_ISDIR(st.st_mode):
        try:
            os.unlink(path)
            return True
        except OSError:
            return False
    deadline = time.monotonic() + budget_s
    _open_up(path, st)
    try:
        top = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError:
        return False
    try:
        dev = os.fstat(top).st_dev
        todo = [None]  # None: `path` itself; else a name directly in it, moved up there
        moved = 0
        while todo:
            if time.monotonic() > deadline:
                return False
            name = todo.pop()
            if name is None:
                fd = os.dup(top)
            else:
                try:
                    cst = os.lstat(name, dir_fd=top)
                except OSError:
                    continue
                if cst.st_dev != dev:
                    continue  # a mount point: not ours to take apart
                if not stat.S_ISDIR(cst.st_mode):
                    _quietly(os.unlink, name, dir_fd=top)
                    continue
                _open_up(name, cst, top)
                try:
                    fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=top)
                except OSError:
                    continue
            try:
                for child in os.listdir(fd):
                    try:
                        cst = os.lstat(child, dir_fd=fd)
                    except OSError:
                        continue
                    if not stat.S_ISDIR(cst.st_mode):
                        _quietly(os.unlink, child, dir_fd=fd)
                    elif cst.st_dev == dev:
                        if name is None:
                            todo.append(child)
                            continue
                        for _ in range(64):  # up into `path`, under a name not taken there
                            moved += 1
                            if _quietly(os.rename, child, f".kata-rm-{moved}", src_dir_fd=fd, dst_dir_fd=top):
                                todo.append(f".kata-rm-{moved}")
                                break
            except OSError:
                pass
            finally:
                os.close(fd)
            if name is not None:
                _quietly(os.rmdir, name, dir_fd=top)
    finally:
        os.close(top)
    return _quietly(os.rmdir, path)


def _open_up(name: str, st: os.stat_result, dir_fd: int | None = None) -> None:
    """A folder the grader owns but cannot list or empty (a worker running as the grader's own
    user made it so): give the owner back read, write and search before it is opened."""
    if st.st_uid == os.getuid() and st.st_mode & stat.S_IRWXU != stat.S_IRWXU:
        _quietly(os.chmod, name, stat.S_IMODE(st.st_mode) | stat.S_IRWXU, dir_fd=dir_fd)


def _quietly(fn, *args, **kwargs) -> bool:
    try:
        fn(*args, **kwargs)
        return True
    except OSError:
        return False


def folders_and_files(top: str | Path) -> tuple[list[str], list[str]]:
    """Every folder under `top` (`top` first, each before what it holds) and every other entry
    (files, links, special files), found iteratively (os.walk recurses, so a tree a submission
    shaped 1,000 deep raised RecursionError) and never entering a linked folder."""
    folders, others, stack = [], [], [os.fspath(top)]
    while stack:
        folder = stack.pop()
        folders.append(folder)
        try:
            with os.scandir(folder) as it:
                for e in it:
                    try:
                        is_dir = e.is_dir(follow_symlinks=False)
                    except OSError:
                        continue
                    (stack if is_dir else others).append(e.path)
        except OSError:
            pass
    return folders, others
