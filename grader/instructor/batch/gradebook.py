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
from ..formats import csvbook, exercism, junit, late, lms, summary, teaching
from ..formats.roster import read as read_roster
from ..similarity import outputs as similarity
from . import store
from .records import NOT_GRADED, student_of

CLASS_FILES = (
    "gradebook.csv",
    "canvas.csv",
    "moodle.csv",
    "junit.xml",
    "summary.md",
    "histogram.png",
    "failures.png",
    "heatmap.png",
)  # and, from a platform's files: moodle-worksheet.csv, gradescope.csv


@dataclass
class Written:
    students: int = 0
    files: list[Path] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # why the LMS files are not safe to import (lms.gate)
    facts: list[str] = field(default_factory=list)  # what they hold (lms.overview)


def write_student(out: Path, name: str, doc: dict, hidden: str = "after_published", page: bool = True) -> list[Path]:
    """The student's derived files; `page`: feedback.html too (write_class writes it again with
    the late penalty and the grade the LMS files give, once the class's rows are known)."""
    d = store.student_dir(out, name)
    student = student_of(doc)
    gs = (
        failure_results(student.reason or "", doc.get("lang"))
        if student is not None and student.status in NOT_GRADED
        else gradescope_results(doc, hidden, doc.get("lang"))
    )
    return ([write_page(out, name, doc)] if page else []) + [
        store.write_json(d / "gradescope" / "results.json", gs),
        store.write_json(d / "exercism" / "results.json", exercism.results(doc)),
    ]


def write_page(out: Path, name: str, doc: dict, late: dict | None = None) -> Path:
    """students/<name>/feedback.html; `late`: lms.late_page of the student's row (None: no penalty)."""
    return store.atomic_write(store.student_dir(out, name) / "feedback.html", report_html.render(doc, late=late))


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


def term_table(out: Path, records: dict[str, dict], meta: dict, roster_dir: Path | None = None) -> list:
    """lms.rows() with OUT's roster.csv, submitted_at.csv and extensions.csv (copied there by the
    grading run or `kata gradebook --roster/--submitted-at/--extensions`); `roster_dir`: where they
    are (default OUT)."""
    return term(out, records, meta, roster_dir)[0]


def term(out: Path, records: dict[str, dict], meta: dict, roster_dir: Path | None = None) -> tuple[list, lms.Lms]:
    """(lms.rows(), what else the LMS files are made from: the roster as read, canvas.csv's column,
    the students' own due dates)."""
    base = roster_dir or out
    roster = read_roster(base / store.ROSTER) if (base / store.ROSTER).is_file() else None
    if roster is not None:
        roster.source = meta.get("roster_name") or roster.source  # the instructor's file, not OUT's copy
    times = (
        late.read_times(base / store.TIMES)
        if meta.get("submitted_at") == "file" and (base / store.TIMES).is_file()
        else None
    )
    named = late.term_of(meta).get("extensions")
    extensions = (
        late.read_extensions(base / store.EXTENSIONS) if named and (base / store.EXTENSIONS).is_file() else None
    )
    return (
        lms.rows(records, meta, roster, times, extensions=extensions),
        lms.Lms(roster, lms_column(meta), extensions=extensions, extensions_name=named or ""),
    )


def lms_column(meta: dict) -> str:
    """canvas.csv's and moodle.csv's grade column: the assignment as Canvas names it (`Title (id)`,
    from --lms-assignment or course.toml's lms_assignment), else `kata <assignment>` or the title."""
    if meta.get("lms_assignment"):
        return meta["lms_assignment"]
    return f"kata {meta['assignment']}" if meta.get("assignment") else meta.get("title", "kata")


def gate(out: Path, records: dict[str, dict], meta: dict | None, roster_dir: Path | None = None) -> tuple[list, list]:
    """(why the LMS files are not safe to import, what they hold): lms.gate and lms.overview."""
    meta = meta or {}
    table, info = term(out, records, meta, roster_dir)
    return lms.gate(table, meta, info), lms.overview(table, meta, info)


