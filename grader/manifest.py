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

from .course import ID_RE
from .messages import t

NAME = "kata-manifest.json"
KIND = "kata-submission"
SCHEMA = 1


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def file_entry(data: bytes) -> dict:
    return {"sha256": sha256(data), "bytes": len(data)}


def find(src: Path, top: Path) -> Path | None:
    """The manifest of a submission whose exercises folder is `src`: in `src` or a folder above
    it, up to `top` (the unpacked archive or the folder given)."""
    here, top = src.resolve(), top.resolve()
    while True:
        if (here / NAME).is_file():
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
        out[ex_id] = {key: (claim[key] if kind is int else str(claim[key])[:200])
                      for key, kind in (("status", str), ("passed", int), ("total", int), ("graded", str))
                      if key in claim and (kind is str or type(claim[key]) is int)}
    return out


def verify(path: Path, notes: list[str]) -> dict:
    """Check the files next to the manifest at `path` against it; add a note per problem.
    Returns what the report shows: when and by which kata it was made, and what changed."""
    base = path.parent.resolve()
    info = {"file": NAME, "verified": False, "kata_version": None, "created": None,
            "changed": [], "missing": [], "added": [], "exercises": {}}
    try:
        doc = json.loads(path.read_bytes().decode("utf-8"))
        if not isinstance(doc, dict) or doc.get("kind") != KIND or not isinstance(doc.get("files"), dict):
            raise ValueError("not a kata submission manifest")
    except (ValueError, UnicodeDecodeError, RecursionError) as e:  # RecursionError: nested too deeply
        info["error"] = str(e)[:200]
        notes.append(t("manifest_unreadable", file=NAME, reason=info["error"]))
        return info
    info.update(kata_version=str(doc.get("kata_version"))[:40], created=str(doc.get("created"))[:40],
                exercises=_claims(doc.get("exercises")))
    listed = doc["files"]
    inside = {rel: (base / rel).resolve() for rel in listed}  # the manifest is untrusted: stay in its folder
    inside = {rel: p for rel, p in inside.items() if p.is_relative_to(base)}
    for rel, entry in sorted(listed.items()):
        p = inside.get(rel)
        if p is None or not isinstance(entry, dict) or not p.is_file():
            info["missing"].append(rel)
        elif sha256(p.read_bytes()) != entry.get("sha256"):
            info["changed"].append(rel)
    for folder in sorted({p.parent for p in inside.values()}):
        if folder.is_dir():
            for p in sorted(folder.iterdir()):
                rel = p.relative_to(base).as_posix()
                if p.is_file() and p.suffix in (".py", ".ipynb") and rel not in listed:
                    info["added"].append(rel)
    for key, msg in (("changed", "manifest_changed"), ("missing", "manifest_missing"), ("added", "manifest_added")):
        if info[key]:
            notes.append(t(msg, files=", ".join(info[key]), created=info["created"] or "?"))
    info["verified"] = not (info["changed"] or info["missing"] or info["added"])
    return info
