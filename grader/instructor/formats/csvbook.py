"""The CSV gradebook: one row per student, one column per exercise (its points), the total.

    student,source,status,s1_1_next_token,...,total,max_score,percent,reason
    alice,alice.zip,graded,4,...,45,58,77.6,
    bob,bob,refused,0,...,0,58,0,bob: no 'ch01/' or 'exercises/ch01/' folder found

The exercise columns are those of the run (every exercise, or the ones chosen with -e), in
course order. An exercise the student's report does not have is left empty. Every text cell
(names, the entry, the reason) is one line, and one that starts like a formula (= + - @), or
has a piece after a `;` that does, gets a leading ' there (grader/course/safe_text.py
`csv_cell`): a spreadsheet shows it and never evaluates it. A cell holding a `;` is quoted
(`csv_text`), so a spreadsheet whose list separator is `;` keeps it one cell.
"""

from __future__ import annotations

from ...course.safe_text import csv_cell, csv_text, one_line
from ..batch.records import student_of


def columns(records: dict[str, dict], order: list[str] | None = None) -> list[str]:
    """The exercise ids: `order` (the run's), then any others the reports have, first seen first."""
    ids = list(order or [])
    for doc in records.values():
        for e in doc.get("exercises", []):
            if e.get("id") not in ids:
                ids.append(e.get("id"))
    return ids


def _float(x) -> float:
    """A number from a stored record (0 when it is not one: one record never stops the file)."""
    try:
        return float(x)
    except (TypeError, ValueError):
        return 0.0


def _num(x) -> str:
    return f"{_float(x):g}"


def gradebook(records: dict[str, dict], order: list[str] | None = None, table: list | None = None) -> str:
    """`table`: lms.rows() (a roster, a late policy): its order, its missing students, its reasons,
    and the columns they add (id, name, email; submitted_at, late_days, late_penalty, final)."""
    ids = columns(records, order)
    with_roster = bool(table) and any(r.student is not None for r in table)
    with_late = bool(table) and any(r.late is not None for r in table)
    lines = [
        [
            "student",
            *(["id", "name", "email"] if with_roster else []),
            "source",
            "status",
            *ids,
            "total",
            "max_score",
            "percent",
            *(["submitted_at", "late_days", "late_penalty", "final"] if with_late else []),
            "reason",
        ]
    ]
    rows = table if table is not None else [None] * len(records)
    names = [r.name for r in table] if table is not None else list(records)
    for name, row in zip(names, rows):
        doc = records.get(name, {}) if row is None or row.status not in ("missing", "contested") else {}
        st = student_of(doc)
        scores = {e.get("id"): e.get("score", 0) for e in doc.get("exercises", [])}
        score = _float(doc.get("score", 0))
        max_score = _float(doc.get("max_score", row.max_score if row is not None else 0))
        who = row.student if row is not None else None
        lt = row.late if row is not None else None
        lines.append(
            [
                csv_cell(name),
                *(
                    [
                        csv_cell(who.id if who else ""),
                        csv_cell(who.name if who else ""),
                        csv_cell(who.email if who else ""),
                    ]
                    if with_roster
                    else []
                ),
                csv_cell(st.source or "" if st else ""),
                csv_cell(row.status if row is not None else st.status if st else "graded"),
                *(_num(scores[i]) if i in scores else "" for i in ids),
                _num(score),
                _num(max_score),
                f"{100 * score / max_score:.1f}" if max_score else "",
                *(
                    [
                        lt.submitted_at if lt else "",
                        str(lt.days) if lt and lt.submitted_at else "",
                        _num(lt.penalty) if lt and lt.submitted_at else "",
                        _num(row.final),
                    ]
                    if with_late
                    else []
                ),
                csv_cell(one_line(row.reason) if row is not None else st.reason or "" if st else ""),
            ]
        )
    return csv_text(lines)
