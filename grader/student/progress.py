"""Where a student stands on each exercise, and a cache of the public checks' verdicts.

An exercise's file is *missing*, *empty*, *not started* (identical to its stub, or every
`raise NotImplementedError` of the stub is still in it: no part is written yet), or else it
must be checked: *failing* or *passing* its public checks. The first three are seen without
running anything. Verdicts are cached in `.kata/progress.json`, keyed by the file's sha256, a
fingerprint of the exercise's checks, and the sha256 of every other exercise file it imported in
that run (found statically and as its workers reported them: s1_23_encoder_block's verdict is
stale once s1_23_feed_forward.py changes), so `kata list` runs only the exercises whose code
changed since their last check (by `kata check`, `kata watch` or `kata list`).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .. import __version__
from ..authoring.stubs import stub_variants
from ..checking.notebook import NotebookError, read_code
from ..checking.submission import SubmissionError, open_submission
from ..course import bundle_assignment
from ..course.manifest import Course, Exercise
from .state import StateFile, kata_dir

if TYPE_CHECKING:  # the runner imports torch and pytest: only load them to run checks
    from ..checking.results import GradeResult

MISSING, EMPTY, NOT_STARTED, FAILING, PASSING, UNKNOWN = (
    "missing",
    "empty",
    "not_started",
    "failing",
    "passing",
    "unknown",
)
CACHE_SCHEMA = 1


@dataclass
class Standing:
    exercise: Exercise
    status: str
    passed: int = 0  # public checks passed / run; total is known without running
    total: int = 0
    score: float = 0.0  # points of the public checks passed
    sha: str = ""
    from_cache: bool = False
    factor: float = 1.0  # what its points count for (an assignment's bundle: the assignment's scale, 0 if not in it)
    in_assignment: bool = True  # False: in an assignment's bundle only because its exercises use it

    @property
    def solved(self) -> bool:
        return self.status == PASSING


def student_file(course: Course, ex: Exercise) -> Path:
    return course.exercises_dir / ex.file


def notebook_file(course: Course, ex: Exercise) -> Path:
    return (course.exercises_dir / ex.file).with_suffix(".ipynb")


def graded_bytes(course: Course, ex: Exercise) -> bytes | None:
    """What grading reads for `ex` (None: nothing): its .py, or the code of its notebook when the
    notebook is alone or saved after a .py whose code differs: the rule grading follows
    (grader/submission.py), so a student who works only in notebooks is seen working."""
    py, nb = student_file(course, ex), notebook_file(course, ex)
    try:  # a FIFO, a socket or a device is not read (a FIFO would block here): grading skips it too
        data = py.read_bytes() if py.is_file() else None
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        data = None
    if not nb.is_file():
        return data
    try:
        code = read_code(nb, shown_path(course, ex).replace(".py", ".ipynb"))
    except (NotebookError, OSError):
        return data
    if data is None:
        return code.encode("utf-8")
    if data.decode("utf-8", errors="replace") != code and nb.stat().st_mtime > py.stat().st_mtime:
        return code.encode("utf-8")
    return data


def shown_path(course: Course, ex: Exercise) -> str:
    return f"exercises/{ex.file}"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def public_total(ex: Exercise) -> int:
    return sum(1 for c in ex.checks if not c.hidden)


def public_points(ex: Exercise) -> float:
    return sum(c.points for c in ex.checks if not c.hidden)


def hidden_points(ex: Exercise) -> float:
    """Points only the grade (kata grade, a submission) decides: never claimed before it. What the
    exercise is worth less its public checks: a bundle's check modules hold no hidden checks."""
    return ex.points - public_points(ex)


def static_status(course: Course, ex: Exercise) -> tuple[str | None, str]:
    """(status, sha of the file) for what is seen without running: missing, empty or not
    started; status None when the file must be checked."""
    data = graded_bytes(course, ex)
    if data is None:
        return MISSING, ""
    digest = sha(data)
    if not data.strip():
        return EMPTY, digest
    text = data.decode("utf-8", errors="replace")
    present = {line.strip() for line in text.splitlines()}
    for stub in stub_variants(course, ex):  # the stub in any language: a student may switch
        if text == stub:
            return NOT_STARTED, digest
        raises = {line.strip() for line in stub.splitlines() if line.strip().startswith("raise NotImplementedError(")}
        if raises and raises <= present:
            return NOT_STARTED, digest
    return None, digest


def fingerprint(course: Course, ex: Exercise) -> str:
    """Changes when the exercise's checks or the kata change: cached verdicts are then stale."""
    try:
        checks = course.check_file(ex).read_bytes()
    except OSError:
        checks = b""
    return sha(checks + __version__.encode())[:16]


def _cache(course: Course) -> StateFile:
    return StateFile.open(kata_dir(course.root) / "progress.json", CACHE_SCHEMA)


def load_cache(course: Course) -> dict:
    """The cached verdicts, by exercise id (empty when there are none or they cannot be read)."""
    return dict(_cache(course).data)


def valid_entry(entry, digest: str, fp: str) -> dict | None:
    """`entry` when it is a verdict for bytes with sha256 `digest` under checks `fp` (not its deps)."""
    return _cached(entry, digest, fp)


def _cached(entry, digest: str, fp: str, course: Course | None = None) -> dict | None:
    if not isinstance(entry, dict) or entry.get("sha") != digest or entry.get("checks") != fp:
        return None
    if course is not None and not _deps_unchanged(course, entry.get("deps")):
        return None
    if entry.get("status") not in (PASSING, FAILING):
        return None
    try:
        int(entry.get("passed", 0)), float(entry.get("score", 0))
    except (TypeError, ValueError):
        return None
    return entry


