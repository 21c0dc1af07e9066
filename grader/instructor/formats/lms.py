"""One row per student for the term's gradebooks, and the LMS import files made from them.

`rows(records, meta, roster, times)` joins the graded records with the roster (students on it
without a submission get a "missing" row scoring 0; submissions on no roster line are kept and
flagged "not on the roster") and applies the assignment's late policy (late.py). Each row's
`reason` says, in one line, everything that moved or may move its score: not graded and why,
files changed since `kata submit`, skipped links, lateness.

The import files, in the columns their platforms document for a gradebook import:
- `canvas.csv`: Canvas's Grades → Import: `Student, ID, SIS User ID, SIS Login ID, Section`,
  then one column named after the assignment; a `Points Possible` row as Canvas's own export
  has. Canvas matches a row by ID, SIS User ID or SIS Login ID (the roster's `canvas_id`, `id`
  and login): give a roster with Canvas's ids for a clean import.
- `moodle.csv`: Moodle's Grades → Import → CSV file: `Email address, Username, ID number,
  Full name`, the grade, and a feedback column (the reason). On import, map "Email address" (or
  Username) to the user and the grade column to the grade item.
Every text cell is one line and one that starts like a formula gets a leading ' (csv_cell).
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass

from ...course.safe_text import csv_cell, one_line
from . import late as late_mod
from .roster import Roster, Student, match


@dataclass
class Row:
    name: str  # the batch's name for the student (the roster's login for a missing student)
    status: str  # graded | refused | error | missing
    score: float
    max_score: float
    final: float  # after the late penalty
    reason: str
    student: Student | None = None  # the roster's line (None: no roster, or not on it)
    late: late_mod.Late | None = None
    on_roster: bool = True


def reasons(doc: dict) -> list[str]:
    """What a record itself says about its score: not graded and why, skipped links, and files
    that differ from the `kata submit` manifest."""
    student = doc.get("student") or {}
    out = [student["reason"]] if student.get("reason") else []
    m = doc.get("manifest") or {}
    for key, words in (("changed", "changed after kata submit"), ("missing", "missing from the kata submit zip"),
                       ("added", "added after kata submit")):
        if m.get(key):
            out.append(f"{words}: {', '.join(m[key])}")
    if m.get("error"):
        out.append(f"kata submit manifest unreadable: {m['error']}")
    return out


def rows(records: dict[str, dict], meta: dict | None = None, roster: Roster | None = None,
         times: dict[str, str] | None = None) -> list[Row]:
    meta = meta or {}
    policy = meta.get("late")
    source = meta.get("submitted_at") or ""
    max_total = next((float(d.get("max_score", 0)) for d in records.values()), 0.0)
    out: list[Row] = []
    for name, doc in records.items():
        st = doc.get("student") or {}
        score, max_score = float(doc.get("score", 0)), float(doc.get("max_score", 0))
        why = reasons(doc)
        lt = None
        if policy and source:
            lt = late_mod.assess(late_mod.submitted_at(doc, name, source, times), policy)
            if not lt.submitted_at:
                why.append(f"no submission time ({source}): late policy not applied")
            elif lt.reason:
                why.append(lt.reason)
        final = round(score * (1 - (lt.penalty if lt else 0) / 100), 6)
        out.append(Row(name, st.get("status", "graded"), score, max_score, final, "; ".join(why), late=lt))
    if roster is not None:
        found = match(roster, list(records))
        by_name = {r.name: r for r in out}
        ordered = []
        for student, name in found.enrolled:
            if name is None:
                ordered.append(Row(student.login, "missing", 0.0, max_total, 0.0, "no submission", student))
            else:
                by_name[name].student = student
                ordered.append(by_name[name])
        for name in found.unknown:
            r = by_name[name]
            r.on_roster = False
            r.reason = "; ".join(x for x in ("not on the roster", r.reason) if x)
            ordered.append(r)
        out = ordered
    return out


def _one(text: str) -> str:
    return csv_cell(one_line(text))


def canvas_csv(table: list[Row], column: str, points: float) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Student", "ID", "SIS User ID", "SIS Login ID", "Section", _one(column)])
    w.writerow(["Points Possible", "", "", "", "", f"{points:g}"])
    for r in table:
        s = r.student
        display = s.name if s and s.name else r.name
        w.writerow([_one(display), _one(s.canvas_id if s else ""), _one(s.id if s else ""), _one(s.login if s else r.name),
                    _one(s.section if s else ""), f"{round(r.final, 2):g}"])
    return buf.getvalue()


def moodle_csv(table: list[Row], column: str) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["Email address", "Username", "ID number", "Full name", _one(column), _one(f"{column} (feedback)")])
    for r in table:
        s = r.student
        w.writerow([_one(s.email if s else ""), _one(s.login if s else r.name), _one(s.id if s else ""),
                    _one(s.name if s else ""), f"{round(r.final, 2):g}", _one(r.reason)])
    return buf.getvalue()


def summary_lines(table: list[Row], meta: dict | None = None) -> str:
    """The class summary's section on the roster and lateness (empty when neither is in play)."""
    meta = meta or {}
    missing = [r for r in table if r.status == "missing"]
    unknown = [r for r in table if not r.on_roster]
    late = [r for r in table if r.late is not None and r.late.days]
    untimed = [r for r in table if r.late is not None and not r.late.submitted_at]
    lines: list[str] = []
    if any(r.student is not None for r in table) or missing:
        lines += ["", "## Roster", "",
                  f"{len(table) - len(missing) - len(unknown)} enrolled students submitted; "
                  f"{len(missing)} did not; {len(unknown)} submissions are on no roster line."]
        if missing:
            lines.append("- no submission: " + ", ".join(_md(r.name) for r in missing))
        if unknown:
            lines.append("- not on the roster: " + ", ".join(_md(r.name) for r in unknown))
    if meta.get("late"):
        policy = meta["late"]
        source = meta.get("submitted_at")
        lines += ["", "## Late submissions", ""]
        if not source:
            lines.append(f"Assignment {policy['assignment']} was due {policy['due']}, but no submission times were "
                         "given (`--submitted-at mtime|manifest|FILE`): no late policy applied.")
        else:
            lines.append(f"Due {policy['due']}; times from {source}; {len(late)} late, {len(untimed)} without a time.")
            for r in late:
                lines.append(f"- {_md(r.name)}: {_md(r.late.reason)} (submitted {r.late.submitted_at})")
    return "\n".join(lines) + ("\n" if lines else "")


def _md(text: str) -> str:
    from ...course.safe_text import markdown

    return markdown(one_line(text))
