"""A class as a learning platform hands it: Canvas's, Moodle's and Gradescope's bulk downloads.

`kata grade DIR --out OUT` takes DIR as the platform wrote it, unzipped or as the zip itself, with
no renaming. `recognise(DIR)` says which download it is; `stage(layout, folder)` lays each
student's files out as one submission folder the rest of the batch reads like any other, and
`Upload.identity` carries who the student is on the platform into their record (the LMS files
match on it). The shapes, from each platform's own code and documentation:

- Canvas, Assignments → Download Submissions (canvas-lms `lib/content_zipper.rb`: `get_filename`,
  `add_upload_submission`): flat files named
  `<sortable name, lower case, no punctuation>[_LATE]_<user id>_<attachment id>_<uploaded name>`,
  e.g. `andersonalice_LATE_51001_900001_s1_11_softmax.py`; anonymous grading writes `anon_<id>`
  for the name and user id. A file uploaded again under the same name comes as `name-1.py`,
  `name-2.py` (Canvas's unique file names): the latest upload (highest attachment id) of each
  name is graded and the others are named in the notes. Text entries (`_text.html`) and links
  (`_link.html`) have nothing to grade.
- Moodle, Assignment → Download all submissions (mod/assign/locallib.php `download_submissions`):
  `<Full name>_<participant id>_assignsubmission_file_/<the student's files>` (in folders, the
  default since Moodle 3.1), or flat files `<Full name>_<participant id>_assignsubmission_file_<name>`;
  blind marking writes `Participant_<id>`. The participant id is the grading worksheet's
  `Identifier` (`Participant 1234501`).
- Gradescope, Assignment → Review Grades → Export Submissions: `submission_<id>/` folders beside
  `submission_metadata.yml` (each submission's `:submitters:` with `:name:`, `:sid:`, `:email:`,
  and `:created_at:`), possibly inside one `assignment_<id>_export/` folder.

A student's files become one submission: a `kata submit` zip (or any single zip) as it is; loose
`.py` and `.ipynb` files under `exercises/<chapter>/`; a folder tree that already has the course's
shape as it is. Nothing is followed through a link; a zip download is read entry by entry with the
same limits as a submission (checking/submission.py), each student's files bounded as one
submission. A folder that mixes a platform's files with other entries is refused with the reason.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path, PurePosixPath

from ...checking.submission import MAX_FILE, MAX_FILES, MAX_RATIO, MAX_TOTAL, ZIP_ERRORS, entry_key
from ...course import files
from ...course.messages import t
from ..formats.names import nfc

PLATFORMS = ("canvas", "moodle", "gradescope")
MAX_CLASS_FILES = 200_000  # entries of a whole download (a class of hundreds, a few files each)
MAX_CLASS_TOTAL = 16 * 2**30
# Canvas's name part is the sortable name with every non-word character removed: \w only
CANVAS = re.compile(r"^(?P<name>\w*?)(?P<late>_LATE)?_(?P<uid>\d+)_(?P<att>\d+)_(?P<file>.+)$", re.S)
CANVAS_ANON = re.compile(r"^(?P<late>LATE_)?anon_(?P<uid>[A-Za-z0-9]+)_(?P<att>\d+)_(?P<file>.+)$", re.S)
CANVAS_TEXT = re.compile(
    r"^(?:(?P<name>\w*?)(?P<late>_LATE)?_(?P<uid>\d+)|(?P<alate>LATE_)?anon_(?P<aid>[A-Za-z0-9]+))"
    r"_(?:text|link)\.html$",
    re.S,
)
MOODLE = re.compile(
    r"^(?P<name>.+)_(?P<pid>\d+)_assign(?P<kind>submission|feedback)_(?P<plugin>[a-z]+)_(?P<rest>.*)$", re.S
)
GRADESCOPE_META = "submission_metadata.yml"
GRADESCOPE_DIR = re.compile(r"^submission_(?P<sid>\d+)$")
REUPLOAD = re.compile(r"^(?P<stem>.+)-(?P<n>\d+)(?P<ext>\.[^.]+)$")  # Canvas: name-1.py
COPY = re.compile(r"^(?P<stem>.+) \((?P<n>\d+)\)(?P<ext>\.[^.]+)$")  # Moodle's file manager: name (1).py
GRADABLE = (".py", ".ipynb", ".zip")


class PlatformError(ValueError):
    """The folder or zip is a platform's download that cannot be graded as it is (the reason)."""


