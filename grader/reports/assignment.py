"""A report (the JSON document of `kata grade`, schema 1) seen as one assignment: only the
assignment's exercises, and every check's points scaled so that the assignment is worth its
`points` (course.toml `[[assignment]]`).

Scaling is done on the stored report, so every format written from it (the terminal table, the
HTML page, gradebook.csv, Gradescope's results.json, JUnit, the class summary) shows the same
numbers. Each check's points are its share of the assignment's points in hundredths, the shares
adding up to the points exactly (grader/course/points.py `apportion_groups`, as the nbgrader export's
test cells are worth); an exercise's and the report's score are the sums of their checks', so the
reference scores exactly the assignment's points. The raw numbers stay in the report under
"assignment":

    "assignment": {"id": "week2", "title": "...", "points": 100, "due": "2027-03-14T23:59:00+08:00",
                   "factor": 1.0869565, "raw_score": 46.0, "raw_max_score": 92.0}
"""

from __future__ import annotations

import copy

from ..course.points import apportion_groups, cents, share_of


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
    # what is scaled: each exercise's checks, or the exercise itself when the report has none of them
    by_exercise: dict[str, list[dict]] = {}
    for c in out["checks"]:
        by_exercise.setdefault(c.get("exercise"), []).append(c)
    units: dict[tuple, dict] = {}  # (exercise, check name, n-th of that name): its row

    def add(ex_id, name, row) -> None:
        n = 0
        while (str(ex_id), name, n) in units:
            n += 1
        units[(str(ex_id), name, n)] = row

    listed = set()
    for e in out["exercises"]:
        listed.add(e.get("id"))
        for c in by_exercise.get(e.get("id"), []) or [e]:
            add(e.get("id"), str(c.get("name", "")) if c is not e else "", c)
    for ex_id, rows in by_exercise.items():  # a check of an exercise the report does not list
        for c in rows if ex_id not in listed else []:
            add(ex_id, str(c.get("name", "")), c)
    raw_units = sum(float(c.get("max_score", 0)) for c in units.values())
    groups: dict[str, list] = {}
    for key, c in units.items():
        groups.setdefault(key[0], []).append((key, float(c.get("max_score", 0))))
    shares = apportion_groups(groups.items(), assignment.points if assignment.points and raw_units else raw_units)
    totals: dict[str, list[int]] = {}
    for key, c in units.items():
        score = share_of(float(c.get("score", 0)), float(c.get("max_score", 0)), shares[key])
        c["score"], c["max_score"] = score, shares[key]
        got = totals.setdefault(key[0], [0, 0])
        got[0] += cents(score)
        got[1] += cents(shares[key])
    for e in out["exercises"]:
        got = totals.get(str(e.get("id")), [0, 0])
        e["score"], e["max_score"] = got[0] / 100, got[1] / 100
    out["score"] = sum(got[0] for got in totals.values()) / 100
    out["max_score"] = sum(got[1] for got in totals.values()) / 100
    out["assignment"] = {
        "id": assignment.id,
        "title": assignment.title,
        "points": assignment.points,
        "due": assignment.due.isoformat() if assignment.due else None,
        "factor": round(factor, 9),
        "raw_score": raw_score,
        "raw_max_score": raw_max,
    }
    return out
