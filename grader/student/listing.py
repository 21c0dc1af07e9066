"""`kata list [--json] [--no-run]`: every exercise by section, its status and points, and a
progress bar for the course.

Statuses come from `progress.standings`: files that are missing, empty or still the stub are
seen without running anything; verdicts of unchanged files come from `.kata/progress.json`;
the rest are checked now, all in one sandbox (`--no-run`: shown as "changed, not checked").

JSON (schema 1):
{"schema": 1, "exercises": [{"id", "section", "title", "file", "status", "points",
                             "public_points", "public_points_passed", "hidden_points",
                             "public_passed", "public_total", "from_cache"}],
 "progress": {"passing", "exercises", "public_points_passed", "public_points", "hidden_points",
              "max_points"}, "next": id | null}
status is one of "passing", "failing", "not_started", "missing", "empty", "unknown".
Points earned are the public checks' only: the hidden checks' points are the grade's to give.
"""
from __future__ import annotations

import json
import sys

from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..course.manifest import Course
from ..course.messages import t
from .progress import (EMPTY, FAILING, MISSING, NOT_STARTED, PASSING, UNKNOWN, Standing, hidden_points,
                       next_unsolved, public_points)

SCHEMA = 1
STYLE = {PASSING: ("✔", "green"), FAILING: ("✘", "red"), NOT_STARTED: ("·", "dim"),
         MISSING: ("!", "bold red"), EMPTY: ("!", "bold red"), UNKNOWN: ("?", "yellow")}


def to_dict(found: list[Standing]) -> dict:
    nxt = next_unsolved(found)
    return {
        "schema": SCHEMA,
        "exercises": [{"id": s.exercise.id, "section": s.exercise.section, "title": s.exercise.display_title(),
                       "file": f"exercises/{s.exercise.file}", "status": s.status, "points": s.exercise.points,
                       "public_points": public_points(s.exercise), "public_points_passed": _earned(s),
                       "hidden_points": hidden_points(s.exercise),
                       "public_passed": s.passed if s.status not in (UNKNOWN,) else None,
                       "public_total": s.total, "from_cache": s.from_cache} for s in found],
        "progress": {"passing": sum(s.solved for s in found), "exercises": len(found),
                     "public_points_passed": sum(_earned(s) for s in found),
                     "public_points": sum(public_points(s.exercise) for s in found),
                     "hidden_points": sum(hidden_points(s.exercise) for s in found),
                     "max_points": sum(s.exercise.points for s in found)},
        "next": nxt.exercise.id if nxt else None,
    }


def _earned(s: Standing) -> float:
    """The public checks' points this file passed (none while unknown: not checked yet)."""
    return s.score if s.status in (PASSING, FAILING) else 0.0


def status_text(s: Standing) -> Text:
    mark, style = STYLE[s.status]
    return Text(f"{mark} {t('status_' + s.status)}", style=style)


def progress_bar(found: list[Standing], width: int = 40) -> Text:
    """Progress ██████░░░░░░ 12/37 exercises pass their public checks (48/220 public points; the
    other 220 are hidden checks, graded when you submit): readable without colours too."""
    done = sum(s.solved for s in found)
    points = sum(_earned(s) for s in found)
    total_points = sum(public_points(s.exercise) for s in found)
    hidden = sum(hidden_points(s.exercise) for s in found)
    filled = round(width * done / len(found)) if found else 0
    line = Text(t("list_progress") + " ", style="bold")
    line.append("█" * filled, style="green")
    line.append("░" * (width - filled), style="dim")
    line.append(" " + t("list_progress_counts", done=done, total=len(found), points=f"{points:g}",
                        max_points=f"{total_points:g}", hidden=f"{hidden:g}"))
    return line


def table(course: Course, found: list[Standing]) -> Table:
    tab = Table(title=course.display_title(), show_lines=False)
    tab.add_column("§", style="bold cyan")
    tab.add_column(t("list_col_exercise"))
    tab.add_column(t("list_col_status"))
    tab.add_column(t("list_col_checks"), justify="right")
    tab.add_column(t("list_col_points"), justify="right")
    last = None
    for s in found:
        ex = s.exercise
        checks = "" if s.status in (UNKNOWN, MISSING, EMPTY) else f"{s.passed}/{s.total}"
        tab.add_row(ex.section if ex.section != last else "", ex.id, status_text(s), checks,
                    f"{public_points(ex):g} + {hidden_points(ex):g}")
        last = ex.section
    return tab


def show(course: Course, found: list[Standing], console: Console) -> None:
    console.print(table(course, found))
    console.print(progress_bar(found))
    nxt = next_unsolved(found)
    if nxt is None:
        console.print(Text(t("list_all_done"), style="bold green"))
    else:
        console.print(Text(t("list_next", id=nxt.exercise.id, title=nxt.exercise.display_title()), style="cyan"))
    if any(s.status in (MISSING, EMPTY) for s in found):
        console.print(Text(t("list_reset_hint"), style="yellow"))


def print_json(found: list[Standing]) -> None:
    json.dump(to_dict(found), sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")
