"""The manifest `kata submit` puts in a submission zip, and its verification by `kata grade`.

`kata-manifest.json` sits at the top of the zip, beside `exercises/`:

    {"kind": "kata-submission", "schema": 1, "kata_version": "0.1.0", "created": "<UTC ISO time>",
     "course": "...", "chapter": "ch01", "sandbox": "bubblewrap",
     "files": {"exercises/ch01/s1_11_softmax.py": {"sha256": "...", "bytes": 812}, ...},
     "exercises": {"s1_11_softmax": {"status": "passing", "passed": 3, "total": 3,
                                     "graded": "exercises/ch01/s1_11_softmax.py"}, ...}}

`status` is the public checks' verdict when the student submitted: "passing", "failing",
"missing" (no file) or "not run". Paths are relative to the manifest's folder. Verification
never refuses a submission: it says which files changed, disappeared or appeared after submit.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from ..course import files
from ..course.manifest import ID_RE
from ..course.messages import t

NAME = "kata-manifest.json"
KIND = "kata-submission"
SCHEMA = 1
MAX_FILE = 8 * 1024 * 1024  # what grader.checking.submission reads of one file (its MAX_FILE)
MAX_MANIFEST = 8 * 1024 * 1024
MAX_LISTED = 2000  # files a manifest may list that are looked at (grader.checking.submission.MAX_FILES)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _digest(path: Path, max_bytes: int) -> str:
    """sha256 of the file at `path`, read up to `max_bytes` + 1 bytes (a file that grew past the
    limit since it was looked at hashes differently, and so counts as changed)."""
    h = hashlib.sha256()
    left = max_bytes + 1
    with open(path, "rb", opener=files.open_no_follow) as f:
        while left > 0 and (chunk := f.read(min(1 << 20, left))):
            left -= len(chunk)
            h.update(chunk)
    return h.hexdigest()


def file_entry(data: bytes) -> dict:
    return {"sha256": sha256(data), "bytes": len(data)}


def find(src: Path, top: Path) -> Path | None:
    """The manifest of a submission whose exercises folder is `src`: in `src` or a folder above
    it, up to `top` (the unpacked archive or the folder given). A manifest that is a symbolic
    link is no manifest (links are never followed)."""
    here, top = src.absolute(), top.absolute()
    while True:
        if files.kind(here / NAME) == "file":
            return here / NAME
        if here == top or top not in here.parents:
            return None
        here = here.parent


def _claims(exercises) -> dict:
    """The manifest's per-exercise statuses in their documented shape only: the manifest is the
    student's, and the report carries what it claims (never a score) as plain, bounded values."""
    out: dict = {}
    if not isinstance(exercises, dict):
        return out
    for ex_id, claim in list(exercises.items())[:1000]:
        if not (isinstance(ex_id, str) and ID_RE.match(ex_id) and isinstance(claim, dict)):
            continue
        out[ex_id] = {
            key: (claim[key] if kind is int else str(claim[key])[:200])
            for key, kind in (("status", str), ("passed", int), ("total", int), ("graded", str))
            if key in claim and (kind is str or type(claim[key]) is int)
        }
    return out


def verify(path: Path, notes: list[str], max_bytes: int = MAX_FILE) -> dict:
    """Check the files next to the manifest at `path` against it; add a note per problem.
    Returns what the report shows: when and by which kata it was made, and what changed.
    A listed file larger than `max_bytes` (the submission reader's per-file limit) is not read:
    it is named under "too_large". The manifest itself is read only up to MAX_MANIFEST bytes."""
    base = path.parent
    info = {
        "file": NAME,
        "verified": False,
        "kata_version": None,
        "created": None,
        "changed": [],
        "missing": [],
        "added": [],
        "too_large": [],
        "exercises": {},
    }
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_MANIFEST + 1)
        if len(data) > MAX_MANIFEST:
            raise ValueError(f"larger than {MAX_MANIFEST // 2**20} MB")
        doc = json.loads(data.decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("kind") != KIND or not isinstance(doc.get("files"), dict):
            raise ValueError("not a kata submission manifest")
    except (ValueError, UnicodeDecodeError, RecursionError) as e:  # RecursionError: nested too deeply
        info["error"] = str(e)[:200]
        notes.append(t("manifest_unreadable", file=NAME, reason=info["error"]))
        return info
    info.update(
        kata_version=str(doc.get("kata_version"))[:40],
        created=str(doc.get("created"))[:40],
        exercises=_claims(doc.get("exercises")),
    )
    listed = doc["files"]
    if len(listed) > MAX_LISTED:  # kata submit lists what it zips, at most MAX_LISTED files: this one is not its
        info["error"] = t("manifest_too_many", count=len(listed), limit=MAX_LISTED)
        notes.append(t("manifest_unreadable", file=NAME, reason=info["error"]))
        return info
    for rel, entry in sorted(listed.items()):
        found = files.lookup(base, rel)  # inside the manifest's folder, through no link
        # only the plain spelling kata submit writes: "exercises/./ch01/x" or "exercises//ch01/x" would
        # name one file many times (each read again), and stand for a file that is not checked
        if found is None or found.rel != rel or not isinstance(entry, dict):
            info["missing"].append(rel)
            continue
        if found.st.st_size > max_bytes:  # never read (a 3 GB sparse file): the submission
            info["too_large"].append(rel)  # reader leaves it out too
        elif _digest(found.path, max_bytes) != entry.get("sha256"):
            info["changed"].append(rel)
    # every code file beside the manifest, wherever it is: a manifest that lists none (or only a
    # README), or a ch01/ beside the listed exercises/ch01/, must not read as verified
    for n, item in enumerate(files.walk(base)):
        if n >= 2 * MAX_LISTED:  # the submission reader takes at most MAX_LISTED files anyway
            break
        if isinstance(item, files.Found) and item.path.suffix in (".py", ".ipynb") and item.rel not in listed:
            info["added"].append(item.rel)
    for key, msg in (
        ("changed", "manifest_changed"),
        ("missing", "manifest_missing"),
        ("added", "manifest_added"),
        ("too_large", "manifest_too_large"),
    ):
        if info[key]:
            notes.append(t(msg, files=", ".join(info[key]), created=info["created"] or "?", mb=max_bytes // 2**20))
    info["verified"] = not (info["changed"] or info["missing"] or info["added"] or info["too_large"])
    return info
