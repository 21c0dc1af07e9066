"""Which exercises a student attempted: the file is there and its code is not the stub's.

The class summary keeps "not attempted" apart from "attempted and wrong": a check that fails on
an untouched stub says nothing about what the class misunderstood. Code is compared as Python's
syntax tree, so blank lines and comments do not count as an attempt; the stub is compared in
every language the course writes it in (a student who got the Chinese stubs is not "attempting"
by having Chinese docstrings). A file that does not parse is an attempt. The file is read as Python
reads it (its BOM and coding line honoured, grader/course/source_text.py): a stub whose answer is
hidden behind `# coding: utf-7` is an attempt, and one the grader cannot read is one too.
"""

from __future__ import annotations

import ast
import functools

LANGS = ("en", "zh")


def _tree(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


@functools.lru_cache(maxsize=256)
def _stub_trees(course_root: str, ex_file: str, versions: tuple) -> frozenset:
    from .stubs import stub_text
    from ..course.manifest import load

    from pathlib import Path

    course = load(Path(course_root), check_files=False)
    ex = next(e for e in course.exercises if e.file == ex_file)
    trees = set()
    for lang in LANGS:
        try:
            tree = _tree(stub_text(course, ex, lang))
        except Exception:  # a language without its catalog: that stub is not offered
            continue
        if tree is not None:
            trees.add(tree)
    return frozenset(trees)


def _versions(course, ex) -> tuple:
    paths = [course.solutions_dir / ex.file, course.exercises_dir / ex.file]
    out = []
    for p in paths:
        try:
            st = p.stat()
            out.append((st.st_size, st.st_mtime_ns))
        except OSError:
            out.append(None)
    return tuple(out)


def warm(course, exercises) -> None:
    """Make the stubs' trees now, in a process that forks the gradings (a batch slot), so that no
    grading pays for them again."""
    for ex in exercises:
        try:
            _stub_trees(str(course.root), ex.file, _versions(course, ex))
        except Exception:  # attempted() says what it can for this one
            pass


def attempted(course, submission, exercises) -> dict[str, bool]:
    """{exercise id: attempted} for `submission` (checking.submission.Submission). Never stops a
    grading: an exercise whose stub cannot be made is left out (the summary counts it attempted)."""
    try:
        return _attempted(course, submission, exercises)
    except Exception:
        return {}


def _attempted(course, submission, exercises) -> dict[str, bool]:
    out = {}
    for ex in exercises:
        found = submission.read(ex.file)  # the text Python runs (grader/course/source_text.py)
        if found is None:
            out[ex.id] = False
            continue
        tree = _tree(found.text) if found.text is not None else None
        out[ex.id] = tree is None or tree not in _stub_trees(str(course.root), ex.file, _versions(course, ex))
    return out


def mark(doc: dict, flags: dict[str, bool]) -> dict:
    """Write the flags into a report's exercises ("attempted": true/false)."""
    for e in doc.get("exercises", []):
        if e.get("id") in flags:
            e["attempted"] = flags[e["id"]]
    return doc