@dataclass
class Item:
    """One file of the download: its path inside it (POSIX), size and time, and how to read it."""

    rel: str
    size: int
    mtime: float
    path: Path | None = None  # on disk
    info: zipfile.ZipInfo | None = None  # in the download's zip


@dataclass
class Upload:
    """One student's submission as the platform hands it."""

    key: str  # the entry's name in the staged class folder: "andersonalice_51001", "Alice Anderson_1234501"
    files: list[tuple[str, Item]] = field(default_factory=list)  # (path inside the submission, file)
    identity: dict = field(default_factory=dict)  # platform, id, name, email, sid, late, submitted_at, members
    notes: list[str] = field(default_factory=list)


@dataclass
class Layout:
    platform: str
    uploads: list[Upload]
    source: Path
    zip: zipfile.ZipFile | None = None
    ignored: list[tuple[str, str]] = field(default_factory=list)  # (name, why): files of the download not graded

    def describe(self) -> str:
        late = sum(1 for u in self.uploads if u.identity.get("late"))
        return t(f"platform_read_{self.platform}", source=self.source.name, count=len(self.uploads), late=late)

    def close(self) -> None:
        if self.zip is not None:
            self.zip.close()


# ---------------------------------------------------------------------------- reading a download
def _folder_items(top: Path) -> tuple[list[Item], list[str]]:
    """The regular files under `top` (never through a link), and the links or special files met."""
    items, left = [], []
    for n, found in enumerate(files.walk(top, skip_dirs=("__pycache__",))):
        if n > MAX_CLASS_FILES:
            raise PlatformError(t("platform_too_many", source=top.name, limit=MAX_CLASS_FILES))
        if isinstance(found, files.Left):
            left.append(found.rel)
            continue
        items.append(Item(nfc(found.rel), found.st.st_size, found.st.st_mtime, path=found.path))
    _no_twins(items, top.name)
    return items, left


def _no_twins(items: list[Item], source: str) -> None:
    """Two files whose names differ only in case or Unicode form (NFC/NFD): no platform writes that,
    and one of them would silently stand for the other; the download is refused, naming them."""
    seen: dict[str, str] = {}
    for item in items:
        key = item.rel.casefold()
        if key in seen:
            raise PlatformError(t("platform_twins", source=source, first=seen[key], second=item.rel))
        seen[key] = item.rel


