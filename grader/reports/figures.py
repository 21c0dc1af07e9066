"""The listings' figures drawn from a student's code: `kata run --plot` and the HTML report.

Each figure gets a fresh sandboxed worker with its exercise's module imported, exactly like
`kata run`; the values it returns are drawn here, in the trusted process, by grader.listings.plots.
A figure the student's code cannot produce (not implemented, raises, a wrong shape) becomes
an entry with `error` set, in the student's terms; the other figures are still drawn.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass
from pathlib import Path

from .. import listings
from ..checking.runner import open_exercise, sandbox_for
from ..checking.submission import open_submission
from ..course.manifest import Course
from ..course.messages import t
from ..course.safe_text import plain
from ..listings import plots
from ..worker.budget import Budget
from ..worker.client import Sandbox, WorkerFault
from ..worker.proxy import StudentError


@dataclass
class Drawn:
    exercise: str
    listings: tuple[str, ...]
    name: str  # the figure's part of a file name, e.g. "attention-weights"
    title: str
    png: bytes = b""
    error: str = ""  # why it could not be drawn (then png is empty)

    def as_dict(self) -> dict:
        """JSON-friendly form, as grader.reports.report_html reads it (the PNG base64-encoded)."""
        return {
            "exercise": self.exercise,
            "listings": list(self.listings),
            "name": self.name,
            "title": self.title,
            "png_base64": base64.b64encode(self.png).decode("ascii") if self.png else "",
            "error": self.error,
        }

    def file_name(self, listing_id: str) -> str:
        return f"listing-{re.sub(r'[^A-Za-z0-9.]+', '-', listing_id)}-{self.name}.png"


FIGURES_BUDGET_S = 30.0  # all the figures of one page together: the student's code runs again for them


def draw(
    course: Course, box: Sandbox, figures: list[listings.Figure], budget_s: float = FIGURES_BUDGET_S
) -> list[Drawn]:
    """Draw `figures` with the submission running in `box` (started), within `budget_s` seconds in
    all (a grading budget of their own, after the grading's: no call waits past it, and the figures
    after it are entries that say they were not drawn)."""
    budget = Budget(max(budget_s, 0.0))
    out: list[Drawn] = []
    for fig in figures:
        ex = course.get(fig.exercise)
        if budget_s <= 0 or budget.exhausted(ex.id):
            why = t("figures_no_budget") if budget_s <= 0 else t("figures_budget", seconds=f"{budget_s:g}")
            out.append(
                Drawn(
                    ex.id,
                    fig.listings,
                    fig.name,
                    fig.name,
                    error=t("plot_failed", listing=", ".join(fig.listings), reason=why),
                )
            )
            continue
        try:
            worker, remote = open_exercise(box, ex, course=course, budget=budget)
            try:
                specs = fig.draw(remote)
                drawn = [Drawn(ex.id, fig.listings, s.name, s.title, png=plots.render(s)) for s in specs]
            finally:
                worker.close()
        except (StudentError, WorkerFault, plots.FigureError) as e:  # the reason may quote the student's text
            drawn = [
                Drawn(
                    ex.id,
                    fig.listings,
                    fig.name,
                    fig.name,
                    error=t("plot_failed", listing=", ".join(fig.listings), reason=plain(str(e)[:2000])),
                )
            ]
        except Exception as e:  # a value of the wrong kind from the student's code, met by the figure's own code
            reason = plain(f"{type(e).__name__}: {str(e)[:300]}")
            drawn = [
                Drawn(
                    ex.id,
                    fig.listings,
                    fig.name,
                    fig.name,
                    error=t("plot_failed", listing=", ".join(fig.listings), reason=reason),
                )
            ]
        out += drawn
    return out


def for_exercises(
    course: Course, path: str | Path, exercise_ids: list[str], budget_s: float = FIGURES_BUDGET_S
) -> list[Drawn]:
    """Open the submission at `path` in its own sandbox and draw every figure of these exercises,
    within `budget_s` seconds (see draw)."""
    listings.load(course)
    figures = [f for ex_id in exercise_ids for f in listings.figures_of_exercise(ex_id)]
    if not figures:
        return []
    sub = open_submission(path, course.chapter, course.exercises)
    with sub, sandbox_for(course, sub) as box:
        return draw(course, box, figures, budget_s)
