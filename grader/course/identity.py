"""Which course grades, and a digest of everything a grade depends on.

The course that grades is the grader's own: `--course DIR` when given, else the project folder
the installed `grader` package belongs to (an editable install of the course, a student bundle,
the Gradescope autograder's `kata/`). It is never a `course.toml` found in or above a graded
folder or the working directory: a student's handed-in project folder may carry its own
course.toml (with every forbidden list deleted), and `cd alice && kata grade .` once graded
with it. Every report records the course's folder name and fingerprint (`to_dict`'s "course").
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from .. import __version__

_DIGESTS: dict[tuple, str] = {}


def fingerprint(course) -> str:
    """What the grades depend on: the kata version, the manifest, the checks and the fixtures
    (16 hex digits; read once per process and course, by the files' sizes and times)."""
    files = [
        course.root / "course.toml",
        *sorted(course.checks_dir.glob("*.py")),
        *sorted(p for p in course.fixtures_dir.glob("*") if p.is_file()),
    ]
    stamp = tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)
    if stamp in _DIGESTS:
        return _DIGESTS[stamp]
    h = hashlib.sha256(__version__.encode())
    for p in files:
        h.update(p.name.encode() + b"\0")
        h.update(hashlib.sha256(p.read_bytes()).digest())
    _DIGESTS[stamp] = h.hexdigest()[:16]
    return _DIGESTS[stamp]


def describe(course) -> dict:
    """The report's record of the course that graded: its folder's name and its fingerprint (never
    the folder's path: no report shows a path of the grading machine, SECURITY.md G5)."""
    return {"name": course.root.name, "fingerprint": fingerprint(course)}


def course_tomls_around(paths) -> list[Path]:
    """The course.toml files in or above each of `paths` (a graded folder or file, the working
    directory), nearest first, each once: what a grading never reads, but names as ignored."""
    found: list[Path] = []
    for p in paths:
        try:
            here = Path(p).resolve()
        except (OSError, RuntimeError):
            continue
        for d in (here, *here.parents):
            try:
                if (d / "course.toml").is_file() and d not in found:
                    found.append(d)
                    break
            except OSError:
                break
    return found
