"""`kata list [--json] [--no-run]`: every exercise by section, its status and points, and a
progress bar for the course.

Statuses come from `progress.standings`: files that are missing, empty or still the stub are
seen without running anything; verdicts of unchanged files come from `.kata/progress.json`;
the rest are checked now, all in one sandbox (`--no-run`: shown as "changed, not checked").

JSON (schema 1):
{"schema": 1, "exercises": [{"id", "section", "title", "file", "status", "points",
                             "public_points", "public_points_passed", "hidden_points",
                             "public_passed", "public_total", "from_cache", "in_assignment",
                             "beyond_book"}],
 "progress": {"passing", "exercises", "public_points_passed", "public_points", "hidden_points",
              "max_points"}, "next": id | null, "assignment": {"id", "title", "points", "needed"} | null}
status is one of "passing", "failing", "not_started", "missing", "empty", "unknown"; beyond_book is
true for an exercise that goes beyond the chapter (course.toml).
Points earned are the public checks' only: the hidden checks' points are the grade's to give.

In the bundle of one assignment (`kata release OUT -a ID`) the points are the assignment's (see
grader/course/bundle_assignment.py), "assignment" says which it is, and the exercises of other
assignments that its exercises use ("in_assignment": false, listed in "needed") are worth 0 here
and left out of "progress".
"""

from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..course import bundle_assignment
from ..course.manifest import Course
from ..course.messages import t
from ..course.wrapping import Wrapped
from ..reports.report import pts
from .progress import (
    EMPTY,
    FAILING,
    MISSING,
    NOT_STARTED,
    PASSING,
    UNKNOWN,
    Standing,
    hidden_points,
    next_unsolved,
    public_points,
)

SCHEMA = 1
STYLE = {
    PASSING: ("✔", "green"),
    FAILING: ("✘", "red"),
    NOT_STARTED: ("·", "dim"),
    MISSING: ("!", "bold red"),
    EMPTY: ("!", "bold red"),
    UNKNOWN: ("?", "yellow"),
}


def to_dict(found: list[Standing], course: Course | None = None) -> dict:
    nxt = next_unsolved(found)
    counted = [s for s in found if s.in_assignment]
    bundle = bundle_assignment.of(course) if course is not None else None
    return {
        "schema": SCHEMA,
        "exercises": [
            {
                "id": s.exercise.id,
                "section": s.exercise.section,
                "title": s.exercise.display_title(),
                "file": f"exercises/{s.exercise.file}",
                "status": s.status,
                "points": _sum([_points(s)]),
                "public_points": _sum([_public(s)]),
                "public_points_passed": _earned(s),
                "hidden_points": _sum([_hidden(s)]),
                "public_passed": s.passed if s.status not in (UNKNOWN,) else None,
                "public_total": s.total,
                "from_cache": s.from_cache,
                "in_assignment": s.in_assignment,
                "beyond_book": s.exercise.beyond_book,
            }
            for s in found
        ],
        "progress": {
            "passing": sum(s.solved for s in counted),
            "exercises": len(counted),
            "public_points_passed": _sum(_earned(s) for s in counted),
            "public_points": _sum(_public(s) for s in counted),
            "hidden_points": _sum(_hidden(s) for s in counted),
            "max_points": _sum(_points(s) for s in counted),
        },
        "next": nxt.exercise.id if nxt else None,
        "assignment": None
        if bundle is None
        else {
            "id": bundle.id,
            "title": bundle.title(),
            "points": _sum(_points(s) for s in counted),
            "needed": list(bundle.needed),
        },
    }


def _sum(values) -> float:
    return round(sum(values), 6)


def _points(s: Standing) -> float:
    """What the exercise is worth, public and hidden checks together (an assignment's bundle: scaled)."""
    return s.exercise.points * s.factor


def _public(s: Standing) -> float:
    return public_points(s.exercise) * s.factor


def _hidden(s: Standing) -> float:
    return hidden_points(s.exercise) * s.factor


def _earned(s: Standing) -> float:
    """The public checks' points this file passed (none while unknown: not checked yet)."""
    return s.score if s.status in (PASSING, FAILING) else 0.0


def status_text(s: Standing) -> Text:
    mark, style = STYLE[s.status]
    return Text(f"{mark} {t('status_' + s.status)}", style=style)


def progress_bar(found: list[Standing], width: int = 40) -> Wrapped:
    """Progress ██████░░░░░░ 12/37 exercises pass their public checks (48/220 public points; the
    other 220 are hidden checks, graded when you submit): readable without colours too, wrapped
    by the kata's rule. Only the exercises of the assignment count, in an assignment's bundle."""
    found = [s for s in found if s.in_assignment]
    done = sum(s.solved for s in found)
    points = sum(_earned(s) for s in found)
    total_points = sum(_public(s) for s in found)
    hidden = sum(_hidden(s) for s in found)
    filled = round(width * done / len(found)) if found else 0
    line = Text(t("list_progress") + " ", style="bold")
    line.append("█" * filled, style="green")
    line.append("░" * (width - filled), style="dim")
    line.append(
        " "
        + t(
            "list_progress_counts",
            done=done,
            total=len(found),
            points=pts(points),
            max_points=pts(total_points),
            hidden=pts(hidden),
        )
    )
    return Wrapped(line)


def title(course: Course) -> str:
    """The course's title, and the assignment's in an assignment's bundle."""
    bundle = bundle_assignment.of(course)
    if bundle is None:
        return course.display_title()
    return t("bundle_title", course=course.display_title(), id=bundle.id, title=bundle.title())


def table(course: Course, found: list[Standing]) -> Table:
    tab = Table(title=Wrapped(title(course), "table.title"), show_lines=False)
    tab.add_column("§", style="bold cyan")
    tab.add_column(t("list_col_exercise"))
    tab.add_column(t("list_col_status"))
    tab.add_column(t("list_col_checks"), justify="right")
    tab.add_column(t("list_col_points"), justify="right")
    last = None
    for s in found:
        ex = s.exercise
        checks = "" if s.status in (UNKNOWN, MISSING, EMPTY) else f"{s.passed}/{s.total}"
        points = f"{pts(_public(s))} + {pts(_hidden(s))}" if s.in_assignment else t("bundle_needed_points")
        name = t("list_beyond_book", id=ex.id) if ex.beyond_book else ex.id
        tab.add_row(ex.section if ex.section != last else "", name, status_text(s), checks, points)
        last = ex.section
    return tab


def show(course: Course, found: list[Standing], console: Console) -> None:
    console.print(table(course, found))
    needed = [s.exercise.id for s in found if not s.in_assignment]
    if needed:
        console.print(
            Wrapped(t("bundle_needed_note", ids=", ".join(needed), id=bundle_assignment.of(course).id), style="yellow")
        )
    console.print(progress_bar(found))
    nxt = next_unsolved(found)
    if nxt is None:
        console.print(Wrapped(t("list_all_done"), style="bold green"))
    else:
        console.print(Wrapped(t("list_next", id=nxt.exercise.id, title=nxt.exercise.display_title()), style="cyan"))
    if any(s.status in (MISSING, EMPTY) for s in found):
        console.print(Wrapped(t("list_reset_hint"), style="yellow"))


def print_json(found: list[Standing], course: Course | None = None) -> None:
    json.dump(to_dict(found, course), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
