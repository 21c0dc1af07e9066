"""Gradescope's autograder `results.json` for one student
(https://gradescope-autograders.readthedocs.io/en/latest/specs/).

    {"score": 45.0, "execution_time": 12, "output": "...", "stdout_visibility": "hidden",
     "extra_data": {...},
     "tests": [{"score": 2.0, "max_score": 2.0, "status": "passed" | "failed",
                "name": "§1.11 Softmax: book_softmax_examples", "number": "1.11.1",
                "output": "<the check's message>", "tags": ["s1_11_softmax", "1.11"],
                "visibility": "visible" | "after_published" | "hidden"}]}

Public checks are "visible"; hidden checks get the visibility chosen by the instructor
(`after_published`, the default: students see them once grades are published; or `hidden`).
Checks are numbered per section in course order ("1.11.1", "1.11.2", ...).
"""
from __future__ import annotations

from collections import defaultdict

HIDDEN_CHOICES = ("after_published", "hidden")


def results(doc: dict, hidden: str = "after_published") -> dict:
    if hidden not in HIDDEN_CHOICES:
        raise ValueError(f"hidden checks' visibility must be one of {HIDDEN_CHOICES}, not {hidden!r}")
    titles = {e.get("id"): e.get("title", e.get("id")) for e in doc.get("exercises", [])}
    counters: dict[str, int] = defaultdict(int)
    tests = []
    for c in doc.get("checks", []):
        section = str(c.get("section") or "")
        counters[section] += 1
        status = c.get("status")
        message = c.get("message") or ""
        if status == "skipped":
            message = f"skipped: {message}" if message else "skipped"
        tests.append({
            "score": float(c.get("score", 0)),
            "max_score": float(c.get("max_score", 0)),
            "status": "passed" if status == "passed" else "failed",
            "name": f"§{section} {titles.get(c.get('exercise'), c.get('exercise'))}: "
                    f"{str(c.get('name', '')).removeprefix('test_')}",
            "number": f"{section}.{counters[section]}",
            "output": message,
            "tags": [str(c.get("exercise", "")), section],
            "visibility": hidden if c.get("visibility") == "hidden" else "visible",
        })
    student = doc.get("student") or {}
    lines = [f"Score: {float(doc.get('score', 0)):g} / {float(doc.get('max_score', 0)):g}"]
    if student.get("status") in ("refused", "error"):
        lines = [f"This submission could not be graded: {student.get('reason', '')}"]
    lines += [f"note: {n}" for n in doc.get("notes", [])]
    if doc.get("sandbox") not in (None, "bubblewrap"):
        lines.append("note: graded with resource limits only (bubblewrap was not available)")
    return {
        "score": float(doc.get("score", 0)),
        "execution_time": int(round(float(doc.get("duration_s", 0)))),
        "output": "\n".join(lines),
        "stdout_visibility": "hidden",
        "extra_data": {"kata_version": doc.get("kata_version"), "torch": doc.get("torch"),
                       "sandbox": doc.get("sandbox"), "student": student.get("name"),
                       "max_score": float(doc.get("max_score", 0))},
        "tests": tests,
    }