def write_class(out: Path, records: dict[str, dict], meta: dict | None, roster_dir: Path | None = None) -> list[Path]:
    meta = meta or {}
    s = summary.stats(records)
    title = meta.get("title", "kata")
    table, info = term(out, records, meta, roster_dir)
    points = next((r.max_score for r in table if r.max_score), 0.0)
    column = info.column
    md = summary.markdown(
        records, s, meta, similarity.read_flagged(out), lms.attention_lines(table, meta, info)
    ) + lms.summary_lines(table, meta)
    rows = {r.name: r for r in table if r.status not in lms.NO_RECORD}
    pages = [write_page(out, name, doc, lms.late_page(rows.get(name), meta)) for name, doc in records.items()]
    missing = late.missing_of(meta)  # --missing: an enrolled student without a submission, 0 or an empty cell
    platform = []  # the files the platforms themselves import, where the class came from one
    if info.roster is not None and info.roster.shape == "moodle_worksheet":
        original = ((roster_dir or out) / store.ROSTER).read_bytes().decode("utf-8")
        platform.append(
            store.atomic_write(out / "moodle-worksheet.csv", lms.moodle_worksheet(table, original, missing))
        )
    if any(r.members for r in table):
        platform.append(store.atomic_write(out / "gradescope.csv", lms.gradescope_csv(table, missing)))
    return (
        pages
        + [
            store.atomic_write(out / "gradebook.csv", csvbook.gradebook(records, meta.get("exercises"), table)),
            store.atomic_write(out / "canvas.csv", lms.canvas_csv(table, column, points, missing)),
            store.atomic_write(out / "moodle.csv", lms.moodle_csv(table, column, missing)),
            store.atomic_write(out / "junit.xml", junit.document(records, title)),
            store.atomic_write(out / "histogram.png", summary.histogram_png(s, title)),
            store.atomic_write(out / "failures.png", summary.failures_png(s)),
            store.atomic_write(out / "heatmap.png", teaching.heatmap_png(records, meta.get("exercises"), title)),
            store.atomic_write(out / "summary.md", md),
        ]
        + platform
    )


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
        w.files += write_student(out, name, doc, hidden, page=False)
    w.files += write_class(out, records, meta)
    w.problems, w.facts = gate(out, records, meta)
    return w


class NotInRun(ValueError):
    """The run in OUT did not grade every exercise of the assignment."""


def regenerate_assignment(
    out: Path, assignment, to: Path | None = None, lms_assignment: str | None = None
) -> tuple[Path, Written]:
    """Every format for one course.toml assignment, from a run that graded its exercises (a whole
    term graded once, say): each report restricted to the assignment's exercises and scaled to its
    points, written into `to` (default OUT/assignments/<id>/), which gets the same layout as OUT.
    OUT's own files are not touched. canvas.csv's column: `lms_assignment` (--lms-assignment), else
    course.toml's lms_assignment of the assignment."""
    from ...reports.assignment import view

    out = Path(out)
    to = Path(to) if to else out / "assignments" / assignment.id
    with store.locked(out):
        meta = dict(store.read_meta(out) or {})
        graded = meta.get("exercises")
        missing = [e for e in assignment.exercises if graded is not None and e not in graded]
        if missing:
            raise NotInRun(", ".join(missing))
        if meta.get("assignment") and meta["assignment"] != assignment.id:
            raise NotInRun(f"OUT holds assignment {meta['assignment']}")
        hidden = meta.get("gradescope_hidden") or "after_published"
        records = {name: view(doc, assignment) for name, doc in store.load_records(out).items()}
        meta.update(
            exercises=list(assignment.exercises),
            assignment=assignment.id,
            lms_assignment=lms_assignment or getattr(assignment, "lms_assignment", None),
            title=f"{meta.get('title', 'kata')}: {assignment.title}",
            late=assignment.late_policy(),
        )
        w = Written(len(records))
        for name, doc in records.items():
            store.write_json(store.student_dir(to, name) / "report.json", doc)
            w.files += write_student(to, name, doc, hidden, page=False)
        w.files += write_class(to, records, meta, roster_dir=out)
        w.problems, w.facts = gate(to, records, meta, roster_dir=out)  # the same gate as OUT's own files
    return to, w


def is_batch_output(out: Path) -> bool:
    return (Path(out) / store.META).is_file() or (Path(out) / store.STUDENTS).is_dir()
