"""A batch record's one typed shape: OUT/students/<name>/report.json (store.py) as the code reads it.

A record is a report document (grader/reports/report.py's to_dict, schema 1) plus the "student"
block a batch run adds (run.py). `Record.from_json(doc)` checks the parts the code reads and
raises RecordError when one is not what a run writes; `to_json()` gives back exactly the dict it
was made from: the same keys, in the same order, with the same values (an int stays an int), so a
record read and written again is byte for byte the file it was. Keys this module does not type
(the report's `notes`, `manifest`, `checks`' fields, a key a later version adds) ride along in
`extra`, untouched.

    Student      the "student" block: who, from which entry, its status and why
    ExerciseRow  one row of "exercises": an exercise's score out of its points
    Record       the whole record: its student (None: a single submission's report), its score,
                 its exercise rows, its checks (the checking layer's CheckResult.as_dict rows)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Literal, get_args

Status = Literal["graded", "refused", "error"]  # a submission's status in its record (store.py)
STATUSES: tuple[str, ...] = get_args(Status)
FINAL: tuple[str, ...] = ("graded", "refused")  # statuses a rerun keeps; an "error" is graded again
NOT_GRADED: tuple[str, ...] = ("refused", "error")  # a record without a grade: every exercise at 0


class RecordError(ValueError):
    """A record, or a part of it, that is not what a batch run writes."""


_NUMBER = (int, float)


def _check(where: str, key: str, value: Any, kinds: tuple) -> None:
    if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
        names = "/".join(k.__name__ for k in kinds)
        raise RecordError(f"{where}: {key!r} is {type(value).__name__}, not {names}")


@dataclass
class _Part:
    """A JSON object some of whose keys are typed fields. `keys`: the object's keys as they were
    (a field absent from the object is None and not in `keys`); `extra`: the untyped ones."""

    keys: tuple[str, ...] = field(default=(), repr=False, compare=False, kw_only=True)
    extra: dict = field(default_factory=dict, repr=False, kw_only=True)

    KINDS: ClassVar[dict[str, tuple]] = {}  # {typed key: the JSON types it may hold}, per subclass
    WHERE: ClassVar[str] = ""
    REQUIRED: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def _typed(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls) if f.name not in ("keys", "extra"))

    @classmethod
    def _parse(cls, doc: Any, **parsed) -> dict:
        """The constructor's arguments for `doc`, each typed key checked; `parsed`: keys the
        subclass has already turned into their own types."""
        if not isinstance(doc, dict):
            raise RecordError(f"{cls.WHERE}: {type(doc).__name__}, not an object")
        for key in cls.REQUIRED:
            if key not in doc:
                raise RecordError(f"{cls.WHERE}: no {key!r}")
        typed = cls._typed()
        args: dict = {"keys": tuple(doc), "extra": {k: v for k, v in doc.items() if k not in typed}}
        for key in typed:
            if key in parsed:
                args[key] = parsed[key]
            elif key in doc:
                if doc[key] is not None or type(None) not in cls.KINDS[key]:
                    _check(cls.WHERE, key, doc[key], cls.KINDS[key])
                args[key] = doc[key]
        return args

    def _value(self, key: str) -> Any:
        return getattr(self, key)

    def to_json(self) -> dict:
        """The JSON object this part was read from (or made as: its keys in `keys`' order)."""
        typed = self._typed()
        return {k: self._value(k) if k in typed else self.extra[k] for k in self.keys}


@dataclass
class Student(_Part):
    """The "student" block run.py writes: {"name", "source", "fingerprint", "status", "reason",
    "course", "mtime"}, and "platform" (a platform's download), "traceback" (the grader's own
    failure) where they apply. Records made by hand (tests, older versions) may hold fewer keys:
    a key not there is None."""

    status: Status
    name: str | None = None
    source: str | None = None
    fingerprint: str | None = None
    reason: str | None = None
    course: str | None = None  # the course fingerprint that graded it (store.course_fingerprint)
    mtime: str | None = None  # the entry's newest file time, ISO ("" when none): --submitted-at mtime
    platform: dict | None = None  # who the student is on the platform (platforms.py)
    traceback: str | None = None

    WHERE = "student"
    REQUIRED = ("status",)
    KINDS = {
        "status": (str,),
        "name": (str,),
        "source": (str,),
        "fingerprint": (str,),
        "reason": (str,),
        "course": (str, type(None)),
        "mtime": (str, type(None)),
        "platform": (dict,),
        "traceback": (str,),
    }
    ORDER = ("name", "source", "fingerprint", "status", "reason", "course", "mtime", "platform", "traceback")

    @classmethod
    def from_json(cls, doc: Any) -> Student:
        args = cls._parse(doc)
        if args["status"] not in STATUSES:
            raise RecordError(f"student: status {args['status']!r} is not one of {', '.join(STATUSES)}")
        return cls(**args)

    @classmethod
    def new(cls, **values) -> Student:
        """The block of a record being written, its keys in run.py's order; checked as a read one is."""
        return cls.from_json(cls(keys=tuple(k for k in cls.ORDER if k in values), **values).to_json())

    @property
    def final(self) -> bool:
        """A rerun keeps this record (unless the submission changed)."""
        return self.status in FINAL

    @property
    def graded(self) -> bool:
        return self.status == "graded"


@dataclass
class ExerciseRow(_Part):
    """One row of "exercises": {"id", "section", "title", "score", "max_score"}, and "attempted"
    (False: the stub was left as given, grader/authoring/attempts.py) where it was measured."""

    id: str = ""
    section: str | None = None
    title: str | None = None
    score: int | float | None = None
    max_score: int | float | None = None
    attempted: bool | None = None

    WHERE = "exercises"
    REQUIRED = ("id",)
    KINDS = {
        "id": (str,),
        "section": (str,),
        "title": (str,),
        "score": _NUMBER,
        "max_score": _NUMBER,
        "attempted": (bool,),
    }

    @classmethod
    def from_json(cls, doc: Any) -> ExerciseRow:
        return cls(**cls._parse(doc))

    @property
    def tried(self) -> bool:
        """Counts as attempted (no flag: attempted, as before the flag)."""
        return self.attempted is not False

    @property
    def got(self) -> float:
        """Its score as a float (0 when the row has none)."""
        return float(self.score or 0)

    @property
    def out_of(self) -> float:
        """Its points as a float (0 when the row has none)."""
        return float(self.max_score or 0)


@dataclass
class Record(_Part):
    """A whole record. `checks` stays a list of the checking layer's rows (CheckResult.as_dict):
    that shape is the report's, which the feedback page and the exports read as it is."""

    student: Student | None = None
    score: int | float | None = None
    max_score: int | float | None = None
    lang: str | None = None
    exercises: list[ExerciseRow] | None = None
    checks: list[dict] | None = None

    WHERE = "record"
    KINDS = {"score": _NUMBER, "max_score": _NUMBER, "lang": (str,)}

    @classmethod
    def from_json(cls, doc: Any) -> Record:
        if not isinstance(doc, dict):
            raise RecordError(f"record: {type(doc).__name__}, not an object")
        parsed: dict = {}
        if "student" in doc:
            parsed["student"] = Student.from_json(doc["student"])
        if "exercises" in doc:
            if not isinstance(doc["exercises"], list):
                raise RecordError("record: 'exercises' is not a list")
            parsed["exercises"] = [ExerciseRow.from_json(e) for e in doc["exercises"]]
        if "checks" in doc:
            if not isinstance(doc["checks"], list) or not all(isinstance(c, dict) for c in doc["checks"]):
                raise RecordError("record: 'checks' is not a list of objects")
            parsed["checks"] = doc["checks"]
        return cls(**cls._parse(doc, **parsed))

    def _value(self, key: str) -> Any:
        if key == "student":
            return self.student.to_json()
        if key == "exercises":
            return [e.to_json() for e in self.exercises]
        return getattr(self, key)

    @property
    def status(self) -> Status | None:
        """The student block's status; None for a report without one."""
        return self.student.status if self.student is not None else None

    @property
    def rows(self) -> list[ExerciseRow]:
        return self.exercises or []


def student_of(doc: dict) -> Student | None:
    """The typed student block of the record `doc`: None when it has none (a single submission's
    report) or its block is not one a run writes (a damaged file: read as no block, never stopping
    the class's other files)."""
    block = doc.get("student") if isinstance(doc, dict) else None
    if block is None:
        return None
    try:
        return Student.from_json(block)
    except RecordError:
        return None


def exercise_rows(doc: dict) -> list[ExerciseRow]:
    """The typed "exercises" rows of a report (none when it has none); RecordError when one is
    not a row a report writes."""
    rows = doc.get("exercises", [])
    if not isinstance(rows, list):
        raise RecordError("record: 'exercises' is not a list")
    return [ExerciseRow.from_json(e) for e in rows]


def status_of(doc: dict) -> Status | None:
    """The record's status; None when it has no (readable) student block."""
    st = student_of(doc)
    return st.status if st is not None else None
