"""Every format of a batch run, written from the stored records alone (`kata gradebook OUT`).

Per student, beside `students/<name>/report.json`:
    feedback.html              the feedback page (grader/reports/report_html.py), from the report
    gradescope/results.json    Gradescope's format (grader/instructor/exports/gradescope.py, as `kata export gradescope` writes it)
    exercism/results.json      Exercism's test-runner format, version 3
For the class, in OUT:
    gradebook.csv  junit.xml  summary.md  histogram.png  failures.png
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ...reports import report_html
from ..exports.gradescope import failure_results, gradescope_results
from ..formats import csvbook, exercism, junit, summary
from . import store

CLASS_FILES = ("gradebook.csv", "junit.xml", "summary.md", "histogram.png", "failures.png")


@dataclass
class Written:
    students: int = 0
    files: list[Path] = field(default_factory=list)


def write_student(out: Path, name: str, doc: dict, hidden: str = "after_published") -> list[Path]:
    d = store.student_dir(out, name)
    student = doc.get("student") or {}
    gs = (failure_results(student.get("reason", ""), doc.get("lang")) if student.get("status") in ("refused", "error")
          else gradescope_results(doc, hidden, doc.get("lang")))
    return [store.atomic_write(d / "feedback.html", report_html.render(doc)),
            store.write_json(d / "gradescope" / "results.json", gs),
            store.write_json(d / "exercism" / "results.json", exercism.results(doc))]


STUDENT_FILES = ("feedback.html", "gradescope/results.json", "exercism/results.json")


def complete(out: Path, records: dict[str, dict], hidden: str = "after_published") -> int:
    """Write the derived files of the students that lack one (a run killed between a record and
    its files); return how many students that was."""
    n = 0
    for name, doc in records.items():
        d = store.student_dir(out, name)
        if not all((d / f).is_file() for f in STUDENT_FILES):
            write_student(out, name, doc, hidden)
            n += 1
    return n


def write_class(out: Path, records: dict[str, dict], meta: dict | None) -> list[Path]:
    meta = meta or {}
    s = summary.stats(records)
    title = meta.get("title", "kata")
    return [store.atomic_write(out / "gradebook.csv", csvbook.gradebook(records, meta.get("exercises"))),
            store.atomic_write(out / "junit.xml", junit.document(records, title)),
            store.atomic_write(out / "histogram.png", summary.histogram_png(s, title)),
            store.atomic_write(out / "failures.png", summary.failures_png(s)),
            store.atomic_write(out / "summary.md", summary.markdown(records, s, meta))]


def regenerate(out: Path, hidden: str | None = None) -> Written:
    """Write every format again from OUT's records; `hidden`: the Gradescope visibility of hidden
    checks (default: the run's, stored in batch.json)."""
    out = Path(out)
    with store.locked(out):
        return _regenerate(out, hidden)


def _regenerate(out: Path, hidden: str | None) -> Written:
    store.remove_partials(out)
    meta = store.read_meta(out) or {}
    if hidden and hidden != meta.get("gradescope_hidden"):
        meta["gradescope_hidden"] = hidden
        if (out / store.META).exists():
            store.write_json(out / store.META, meta)
    hidden = meta.get("gradescope_hidden") or "after_published"
    records = store.load_records(out)
    w = Written(len(records))
    for name, doc in records.items():
        w.files += write_student(out, name, doc, hidden)
    w.files += write_class(out, records, meta)
    return w


def is_batch_output(out: Path) -> bool:
    return (Path(out) / store.META).is_file() or (Path(out) / store.STUDENTS).is_dir()

