"""The assignment a student bundle holds, when `kata release OUT --assignment ID` built it.

Such a bundle's course.toml lists the assignment's exercises and, besides them, the exercises of
other assignments that they import (`from s1_23_self_attention import ...` in s1_23_encoder_block):
the student copies their own finished file of those in, and the checks of the assignment's
exercises run on it. grader/release.json names the assignment ("assignment": {"id": ...}); its
`[[assignment]]` table is the only one in the bundle's course.toml.

The student's commands show points as the instructor's `kata grade -a ID` counts them: each check
of the assignment's exercises is worth its points times `factor` (the assignment's `points` over
its exercises' own, hidden checks included), and the other exercises count for nothing here.
`of(course)` is None in the instructor's course and in a bundle of the whole course.
"""

from __future__ import annotations

from dataclasses import dataclass

from .assignments import Assignment, AssignmentError, find
from .manifest import CourseError, edition


@dataclass(frozen=True)
class BundleAssignment:
    assignment: Assignment
    graded: tuple[str, ...]  # the assignment's exercises, in the course's order
    needed: tuple[str, ...]  # the bundle's other exercises: the graded ones import them
    factor: float  # what each check's points of a graded exercise are multiplied by

    @property
    def id(self) -> str:
        return self.assignment.id

    def factor_of(self, ex_id: str) -> float:
        return self.factor if ex_id in self.graded else 0.0

    def title(self, lang: str | None = None) -> str:
        return self.assignment.display_title(lang)


def of(course) -> BundleAssignment | None:
    """The assignment of the bundle `course` runs from (None: not an assignment's bundle)."""
    info = edition()
    if not info or info.get("edition") != "student" or not isinstance(info.get("assignment"), dict):
        return None
    try:
        assignment = find(course.assignments, str(info["assignment"].get("id")))
    except AssignmentError as e:
        raise CourseError(f"grader/release.json: {e}") from None
    graded = tuple(assignment.exercises)
    needed = tuple(ex.id for ex in course.exercises if ex.id not in graded)
    own = sum(ex.points for ex in course.exercises if ex.id in graded)
    return BundleAssignment(assignment, graded, needed, assignment.factor(own))
