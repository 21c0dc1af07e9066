"""Assignments: the weeks of a term, as `[[assignment]]` tables in course.toml.

    [[assignment]]
    id = "week2"
    title = "Attention"                 # and title_zh
    sections = ["1.7", "1.9", "1.10"]   # and/or exercises = ["s1_11_softmax", ...]
    due = 2027-03-14T23:59:00+08:00     # optional: a TOML date-time with its UTC offset
    points = 100                        # optional: what the assignment is worth in the gradebook
    late_per_day = 10                   # optional: % of the points lost per started day late (0)
    late_max_days = 5                   # optional: later than this scores 0 (no limit)
    late_grace_minutes = 15             # optional: no penalty within this many minutes (0)
    lms_assignment = "Attention (48213)"  # optional: the assignment's column as Canvas's gradebook
                                        # export names it, `Title (id)`: canvas.csv's grade column

`--assignment ID` on `kata grade`, `gradebook` and the exports grades only the assignment's
exercises and, when it has `points`, scales every check's points so that the assignment's total
is `points` (a student who did the week's work sees 100/100, not 58/452).

`pick(course, tokens)` turns what `-e` was given into exercises: an exercise id, a section
("1.11" or "§1.11": all its exercises) or the start of ids ("s1_11", "s1_23_"), each in the
course's order. Errors name the entry or the token.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import date, datetime, timezone

from .messages import pick as pick_lang
from .messages import t

ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")
KEYS = {
    "id",
    "title",
    "title_zh",
    "sections",
    "exercises",
    "due",
    "points",
    "late_per_day",
    "late_max_days",
    "late_grace_minutes",
    "lms_assignment",
}
CANVAS_COLUMN_RE = re.compile(r"^.*\S \(\d+\)$")  # Canvas's `Title (id)`


class AssignmentError(ValueError):
    """A bad [[assignment]] table or an -e/--assignment choice that names nothing."""


@dataclass
class Assignment:
    id: str
    title: str
    title_zh: str
    exercises: list[str]  # ids, in the course's order
    due: datetime | None = None  # aware (it has its UTC offset)
    points: float | None = None  # None: the exercises' own points
    sections: list[str] = field(default_factory=list)
    late: dict = field(default_factory=dict)  # per_day (%), max_days, grace_minutes: see late_policy()
    lms_assignment: str | None = None  # canvas.csv's column, as Canvas names the assignment: `Title (id)`

    def due_at(self, when: str | None) -> "Assignment":
        """This assignment with its due date moved to `when` (ISO 8601 with offset; None: as is)."""
        if not when:
            return self
        try:
            due = parse_time(when)
        except ValueError:
            raise AssignmentError(
                f"--due {when}: give a date-time with its UTC offset, e.g. 2027-03-14T23:59:00+08:00"
            ) from None
        return dataclasses.replace(self, due=due)

    def late_policy(self) -> dict | None:
        """What the gradebook needs to apply the late policy (None: no due date), as JSON."""
        if self.due is None:
            return None
        return self.late_rule()

    def late_rule(self) -> dict:
        """The assignment's late rule as JSON, with its due date (None when course.toml gives none):
        what a batch run stores (batch.json's `late_rule`), so that a due date given later (`kata
        gradebook OUT --due TIME`) is measured with the assignment's own rule."""
        return {
            "assignment": self.id,
            "due": self.due.isoformat() if self.due else None,
            "per_day": self.late.get("per_day", 0.0),
            "max_days": self.late.get("max_days"),
            "grace_minutes": self.late.get("grace_minutes", 0.0),
        }

    def display_title(self, lang: str | None = None) -> str:
        return pick_lang(self.title, self.title_zh, lang)

    def factor(self, course_points: float) -> float:
        """What each check's points are multiplied by: points / the exercises' own total."""
        return 1.0 if not self.points or not course_points else self.points / course_points


def parse_time(text: str) -> datetime:
    """An ISO 8601 date-time with its UTC offset (or Z); ValueError for anything else, a time that
    is not a string or that has no UTC equivalent (0001-01-01T00:00:00+14:00) too."""
    if not isinstance(text, str):
        raise ValueError(f"not a date-time: {type(text).__name__}")
    value = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError("no UTC offset")
    try:
        value.astimezone(timezone.utc)
    except OverflowError:
        raise ValueError("out of range in UTC") from None
    return value


def parse(items: list, exercises: list) -> list[Assignment]:
    """The [[assignment]] tables, validated against the course's exercises (a list of Exercise)."""
    by_id = {ex.id: ex for ex in exercises}
    sections = {}
    for ex in exercises:
        sections.setdefault(ex.section, []).append(ex.id)
    out: list[Assignment] = []
    for i, item in enumerate(items):
        where = f"[[assignment]] #{i + 1} ({item.get('id', '?') if isinstance(item, dict) else '?'})"
        if not isinstance(item, dict):
            raise AssignmentError(f"{where}: must be a table")
        extra = sorted(set(item) - KEYS)
        if extra:
            raise AssignmentError(f"{where}: unknown key(s) {', '.join(extra)} (allowed: {', '.join(sorted(KEYS))})")
        for key in ("id", "title", "title_zh"):
            if not isinstance(item.get(key), str) or not item[key].strip():
                raise AssignmentError(f"{where}: missing key '{key}' (a non-empty string)")
        a_id = item["id"]
        if not ID_RE.match(a_id):
            raise AssignmentError(f"{where}: id must be letters, digits, '_', '-' or '.' (at most 40), e.g. week2")
        if a_id in by_id:
            raise AssignmentError(f"{where}: id {a_id!r} is also an exercise id; choose another")
        if any(a.id == a_id for a in out):
            raise AssignmentError(f"{where}: duplicate assignment id {a_id!r}")
        chosen: set[str] = set()
        secs = item.get("sections", [])
        ids = item.get("exercises", [])
        if not isinstance(secs, list) or not isinstance(ids, list):
            raise AssignmentError(f"{where}: sections and exercises must be lists")
        if not secs and not ids:
            raise AssignmentError(f"{where}: give sections = [...] or exercises = [...]")
        for s in secs:
            s = str(s).lstrip("§")
            if s not in sections:
                raise AssignmentError(f"{where}: section {s!r} has no exercise (sections: {', '.join(sections)})")
            chosen.update(sections[s])
        for e in ids:
            if e not in by_id:
                raise AssignmentError(f"{where}: exercise {e!r} is not in the course")
            chosen.add(e)
        due = item.get("due")
        if due is not None:
            if isinstance(due, str):
                try:
                    due = datetime.fromisoformat(due)
                except ValueError:
                    raise AssignmentError(
                        f"{where}: due {due!r} is not a date-time such as 2027-03-14T23:59:00+08:00"
                    ) from None
            if isinstance(due, date) and not isinstance(due, datetime):
                raise AssignmentError(
                    f"{where}: due must be a date-time with a time and UTC offset, "
                    f"e.g. {due.isoformat()}T23:59:00+08:00"
                )
            if not isinstance(due, datetime):
                raise AssignmentError(f"{where}: due must be a date-time such as 2027-03-14T23:59:00+08:00")
            if due.tzinfo is None:
                raise AssignmentError(
                    f"{where}: due {due.isoformat()} needs its UTC offset "
                    f"(e.g. {due.isoformat()}+08:00): lab machines and graders may be in "
                    "different time zones"
                )
        points = item.get("points")
        if points is not None:
            if isinstance(points, bool) or not isinstance(points, (int, float)) or not points > 0:
                raise AssignmentError(f"{where}: points must be a positive number")
            points = float(points)
        late = {}
        for key, name, top in (
            ("late_per_day", "per_day", 100),
            ("late_max_days", "max_days", None),
            ("late_grace_minutes", "grace_minutes", None),
        ):
            if key not in item:
                continue
            value = item[key]
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0 or (top and value > top):
                raise AssignmentError(f"{where}: {key} must be a number from 0" + (f" to {top}" if top else ""))
            late[name] = float(value)
        lms = item.get("lms_assignment")
        if lms is not None and not (isinstance(lms, str) and CANVAS_COLUMN_RE.match(lms.strip())):
            raise AssignmentError(
                f"{where}: lms_assignment must be the column Canvas's gradebook export has for "
                'the assignment, its title and id: e.g. "Attention (48213)"'
            )
        out.append(
            Assignment(
                a_id,
                item["title"],
                item["title_zh"],
                [ex.id for ex in exercises if ex.id in chosen],
                due,
                points,
                [str(s).lstrip("§") for s in secs],
                late,
                lms.strip() if lms else None,
            )
        )
    return out


def find(assignments: list[Assignment], a_id: str) -> Assignment:
    for a in assignments:
        if a.id == a_id:
            return a
    known = ", ".join(a.id for a in assignments) or t("assignment_none")
    raise AssignmentError(t("assignment_unknown", id=repr(a_id), known=known))


def matches(token: str, exercises: list) -> list:
    """The exercises a -e token names: an id, a section (1.11, §1.11) or the start of ids (s1_11)."""
    token = token.strip()
    exact = [ex for ex in exercises if ex.id == token]
    if exact:
        return exact
    section = token.lstrip("§")
    if re.fullmatch(r"\d+\.\d+", section):
        return [ex for ex in exercises if ex.section == section]
    if re.fullmatch(r"s\d+_\d+(_[a-z0-9_]*)?", token):
        return [
            ex
            for ex in exercises
            if ex.id.startswith(token) and (token.endswith("_") or len(ex.id) == len(token) or ex.id[len(token)] == "_")
        ]
    return []
