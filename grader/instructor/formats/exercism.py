"""Exercism's test-runner `results.json`, version 3, for one student
(https://exercism.org/docs/building/tooling/test-runners/interface).

    {"version": 3, "status": "pass" | "fail" | "error", "message": null | "...",
     "tests": [{"name": "...", "status": "pass" | "fail" | "error", "message": null | "...",
                "task_id": 11}]}

A check fails ("fail") when it got a wrong answer (or none: a missing file or a module that does
not import, whose message names the file and line), and errors ("error") when the student's code
raised, crashed or hung during the check, or the check was skipped. The top status is "error"
when no check ran (a submission that could not be graded: the message says why), "fail" when
any check did not pass, else "pass". `task_id` links a check to its
section: the spec wants a number naming one task, and "1.10" would read as 1.1, so a check of
§1.11 has task_id 11 (the section within the chapter).
"""

from __future__ import annotations

from ..batch.records import NOT_GRADED, student_of

ERROR_KINDS = {"student", "fault"}  # the code raised, crashed, hung or flooded output


def task_id(section: str) -> int | None:
    parts = str(section).split(".")
    return int(parts[-1]) if parts[-1].isdigit() else None


def _status(check: dict) -> str:
    if check.get("status") == "passed":
        return "pass"
    if check.get("status") == "skipped" or check.get("kind") in ERROR_KINDS:
        return "error"
    return "fail"


def results(doc: dict) -> dict:
    student = student_of(doc)
    titles = {e.get("id"): e.get("title", e.get("id")) for e in doc.get("exercises", [])}
    tests = []
    for c in doc.get("checks", []):
        test = {
            "name": f"{titles.get(c.get('exercise'), c.get('exercise'))}: "
            f"{str(c.get('name', '')).removeprefix('test_')}",
            "status": _status(c),
            "message": (c.get("message") or None) if c.get("status") != "passed" else None,
        }
        tid = task_id(c.get("section", ""))
        if tid is not None:
            test["task_id"] = tid
        tests.append(test)
    if student is not None and student.status in NOT_GRADED:
        return {"version": 3, "status": "error", "message": student.reason or "not graded", "tests": []}
    if not tests:
        return {"version": 3, "status": "error", "message": "no check ran", "tests": []}
    status = "pass" if all(t["status"] == "pass" for t in tests) else "fail"
    return {"version": 3, "status": status, "message": None, "tests": tests}
