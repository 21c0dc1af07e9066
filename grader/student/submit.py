"""`kata submit`: the student's exercise files in one zip, with a manifest `kata grade` verifies.

The zip holds `kata-manifest.json` and `exercises/<chapter>/<id>.py` and `<id>.ipynb` for every
exercise that has them, with their file times (which decide between a .py and its notebook,
see grader/checking/submission.py). The manifest (grader/checking/submit_manifest.py) records
each file's sha256, the kata version, the time, and each exercise's public-check status, from
the same sandboxed run as `kata check` on the same files (or its cached verdict for the same bytes:
the statuses are the student's machine's word, which `kata grade` never takes for a score: it grades
the files itself). It is written to a temporary file and
moved into place, and never over anything that is not a zip or inside exercises/.

What is packed is the student's own folder, never the course the kata was installed from: the
`exercises/` of the folder the command runs in, or of the nearest folder above it that has one
(`student_folder`), whatever course.toml the exercise list comes from (a lab machine's kata is
installed elsewhere; its exercises/ holds the untouched stubs). No such folder, or one whose every
exercise file is still its stub (the student worked somewhere else), stops the command with the
reason and writes nothing; `anyway=True` hands in the stubs all the same.
"""

from __future__ import annotations

import json
import zipfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from .. import __version__
from ..checking import submit_manifest as kata_manifest
from ..checking.submission import open_submission
from ..course import atomic
from ..course.messages import t


class SubmitError(Exception):
    """The zip cannot be written; the message says why."""


@dataclass
class Submitted:
    path: Path
    manifest: dict
    notes: list[str] = field(default_factory=list)


def student_folder(start: Path) -> Path | None:
    """The folder whose exercises/ `kata submit` packs: `start` when it holds exercises/, else the
    nearest folder above it that does (a student in exercises/ch01/ submits the folder above
    exercises/); None when there is none."""
    here = Path(start).resolve()
    for d in (here, *here.parents):
        if (d / "exercises").is_dir():
            return d
    return None


def files_of(course, folder: Path | None = None) -> list[tuple[Path, str]]:
    """(file, name in the zip) of every exercise's .py and notebook that exist in `folder`'s
    exercises/ (default: the course's own)."""
    folder = Path(folder) if folder is not None else course.root
    found = []
    for ex in course.exercises:
        py = folder / "exercises" / ex.file
        for p in (py, py.with_suffix(".ipynb")):
            if p.is_file():
                found.append((p, p.relative_to(folder).as_posix()))
    return found


def only_stubs(course, folder: Path, files: list[tuple[Path, str]]) -> bool:
    """True when no exercise file in `folder`'s exercises/ is the student's work: each .py is its
    exercise's untouched stub (as the attempt flags compare it: the syntax tree, in every language
    the course writes stubs in) and there is no notebook. When in doubt (a stub that cannot be
    made), False."""
    from ..checking.submission import Submission
    from ..authoring.attempts import attempted

    if not files or any(name.endswith(".ipynb") for _, name in files):
        return False
    ex_dir = folder / "exercises"
    present = [ex for ex in course.exercises if (ex_dir / ex.file).is_file()]
    flags = attempted(course, Submission(origin=ex_dir, root=ex_dir), present)
    return all(flags.get(ex.id) is False for ex in present)


def _check_out(exercises_dir: Path, out: Path) -> None:
    target = out.resolve()
    if target == exercises_dir.resolve() or exercises_dir.resolve() in target.parents:
        raise SubmitError(t("submit_inside_exercises", out=str(out)))
    if target.is_dir():
        raise SubmitError(t("submit_out_is_dir", out=str(out)))
    if target.exists() and not zipfile.is_zipfile(target):
        raise SubmitError(t("submit_not_zip", out=str(out)))


def statuses(course, run_checks: bool, folder: Path | None = None) -> tuple[dict, list[str], str]:
    """Per exercise: public-check status, counts and the file graded; the grading notes; the sandbox.
    `folder`: whose exercises/ (default: the course's own). A verdict that `kata check` (or `kata
    list`, `kata watch`) already gave for the same bytes of the exercise and of every exercise file
    it imported, under the same checks, is taken from the progress cache; only the others are checked."""
    from . import progress

    folder = Path(folder).resolve() if folder is not None else course.root
    ex_dir = folder / "exercises"
    prefix = Path("exercises")
    out: dict[str, dict] = {}
    if not run_checks:
        for ex in course.exercises:
            out[ex.id] = {"status": "not run", "passed": 0, "total": 0, "graded": None}
        return out, [], ""
    with open_submission(ex_dir, course.chapter, course.exercises) as sub:
        digests = {
            ex.id: progress.sha(sub.path(ex.file).read_bytes())
            for ex in course.exercises
            if sub.path(ex.file).is_file()
        }
        known = _known_verdicts(course, sub, digests)
        pending = [ex for ex in course.exercises if ex.id not in known]
        rows_of: dict[str, list] = {}
        notes, kinds = list(sub.notes), {v["sandbox"] for v in known.values()}
        if pending:
            own = folder == course.root.resolve()  # the course's own exercises/, whose verdicts are cached
            from .warm import client

            if own and client.ping(course):  # `kata check`'s warm grader is running: it grades them
                result, _ = progress.grade(course, pending)
            else:
                from ..checking import lanes

                result = lanes.run(course, sub, pending, public_only=True, skip_missing_assets=True)
                if own:
                    progress.scale(course, result)
                    progress.record(course, result, {ex.id: digests[ex.id] for ex in pending if ex.id in digests})
            for r in result.results:
                rows_of.setdefault(r.exercise, []).append(r)
            notes = list(dict.fromkeys([*notes, *result.notes]))
            kinds.add(result.sandbox)
        for ex in course.exercises:
            source = sub.graded_from.get(ex.file)
            if source is None and ex.file in sub.problems:
                source = Path(ex.file).with_suffix(".ipynb").as_posix()
            if source is None and sub.path(ex.file).is_file():
                source = ex.file
            if ex.id in known:
                passed, total = known[ex.id]["passed"], known[ex.id]["total"]
            else:
                rows = rows_of.get(ex.id, [])
                passed, total = sum(r.status == "passed" for r in rows), len(rows)
            status = "missing" if source is None else "passing" if total and passed == total else "failing"
            out[ex.id] = {
                "status": status,
                "passed": passed,
                "total": total,
                "graded": (prefix / source).as_posix() if source else None,
            }
        return out, notes, "+".join(sorted(k for k in kinds if k))


