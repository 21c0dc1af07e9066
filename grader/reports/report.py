"""Reports of a grading run — the terminal table and the JSON document.

JSON schema (version 1), documented in docs/reference/json-report.md:
{
  "schema": 1, "kata_version": str, "torch": str, "submission": str,   # the folder's or zip's name
  "score": float, "max_score": float,
  "sandbox": "bubblewrap" | "limits-only",   # limits-only: weaker isolation, said in the report
  "worker_startup_s": float, "duration_s": float,   # whole seconds
  "notes": [str], "lang": "en" | "zh",
  "manifest": null | {"file", "verified": bool, "kata_version", "created",
                      "changed": [path], "missing": [path], "added": [path], "too_large": [path],
                      "exercises": {...}},
  "exercises": [{"id", "section", "title", "score", "max_score"}],
  "checks": [{"exercise", "name", "status", "score", "max_score", "message",
              "listing", "visibility", "duration_s", "kind", "title"}]
}     # a check's duration_s: seconds, or null for a hidden check (its time could tell its inputs)
status is "passed", "failed" or "skipped"; listing is a list of listing ids ("1.6",
"1.11/softmax"); visibility is "public" or "hidden"; kind says what failed ("check",
"student", "fault", "forbidden", ...), empty when passed. `name` is the check function's name
(stable); `title` (what the check checks), the exercises' `title` and every `message` are in the
report's language, `lang` (`kata --lang`, else the locale).
"""

from __future__ import annotations

from collections import defaultdict

from rich.console import Console
from rich.table import Table
from rich.text import Text

from .. import __version__
from ..checking.results import GradeResult
from ..course.manifest import Course
from ..course.messages import language, t
from ..course.points import pts  # noqa: F401  (points as every report shows them; imported from here too)
from ..course.safe_text import block, one_line
from ..course.wrapping import Wrapped

SCHEMA = 1


def to_dict(course: Course, result: GradeResult) -> dict:
    import torch

    from ..course.identity import describe

    per_ex: dict[str, list] = defaultdict(list)
    for r in result.results:
        per_ex[r.exercise].append(r)
    exercises = []
    for ex in course.exercises:
        rows = per_ex.get(ex.id)
        if rows:
            exercises.append(
                {
                    "id": ex.id,
                    "section": ex.section,
                    "title": ex.display_title(),
                    "score": round(sum(r.score for r in rows), 6),
                    "max_score": round(sum(r.max_score for r in rows), 6),
                }
            )
    return {
        "schema": SCHEMA,
        "kata_version": __version__,
        "torch": torch.__version__.split("+")[0],
        "submission": result.submission,
        "score": result.score,
        "max_score": result.max_score,
        "sandbox": result.sandbox,
        "course": describe(course),  # the course that graded: the grader's own, never the submission's
        "worker_startup_s": result.worker_startup_s,
        "duration_s": result.duration_s,
        "notes": result.notes,
        "manifest": result.manifest,
        "lang": language(),
        "exercises": exercises,
        "checks": [r.as_dict() for r in result.results],
    }


STATUS_STYLE = {"passed": ("✔", "green"), "failed": ("✘", "red"), "skipped": ("–", "yellow")}


def print_table(
    course: Course, result: GradeResult, console: Console | None = None, show_messages: bool = True
) -> None:
    console = console or Console()
    by_section: dict[str, list] = defaultdict(list)
    for r in result.results:
        by_section[r.section].append(r)
    titles = {ex.id: ex.display_title() for ex in course.exercises}
    # one row per check at any width: the titles wrap inside their own cells (the kata's rule:
    # between Chinese characters, at spaces, never inside code or a number and its unit); the
    # section, the mark and the points never wrap, so they stay on the row's first line
    table = Table(title=Wrapped(course.display_title(), "table.title"), show_lines=False, expand=False)
    table.add_column("§", style="bold", no_wrap=True)
    table.add_column(t("col_exercise"), overflow="fold")
    table.add_column(t("col_check"), overflow="fold")
    table.add_column("", justify="center", no_wrap=True)
    table.add_column(t("col_points"), justify="right", no_wrap=True)
    for section in sorted(by_section, key=lambda s: tuple(int(p) for p in s.split("."))):
        rows = by_section[section]
        got = sum(r.score for r in rows)
        total = sum(r.max_score for r in rows)
        table.add_row(
            Text(f"§{section}", style="bold cyan"), "", "", "", Text(f"{pts(got)}/{pts(total)}", style="bold")
        )
        last = None
        for r in rows:
            mark, style = STATUS_STYLE.get(r.status, ("?", "white"))
            name = (r.title or r.name.removeprefix("test_")) + (t("hidden_mark") if r.visibility == "hidden" else "")
            table.add_row(
                "",
                Wrapped(titles.get(r.exercise, r.exercise) if r.exercise != last else ""),
                Wrapped(name),
                Text(mark, style=style),
                f"{pts(r.score)}/{pts(r.max_score)}",
            )
            last = r.exercise
    console.print(table)
    if show_messages:
        failed = [r for r in result.results if r.status == "failed"]
        for r in failed:
            console.print(Wrapped(f"✘ {r.exercise} · {r.title or r.name}", style="red bold"))
            console.print(block(r.message, 2))  # every line of it, a wrapped one too, under the ✘ line
    score = Text(t("score", score=pts(result.score), max_score=pts(result.max_score)), style="bold")
    score.append("  " + t("score_details", seconds=f"{result.duration_s:.0f}", sandbox=result.sandbox))
    if result.sandbox != "bubblewrap":
        score.append("  " + t("limits_only"), style="yellow")
    console.print(Wrapped(score))
    for note in result.notes:  # notes quote submitted names: one line each (⏎ for a break), wrapped under itself
        grid = Table.grid(padding=(0, 1))
        grid.add_column(no_wrap=True)
        grid.add_column(overflow="fold")
        grid.add_row(Text(t("note"), style="yellow"), Wrapped(one_line(note)))
        console.print(grid)
    if result.manifest and result.manifest.get("verified"):
        ok = t("manifest_ok", version=result.manifest.get("kata_version"), created=result.manifest.get("created"))
        console.print(Text(ok, style="green"), highlight=False)