def _deps_unchanged(course: Course, deps) -> bool:
    """Every other exercise file the verdict depended on (what the exercise imported in its last
    run, statically and as its workers reported) still holds the bytes graded then."""
    if not isinstance(deps, dict):
        return False
    by_file = {ex.file: ex for ex in course.exercises}
    for file, digest in deps.items():
        ex = by_file.get(file)
        if ex is None:
            return False
        data = graded_bytes(course, ex)
        if (sha(data) if data is not None else "") != digest:
            return False
    return True


def grade(course: Course, exercises: list[Exercise], full: bool = False) -> tuple[GradeResult, dict[str, str]]:
    """Run the public checks of `exercises` on exercises/ in the sandbox and cache the verdicts.
    Returns the result and the sha of each file as it was graded (the private copy's). The
    course's warm grader does it when it can (grader/student/warm/), else this process.
    `full` (`kata check --full`): the public checks as the grade runs them, with the reads they
    make only when grading (the training size: seconds more), in this process."""
    from .warm import client

    warm = None if full else client.grade(course, exercises)  # the course's warm grader, started if needed
    if warm is not None:
        result, shas = warm
        scale(course, result)
        record(course, result, shas)
        return result, shas
    from ..checking import lanes

    with open_submission(course.exercises_dir, course.chapter, course.exercises) as sub:
        shas = {}
        for ex in exercises:
            p = sub.path(ex.file)
            if p.is_file():
                shas[ex.id] = sha(p.read_bytes())
        # --full: the reads at the training size are seconds a check, worth a lane per core whatever the count
        result = lanes.run(
            course,
            sub,
            exercises,
            public_only=True,
            grading=True if full else None,
            lanes=lanes.count() if full else None,
            skip_missing_assets=True,
        )
    scale(course, result)
    record(course, result, shas)
    return result, shas


def scale(course: Course, result: GradeResult) -> None:
    """In an assignment's bundle, every check's points as the assignment counts them (`kata grade
    -a ID` scales the same way): its exercises' scaled to its points, the others' to 0."""
    found = bundle_assignment.of(course)
    if found is None:
        return
    for r in result.results:
        factor = found.factor_of(r.exercise)
        r.score, r.max_score = round(r.score * factor, 6), round(r.max_score * factor, 6)


def record(course: Course, result: GradeResult, shas: dict[str, str]) -> None:
    """Remember the verdict of each graded exercise (best effort: a read-only folder is fine)."""
    cache = _cache(course)
    for ex_id, digest in shas.items():
        ex = course.get(ex_id)
        rows = [r for r in result.results if r.exercise == ex_id]
        if not rows:
            continue
        passed = sum(1 for r in rows if r.status == "passed")
        cache.data[ex_id] = {
            "sha": digest,
            "checks": fingerprint(course, ex),
            "deps": result.imports.get(ex_id, {}),
            "status": PASSING if passed == len(rows) else FAILING,
            "passed": passed,
            "total": len(rows),
            "score": round(sum(r.score for r in rows), 6),
            "at": int(time.time()),
            "sandbox": result.sandbox,
        }
    try:
        cache.save()
    except OSError:
        pass


def standing_from(ex: Exercise, result: GradeResult, digest: str) -> Standing:
    rows = [r for r in result.results if r.exercise == ex.id]
    passed = sum(1 for r in rows if r.status == "passed")
    return Standing(
        ex, PASSING if rows and passed == len(rows) else FAILING, passed, len(rows), sum(r.score for r in rows), digest
    )


def standings(course: Course, run: bool = True, on_run=None) -> list[Standing]:
    """Every exercise's standing, in course order. Exercises whose file changed since their
    last check are checked now (one sandbox for all of them) when `run`, else `unknown`.
    `on_run(exercises)` is called before checking, to tell the student why they wait."""
    cache = _cache(course)
    out: list[Standing] = []
    pending: list[Exercise] = []
    for ex in course.exercises:
        status, digest = static_status(course, ex)
        total = public_total(ex)
        if status is not None:
            out.append(Standing(ex, status, 0, total, 0.0, digest))
            continue
        entry = _cached(cache.data.get(ex.id), digest, fingerprint(course, ex), course)
        if entry is not None:
            out.append(
                Standing(
                    ex,
                    entry["status"],
                    int(entry.get("passed", 0)),
                    total,
                    float(entry.get("score", 0)),
                    digest,
                    from_cache=True,
                )
            )
        else:
            out.append(Standing(ex, UNKNOWN, 0, total, 0.0, digest))
            pending.append(ex)
    if run and pending:
        if on_run:
            on_run(pending)
        try:
            result, shas = grade(course, pending)
        except SubmissionError:
            return _in_assignment(course, out)
        for i, s in enumerate(out):
            if s.status == UNKNOWN and s.exercise.id in shas:
                out[i] = standing_from(s.exercise, result, shas[s.exercise.id])
    return _in_assignment(course, out)


def _in_assignment(course: Course, found: list[Standing]) -> list[Standing]:
    """`found`, each marked with what its points count for in an assignment's bundle."""
    bundle = bundle_assignment.of(course)
    if bundle is not None:
        for s in found:
            s.factor, s.in_assignment = bundle.factor_of(s.exercise.id), s.exercise.id in bundle.graded
    return found


def next_unsolved(found: list[Standing], after: str | None = None) -> Standing | None:
    """The first exercise not passing, in course order, starting after `after` (wrapping)."""
    ids = [s.exercise.id for s in found]
    start = ids.index(after) + 1 if after in ids else 0
    for s in found[start:] + found[:start]:
        if not s.solved and s.exercise.id != after:
            return s
    return None
