"""Points as a person reads them, the same in every place a student or an instructor sees one:
the terminal report, feedback.html, the nbgrader log and test cells, the LMS feedback column and
summary.md. Stored numbers (report.json, nbgrader's cell metadata, the LMS grade columns) keep
their precision; only what is shown is rounded. Standard library only: a notebook's kernel
imports it (grader/instructor/exports/nbgrader_cell.py)."""
from __future__ import annotations


def pts(x: float) -> str:
    """At most two decimals (an assignment's scaled points are fractions), no trailing zeros:
    13.04, 2.17, 100."""
    return f"{round(float(x), 2):g}"
