"""Compare every pair of students, exercise by exercise, and write the results into OUT.

For each exercise: the stub (the course's exercises/<file>, what every student was given) is
the boilerplate; each student's file is fingerprinted once (fingerprint.own), then every pair of
students who both submitted it is compared. A file is text here: a syntax error, an
unfinished exercise or an untouched stub is compared like any other (an untouched stub has no
code of its own, so it matches nothing).
"""
from __future__ import annotations

import itertools
from pathlib import Path

from . import DEFAULT_THRESHOLD, MIN_TOKENS, fingerprint, outputs
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
        given = fingerprint.boilerplate(stub, name)
        fps = {student: fingerprint.own(code[ex.file], given, name)
               for student, code in sorted(got.code.items()) if ex.file in code}
        result.submitted[ex.id] = len(fps)
        for a, b in itertools.combinations(sorted(fps), 2):
            m = fingerprint.similarity(fps[a], fps[b])
            flagged = max(m.a_to_b, m.b_to_a) >= threshold and m.tokens >= MIN_TOKENS
            pair = outputs.Pair(ex.id, a, b, m.a_to_b, m.b_to_a, m.tokens, fingerprint.own_tokens(fps[a]),
                                fingerprint.own_tokens(fps[b]), flagged)
            if flagged:  # what the page shows
                pair.slices, pair.code_a, pair.code_b = m.slices, fps[a].raw_code, fps[b].raw_code
            result.pairs.append(pair)
    return result


def write(result: outputs.Result, out: Path) -> list[Path]:
    from ..batch import store

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return [store.atomic_write(out / outputs.CSV, outputs.csv_text(result)),
            store.atomic_write(out / outputs.MD, outputs.markdown(result)),
            store.atomic_write(out / outputs.HTML, outputs.html_page(result))]
