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


def load_grading_course(args, command: str, graded=()):
    """The course that grades (grader/course/identity.py): `--course DIR`, else the project folder
    of the installed grader package; never a course.toml in or above a graded path or the working
    directory, each of which is named as ignored when there is one. A missing course stops the
    command with status 2."""
    from .identity import course_tomls_around
    from .manifest import PACKAGE_DIR, CourseError, load

    given = getattr(args, "course", None)
    if given:
        root = Path(given).resolve()
        if not (root / "course.toml").is_file():
            print(t("course_not_there", command=command, path=given), file=sys.stderr)
            raise SystemExit(2)
    else:
        root = PACKAGE_DIR.parent
        if not (root / "course.toml").is_file():
            print(t("course_none_installed", command=command), file=sys.stderr)
            raise SystemExit(2)
    try:
        course = load(root)
    except CourseError as e:
        print(f"kata: course.toml: {e}", file=sys.stderr)
        raise SystemExit(2)
    for other in course_tomls_around([Path.cwd(), *graded]):
        if other != course.root:
            print(t("course_ignored", command=command, used=course.root, ignored=other), file=sys.stderr)
    return course


def select(course, ids, assignment: str | None = None):
    """The exercises a command was given: `-e` ids, sections (1.11) or id prefixes (s1_11), within
    `--assignment` when given; in the course's order. Anything that names nothing stops the command."""
    from .assignments import AssignmentError, find, matches

    pool = course.exercises
    if assignment:
        try:
            chosen_ids = set(find(course.assignments, assignment).exercises)
        except AssignmentError as e:
            print(f"kata: {e}", file=sys.stderr)
            raise SystemExit(2)
        pool = [ex for ex in course.exercises if ex.id in chosen_ids]
    if not ids:
        return pool
    picked: set[str] = set()
    for i in ids:
        found = matches(i, course.exercises)
        if not found:
            print(unknown_exercise(i, [ex.id for ex in course.exercises]), file=sys.stderr)
            raise SystemExit(2)
        outside = [ex.id for ex in found if ex not in pool]
        if outside:
            print(t("not_in_assignment", given=i, ids=", ".join(outside), assignment=assignment), file=sys.stderr)
            raise SystemExit(2)
        picked.update(ex.id for ex in found)
    return [ex for ex in pool if ex.id in picked]


def assignment_of(course, args):
    """The Assignment named by --assignment (None when not given; checked by `select`)."""
    from .assignments import find

    a_id = getattr(args, "assignment", None)
    return find(course.assignments, a_id) if a_id else None


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