def _zip_items(path: Path) -> tuple[zipfile.ZipFile, list[Item]]:
    """The files of a download's zip, each checked as a submission's entries are (no link, no path
    outside, no absolute path, sizes and ratios bounded); the class as a whole bounded too."""
    try:
        zf = zipfile.ZipFile(path)
        infos = zf.infolist()
    except ZIP_ERRORS as e:
        raise PlatformError(t("zip_unreadable", name=path.name, error=e)) from None
    if len(infos) > MAX_CLASS_FILES:
        zf.close()
        raise PlatformError(t("platform_too_many", source=path.name, limit=MAX_CLASS_FILES))
    items, seen, total = [], set(), 0
    for info in infos:
        name = info.filename.replace("\\", "/")
        key = entry_key(name)
        pure = PurePosixPath(name)
        mode = info.external_attr >> 16
        why = (
            "absolute"
            if name.startswith("/") or (len(name) > 1 and name[1] == ":")
            else "dotdot"
            if ".." in pure.parts
            else "link"
            if stat.S_ISLNK(mode)
            else "special"
            if stat.S_IFMT(mode) not in (0, stat.S_IFREG, stat.S_IFDIR)
            else "duplicate"
            if key in seen
            else ""
        )
        if why:
            zf.close()
            raise PlatformError(t(f"zip_{why}", name=path.name, entry=info.filename))
        seen.add(key)
        if info.is_dir() or not key:
            continue
        total += info.file_size
        if total > MAX_CLASS_TOTAL:
            zf.close()
            raise PlatformError(t("zip_total", name=path.name, mb=MAX_CLASS_TOTAL // 2**20))
        try:
            stamp = datetime(*info.date_time).timestamp()
        except (ValueError, OverflowError):
            stamp = 0.0
        items.append(Item(nfc(key), info.file_size, stamp, info=info))
    try:
        _no_twins(items, path.name)
    except PlatformError:
        zf.close()
        raise
    return zf, items


def _top(rel: str) -> str:
    return rel.split("/", 1)[0]


def _hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"


# ---------------------------------------------------------------------------- recognising it
def recognise(path: str | Path) -> Layout | None:
    """The platform download at `path` (a folder, or the download's zip), or None when it is not
    one (a folder of submissions as the kit has always read them). PlatformError when it is one
    that cannot be graded as it is, or a folder mixing one with other entries."""
    path = Path(path)
    what = files.kind(path)
    if what == "file" and path.suffix.lower() == ".zip":
        zf, items = _zip_items(path)
        try:
            layout = _recognise_items(path, items, [], zf)
        except PlatformError:
            zf.close()
            raise
        if layout is None:
            zf.close()
            raise PlatformError(t("platform_zip_unknown", source=path.name))
        layout.zip = zf
        return layout
    if what != "dir":
        return None
    names = [p.name for p in path.iterdir() if not _hidden(p.name)]
    if not any(
        CANVAS.match(n)
        or CANVAS_ANON.match(n)
        or MOODLE.match(n)
        or GRADESCOPE_DIR.match(n)
        or n == GRADESCOPE_META
        or n.endswith("_export")
        for n in names
    ):
        return None  # quick: most class folders are not a download, and are not walked here
    items, left = _folder_items(path)
    return _recognise_items(path, items, left)


def _recognise_items(
    source: Path, items: list[Item], left: list[str], zf: zipfile.ZipFile | None = None
) -> Layout | None:
    visible = [i for i in items if not any(_hidden(p) for p in i.rel.split("/"))]
    meta = [i for i in visible if i.rel.split("/")[-1] == GRADESCOPE_META and i.rel.count("/") <= 1]
    if meta:
        return _gradescope(source, visible, meta[0], zf)
    tops = sorted({_top(i.rel) for i in visible} | {_top(r) for r in left})
    canvas = [n for n in tops if CANVAS.match(n) or CANVAS_ANON.match(n) or CANVAS_TEXT.match(n)]
    moodle = [n for n in tops if MOODLE.match(n)]
    found = "moodle" if moodle and len(moodle) >= len(canvas) else "canvas" if canvas else ""
    if not found:
        return None
    theirs = set(moodle if found == "moodle" else canvas)
    if found == "canvas":  # Canvas's files sit at the top: a folder there is not Canvas's
        theirs = {n for n in theirs if all(i.rel == n for i in visible if _top(i.rel) == n)}
    others = [n for n in tops if n not in theirs]
    if 2 * len(theirs) < len(tops):  # a few names that happen to look so (`carol_2027_03_week1.zip`): a class folder
        return None
    if others:
        shown = ", ".join(repr(n) for n in others[:5]) + (", …" if len(others) > 5 else "")
        raise PlatformError(
            t(
                "platform_mixed",
                source=source.name,
                platform=t(f"platform_name_{found}"),
                count=len(others),
                names=shown,
            )
        )
    layout = _canvas(source, visible) if found == "canvas" else _moodle(source, visible)
    for rel in left:
        layout.ignored.append((rel, t("platform_link")))
    return layout


def _canvas(source: Path, items: list[Item]) -> Layout:
    uploads: dict[str, Upload] = {}
    latest: dict[tuple[str, str], tuple[int, str, Item]] = {}  # (user, uploaded name) -> newest upload
    ignored = []
    for item in items:
        name = item.rel
        m = CANVAS_ANON.match(name) or CANVAS.match(name)
        if m is None:
            text = CANVAS_TEXT.match(name)
            if text:
                anon = text["aid"] is not None
                uid = text["aid"] if anon else text["uid"]
                u = uploads.setdefault(
                    uid, _canvas_upload(text["name"] or "", uid, bool(text["late"] or text["alate"]), anon)
                )
                u.notes.append(t("platform_canvas_text", file=name))
            else:
                ignored.append((name, t("platform_not_theirs")))
            continue
        anon = m.re is CANVAS_ANON
        uid = m["uid"]
        others = [] if anon else sorted({c for c in _canvas_uids(name) if c != uid})
        if others:  # a name ending in _<digits> makes another user id readable: whose file it is, nobody can tell
            for who in [uid, *others]:
                v = uploads.setdefault(who, _canvas_upload("", who, False))
                v.identity["refused"] = t("platform_canvas_ambiguous", file=name, users=", ".join([uid, *others]))
            continue
        u = uploads.setdefault(uid, _canvas_upload("" if anon else m["name"], uid, bool(m["late"]), anon))
        if not anon and u.identity["name"] and m["name"] != u.identity["name"]:  # Canvas writes one name per user
            u.identity["refused"] = t("platform_two_names", id=uid, first=u.identity["name"], second=m["name"])
        if m["late"] and not u.identity["late"]:
            u.identity["late"] = True
        uploaded = m["file"]
        base = REUPLOAD.match(uploaded)
        plain = f"{base['stem']}{base['ext']}" if base and _is_gradable(uploaded) else uploaded
        att = int(m["att"])
        old = latest.get((uid, plain))
        if old is None or att > old[0]:
            if old is not None:
                u.notes.append(t("platform_reupload", file=plain, old=old[1], new=uploaded))
            latest[(uid, plain)] = (att, uploaded, item)
        else:
            u.notes.append(t("platform_reupload", file=plain, old=uploaded, new=old[1]))
    for (uid, plain), (_, _, item) in sorted(latest.items()):
        uploads[uid].files.append((plain, item))
    for u in uploads.values():
        if u.identity["late"]:
            u.notes.insert(0, t("platform_canvas_late_mark"))
    layout = Layout("canvas", [uploads[k] for k in sorted(uploads, key=lambda k: uploads[k].key)], source)
    layout.ignored = ignored
    return layout


def _canvas_uids(name: str) -> list[str]:
    """Every user id `name` can be read with: Canvas strips `_<digits>_` from a user's name, but a
    name may still end in `_<digits>` (`brownbob_102`), and then `brownbob_102_103_3_x.py` reads as
    user 102 or user 103."""
    found = []
    for m in re.finditer(r"(?=_(\d+)_(\d+)_.)", name):
        prefix = name[: m.start()].removesuffix("_LATE")
        if re.fullmatch(r"\w*", prefix) and not re.search(r"_\d+_", prefix):
            found.append(m[1])
    return found


def _canvas_upload(name: str, uid: str, late: bool, anon: bool = False) -> Upload:
    key = f"anon_{uid}" if anon else f"{name}_{uid}" if name else uid
    return Upload(
        key,
        identity={
            "platform": "canvas",
            "id": "" if anon else uid,
            "anonymous_id": uid if anon else "",
            "name": name,
            "late": late,
        },
    )


def _moodle(source: Path, items: list[Item]) -> Layout:
    uploads: dict[str, Upload] = {}
    for item in items:
        top, _, inside = item.rel.partition("/")
        m = MOODLE.match(top)
        name, pid = m["name"], m["pid"]
        u = uploads.setdefault(
            pid,
            Upload(
                f"{name}_{pid}",
                identity={
                    "platform": "moodle",
                    "id": pid,
                    "name": "" if name == "Participant" else name,
                    "late": False,
                },
            ),
        )
        if u.key != f"{name}_{pid}":  # Moodle writes one name per participant
            u.identity["refused"] = t("platform_two_names", id=pid, first=u.key, second=f"{name}_{pid}")
        if m["kind"] != "submission" or m["plugin"] != "file":  # online text, feedback files: nothing to run
            u.notes.append(t("platform_moodle_other", file=item.rel, plugin=f"assign{m['kind']}_{m['plugin']}"))
            continue
        rel = inside if inside else m["rest"]  # in folders, or flat: `..._assignsubmission_file_<name>`
        if rel:
            u.files.append((rel, item))
    return Layout("moodle", [uploads[k] for k in sorted(uploads, key=lambda k: uploads[k].key)], source)


def _gradescope(source: Path, items: list[Item], meta_item: Item, zf: zipfile.ZipFile | None) -> Layout:
    import yaml

    root = meta_item.rel.rpartition("/")[0]
    layout = Layout("gradescope", [], source, zf)
    if meta_item.size > MAX_FILE:
        raise PlatformError(t("platform_gradescope_meta", source=source.name, error=f"larger than {MAX_FILE} bytes"))
    try:
        meta = yaml.safe_load(_read(layout, meta_item)) or {}
    except (yaml.YAMLError, UnicodeDecodeError, RecursionError) as e:
        raise PlatformError(
            t("platform_gradescope_meta", source=source.name, error=str(e).splitlines()[0][:200])
        ) from None
    if not isinstance(meta, dict):
        raise PlatformError(t("platform_gradescope_meta", source=source.name, error="not a mapping"))
    folders: dict[str, list[Item]] = {}
    for item in items:
        rel = item.rel[len(root) + 1 :] if root else item.rel
        if item is meta_item or (root and not item.rel.startswith(root + "/")):
            if item is not meta_item:
                layout.ignored.append((item.rel, t("platform_not_theirs")))
            continue
        top, _, inside = rel.partition("/")
        if GRADESCOPE_DIR.match(top) and inside:
            folders.setdefault(top, []).append(item)
        else:
            layout.ignored.append((item.rel, t("platform_not_theirs")))
    for sub in sorted(set(folders) | {k for k in meta if isinstance(k, str) and GRADESCOPE_DIR.match(k)}):
        info = meta.get(sub) if isinstance(meta.get(sub), dict) else {}
        members = []
        for s in _get(info, "submitters") or []:
            if isinstance(s, dict):
                members.append({k: nfc(str(_get(s, k) or "")).strip() for k in ("name", "sid", "email")})
        first = members[0] if members else {"name": "", "sid": "", "email": ""}
        when = _when(_get(info, "created_at"))
        history = _get(info, "history")
        u = Upload(
            f"{first['name']}_{sub}" if first["name"] else sub,
            identity={
                "platform": "gradescope",
                "id": GRADESCOPE_DIR.match(sub)["sid"],
                "name": first["name"],
                "sid": first["sid"],
                "email": first["email"],
                "members": members,
                "late": False,
                "submitted_at": when,
            },
        )
        if not info:
            u.notes.append(t("platform_gradescope_unlisted", folder=sub))
        if isinstance(history, list) and history:
            u.notes.append(t("platform_gradescope_history", count=len(history) + 1))
        prefix = f"{root}/{sub}/" if root else f"{sub}/"
        u.files = [(i.rel[len(prefix) :], i) for i in folders.get(sub, [])]
        layout.uploads.append(u)
    layout.uploads.sort(key=lambda u: u.key)
    return layout


def _get(d, key: str):
    """A Gradescope metadata field: Ruby writes symbol keys (`:sid:`), read as ':sid'."""
    if not isinstance(d, dict):
        return None
    return d.get(f":{key}", d.get(key))


def _when(value) -> str:
    """ISO time in UTC from Gradescope's `:created_at:` ("" when there is none or it is not a time)."""
    if isinstance(value, datetime):
        at = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        return at.astimezone(timezone.utc).isoformat()
    if isinstance(value, str):
        text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip())  # Ruby writes nanoseconds
        for fmt in ("%Y-%m-%d %H:%M:%S.%f %z", "%Y-%m-%d %H:%M:%S %z", "%Y-%m-%dT%H:%M:%S.%f%z", "%Y-%m-%dT%H:%M:%S%z"):
            try:
                return datetime.strptime(text, fmt).astimezone(timezone.utc).isoformat()
            except ValueError:
                continue
    return ""


def _is_gradable(name: str) -> bool:
    return name.lower().endswith(GRADABLE)


# ---------------------------------------------------------------------------- staging it
def _read(layout: Layout, item: Item) -> bytes:
    if item.info is not None:
        with layout.zip.open(item.info) as f:
            data = f.read(MAX_FILE + 1)
    else:
        with open(item.path, "rb", opener=files.open_no_follow) as f:
            data = f.read(MAX_FILE + 1)
    if len(data) > MAX_FILE:
        raise PlatformError(t("zip_lies", name=layout.source.name, entry=item.rel))
    return data


def arrange(
    upload: Upload, chapter: str, ids: list[str] | None = None, read=None
) -> tuple[list[tuple[str, Item]], list[str]]:
    """Where each of a student's files goes in their submission folder, and what is left out (said).
    `ids`: the course's exercises: a loose file named for none of them is said in the notes (a
    notebook whose `kata notebook` metadata names one is graded as that one; `read(item)`: its bytes)."""
    placed, notes = [], []
    rels = [rel for rel, _ in upload.files]
    shaped = any(chapter in PurePosixPath(r).parts[:-1] for r in rels)
    zips = [(r, i) for r, i in upload.files if r.lower().endswith(".zip")]
    loose = [(r, i) for r, i in upload.files if r.lower().endswith((".py", ".ipynb"))]
    if shaped:  # a folder tree in the course's shape (exercises/ch01/..., ch01/...): as it is
        return list(upload.files), notes
    if len(zips) == 1 and not loose:
        return [(PurePosixPath(zips[0][0]).name, zips[0][1])], notes
    if len(zips) > 1 and not loose:
        return [(f"zips/{r}", i) for r, i in zips], notes  # graded as "more than one zip": refused, said
    chosen: dict[str, tuple[tuple, str, Item]] = {}  # the name graded -> (which is latest, the file, it)
    for rel, item in upload.files:
        name = PurePosixPath(rel).name
        if not name.lower().endswith((".py", ".ipynb")):
            notes.append(t("platform_left_out", file=rel))
            continue
        copy = COPY.match(name)  # "x (1).py": Moodle's name for a file uploaded again under the same name
        plain = f"{copy['stem']}{copy['ext']}" if copy else name
        if ids and PurePosixPath(plain).stem not in ids:
            from .discover import _notebook_exercise

            ex = (
                _notebook_exercise(PurePosixPath(plain), read(item), ids) if read and plain.endswith(".ipynb") else None
            )
            if ex:
                notes.append(t("platform_notebook_as", file=rel, id=ex))
                plain = f"{ex}.ipynb"
            else:
                notes.append(t("platform_not_exercise", file=rel))
        rank = (int(copy["n"]) if copy else 0, item.mtime)
        old = chosen.get(plain)
        if old is not None:
            newer, older = ((rank, rel, item), old) if rank > old[0] else (old, (rank, rel, item))
            notes.append(t("platform_reupload", file=plain, old=older[1], new=newer[1]))
            chosen[plain] = newer
        else:
            chosen[plain] = (rank, rel, item)
    placed = [(f"exercises/{chapter}/{plain}", item) for plain, (_, _, item) in sorted(chosen.items())]
    return placed, notes


def stage(layout: Layout, folder: Path, chapter: str, ids: list[str] | None = None) -> dict[str, Upload]:
    """Write each upload as `folder/<key>/...`; {key: upload}. Each student's files are bounded as
    one submission's are (MAX_FILES, MAX_TOTAL, MAX_FILE, the ratio of a zip's entries): past them
    their folder holds a note instead, and grading refuses it with the reason. Times are kept."""
    out: dict[str, Upload] = {}
    used: set[str] = set()
    for u in layout.uploads:
        key = _safe_key(u.key, used)
        u.key = key
        out[key] = u
        dest = folder / key
        dest.mkdir()

        def read(item: Item) -> bytes:  # a notebook's metadata; a damaged entry is said when it is copied
            try:
                return _read(layout, item) if item.size <= MAX_FILE else b""
            except (PlatformError, *ZIP_ERRORS):
                return b""

        placed, notes = arrange(u, chapter, ids, read)
        u.notes += notes
        total = sum(i.size for _, i in placed)
        problem = u.identity.get("refused") or (
            t("platform_nothing", platform=t(f"platform_name_{layout.platform}"))
            if not placed
            else t("zip_entries", name=key, count=len(placed), limit=MAX_FILES)
            if len(placed) > MAX_FILES
            else t("zip_total", name=key, mb=MAX_TOTAL // 2**20)
            if total > MAX_TOTAL
            else ""
        )
        for rel, item in placed if not problem else []:
            info = item.info
            if item.size > MAX_FILE or (
                info is not None and info.compress_size and info.file_size / info.compress_size > MAX_RATIO
            ):
                problem = t("zip_large", name=key, entry=item.rel, size=item.size, limit=MAX_FILE)
                break
            target = dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            try:
                target.write_bytes(_read(layout, item))
            except ZIP_ERRORS as e:  # a damaged entry of the download: this student's, said, the others graded
                problem = t(
                    "zip_entry_unreadable",
                    name=layout.source.name,
                    entry=item.rel,
                    error=f"{type(e).__name__}: {e}"[:200],
                )
                break
            os.utime(target, (item.mtime, item.mtime))
        if problem:
            shutil.rmtree(dest)
            dest.mkdir()
            u.identity["refused"] = problem
    return out


def _safe_key(key: str, used: set[str]) -> str:
    """A folder name for the key: one path component, no leading dot, unique (casefolded)."""
    base = nfc(key).replace("/", "_").replace("\\", "_").replace("\0", "_").strip().lstrip(".") or "student"
    base = base[:120]
    name, k = base, 1
    while name.casefold() in used:
        k += 1
        name = f"{base}-{k}"
    used.add(name.casefold())
    return name


@dataclass
class Download:
    """A platform's download staged as a class folder, for the duration of one grading run."""

    layout: Layout
    folder: Path
    uploads: dict[str, Upload]

    def entries(self):
        """(entries, skipped) as discover() gives them for the staged folder, each entry carrying its
        student's platform identity and the notes on what was resolved or left out of their files."""
        from .discover import Skipped, discover

        entries, skipped = discover(self.folder)
        for e in entries:
            u = self.uploads.get(e.source)
            if u is not None:
                e.platform = dict(u.identity)
                e.notes = [*u.notes, *e.notes]
        skipped += [Skipped(name, why) for name, why in self.layout.ignored]
        return entries, skipped


@contextlib.contextmanager
def staged(layout: Layout, chapter: str, ids: list[str] | None = None):
    """The download staged in a private temporary folder (0700), removed afterwards."""
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="kata-download-"))
    try:
        yield Download(layout, folder, stage(layout, folder, chapter, ids))
    finally:
        files.remove_tree(folder)
