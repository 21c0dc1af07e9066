"""`kata similarity DIR --out OUT [--threshold X] [-e ID] [-a ASSIGNMENT]`: the command's body.

DIR is a class folder, as `kata grade DIR --out OUT` takes it. OUT may be that run's folder
(the names are then the gradebook's, and its class files, summary.md with its Similarity
section, are written again at once, as `kata gradebook OUT` would) or any other, where only
similarity.csv, similarity.md and similarity.html are written. Every file is written atomically
under OUT's lock: a grading run writing into OUT at the same time makes this command stop
(and the other way round), never mixes files.
"""

from __future__ import annotations

import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ...course.commandline import load_grading_course, select
from ...course.messages import t
from ...course.safe_text import one_line

SHOWN = 10  # flagged pairs printed; the rest are in similarity.md


def threshold(text: str) -> float:
    """--threshold: a fraction (0.5) or a percentage (50%), above 0 and at most 1."""
    import argparse

    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(t("similarity_bad_threshold", value=text)) from None
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(t("similarity_bad_threshold", value=text))
    return value


def cmd_similarity(args) -> int:
    from ..batch import gradebook, store
    from ..batch.discover import is_one_submission
    from . import run

    course = load_grading_course(args, "similarity", [args.path])
    exercises = select(course, args.exercise, getattr(args, "assignment", None))
    class_dir, out = Path(args.path), Path(args.out)
    if not class_dir.is_dir():
        key = "batch_not_folder" if class_dir.exists() or class_dir.is_symlink() else "batch_missing"
        print(f"kata similarity: {t(key, path=class_dir)}", file=sys.stderr)
        return 2
    if is_one_submission(class_dir, course.chapter):
        print(
            f"kata similarity: {t('similarity_one_submission', path=class_dir, chapter=course.chapter)}",
            file=sys.stderr,
        )
        return 2
    if out.exists() and not out.is_dir():
        print(f"kata similarity: {t('batch_out_not_folder', out=out)}", file=sys.stderr)
        return 2
    graded = gradebook.is_batch_output(out)
    records = store.load_records(out) if graded else {}
    known = {(doc.get("student") or {}).get("source"): name for name, doc in records.items()}
    result = run.compare_class(course, class_dir, exercises, args.threshold, known, out)
    try:
        with store.locked(out):
            run.write(result, out)
            if graded:  # the class files again, so that summary.md has its Similarity section now
                gradebook.write_class(out, store.load_records(out), store.read_meta(out))
    except store.Busy:
        print(f"kata similarity: {t('batch_busy', out=out)}", file=sys.stderr)
        return 2
    console = Console()
    flagged = result.flagged
    console.print(
        t(
            "similarity_done",
            students=result.students,
            exercises=len(result.exercises),
            pairs=len(result.pairs),
            flagged=len(flagged),
            threshold=f"{100 * args.threshold:.0f}%",
        ),
        highlight=False,
    )
    for members, ids, _ in result.cluster_groups():  # one line each, not every pair of them
        names = ", ".join(one_line(m) for m in members)
        console.print(
            t("similarity_cluster", count=len(members), exercises=len(ids), ids=", ".join(ids), names=escape(names)),
            highlight=False,
            soft_wrap=True,
        )
    for p in flagged[:SHOWN]:
        console.print(
            f"  {p.exercise}  {escape(one_line(p.name_a))} ~ {escape(one_line(p.name_b))}  "
            f"{100 * p.a_to_b:.0f}% / {100 * p.b_to_a:.0f}%",
            highlight=False,
            soft_wrap=True,
        )
    if len(flagged) > SHOWN:
        console.print(t("similarity_more", count=len(flagged) - SHOWN), highlight=False)
    for name, why in result.refused:
        console.print(
            t("similarity_refused", name=escape(one_line(name)), reason=escape(one_line(why))),
            highlight=False,
            soft_wrap=True,
        )
    for ex, name, why in result.skipped:  # every file left out is said here, not only in similarity.md
        console.print(
            t("similarity_skipped", name=escape(one_line(name)), exercise=ex, reason=escape(one_line(why))),
            highlight=False,
            soft_wrap=True,
        )
    console.print(t("similarity_wrote", out=escape(str(out))), highlight=False, soft_wrap=True)
    return 0