def _known_verdicts(course, sub, digests: dict[str, str]) -> dict[str, dict]:
    """The progress cache's verdicts (grader/student/progress.py) that hold for `sub` as it is: the
    same bytes graded, the same checks and kata, the same bytes of every exercise file the verdict
    depended on, every public check counted, and the sandbox it ran in."""
    from . import progress

    cache = progress.load_cache(course)
    by_file = {ex.file: ex for ex in course.exercises}
    found = {}
    for ex in course.exercises:
        entry = cache.get(ex.id)
        if ex.id not in digests or not isinstance(entry, dict) or not isinstance(entry.get("sandbox"), str):
            continue
        if progress.valid_entry(entry, digests[ex.id], progress.fingerprint(course, ex)) is None:
            continue
        deps = entry.get("deps")
        if not isinstance(deps, dict) or not all(
            f in by_file and (progress.sha(sub.path(f).read_bytes()) if sub.path(f).is_file() else "") == d
            for f, d in deps.items()
        ):
            continue
        if int(entry.get("total", -1)) != progress.public_total(ex):
            continue
        found[ex.id] = {"passed": int(entry["passed"]), "total": int(entry["total"]), "sandbox": entry["sandbox"]}
    return found


def submit(
    course, out: Path, run_checks: bool = True, folder: Path | None = None, anyway: bool = False, on_start=None
) -> Submitted:
    """Zip `folder`'s exercises/ (default: the course's own) into `out`. `on_start(exercises folder,
    number of files)` is called once the files are known to be the student's, before the checks run."""
    folder = Path(folder).resolve() if folder is not None else course.root
    ex_dir = folder / "exercises"
    out = Path(out)
    _check_out(ex_dir, out)
    files = files_of(course, folder)
    if not files:
        raise SubmitError(t("submit_nothing", folder=str(ex_dir)))
    if not anyway and only_stubs(course, folder, files):
        raise SubmitError(t("submit_only_stubs", folder=str(ex_dir), files=len(files)))
    if on_start is not None:
        on_start(ex_dir, len(files))
    exercises, notes, sandbox = statuses(course, run_checks, folder)
    # Hash what goes into the zip: read each file once and write those very bytes.
    contents = [(p, name, p.read_bytes(), _zip_time(p.stat().st_mtime)) for p, name in files]
    times = {name: when for _, name, _, when in contents}
    for i, (p, name, data, when) in enumerate(contents):
        # Zip times have 2-second steps: a notebook graded here as the newer form stays newer.
        py = name.removesuffix(".ipynb") + ".py"
        if name.endswith(".ipynb") and py in times and any(e["graded"] == name for e in exercises.values()):
            if when <= times[py]:
                contents[i] = (p, name, data, _zip_time(_timestamp(times[py]) + 2))
    doc = {
        "kind": kata_manifest.KIND,
        "schema": kata_manifest.SCHEMA,
        "kata_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "course": course.title,
        "chapter": course.chapter,
        "sandbox": sandbox,
        "files": {name: kata_manifest.file_entry(data) for _, name, data, _ in contents},
        "exercises": exercises,
    }
    with atomic.replacing(out, mode=0o644) as tmp, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(kata_manifest.NAME, json.dumps(doc, indent=2, ensure_ascii=False) + "\n")
        for _, name, data, when in contents:
            info = zipfile.ZipInfo(name, date_time=when)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return Submitted(out, doc, notes)


def _zip_time(mtime: float) -> tuple:
    """A zip entry's time: local, in 2-second steps, 1980 at the earliest."""
    lt = datetime.fromtimestamp(mtime)
    return max((lt.year, lt.month, lt.day, lt.hour, lt.minute, lt.second - lt.second % 2), (1980, 1, 1, 0, 0, 0))


def _timestamp(when: tuple) -> float:
    return datetime(*when).timestamp()
