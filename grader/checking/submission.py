"""A student's submission, copied into a private folder the grader owns.

Accepted: a folder shaped like `exercises/` (holding `ch01/...`), a project folder holding
`exercises/`, or a .zip of either. Zips are checked entry by entry before anything is written:
absolute paths, `..`, symbolic links, one path named twice (in any spelling: `a/./b`, `a//b`),
oversized or over-compressed entries refuse the whole archive with a clear error, and nothing
is ever written outside the private folder.

A submission is only the regular files physically inside it (grader/course/files.py): a symbolic link
is never followed. The path given may not be one; links inside are skipped with a note; a
submission whose `ch01/` is only reachable through links is refused, naming them.

Notebooks: an exercise may come as `<id>.ipynb` instead of, or as well as, `<id>.py`. Its code
cells become `<id>.py` in the private copy (see grader/checking/notebook.py), so it is graded exactly
like a .py. When both are there and their code differs, the one saved last is graded (file
times, kept from zips too; a tie goes to the .py) and a note says which. A notebook that cannot
be read fails its exercise's checks with a message naming the file (or, when a .py is there,
the .py is graded and a note says why); the other exercises are graded as usual.

Only the course's exercise files are graded: `<chapter>/<id>.py` for each exercise of the
course (a notebook graded as its .py). Every other file (a helper module, data, notes) is left
out of the private copy, so no exercise can import or read it in the sandbox, and one note names
them ("not graded: not an exercise of the course").

A `kata-manifest.json` written by `kata submit` is verified against the files: files changed,
missing or added after submit are named in the notes, and so are listed files past MAX_FILE,
which are never read; grading goes on regardless.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
import time
import zipfile
import zlib
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from ..course import files
from ..course.manifest import ID_RE
from ..course.messages import t
from ..course.safe_text import one_line
from ..course.source_text import REFUSED, SourceText, decode
from . import submit_manifest as kata_manifest
from .notebook import NotebookError, read_code

MAX_FILE = 8 * 1024 * 1024
MAX_TOTAL = 64 * 1024 * 1024
MAX_FILES = 2000
MAX_RATIO = 100  # uncompressed / compressed, per entry


class SubmissionError(Exception):
    """The submission cannot be graded at all (bad archive, nothing to grade). The reason often
    quotes a submitted name (a zip entry's), so it is kept free of terminal control and on one
    line (a line break in a name shows as ⏎): printed, it forges no line of the grader's."""

    def __init__(self, reason: str = "") -> None:
        super().__init__(one_line(reason))


@dataclass
class Submission:
    origin: Path
    root: Path  # private copy, shaped like exercises/
    notes: list[str] = field(default_factory=list)
    _tmp: str | None = None
    problems: dict[str, str] = field(default_factory=dict)  # file (e.g. "ch01/x.py") -> why it cannot be graded
    manifest: dict | None = None  # what kata_manifest.verify found; None: no manifest
    graded_from: dict[str, str] = field(
        default_factory=dict
    )  # "ch01/x.py" -> "ch01/x.ipynb" when the notebook is graded
    links: list[str] = field(default_factory=list)  # the notes on symbolic links skipped (also in notes)
    label: str = ""  # how reports name the submission: the folder's or the zip's own name, never a host path
    _texts: dict = field(default_factory=dict, init=False, repr=False, compare=False)  # rel -> SourceText

    def path(self, rel: str) -> Path:
        return self.root / rel

    def read(self, rel: str) -> SourceText | None:
        """The file `rel` as Python decodes it (grader/course/source_text.py), read once; None if absent.
        The one reader of a student's source on the trusted side: the scan, the files it follows, the
        attempt flags and `kata similarity` all read this."""
        if rel not in self._texts:
            p = self.path(rel)
            self._texts[rel] = decode(p.read_bytes(), rel) if p.is_file() and not p.is_symlink() else None
        return self._texts[rel]

    def source(self, rel: str) -> str | None:
        """The text Python runs from `rel` (BOM and coding line honoured); None when the file is absent
        or Python's decoding cannot be proved (see read())."""
        found = self.read(rel)
        return found.text if found is not None else None

    def staged_at(self, folder: str | Path) -> "Submission":
        """This submission copied into `folder`, which is emptied first but stays itself: a sandbox
        that outlives one grading (the warm grader's, a batch slot's) bind-mounts it at /sub, and
        is refilled between gradings. The copy's own private folder stays this one's to clean."""
        folder = Path(folder)
        for old in folder.iterdir():  # a worker running as the grader's user may have shaped it
            if not files.remove_tree(old):
                raise OSError(f"cannot empty {folder}")
        for src in self.root.iterdir():  # only regular files and folders: the copy made by open_submission
            if src.is_dir():
                shutil.copytree(src, folder / src.name, symlinks=True)
            else:
                shutil.copy2(src, folder / src.name)
        return replace(self, root=folder, _tmp=None)

    def cleanup(self) -> None:
        if self._tmp:
            files.remove_tree(self._tmp)  # iterative: the copy and the zip's staging are shaped by the submission
            self._tmp = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.cleanup()


def _shape_root(folder: Path, chapter: str, top: Path | None = None, shown: str = "") -> Path:
    """The folder inside `folder` that holds `<chapter>/`, reached without following a link.
    A refusal names the folder as `shown` (the path given) followed by its place under `top`."""
    top = top or folder
    if files.real_dir(folder, chapter):
        return folder
    if files.real_dir(folder, "exercises", chapter):
        return folder / "exercises"
    try:
        children = sorted(folder.iterdir())
    except OSError:
        children = []
    subdirs = [d for d in children if files.kind(d) == "dir" and not d.name.startswith((".", "__MACOSX"))]
    if len(subdirs) == 1:
        return _shape_root(subdirs[0], chapter, top, shown)
    where = folder.relative_to(top).as_posix()
    name = (shown or str(top)) + ("" if where == "." else f"/{where}")
    raise SubmissionError(t("sub_no_chapter", folder=name, chapter=chapter))


def _nothing_but_links(top: Path, shown: str, chapter: str) -> SubmissionError | None:
    """The refusal of a submission whose exercises are only reachable through links, if it is one."""
    links = files.links_in(top)
    if not links:
        return None
    return SubmissionError(t("sub_only_links", path=shown, links=", ".join(links), chapter=chapter))


def _copy_tree(src: Path, dst: Path, notes: list[str], shown: str = "") -> list[str]:
    """Copy the regular files under `src` (never through a link) into `dst`, within the limits;
    say in `notes` what was left out and why (`shown`: how `src` is named there). Returns the
    notes on the links skipped."""
    total = 0
    count = 0
    links: list[str] = []
    for item in files.walk(src):
        count += 1
        if count > MAX_FILES:
            raise SubmissionError(t("sub_too_big", folder=shown or src.name, mb=MAX_TOTAL // 2**20, files=MAX_FILES))
        if isinstance(item, files.Left):
            if item.why == "link":
                links.append(item.rel)
            continue
        st = item.st
        if st.st_size > MAX_FILE:
            notes.append(t("sub_large_skipped", file=item.rel, mb=MAX_FILE // 2**20))
            continue
        total += st.st_size
        if total > MAX_TOTAL:
            raise SubmissionError(t("sub_too_big", folder=shown or src.name, mb=MAX_TOTAL // 2**20, files=MAX_FILES))
        target = dst / item.rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(item.path, "rb", opener=files.open_no_follow) as f_in, open(target, "wb") as f_out:
            shutil.copyfileobj(f_in, f_out)
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))  # which of .py/.ipynb is newer
    notes.extend(skipped := link_notes(links))
    return skipped


def link_notes(links: list[str], limit: int = 10) -> list[str]:
    """One note per link skipped, the first `limit` of them, then one for the rest."""
    out = [t("sub_link_skipped", file=rel) for rel in links[:limit]]
    if len(links) > limit:
        out.append(t("sub_links_more", count=len(links) - limit))
    return out


def entry_key(name: str) -> str:
    """The path a zip entry names, in one spelling: `exercises/./ch01//x.py`, `exercises\\ch01\\x.py`
    and `exercises/ch01/x.py/` all name `exercises/ch01/x.py` (what extraction writes)."""
    return "/".join(p for p in name.replace("\\", "/").split("/") if p not in ("", "."))


def check_zip(zf: zipfile.ZipFile, name: str) -> list[zipfile.ZipInfo]:
    """Every entry is a plain file or folder under the archive's root, of sane size."""
    infos = zf.infolist()
    if len(infos) > MAX_FILES:
        raise SubmissionError(t("zip_entries", name=name, count=len(infos), limit=MAX_FILES))
    total = 0
    seen: set[str] = set()
    for info in infos:
        fname = info.filename
        key = entry_key(fname)
        if key and key in seen:  # unzip tools disagree on which copy wins: the grader must not pick one
            raise SubmissionError(t("zip_duplicate", name=name, entry=fname))
        seen.add(key)
        pure = PurePosixPath(fname.replace("\\", "/"))
        if fname.startswith(("/", "\\")) or pure.is_absolute() or (len(fname) > 1 and fname[1] == ":"):
            raise SubmissionError(t("zip_absolute", name=name, entry=fname))
        if ".." in pure.parts:
            raise SubmissionError(t("zip_dotdot", name=name, entry=fname))
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise SubmissionError(t("zip_link", name=name, entry=fname))
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR):
            raise SubmissionError(t("zip_special", name=name, entry=fname))
        if info.file_size > MAX_FILE:
            raise SubmissionError(t("zip_large", name=name, entry=fname, size=info.file_size, limit=MAX_FILE))
        if info.compress_size and info.file_size / info.compress_size > MAX_RATIO:
            raise SubmissionError(
                t("zip_bomb", name=name, entry=fname, ratio=info.file_size // info.compress_size, limit=MAX_RATIO)
            )
        total += info.file_size
        if total > MAX_TOTAL:
            raise SubmissionError(t("zip_total", name=name, mb=MAX_TOTAL // 2**20))
    return infos


# What a damaged or hostile archive makes zipfile raise: bad CRCs, names that are not UTF-8
# although flagged so, encryption, unknown compression methods, truncated or corrupt streams.
ZIP_ERRORS = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    UnicodeDecodeError,
    NotImplementedError,
    RuntimeError,
    EOFError,
    ValueError,
    zlib.error,
    OSError,
)


def _extract(path: Path, dst: Path) -> None:
    try:
        zf = zipfile.ZipFile(path)
    except ZIP_ERRORS as e:
        raise SubmissionError(t("zip_unreadable", name=path, error=e)) from None
    with zf:
        infos = check_zip(zf, str(path))
        base = dst.resolve()
        for info in infos:
            try:
                _extract_entry(zf, info, path, dst, base)
            except SubmissionError:
                raise
            except ZIP_ERRORS as e:
                raise SubmissionError(
                    t("zip_entry_unreadable", name=path, entry=info.filename, error=f"{type(e).__name__}: {e}"[:200])
                ) from None


def _extract_entry(zf: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, dst: Path, base: Path) -> None:
    target = (dst / info.filename.replace("\\", "/")).resolve()
    if not target.is_relative_to(base):
        raise SubmissionError(t("zip_outside", name=path, entry=info.filename))
    if info.is_dir():
        target.mkdir(parents=True, exist_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    written = 0
    with zf.open(info) as src, open(target, "wb") as out:
        while chunk := src.read(1 << 20):
            written += len(chunk)
            if written > MAX_FILE:  # sizes in the header can lie
                raise SubmissionError(t("zip_lies", name=path, entry=info.filename))
            out.write(chunk)
    try:  # keep the entry's time: it decides between a .py and its notebook
        stamp = time.mktime((*info.date_time, 0, 0, -1))
        os.utime(target, (stamp, stamp))
    except (OverflowError, ValueError, OSError):
        pass


def _adopt_notebooks(
    root: Path, chapter: str, notes: list[str], problems: dict[str, str], graded_from: dict[str, str]
) -> None:
    """Turn each `<chapter>/<id>.ipynb` into the `<id>.py` that is graded (see the module doc)."""
    folder = root / chapter
    if not folder.is_dir():
        return
    for nb in sorted(folder.glob("*.ipynb")):
        if not ID_RE.match(nb.stem):  # a scratch notebook, not an exercise: left alone
            continue
        py = nb.with_suffix(".py")
        rel_nb, rel_py = f"{chapter}/{nb.name}", f"{chapter}/{py.name}"
        try:
            code = read_code(nb, rel_nb)
        except NotebookError as e:
            if py.is_file():
                notes.append(t("nb_broken_graded_py", reason=str(e), py=rel_py))
            else:
                problems[rel_py] = str(e)
            continue
        if py.is_file():
            if decode(py.read_bytes(), rel_py).text == code:
                continue
            if nb.stat().st_mtime <= py.stat().st_mtime:
                notes.append(t("nb_both_py_graded", nb=rel_nb, py=rel_py))
                continue
            notes.append(t("nb_both_nb_graded", nb=rel_nb, py=rel_py))
        else:
            notes.append(t("nb_graded", nb=rel_nb, py=rel_py))
        py.write_text(code, encoding="utf-8")
        graded_from[rel_py] = rel_nb


def _refuse_unreadable(root: Path, exercises, problems: dict[str, str], graded_from: dict[str, str]) -> None:
    """An exercise file Python would read as other text than the grader (a coding line that is not
    UTF-8, bytes that are not UTF-8, a decoding that does not give Python's own tree) cannot be
    graded: its exercise fails every check with the reason (a notebook is named as itself)."""
    for ex in exercises:
        p = root / ex.file
        if ex.file in problems or not p.is_file() or p.is_symlink():
            continue
        found = decode(p.read_bytes(), ex.file)
        if found.kind in REFUSED:
            problems[ex.file] = found.refusal(graded_from.get(ex.file, ex.file), ex.id)


def _keep_exercises(root: Path, keep: set[str], notes: list[str], limit: int = 10) -> None:
    """Remove from the private copy every file that is not one of `keep` (the course's exercise
    files): the rest is not graded, and nothing in the sandbox may import or read it. An exercise's
    notebook (graded as its .py) and the manifest go silently; the others are named in one note."""
    dropped = []
    for item in list(files.walk(root, skip_dirs=())):
        if item.rel in keep:
            continue
        if isinstance(item, files.Found):
            nb = PurePosixPath(item.rel)
            if not (
                nb.suffix == ".ipynb" and nb.with_suffix(".py").as_posix() in keep or nb.name == kata_manifest.NAME
            ):
                dropped.append(item.rel)
        item.path.unlink()
    for d in reversed(files.folders_and_files(root)[0][1:]):  # folders left empty, deepest first
        try:
            os.rmdir(d)
        except OSError:
            pass
    if dropped:
        dropped.sort()
        shown = ", ".join(dropped[:limit]) + (
            t("sub_not_graded_more", count=len(dropped) - limit) if len(dropped) > limit else ""
        )
        notes.append(t("sub_not_graded", files=shown))


def open_submission(path: str | Path, chapter: str = "ch01", exercises=None) -> Submission:
    """Copy a submission into a private folder. Raises SubmissionError with a reason.
    Nothing is read through a symbolic link: `path` itself may not be one, and links inside it
    are skipped with a note (a submission that has its exercises only through links is refused).
    `exercises`: the course's exercises (objects with `.file`); only their files are kept (see the
    module doc). None keeps every file (for tools that only read the copy, never grade it)."""
    origin = Path(path)
    what = files.kind(origin)
    if what == "missing":
        raise SubmissionError(t("sub_missing", path=origin))
    if what == "link":
        raise SubmissionError(t("sub_is_link", path=origin))
    if what == "special":
        raise SubmissionError(t("sub_not_zip", path=origin))
    tmp = tempfile.mkdtemp(prefix="kata-sub-")
    try:
        staging = Path(tmp, "in")
        staging.mkdir()
        notes: list[str] = []
        if what == "file":
            if not zipfile.is_zipfile(origin):
                raise SubmissionError(t("sub_not_zip", path=origin))
            _extract(origin, staging)
            top = staging
        else:
            top = origin
        try:
            src = _shape_root(top, chapter, top, str(origin))
        except SubmissionError:
            refusal = _nothing_but_links(top, str(origin), chapter)
            if refusal is None:
                raise
            raise refusal from None
        found = kata_manifest.find(src, top)
        checked = kata_manifest.verify(found, notes, MAX_FILE) if found else None
        root = Path(tmp, "sub")
        root.mkdir()
        links = _copy_tree(src, root, notes, str(origin))
        problems: dict[str, str] = {}
        graded_from: dict[str, str] = {}
        _adopt_notebooks(root, chapter, notes, problems, graded_from)
        if exercises is not None:
            _keep_exercises(root, {ex.file for ex in exercises}, notes)
            _refuse_unreadable(root, exercises, problems, graded_from)
        folders, inside = files.folders_and_files(root)  # the worker runs as another user
        for d in folders:
            os.chmod(d, 0o755)
        for f in inside:  # only regular files are left in the copy
            if not os.path.islink(f):
                os.chmod(f, 0o644)
        # The copy itself is readable by the worker's uid; the folder above it, which the sandbox
        # never sees (it mounts the copy at /sub), keeps other users of the machine out.
        os.chmod(tmp, 0o700)
        files.remove_tree(staging)
        return Submission(
            origin.resolve(),
            root,
            notes,
            tmp,
            problems,
            checked,
            graded_from,
            links,
            label=os.path.basename(os.path.abspath(origin)),
        )
    except BaseException:
        files.remove_tree(tmp)
        raise
