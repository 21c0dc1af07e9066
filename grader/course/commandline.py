"""What every part's `kata` commands share: the course loaded for a command (a broken course.toml
stops it with status 2), exercises chosen by id (an unknown id stops it, naming the ids it may
have meant), and a path shown as a student would type it."""
from __future__ import annotations

import difflib
import sys
from pathlib import Path

from .messages import t


def load_course(args, require_stubs: bool = True):
    from .manifest import CourseError, load

    try:
        return load(getattr(args, "root", None), require_stubs=require_stubs)
    except CourseError as e:
        print(f"kata: course.toml: {e}", file=sys.stderr)
        raise SystemExit(2)


def select(course, ids):
    if not ids:
        return course.exercises
    known = {ex.id: ex for ex in course.exercises}
    chosen = []
    for i in ids:
        if i in known:
            chosen.append(known[i])
            continue
        print(unknown_exercise(i, list(known)), file=sys.stderr)
        raise SystemExit(2)
    return chosen


def unknown_exercise(given: str, known: list[str]) -> str:
    near = difflib.get_close_matches(given, known, n=3, cutoff=0.4)
    if not near:  # "softmax" for s1_11_softmax: a part of the id
        near = [k for k in known if given.lower() in k][:3]
    hint = t("unknown_exercise_near", near=", ".join(near)) if near else ""
    return t("unknown_exercise", id=given, hint=hint)


def shown(path: Path) -> str:
    """A path as a student would type it: relative when under the current folder, else absolute."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)
