"""The class summary points at the teaching problem: not attempted apart from wrong, the mistakes
the checks recognised counted by student, notes collapsed into one line per kind."""

from __future__ import annotations

from grader.course.messages import t
from grader.instructor.formats import summary, teaching


def check(ex: str, name: str, passed: bool, mistake: str = "") -> dict:
    return {
        "exercise": ex,
        "name": name,
        "status": "passed" if passed else "failed",
        "visibility": "public",
        "score": 1.0 if passed else 0.0,
        "max_score": 1.0,
        "mistake": mistake,
    }


def record(scaled: bool, softmax: bool | None, notes=()) -> dict:
    """scaled/softmax: True right, False wrong, None the stub as given."""
    exercises, checks = [], []
    for ex, state, mistake in (
        ("s1_12_scaled_attention", scaled, "dividing by d_k instead of sqrt(d_k)"),
        ("s1_11_softmax", softmax, "softmax over the whole tensor"),
    ):
        ok = bool(state)
        exercises.append(
            {
                "id": ex,
                "section": ex[1:5].replace("_", "."),
                "score": 2.0 if ok else 0.0,
                "max_score": 2.0,
                "attempted": state is not None,
            }
        )
        checks += [check(ex, "a", ok, "" if ok or state is None else mistake), check(ex, "b", ok)]
    return {
        "score": sum(e["score"] for e in exercises),
        "max_score": 4.0,
        "exercises": exercises,
        "checks": checks,
        "notes": list(notes),
        "student": {"status": "graded"},
    }


RECORDS = {
    "ann": record(True, None),
    "ben": record(False, None, [t("sub_not_graded", "en", files="a.txt")]),
    "cat": record(
        False,
        True,
        [
            t("sub_not_graded", "en", files="b.txt, c.txt"),
            "ch01/x[y](javascript:1): a note no message of the catalog wrote",
        ],
    ),
    "dan": record(None, False),
    "eve": record(True, True),
}


def test_not_attempted_is_kept_apart_from_attempted_and_wrong():
    rows = {p.id: p for p in teaching.progress(RECORDS)}
    soft = rows["s1_11_softmax"]
    assert (soft.not_attempted, soft.full, soft.failing) == (["ann", "ben"], ["cat", "eve"], ["dan"])
    s = summary.stats(RECORDS)
    rate = {(r.exercise, r.name): (r.failed, r.ran) for r in s.checks}
    assert rate[("s1_11_softmax", "a")] == (1, 3)  # ann's and ben's stubs are not failures of the class


def test_named_mistakes_are_counted_by_student_most_common_first():
    assert teaching.mistakes(RECORDS) == [
        ("s1_12_scaled_attention", "dividing by d_k instead of sqrt(d_k)", ["ben", "cat"]),
        ("s1_11_softmax", "softmax over the whole tensor", ["dan"]),
    ]


def test_notes_are_one_line_per_kind_and_the_summary_says_it_all():
    kinds = teaching.grouped_notes(RECORDS)
    assert [names for _, names in kinds] == [["ben", "cat"], ["cat"]]
    assert kinds[0][0].startswith("not graded: not an exercise of the course: … (")
    md = summary.markdown(RECORDS, summary.stats(RECORDS), {})
    assert "| 2 | s1_12_scaled_attention | dividing by d_k instead of sqrt(d_k) | ben, cat |" in md
    assert "| 1.11 | s1_11_softmax | 2 | 2 | 1 | 1.33/2 |" in md
    assert "- 2 students: not graded: not an exercise of the course: … (" in md and md.count("a.txt") == 0
    assert r"- 1 student: ch01/x\[y\](javascript:1): a note no message" in md  # shown whole, inert


def test_the_heatmap_is_a_png_even_for_an_empty_class():
    assert teaching.heatmap_png(RECORDS, ["s1_11_softmax", "s1_12_scaled_attention"], "week")[:4] == b"\x89PNG"
    assert teaching.heatmap_png({}, None)[:4] == b"\x89PNG"
