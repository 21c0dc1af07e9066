"""The instructor's commands: `kata grade PATH` (one submission; a class folder is batch/'s),
`kata gradebook OUT`, `kata release OUT` and `kata export gradescope|nbgrader`."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from rich.console import Console

from ..course.commandline import assignment_of, load_grading_course, select, shown
from ..course.messages import t


def _grade(course, path, exercises, public_only: bool):
    """Grade `path`; None (after saying why) when it cannot be graded at all."""
    from ..checking import lanes
    from ..checking.asset_gate import AssetUnavailable
    from ..checking.submission import SubmissionError, open_submission

    try:
        sub = open_submission(path, course.chapter, course.exercises)
    except SubmissionError as e:
        print(t("cannot_grade", path=path, reason=e), file=sys.stderr)
        return None
    from ..authoring.attempts import attempted

    with sub:
        try:
            result = lanes.run(course, sub, exercises, public_only=public_only)  # one submission: every core
        except AssetUnavailable as e:  # a check cannot grade without it: no score rather than 0s
            print(f"kata grade: {e}", file=sys.stderr)
            return None
        return result, attempted(course, sub, exercises)


def cmd_grade(args) -> int:
    from .batch import commands as batch

    if problem := batch.misuse(args):
        print(f"kata grade: {problem}", file=sys.stderr)
        return 2
    course = load_grading_course(args, "grade", [args.path])
    course.budget_s = args.budget or course.budget_s  # every grading below (a batch's children too) uses them
    course.budget_cpu_s = args.budget_cpu or course.budget_cpu_s
    exercises = select(course, args.exercise, args.assignment)
    assignment = assignment_of(course, args)
    if args.out:  # a class folder: every submission in it
        if getattr(args, "expect", None):
            print(f"kata grade: {t('expect_one_submission')}", file=sys.stderr)
            return 2
        return batch.grade(args, course, exercises, assignment)
    from ..course.atomic import write_json
    from ..reports.report import print_table, to_dict

    if args.time_limit:
        for ex in exercises:
            ex.time_limit_s = min(ex.time_limit_s, args.time_limit)
    graded = _grade(course, args.path, exercises, args.public_only)
    if graded is None:
        if hint := batch.class_hint(args.path, course.chapter):
            print(hint, file=sys.stderr)
        return 2
    result, flags = graded
    from ..authoring.attempts import mark

    doc = mark(to_dict(course, result), flags)
    if assignment is not None:  # the assignment's points: every format below shows the scaled numbers
        from ..checking.results import CheckResult
        from ..reports.assignment import view

        doc = view(doc, assignment)
        result.results = [CheckResult(**c) for c in doc["checks"]]
    if args.json:
        write_json(args.json, doc)
    if not args.quiet:
        if assignment is not None:
            a = doc["assignment"]
            print(
                t(
                    "assignment_scaled",
                    id=assignment.id,
                    title=assignment.display_title(),
                    points=f"{assignment.points or a['raw_max_score']:g}",
                    raw=f"{a['raw_score']:g}",
                    raw_max=f"{a['raw_max_score']:g}",
                )
            )
        print_table(course, result, Console(), show_messages=True)
    if args.html:
        _html(course, args.path, doc, args.html)
    return _expected(args, result)


def _expected(args, result) -> int:
    """`--expect full|zero`: 1, naming every check that breaks the expectation (a check the reference
    did not pass, skipped ones included, or one the stubs passed), else 0 with a line that says so."""
    expect = getattr(args, "expect", None)
    if not expect:
        return 0
    path, score, top = args.path, f"{result.score:g}", f"{result.max_score:g}"
    if expect == "full":
        wrong = [r for r in result.results if r.status != "passed"]
        if not wrong:
            print(t("expect_full_ok", path=path, score=score, max_score=top))
            return 0
        print(t("expect_full_failed", path=path, count=len(wrong), score=score, max_score=top), file=sys.stderr)
    else:
        wrong = [r for r in result.results if r.status == "passed"]
        if not wrong:
            print(t("expect_zero_ok", path=path, max_score=top))
            return 0
        print(t("expect_zero_failed", path=path, count=len(wrong)), file=sys.stderr)
    for r in wrong:
        message = " ".join((r.message or r.status).split())
        print(t("expect_check_line", check=f"{r.exercise}::{r.name}", message=message[:300]), file=sys.stderr)
    return 1


def cmd_gradebook(args) -> int:
    from .batch import commands as batch

    return batch.gradebook(args)


def _html(course, path, doc, out) -> None:
    from ..course.messages import t
    from ..reports.report_html import write_html

    written, _ = write_html(course, path, doc, out)
    print(t("html_wrote", path=shown(written)))


def cmd_release(args) -> int:
    try:
        from .release.release import ReleaseError, build
    except ImportError:  # a student bundle does not ship the tools that build it
        print(t("release_not_here"), file=sys.stderr)
        return 2

    from ..checking.asset_gate import AssetUnavailable

    course = load_grading_course(args, "release")
    try:
        done = build(
            course,
            args.out,
            force=args.force,
            log=lambda m: print(f"kata release: {m}", file=sys.stderr),
            lang=os.environ.get("KATA_LANG") or None,
            assignment=getattr(args, "assignment", None),
        )
    except (ReleaseError, AssetUnavailable) as e:  # AssetUnavailable: the reference's run that records the calls
        print(f"kata release: {e}", file=sys.stderr)
        return 2
    what = ""
    if done.assignment:
        what = (
            t("release_what_needed", id=done.assignment, needed=", ".join(done.needed))
            if done.needed
            else t("release_what_assignment", id=done.assignment)
        )
    print(
        t(
            "release_wrote",
            out=shown(done.out),
            seconds=f"{done.duration_s:g}",
            what=what,
            exercises=done.exercises,
            public=done.public_checks,
            hidden=done.hidden_checks,
            kept=done.keys_kept,
            total=done.keys_total,
            calls=done.calls,
        )
    )
    for note in done.notes:
        print(t("note_line", note=note))
    return 0


def cmd_export_gradescope(args) -> int:
    from .exports.gradescope import ExportError, export

    course = load_grading_course(args, "export")
    exercises = select(course, args.exercise, args.assignment) if (args.exercise or args.assignment) else None
    try:
        out, notes = export(
            course,
            args.out,
            args.hidden_visibility,
            args.results_lang or "",
            args.grading_sandbox,
            exercises,
            args.assignment,
        )
    except ExportError as e:
        print(f"kata export: {e}", file=sys.stderr)
        return 2
    for note in notes:
        print(t("note_line", note=note))
    print(
        t(
            "gs_wrote",
            out=shown(out),
            mb=f"{out.stat().st_size / 2**20:.1f}",
            when=t(f"gs_visibility_{args.hidden_visibility}"),
        )
    )
    return 0


def cmd_export_nbgrader(args) -> int:
    import importlib.util

    from ..course.messages import t
    from .exports.export_nbgrader import ExportError, export

    course = load_grading_course(args, "export")
    try:
        done = export(
            course,
            select(course, args.exercise, args.assignment),
            Path(args.dir),
            by=args.by,
            force=args.force,
            assignment=assignment_of(course, args),
        )
    except ExportError as e:
        print(f"kata export nbgrader: {e}", file=sys.stderr)
        return 2
    for path in done.written:
        print(t("nbg_wrote", path=shown(path)))
    if done.unchanged:
        print(t("nbg_unchanged", count=len(done.unchanged)))
    if done.backups:
        print(t("nbg_backed_up", path=shown(done.backups)))
    names = list(done.assignments)
    print(t("nbg_next", count=len(names), assignments=", ".join(names), first=names[0], folder=shown(done.folder)))
    if importlib.util.find_spec("nbgrader") is None:
        print(t("nbg_not_installed"), file=sys.stderr)
    return 0
