"""The exercise files of every submission in a class folder, read exactly as grading reads them.

The entries are found and named as `kata grade DIR --out OUT` finds and names them
(grader/instructor/batch/discover.py; the names an OUT's records already have are kept, so a
student is the same name in the gradebook and here). Each is opened with open_submission: zips
are checked before anything is extracted, no symbolic link is followed (an entry that is one is
refused), notebooks become the .py that is graded, only the course's exercise files are kept.
The files are read as text and nothing else: never imported, never run (run.py puts each in its
canonical form and judges its size then, comments gone). The text is the one Python would run,
decoded once as grading decodes it (grader/course/source_text.py, through Submission.source): a copy
hidden behind a BOM or a `# coding: utf-7` line is compared as the code it is.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from pathlib import Path

from ...checking.submission import SubmissionError, open_submission
from ...course.safe_text import one_line
from ..batch.discover import assign_names, discover, submission_path


@dataclass
class ClassCode:
    code: dict[str, dict[str, str]] = field(default_factory=dict)  # student -> exercise file -> source
    refused: list[tuple[str, str]] = field(default_factory=list)  # (student, why) submissions not read
    notes: list[str] = field(default_factory=list)  # entries renamed (a name taken twice)


def read_class(
    course, class_dir: Path, files: list[str], known: dict[str, str] | None = None, out_dir: Path | None = None
) -> ClassCode:
    """`files`: the exercise files to read (e.g. "ch01/s1_11_softmax.py"); `known`: entry -> name
    of the records in an OUT (kept, as a grading run keeps them); `out_dir`: OUT, never a student
    even when it lies inside the class folder."""
    out = ClassCode()
    entries, _ = discover(class_dir)
    if out_dir is not None:
        entries = [e for e in entries if e.path.resolve() != Path(out_dir).resolve()]
    renamed = assign_names(entries, known or {}, set((known or {}).values()))
    out.notes += [one_line(n) for n in renamed]
    ids = [ex.id for ex in course.exercises]
    for e in entries:
        path = e.path
        try:
            with contextlib.ExitStack() as stack:
                path = stack.enter_context(submission_path(e, course.chapter, ids))
                sub = stack.enter_context(open_submission(path, course.chapter, course.exercises))
                out.code[e.name] = _read(sub, files)
        except SubmissionError as err:
            out.refused.append((e.name, one_line(_shown(str(err), e, Path(path)))))
    return out


def _shown(reason: str, entry, path: Path) -> str:
    """The reason with the entry named as the class folder has it, never by a host path."""
    if path != entry.path and path.is_relative_to(entry.path):
        reason = reason.replace(str(path), f"{entry.source}/{path.relative_to(entry.path).as_posix()}")
    reason = reason.replace(str(entry.path), entry.source)
    return reason.removeprefix(f"{entry.source}: ")  # the report names the student already


def _read(sub, files: list[str]) -> dict[str, str]:
    """Each exercise file as written (its size is judged once its comments are gone: canonical.py)."""
    code = {}
    for rel in files:
        found = sub.read(rel)
        if found is None:
            continue  # not submitted (or an unreadable notebook): nothing to compare
        if found.text is None and found.kind in ("too_large", "too_deep"):  # past what the grader proves:
            # compared as written (canonical.py names a file too long to compare; one nested too
            # deeply for Python's parser is still the copy it was)
            code[rel] = sub.path(rel).read_bytes().decode("utf-8", "replace")
            continue
        if found.text is None:
            continue  # bytes Python cannot decode: nothing it would run to compare
        code[rel] = found.text
    return code
