"""What the bundle of one assignment holds (`kata release OUT --assignment ID`).

The assignment's exercises, and the exercises of other assignments they need (`needed`): an
exercise file that imports another (`from s1_23_self_attention import MultiHeadSelfAttention` in
s1_23_encoder_block: the student's own earlier code), and an exercise whose check module or
listing module imports another's check module (test_s1_23_evaluation uses test_s1_23_training's
helpers), transitively. A needed exercise ships as any other (its stub, public checks and the
fixture values they read), so the student can copy in their finished file of an earlier week and
`kata check` it, the assignment's checks run on it, and `kata submit` packs it; the student's
commands say it is not graded in this assignment (grader/course/bundle_assignment.py).

`course_toml` cuts course.toml to the bundle: the [[exercise]] tables of its exercises, the
[[listing]] tables they name and this assignment's [[assignment]] table, comments kept; the cut
text is proved to read as the same tables. `readme` is the bundle README's section about the
assignment, in English and Chinese.
"""

from __future__ import annotations

import re
import tomllib

from ...course.assignments import AssignmentError
from ...course.assignments import parse as parse_assignments
from ...course.manifest import PACKAGE_DIR, Course
from ...course.messages import LANGS, t
from ...course.scan import imported
from .release_source import imported_names

HEADER = re.compile(r"^\[\[?\s*([A-Za-z_][\w.-]*)\s*\]\]?\s*(#.*)?$")


class CutError(ValueError):
    """The course.toml cut to the bundle does not read as the tables it should hold."""


def needed(course: Course, ids: list[str]) -> list[str]:
    """The exercises outside `ids` that the bundle of `ids` must hold too (see the module's
    docstring), in the course's order."""
    from ...authoring.stubs import stub_text

    by_module = {ex.module: ex.id for ex in course.exercises}
    known = {ex.id for ex in course.exercises}
    chosen, todo = set(ids), list(ids)
    while todo:
        ex = course.get(todo.pop())
        deps: set[str] = set()
        for source in ((course.solutions_dir / ex.file).read_text(encoding="utf-8"), stub_text(course, ex, "en")):
            deps |= {by_module[m] for m in imported(source) if m in by_module}
        for path in (course.check_file(ex), PACKAGE_DIR / "listings" / f"{ex.id}.py"):
            if path.is_file():
                modules = imported_names(path.read_text(encoding="utf-8"), path.name)
                deps |= {m.removeprefix("test_") for m in modules if m.startswith("test_")} & known
        for dep in sorted(deps - chosen):
            chosen.add(dep)
            todo.append(dep)
    return [ex.id for ex in course.exercises if ex.id in chosen and ex.id not in ids]


def _chunks(text: str) -> list[tuple[str | None, list[str]]]:
    """course.toml as (table name or None, lines): each table from its header to its last key line;
    the comments and blank lines between tables, and the top, as chunks of their own (None)."""
    lines = text.splitlines(keepends=True)
    out: list[tuple[str | None, list[str]]] = []
    current: tuple[str | None, list[str]] = (None, [])
    for line in lines:
        m = HEADER.match(line.rstrip("\n"))
        if m:
            out.append(current)
            current = (m.group(1), [line])
        else:
            current[1].append(line)
    out.append(current)
    split: list[tuple[str | None, list[str]]] = []
    for name, body in out:  # a table's trailing comments and blank lines introduce what follows: keep them
        end = len(body)
        while name is not None and end > 1 and (not body[end - 1].strip() or body[end - 1].lstrip().startswith("#")):
            end -= 1
        split.append((name, body[:end]))
        if body[end:]:
            split.append((None, body[end:]))
    return split


def _table_id(lines: list[str]) -> str | None:
    data = tomllib.loads("".join(lines[1:]))
    return str(data["id"]) if "id" in data else None


def course_toml(text: str, exercises: list[str], assignment: str) -> str:
    """course.toml `text` with only the [[exercise]] tables of `exercises`, the [[listing]] tables
    they name and the [[assignment]] table `assignment` (CutError when the cut reads otherwise)."""
    data = tomllib.loads(text)
    keep_ex = set(exercises)
    listings = {
        lst for item in data.get("exercise", []) if item.get("id") in keep_ex for lst in item.get("listings", [])
    }
    keep = {"exercise": keep_ex, "listing": listings, "assignment": {assignment}}
    out = []
    for name, lines in _chunks(text):
        if name in keep and _table_id(lines) not in keep[name]:
            continue
        out.append("".join(lines))
    cut = re.sub(r"\n{3,}", "\n\n", "".join(out))
    expected = {
        **data,
        **{name: [item for item in data.get(name, []) if str(item.get("id")) in ids] for name, ids in keep.items()},
    }
    try:
        got = tomllib.loads(cut)
    except tomllib.TOMLDecodeError as e:
        raise CutError(f"course.toml cut to the bundle does not parse: {e}") from None
    if {**{name: [] for name in keep}, **got} != expected:
        raise CutError(
            "course.toml cut to the bundle does not hold the tables it should (a table header "
            "course.toml writes in a way the cut does not know?)"
        )
    try:
        same = _exercises_of(got, assignment) == _exercises_of(data, assignment)
    except AssignmentError as e:
        raise CutError(f"course.toml cut to the bundle: {e}") from None
    if not same:
        raise CutError(f"assignment {assignment}'s table names other exercises in the bundle than in the course")
    return cut


def _exercises_of(data: dict, assignment: str) -> list[str]:
    """The exercises the [[assignment]] table `assignment` of course.toml `data` names."""

    class Ex:  # what assignments.parse reads of an exercise
        def __init__(self, item: dict):
            self.id, self.section = item["id"], str(item["section"])

    found = parse_assignments(data.get("assignment", []), [Ex(e) for e in data.get("exercise", [])])
    return next(a.exercises for a in found if a.id == assignment)


def readme(course: Course, assignment, needed_ids: list[str]) -> str:
    """The README section that says which assignment the bundle is, in every language."""
    own = sum(ex.points for ex in course.exercises if ex.id in assignment.exercises)
    points = f"{assignment.points or own:g}"
    parts = []
    for lang in LANGS:
        due = t("bundle_readme_due", lang, due=assignment.due.isoformat()) if assignment.due else ""
        text = t(
            "bundle_readme",
            lang,
            id=assignment.id,
            title=assignment.display_title(lang),
            points=points,
            due=due,
            exercises=", ".join(assignment.exercises),
        )
        if needed_ids:
            text += "\n\n" + t(
                "bundle_readme_needed",
                lang,
                ids=", ".join(needed_ids),
                id=assignment.id,
                folder=f"exercises/{course.chapter}/",
            )
        parts.append(text)
    return "\n\n".join(parts) + "\n\n"
