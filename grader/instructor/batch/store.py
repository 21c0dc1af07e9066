"""The output folder of a batch run and how things are written into it.

    OUT/batch.json                      the run: kata version, course fingerprint, options, entries skipped,
                                        the term policy (late_rule, term, late: formats/late.py)
    OUT/roster.csv, submitted_at.csv, extensions.csv   the files given to --roster, --submitted-at FILE
                                        and --extensions, copied (a later `kata gradebook OUT` reads them)
    OUT/students/<name>/report.json     one record per submission (report.to_dict + "student")
    OUT/students/<name>/...             derived per-student files (grader/instructor/formats/)
    OUT/gradebook.csv, junit.xml, summary.md, ...   derived class files

Every file is written atomically (grader/course/atomic.py): to a hidden `.<name>.<random>.part` in the
same folder, flushed to disk, then renamed over the target. A run killed mid-write leaves at most
such a `.part` file, which the next run (or `kata gradebook`) removes; a full disk leaves none. A record's "student" block:

    {"name": "alice", "source": "alice.zip", "fingerprint": "<sha256 of the submission>",
     "status": "graded" | "refused" | "error", "reason": "", "course": "<course fingerprint>"}

refused: the submission cannot be graded (corrupt or unsafe zip, no exercises folder, ...): final,
like a grade. error: the grading process died or ran out of time: graded again by the next run.
The record's typed shape, and every status a run writes, is records.py's.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from pathlib import Path

from ...course import atomic
from .records import FINAL as FINAL, student_of  # statuses a rerun keeps (records.py: a record's typed shape)

META = "batch.json"
LOCK = ".kata-lock"
STUDENTS = "students"
RECORD = "report.json"
PART = ".part"


def atomic_write(path: Path, data: str | bytes, durable: bool = False) -> Path:
    """Write `data` to `path` so that a reader (or a rerun after SIGKILL) sees all of it or none,
    through a `.part` file that `remove_partials` finds; `durable`: the rename is flushed to the
    disk too (records: they survive a power cut). A full disk raises atomic.WriteError. Text is
    written as UTF-8, a name that is not (an unpaired surrogate) as its backslash escape: in JSON
    that escape reads back as the same name, so a rerun still knows the entry."""
    return atomic.write_bytes(
        path, data.encode("utf-8", "backslashreplace") if isinstance(data, str) else data, suffix=PART, durable=durable
    )


def write_json(path: Path, doc, durable: bool = False) -> Path:
    return atomic_write(path, json.dumps(doc, indent=2, ensure_ascii=False) + "\n", durable)


def remove_partials(out: Path) -> list[Path]:
    """Delete the `.part` files a killed run left behind; return them."""
    gone = []
    if not out.is_dir():
        return gone
    for p in out.rglob(f".*{PART}"):
        if p.is_file():
            p.unlink(missing_ok=True)
            gone.append(p)
    return gone


def record_path(out: Path, name: str) -> Path:
    return out / STUDENTS / name / RECORD


def student_dir(out: Path, name: str) -> Path:
    return out / STUDENTS / name


def load_records(out: Path) -> dict[str, dict]:
    """Every readable record in OUT, by student name. A record that cannot be read, or whose
    student block is not one a run writes (a status other than graded, refused or error, a field
    of the wrong type: a file edited by hand), is left out: it is graded again, and no class file
    counts it under a status the grader never gave."""
    found = {}
    base = out / STUDENTS
    if not base.is_dir():
        return found
    for d in sorted(base.iterdir()):
        doc = read_record(out, d.name)
        if doc is not None and student_of(doc) is not None:
            found[d.name] = doc
    return found


def read_record(out: Path, name: str) -> dict | None:
    """The record of student `name` in OUT, or None when there is none or it cannot be read."""
    try:
        doc = json.loads(record_path(out, name).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def course_fingerprint(course) -> str:
    """What the grades depend on: the kata version, the manifest, the checks and the fixtures."""
    from ...course.identity import fingerprint

    return fingerprint(course)


def read_meta(out: Path) -> dict | None:
    try:
        doc = json.loads((out / META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


# Keys of batch.json whose change makes earlier records incomparable with new ones.
ROSTER = "roster.csv"  # the roster given to --roster, copied
TIMES = "submitted_at.csv"  # the timestamp file given to --submitted-at, copied
EXTENSIONS = "extensions.csv"  # the students' own due dates given to --extensions, copied
COMPARABLE = ("assignment", "kata_version", "course", "exercises", "public_only", "time_limit")


def meta_differences(old: dict, new: dict) -> list[str]:
    """The settings that differ between an existing run's batch.json and this run's."""
    return [f"{k}: {old.get(k)!r} -> {new.get(k)!r}" for k in COMPARABLE if old.get(k) != new.get(k)]


class Busy(Exception):
    """Another process is writing into the same output folder."""


@contextlib.contextmanager
def locked(out: Path, shared: bool = False):
    """Hold OUT's lock for the duration: two runs never write into one folder at once. The lock
    is the kernel's (flock), so a run killed with SIGKILL releases it. `shared`: held beside other
    shared holders (the shards of one class, shards.py), never beside a whole run."""
    try:
        out.mkdir(parents=True, exist_ok=True)
        fd = os.open(out / LOCK, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:  # a read-only or full file system: said plainly, like any other write
        raise atomic.WriteError(out / LOCK, e) from e
    try:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(str(out)) from None
        yield
    finally:
        os.close(fd)
