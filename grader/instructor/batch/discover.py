"""The submissions in a class folder: what each entry is, the student it belongs to, its fingerprint.

An entry of DIR is one submission when it is
  - a folder: shaped like `exercises/` (holding `ch01/`), a project folder holding `exercises/`,
    a folder with one such folder inside, a folder holding exactly one `.zip` (the layout a
    learning platform's "download all" gives: `alice/kata-submission.zip`), or a folder holding
    notebooks up to three levels down (nbgrader's `submitted/alice/s1_11/s1_11_softmax.ipynb`);
  - a `.zip` file: a `kata submit` zip or a plain zip of either folder shape;
  - a `.ipynb` file: one exercise as a notebook (`kata notebook`'s metadata, or an exercise id in
    its file name, say which).
Anything else is listed as "not a submission", with the reason, and left alone; hidden entries
(`.DS_Store`, `.git`) and `__MACOSX` are ignored silently.

No symbolic link is followed (grader/course/files.py): an entry that is a link (`zed -> alice`) is a
submission that is refused, a row of the gradebook with its reason (a link, never followed); a
link inside an entry (`mallory/exercises -> ../alice/exercises`, a linked `kata-submission.zip`)
is skipped with a note, and an entry that holds its exercises only through links is refused. The
fingerprint covers what grading reads: the regular files, and the links' names.

The student's name is the entry's name without `.zip`/`.ipynb`, reduced to letters, digits,
`.`, `_` and `-`. Two entries with the same name (`alice/` and `alice.zip`, or `Alice` and
`alice`) never share an output folder: an entry whose name needed no change (`alice`) keeps it
over one reduced to it (` alice`, `alice\u200b`), else the first in sorted order; the others get
`-2`, `-3`, ... A rerun keeps every name a record already has (matched by the entry's name in DIR),
so names never move between runs. These names are OUT's folders only: the roster and a
timestamp file are matched with the entry's own name (grader/instructor/formats/names.py), never
with a generated `bob-2`.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ...checking.notebook import NotebookError, read
from ...checking.submission import MAX_FILE, MAX_FILES, MAX_TOTAL, SubmissionError, link_notes
from ...course import files
from ...course.messages import t
from ..formats.names import SUFFIXES, nfc, stem


@dataclass
class Entry:
    source: str  # the entry's name in DIR: "alice.zip", "bob"
    path: Path  # the entry itself
    name: str = ""  # the student's name, unique in OUT
    fingerprint: str = ""
    notes: list[str] = field(default_factory=list)
    platform: dict = field(default_factory=dict)  # who the student is on the platform (platforms.py)


@dataclass
class Skipped:
    source: str
    reason: str

    def as_dict(self) -> dict:
        return {"source": self.source, "reason": self.reason}


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


# Hidden folders that tools leave in a class folder, never a student's: skipped without a word.
TOOL_FOLDERS = frozenset({".git", ".hg", ".svn", ".kata", ".ipynb_checkpoints", ".idea", ".vscode", "__MACOSX"})


def is_one_submission(path: Path, chapter: str) -> bool:
    """PATH itself is a submission (it holds `<chapter>/` or `exercises/<chapter>/`), not a class.
    Only real folders count: a link is never followed."""
    return files.real_dir(path, chapter) or files.real_dir(path, "exercises", chapter)


def discover(class_dir: Path) -> tuple[list[Entry], list[Skipped]]:
    """The entries of DIR that are submissions, and those that are not (with a reason)."""
    entries, skipped = [], []
    for p in sorted(Path(class_dir).iterdir(), key=lambda p: p.name):
        what = files.kind(p)
        if _hidden(p.name):  # .DS_Store and tools' folders: nothing to say; a submission's shape: said
            if p.name not in TOOL_FOLDERS and (what == "dir" or (what == "file" and p.suffix.lower() in SUFFIXES)):
                skipped.append(Skipped(p.name, t("batch_skip_hidden")))
            continue
        if what == "dir" or what == "link" or (what == "file" and p.suffix.lower() in SUFFIXES):
            # a link is refused when graded (open_submission never follows one): a row with its reason
            entries.append(Entry(p.name, p))
        elif what == "file":
            skipped.append(Skipped(p.name, t("batch_skip_not_submission")))
        else:
            skipped.append(Skipped(p.name, t("batch_skip_not_regular")))
    return entries, skipped


def student_name(source: str) -> str:
    """The name OUT gives the entry `source`: its own name without .zip/.ipynb in NFC (a macOS
    folder's `zoe` + U+0308 is `zoë`, as typed on Linux, never `zoe`), each run of characters other
    than letters, digits, combining marks, `.`, `_` and `-` one `_`, none at the ends, at most 80
    characters; "student" when nothing is left. `zoe/` and `zoë/` are two names."""
    import unicodedata

    kept = "".join(
        ch if re.fullmatch(r"[\w.-]", ch) or unicodedata.category(ch).startswith("M") else "\0"
        for ch in nfc(stem(source))
    )
    name = re.sub("\0+", "_", kept).strip("._-")[:80]
    return name or "student"


def assign_names(entries: list[Entry], known: dict[str, str], taken: set[str]) -> list[str]:
    """Give every entry a unique name; `known`: source -> name of the records already in OUT,
    `taken`: every name used there. Returns a note per entry renamed because of a clash."""
    used = {n.casefold(): n for n in taken}  # names differing only in case would share a folder on macOS
    notes = []
    for e in entries:
        if e.source in known:
            e.name = known[e.source]
            used[e.name.casefold()] = e.name
    as_is = [student_name(e.source) == stem(e.source) for e in entries]  # first: ' alice' never takes alice
    for e in [e for e, x in zip(entries, as_is) if x] + [e for e, x in zip(entries, as_is) if not x]:
        if e.name:
            continue
        base = student_name(e.source)
        name, k = base, 1
        while name.casefold() in used:
            k += 1
            name = f"{base}-{k}"
        used[name.casefold()] = name
        e.name = name
    for e in entries:  # every run says it again: batch.json and summary.md keep the latest run's notes
        base = student_name(e.source)
        if e.name != base:
            other = next((o.source for o in entries if o.name.casefold() == base.casefold()), None)
            notes.append(
                f"{e.source}: the name '{base}' is taken"
                + (f" by {other}" if other else "")
                + f"; graded as '{e.name}'"
            )
    return notes


def fingerprint(path: Path) -> str:
    """sha256 over the submission's files (names and contents), exactly what grading can read:
    regular files only, found without following a link (grader/course/files.py); a folder's
    __pycache__ and .git are left out. A link counts by its name alone (what it points to is
    never graded, but a refusal names it). Bounded like grading itself: past the size limits
    the rest is not read."""
    h = hashlib.sha256()
    path = Path(path)
    budget = [MAX_TOTAL]

    def add(p: Path) -> bool:
        """Hash the file into h; False once the budget is spent."""
        with open(p, "rb", opener=files.open_no_follow) as f:
            while budget[0] > 0 and (chunk := f.read(min(1 << 20, budget[0]))):
                budget[0] -= len(chunk)
                h.update(chunk)
        return budget[0] > 0

    what = files.kind(path)
    if what == "link":  # graded as nothing (refused): its name alone, never what it points to
        h.update(b"\1" + os.fsencode(path.name) + b"\0")
        return h.hexdigest()
    if what == "file":
        add(path)
        return h.hexdigest()
    if what != "dir":
        return h.hexdigest()
    count = 0
    for item in files.walk(path):
        count += 1
        if isinstance(item, files.Left):
            if item.why == "link":
                h.update(b"\1" + os.fsencode(item.rel) + b"\0")
        else:
            h.update(b"\0" + os.fsencode(item.rel) + b"\0")  # the name's bytes, UTF-8 or not
            if not add(item.path):
                return h.hexdigest()
        if count > MAX_FILES:
            return h.hexdigest()
    return h.hexdigest()


# -- what open_submission is given ------------------------------------------------------------
def _notebook_exercise(nb: Path, data: bytes, ids: list[str]) -> str | None:
    """Which exercise a notebook holds: `kata notebook`'s metadata, else an id in its file name."""
    try:
        doc = json.loads(data.decode("utf-8"))
        ex = doc.get("metadata", {}).get("kata", {}).get("exercise")
        if ex in ids:
            return ex
    except (ValueError, AttributeError, OSError, RecursionError):
        pass
    stem = nb.stem
    found = [i for i in ids if i == stem or stem.endswith("_" + i) or stem.endswith("-" + i)]
    return found[0] if found else None


@contextlib.contextmanager
def submission_path(entry: Entry, chapter: str, ids: list[str]):
    """The path to hand open_submission for this entry (a temporary folder for notebooks).
    Raises SubmissionError when the entry holds nothing gradable."""
    p = entry.path
    if files.kind(p) == "dir" and not is_one_submission(p, chapter):
        visible = [c for c in p.iterdir() if not _hidden(c.name)]
        zips = [c for c in visible if files.kind(c) == "file" and c.suffix.lower() == ".zip"]
        dirs = [c for c in visible if files.kind(c) == "dir"]
        nbs = _notebooks(p) if not zips and not _has_chapter(p, chapter) else []
        if len(zips) == 1 and not dirs:
            p = zips[0]
            entry.notes += link_notes([c.name for c in visible if files.kind(c) == "link"])  # beside the zip
        elif nbs:  # loose notebooks, e.g. nbgrader's submitted/<student>/<assignment>/<id>.ipynb
            entry.notes += link_notes(files.links_in(p, limit=MAX_FILES))  # _walk passed them over
            with _wrapped(nbs, chapter, ids) as folder:
                yield folder
            return
        elif len(zips) > 1 and not dirs:
            raise SubmissionError(
                f"{entry.source}: {len(zips)} zip files ({', '.join(z.name for z in zips)}); expected one submission"
            )
    if files.kind(p) == "file" and p.suffix.lower() == ".ipynb":
        with _wrapped([p], chapter, ids) as folder:
            yield folder
        return
    yield p


def _walk(folder: Path, depth: int):
    """Visible files and folders under `folder`, `depth` levels down at most."""
    for c in sorted(folder.iterdir()):
        if _hidden(c.name) or files.kind(c) not in ("dir", "file"):  # a link is never followed
            continue
        yield c
        if files.kind(c) == "dir" and depth > 1:
            yield from _walk(c, depth - 1)


def _has_chapter(folder: Path, chapter: str) -> bool:
    return any(c.is_dir() and c.name == chapter for c in _walk(folder, 3))


def _notebooks(folder: Path) -> list[Path]:
    return [c for c in _walk(folder, 3) if c.is_file() and c.suffix.lower() == ".ipynb"]


@contextlib.contextmanager
def _wrapped(notebooks: list[Path], chapter: str, ids: list[str]):
    """A folder shaped like exercises/ holding each notebook as `<chapter>/<id>.ipynb`."""
    tmp = tempfile.mkdtemp(prefix="kata-nb-")
    try:
        folder = Path(tmp, chapter)
        folder.mkdir()
        for nb in notebooks:
            if nb.lstat().st_size > MAX_FILE:
                raise SubmissionError(f"{nb.name}: larger than {MAX_FILE // 2**20} MB")
            try:  # a notebook that is the whole submission and cannot be read: the submission is refused
                with open(nb, "rb", opener=files.open_no_follow) as f:
                    data = f.read(MAX_FILE + 1)
                if len(data) > MAX_FILE:
                    raise SubmissionError(f"{nb.name}: larger than {MAX_FILE // 2**20} MB")
                read(data, nb.name)
            except NotebookError as e:
                raise SubmissionError(str(e)) from None
            ex = _notebook_exercise(nb, data, ids)
            if ex is None:
                raise SubmissionError(
                    f"{nb.name}: cannot tell which exercise this notebook is (no `kata notebook` "
                    "metadata and no exercise id in its name, e.g. s1_11_softmax.ipynb)"
                )
            if (folder / f"{ex}.ipynb").exists():
                raise SubmissionError(f"{nb.name}: a second notebook for exercise {ex}")
            (folder / f"{ex}.ipynb").write_bytes(data)
            os.utime(folder / f"{ex}.ipynb", ns=(nb.lstat().st_atime_ns, nb.lstat().st_mtime_ns))
        yield Path(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
