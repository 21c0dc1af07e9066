"""The HTML feedback page of one grading: the report, with the listings' figures drawn from the
same submission (`kata check --html FILE`, `kata grade PATH --html FILE`)."""
from __future__ import annotations

from pathlib import Path

from . import figures, report_html
from .course.manifest import Course
from .checking.submission import SubmissionError


def write_html(course: Course, path: str | Path, doc: dict, out: str | Path) -> tuple[Path, list[figures.Drawn]]:
    """Write the page for report `doc` of the submission at `path`; also return the figures drawn."""
    graded = [ex["id"] for ex in doc.get("exercises", [])]
    try:
        drawn = figures.for_exercises(course, path, graded)
    except SubmissionError:  # it was graded a moment ago; if it is gone now, the page has no figures
        drawn = []
    return report_html.write(out, doc, [d.as_dict() for d in drawn]), drawn
