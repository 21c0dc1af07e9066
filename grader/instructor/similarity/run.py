"""Compare every pair of students, exercise by exercise, and write the results into OUT.

For each exercise: the stub (the course's exercises/<file>, what every student was given) is
the boilerplate; each student's file is put in its canonical form (canonical.py: comments,
docstrings and statements that do nothing gone, keyword arguments sorted; the stub too) and
fingerprinted once (fingerprint.own), then every pair of students who both submitted it is
compared. A file is text here: a syntax error, an unfinished exercise or an untouched stub is
compared like any other (an untouched stub has no code of its own, so it matches nothing). The
same file handed in by CLUSTER_MIN or more students (as compared and tokenised: names, strings,
comments and layout aside) is one cluster, one line, its first student standing for the others in
the pairs; the untouched stub or a syntax-error stub handed in by many is one such line too. A
file that cannot be compared (too long, nested too deeply) is listed with the reason.
"""

from __future__ import annotations

import itertools
from pathlib import Path

from ...course.safe_text import one_line
from . import CLUSTER_MIN, DEFAULT_THRESHOLD, MIN_TOKENS, canonical, fingerprint, outputs
from .collect import read_class


def stub_of(course, ex) -> str:
    """What the student was given: the course's exercises/<file> ("" when the course has none)."""
    try:
        return (course.exercises_dir / ex.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return ""


def compare_class(
    course,
    class_dir: Path,
    exercises,
    threshold: float = DEFAULT_THRESHOLD,
    known: dict[str, str] | None = None,
    out: Path | None = None,
) -> outputs.Result:
    """Every pair of students on each of `exercises`; `known` and `out` as collect.read_class takes them."""
    files = [ex.file for ex in exercises]
    got = read_class(course, Path(class_dir), files, known, out)
    result = outputs.Result(
        threshold,
        fingerprint.K,
        [(ex.id, ex.file) for ex in exercises],
        len(got.code),
        refused=got.refused,
        notes=got.notes,
    )
    for ex in exercises:
        stub = stub_of(course, ex)
        if not stub:
            result.notes.append(f"{ex.id}: no stub ({ex.file}) in the course's exercises/, so nothing counts as given")
        name = Path(ex.file).name
        given_plain, given = (fingerprint.boilerplate(text, name) for text in _as_compared(stub))
        fps, plain = {}, {}  # student -> fingerprint of the rewritten form (when the file parses), of the plain one
        for student, code in sorted(got.code.items()):
            if ex.file not in code:
                continue
            try:
                rewritten, as_read = canonical.forms(code[ex.file])
            except canonical.NotCompared as e:
                result.skipped.append((ex.id, student, one_line(str(e))))
                continue
            plain[student] = fingerprint.own(as_read, given_plain, name)
            if rewritten is not None:
                fps[student] = fingerprint.own(rewritten, given, name)
        result.submitted[ex.id] = sum(ex.file in code for code in got.code.values())
        group = _clusters(ex.id, fps, plain, result)
        for a, b in itertools.combinations(sorted(group), 2):
            fa, fb = (fps[a], fps[b]) if a in fps and b in fps else (plain[a], plain[b])
            m = fingerprint.similarity(fa, fb)
            flagged = max(m.a_to_b, m.b_to_a) >= threshold and m.tokens >= MIN_TOKENS
            pair = outputs.Pair(
                ex.id,
                a,
                b,
                m.a_to_b,
                m.b_to_a,
                m.tokens,
                fingerprint.own_tokens(fa),
                fingerprint.own_tokens(fb),
                flagged,
                group_a=group[a],
                group_b=group[b],
            )
            if flagged:  # what the page shows
                pair.slices, pair.code_a, pair.code_b = m.slices, fa.raw_code, fb.raw_code
            result.pairs.append(pair)
    return result


def _clusters(exercise: str, fps: dict, plain: dict, result: outputs.Result) -> dict[str, int]:
    """Students who handed in the same file, as compared and tokenised (copydetect's text: names,
    strings, comments and layout do not count; a file that does not parse compared as written),
    CLUSTER_MIN or more of them, become one cluster in `result`, its first student standing for
    the others in the pairs: a copy passed round with its names changed or its lines re-indented is
    one line, not a pair per classmate. A cluster with less than MIN_TOKENS of code of its own (the
    untouched stub, the stub with only a syntax error added, a one-line answer) is `little`: never
    flagged, listed apart. Returns the students still compared pair by pair -> how many each
    stands for."""
    same: dict[str, list[str]] = {}
    for student in sorted(plain):
        same.setdefault(fps.get(student, plain[student]).filtered_code, []).append(student)
    group = {student: 1 for student in plain}
    for members in same.values():
        if len(members) >= CLUSTER_MIN:
            tokens = fingerprint.own_tokens(fps.get(members[0], plain[members[0]]))
            result.clusters.append(outputs.Cluster(exercise, members, tokens, little=tokens < MIN_TOKENS))
            for other in members[1:]:
                del group[other]
            group[members[0]] = len(members)
    return group


def _as_compared(stub: str) -> tuple[str, str]:
    """The stub in the students' two canonical forms, (plain, rewritten) (as written in the unlikely
    case it has none)."""
    try:
        rewritten, plain = canonical.forms(stub)
    except canonical.NotCompared:
        return stub, stub
    return plain, plain if rewritten is None else rewritten


def write(result: outputs.Result, out: Path) -> list[Path]:
    from ..batch import store

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return [
        store.atomic_write(out / outputs.CSV, outputs.csv_text(result)),
        store.atomic_write(out / outputs.MD, outputs.markdown(result)),
        store.atomic_write(out / outputs.HTML, outputs.html_page(result)),
    ]
