"""The CSV gradebook: one row per student, one column per exercise (its points), the total.

    student,source,status,s1_1_next_token,...,total,max_score,percent,reason
    alice,alice.zip,graded,4,...,45,58,77.6,
    bob,bob,refused,0,...,0,58,0,bob: no 'ch01/' or 'exercises/ch01/' folder found

The exercise columns are those of the run (every exercise, or the ones chosen with -e), in
course order. An exercise the student's report does not have is left empty. Every text cell
(names, the entry, the reason) is one line, and one that starts like a formula (= + - @) gets a
leading ' (grader/course/safe_text.py `csv_cell`): a spreadsheet shows it and never evaluates it.
"""
from __future__ import annotations

import csv
import io

from ...course.safe_text import csv_cell


def columns(records: dict[str, dict], order: list[str] | None = None) -> list[str]:
    """The exercise ids: `order` (the run's), then any others the reports have, first seen first."""
    ids = list(order or [])
    for doc in records.values():
        for e in doc.get("exercises", []):
            if e.get("id") not in ids:
                ids.append(e.get("id"))
    return ids


def _num(x) -> str:
    return f"{float(x):g}"


def gradebook(records: dict[str, dict], order: list[str] | None = None) -> str:
    ids = columns(records, order)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["student", "source", "status", *ids, "total", "max_score", "percent", "reason"])
    for name, doc in records.items():
        student = doc.get("student") or {}
        scores = {e.get("id"): e.get("score", 0) for e in doc.get("exercises", [])}
        score, max_score = float(doc.get("score", 0)), float(doc.get("max_score", 0))
        w.writerow([csv_cell(name), csv_cell(student.get("source", "")), csv_cell(student.get("status", "graded")),
                    *(_num(scores[i]) if i in scores else "" for i in ids),
                    _num(score), _num(max_score), f"{100 * score / max_score:.1f}" if max_score else "",
                    csv_cell(student.get("reason", ""))])
    return buf.getvalue()
