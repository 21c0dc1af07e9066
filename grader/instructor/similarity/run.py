"""Compare every pair of students, exercise by exercise, and write the results into OUT.

For each exercise: the stub (the course's exercises/<file>, what every student was given) is
the boilerplate; each student's file is put in its canonical form (canonical.py: comments,
docstrings and statements that do nothing gone, keyword arguments sorted; the stub too) and
fingerprinted once (fingerprint.own), then every pair of students who both submitted it is
compared. A file is text here: a syntax error, an unfinished exercise or an untouched stub is
compared like any other (an untouched stub has no code of its own, so it matches nothing). A
file that cannot be compared (too long, nested too deeply) is listed with the reason.
"""
from __future__ import annotations

import itertools
from pathlib import Path

from ...course.safe_text import one_line
from . import DEFAULT_THRESHOLD, MIN_TOKENS, canonical, fingerprint, outputs
from .collect import read_class


def stub_of(course, ex) -> str:
    """What the student was given: the course's exercises/<file> ("" when the course has none)."""
    try:
        return (course.exercises_dir / ex.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def compare_class(course, class_dir: Path, exercises, threshold: float = DEFAULT_THRESHOLD,
                  known: dict[str, str] | None = None, out: Path | None = None) -> outputs.Result:
    """Every pair of students on each of `exercises`; `known` and `out` as collect.read_class takes them."""
    files = [ex.file for ex in exercises]
    got = read_class(course, Path(class_dir), files, known, out)
    result = outputs.Result(threshold, fingerprint.K, [(ex.id, ex.file) for ex in exercises], len(got.code),
                            refused=got.refused, notes=got.notes)
    for ex in exercises:
        stub = stub_of(course, ex)
        if not stub:
            result.notes.append(f"{ex.id}: no stub ({ex.file}) in the course's exercises/, so nothing counts as given")
        name = Path(ex.file).name
        given = fingerprint.boilerplate(_as_compared(stub), name)
        fps = {}
        for student, code in sorted(got.code.items()):
            if ex.file not in code:
                continue
            try:
                fps[student] = fingerprint.own(canonical.canonical(code[ex.file]), given, name)
            except canonical.NotCompared as e:
                result.skipped.append((ex.id, student, one_line(str(e))))
        result.submitted[ex.id] = sum(ex.file in code for code in got.code.values())
        for a, b in itertools.combinations(sorted(fps), 2):
            m = fingerprint.similarity(fps[a], fps[b])
            flagged = max(m.a_to_b, m.b_to_a) >= threshold and m.tokens >= MIN_TOKENS
            pair = outputs.Pair(ex.id, a, b, m.a_to_b, m.b_to_a, m.tokens, fingerprint.own_tokens(fps[a]),
                                fingerprint.own_tokens(fps[b]), flagged)
            if flagged:  # what the page shows
                pair.slices, pair.code_a, pair.code_b = m.slices, fps[a].raw_code, fps[b].raw_code
            result.pairs.append(pair)
    return result


def _as_compared(stub: str) -> str:
    """The stub in the students' canonical form (as written in the unlikely case it has none)."""
    try:
        return canonical.canonical(stub)
    except canonical.NotCompared:
        return stub


def write(result: outputs.Result, out: Path) -> list[Path]:
    from ..batch import store

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return [store.atomic_write(out / outputs.CSV, outputs.csv_text(result)),
            store.atomic_write(out / outputs.MD, outputs.markdown(result)),
            store.atomic_write(out / outputs.HTML, outputs.html_page(result))]
