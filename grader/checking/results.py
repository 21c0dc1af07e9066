"""What grading one submission gives: one `CheckResult` per check and their `GradeResult`.

Plain data, importable without torch or pytest: the warm grader (grader/student/warm/) sends a
result to the student's process as a dict and builds it back here."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Literal

Status = Literal["passed", "failed", "skipped"]
Visibility = Literal["public", "hidden"]
# what failed (docs/reference/json-report.md): a wrong value, the student's code raised (or is
# missing), the worker hung or died, a forbidden API, the grading budget ran out; "" where it passed
Kind = Literal["", "check", "student", "fault", "forbidden", "budget", "skipped"]


@dataclass
class CheckResult:
    exercise: str
    section: str
    name: str
    status: Status
    score: float
    max_score: float
    message: str
    listing: list[str]
    visibility: Visibility
    duration_s: float | None  # None for a hidden check: its time could tell its inputs (SECURITY.md)
    kind: Kind = ""
    title: str = ""  # what the check checks, in the report's language (`name` is the function's)
    mistake: str = ""  # a recognised mistake (compare.Mistake's English name): the class summary counts them
    mistake_zh: str = ""  # its Chinese name, where the check gave one: the class summary shows it to a Chinese reader
    graded_reads: bool = False  # a public check run as `kata check` runs it left out reads the grade makes

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class GradeResult:
    submission: str
    sandbox: str
    results: list[CheckResult]
    notes: list[str] = field(default_factory=list)
    worker_startup_s: float = 0.0
    duration_s: float = 0.0
    manifest: dict | None = None  # the `kata submit` manifest's verification; None: none in the submission
    imports: dict = field(default_factory=dict)  # exercise -> {other exercise file it imported: sha256 graded}

    @property
    def score(self) -> float:
        return round(sum(r.score for r in self.results), 6)

    @property
    def max_score(self) -> float:
        return round(sum(r.max_score for r in self.results), 6)

    def as_dict(self) -> dict:
        return {
            "submission": self.submission,
            "sandbox": self.sandbox,
            "results": [r.as_dict() for r in self.results],
            "notes": list(self.notes),
            "worker_startup_s": self.worker_startup_s,
            "duration_s": self.duration_s,
            "manifest": self.manifest,
            "imports": self.imports,
        }

    @classmethod
    def from_dict(cls, doc: dict) -> "GradeResult":
        """The result `as_dict` gave; unknown keys are ignored (a newer server's)."""
        known = {f.name for f in fields(CheckResult)}
        rows = [CheckResult(**{k: v for k, v in r.items() if k in known}) for r in doc["results"]]
        return cls(
            doc["submission"],
            doc["sandbox"],
            rows,
            list(doc.get("notes", [])),
            float(doc.get("worker_startup_s", 0.0)),
            float(doc.get("duration_s", 0.0)),
            doc.get("manifest"),
            dict(doc.get("imports") or {}),
        )
