"""A report (the JSON document of `kata grade`, schema 1) seen as one assignment: only the
assignment's exercises, and every check's points scaled so that the assignment is worth its
`points` (course.toml `[[assignment]]`).

Scaling is done on the stored report, so every format written from it (the terminal table, the
HTML page, gradebook.csv, Gradescope's results.json, JUnit, the class summary) shows the same
numbers. The raw numbers stay in the report under "assignment":

    "assignment": {"id": "week2", "title": "...", "points": 100, "due": "2027-03-14T23:59:00+08:00",
                   "factor": 1.0869565, "raw_score": 46.0, "raw_max_score": 92.0}
"""
from __future__ import annotations

import copy


class NotGraded(ValueError):
    """The report lacks some of the assignment's exercises (it was graded with other -e)."""


def view(doc: dict, assignment, require_all: bool = False) -> dict:
    """A copy of report `doc` restricted to `assignment`'s exercises and scaled to its points.
    `require_all`: raise NotGraded when a graded report has none of some exercise's rows."""
    if doc.get("assignment"):  # already an assignment's view: the same one as it is, another refused
        if doc["assignment"].get("id") == assignment.id:
            return copy.deepcopy(doc)
        raise NotGraded(f"this report is assignment {doc['assignment'].get('id')}'s, not {assignment.id}'s")
    keep = set(assignment.exercises)
    out = copy.deepcopy(doc)
    out["exercises"] = [e for e in out.get("exercises", []) if e.get("id") in keep]
    out["checks"] = [c for c in out.get("checks", []) if c.get("exercise") in keep]
    if require_all:
        have = {e.get("id") for e in out["exercises"]}
        missing = [e for e in assignment.exercises if e not in have]
        if missing:
            raise NotGraded(", ".join(missing))
    raw_score = round(sum(float(e.get("score", 0)) for e in out["exercises"]), 6)
    raw_max = round(sum(float(e.get("max_score", 0)) for e in out["exercises"]), 6)
    factor = assignment.points / raw_max if assignment.points and raw_max else 1.0
    for row in out["exercises"] + out["checks"]:
        row["score"] = round(float(row.get("score", 0)) * factor, 6)
        row["max_score"] = round(float(row.get("max_score", 0)) * factor, 6)
    out["score"] = round(raw_score * factor, 6)
    out["max_score"] = round(raw_max * factor, 6)
    out["assignment"] = {"id": assignment.id, "title": assignment.title, "points": assignment.points,
                         "due": assignment.due.isoformat() if assignment.due else None,
                         "factor": round(factor, 9), "raw_score": raw_score, "raw_max_score": raw_max}
    return out
