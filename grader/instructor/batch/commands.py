"""The batch side of the command line: `kata grade DIR --out OUT ...` and `kata gradebook OUT`.

How `kata grade PATH` tells one submission from a class: `--out OUT` makes it a class. Without
--out, PATH is one submission (as before); with --out, PATH must be a folder whose entries are
submissions, and a PATH that is itself one submission (it holds `ch01/` or `exercises/ch01/`) is
refused with a message saying so. When a single-submission grading fails on a folder that looks
like a class, the message suggests --out.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from ...course import atomic
from ...course.messages import t
from ..exports.gradescope import VISIBILITIES
from . import store
from .records import status_of, student_of

BATCH_ONLY = (
    "jobs",
    "force",
    "timeout",
    "gradescope_hidden",
    "roster",
    "submitted_at",
    "due",
    "lms_assignment",
    "shard",
    "missing",
    "extensions",
)


def add_grade_options(g: argparse.ArgumentParser) -> None:
    b = g.add_argument_group("a whole class (PATH is a folder of submissions)")
    b.add_argument(
        "--out",
        metavar="OUT",
        help="grade every submission in the folder PATH into OUT: per student "
        "OUT/students/<name>/, and gradebook.csv, junit.xml, summary.md",
    )
    b.add_argument("--jobs", "-j", type=int, metavar="N", help="grade N submissions at a time (default: one per CPU)")
    b.add_argument(
        "--force",
        action="store_true",
        help="grade again what OUT already holds; write into an OUT of another course version",
    )
    b.add_argument(
        "--timeout",
        type=float,
        metavar="S",
        help="stop grading one submission after S seconds (default 1800; it is graded again by the next run)",
    )
    b.add_argument(
        "--gradescope-hidden",
        choices=VISIBILITIES,
        help="Gradescope visibility of the hidden checks (default after_published)",
    )
    b.add_argument(
        "--shard",
        metavar="K/N",
        help="grade only the K-th of N parts of the class (each entry's part "
        "is fixed by its name), e.g. one task of a Slurm job array; "
        "shards may write into one OUT at once. Then `kata gradebook "
        "OUT` merges them (docs/instructor/beyond-one-machine.md)",
    )
    _term_options(b)


def _term_options(parser) -> None:
    parser.add_argument(
        "--due",
        metavar="TIME",
        help="the due date-time for this term, e.g. 2027-03-14T23:59:00+08:00 "
        "(default: course.toml's due of the assignment), measured "
        "with the assignment's late rule: --assignment's, or the "
        "course's only one. Stored in OUT: every later `kata "
        "gradebook OUT` applies it",
    )
    parser.add_argument(
        "--extensions",
        metavar="FILE",
        help="students' own due dates: a CSV with a student column (as the roster names them: "
        "login, username, student, ...) and due (ISO 8601 with its offset); their late "
        "penalty is measured from it. A row that matches no submission or roster line is "
        "listed in summary.md's Check before importing (exit 5). Copied into OUT",
    )
    parser.add_argument(
        "--missing",
        choices=("zero", "blank"),
        help="what canvas.csv and moodle.csv give an enrolled student without a submission: 0 "
        "(default) or an empty cell, so the LMS keeps the grade it has. Stored in OUT",
    )
    parser.add_argument(
        "--roster",
        metavar="FILE",
        help="the class list: Canvas's gradebook export (keyed on SIS "
        "Login ID), Moodle's grading worksheet, participants or grades "
        "export, or a "
        "CSV with login (or folder), id, name, email, section. One "
        "that matches fewer than half of the submissions stops the "
        "command (--force goes on)",
    )
    parser.add_argument(
        "--lms-assignment",
        metavar="'TITLE (ID)'",
        help="canvas.csv's grade column, as Canvas's gradebook export names the assignment, e.g. "
        "'Attention (48213)' (default: course.toml's lms_assignment, else 'kata ASSIGNMENT', "
        "which Canvas imports as a new assignment)",
    )
    parser.add_argument(
        "--submitted-at",
        metavar="SOURCE",
        help="when each submission came in, for the assignment's late policy: mtime (the files' "
        "modification times, which extraction keeps from the student's machine: not for "
        "grades unless the platform writes the files itself), manifest (kata submit's time; "
        "students can edit it) or a CSV FILE from the submission platform (student, "
        "submitted_at), or platform (the times a Canvas, Moodle or Gradescope download gives: the default "
        "for one, with a due date). A submission without a usable time gets no penalty and "
        "summary.md lists it",
    )


def check_term_files(args) -> str:
    """Why --roster, --submitted-at, --extensions or --due cannot be used ("" when they can)."""
    from ..formats.late import SOURCES, TimesError, read_extensions, read_times
    from ..formats.roster import RosterError, read

    try:
        if getattr(args, "roster", None):
            read(args.roster)
        source = getattr(args, "submitted_at", None)
        if source and source not in SOURCES and source != "platform":
            if not Path(source).is_file():
                return t("submitted_at_bad", source=source)
            read_times(source)
        extensions = getattr(args, "extensions", None)
        if extensions:
            if not Path(extensions).is_file():
                return t("extensions_none", file=extensions)
            read_extensions(extensions)
    except (RosterError, TimesError) as e:
        return str(e)
    if getattr(args, "due", None) and not _due(args.due):
        return t("due_bad", due=args.due)
    return ""


def _due(text: str) -> str:
    """--due as ISO 8601 with its offset ("" when it is not a date-time with one)."""
    from ..formats.late import parse_time

    try:
        return parse_time(text).isoformat()
    except ValueError:
        return ""


def add_gradebook_parser(sub) -> argparse.ArgumentParser:
    gb = sub.add_parser(
        "gradebook",
        help="write every gradebook format again from the reports in OUT (no grading)",
        description="Rewrite gradebook.csv, junit.xml, summary.md with its PNGs, and each student's "
        "feedback.html, Gradescope and Exercism results.json, from the report.json "
        "files a `kata grade DIR --out OUT` run stored.",
    )
    gb.add_argument("out", metavar="OUT", help="the folder a `kata grade DIR --out OUT` run wrote")
    gb.add_argument(
        "--gradescope-hidden",
        choices=VISIBILITIES,
        help="Gradescope visibility of the hidden checks (default: the grading run's)",
    )
    gb.add_argument(
        "--assignment",
        "-a",
        metavar="ID",
        help="write the formats of this course.toml [[assignment]] only (its exercises, its points) "
        "into OUT/assignments/ID/ (or --to DIR), from a run that graded its exercises",
    )
    gb.add_argument("--to", metavar="DIR", help="with --assignment: where to write (default OUT/assignments/ID)")
    gb.add_argument(
        "--force", action="store_true", help="use a --roster that matches fewer than half of the graded submissions"
    )
    gb.add_argument(
        "--merge",
        nargs="+",
        metavar="SHARD_OUT",
        help="first copy into OUT the students and shards of "
        "these output folders (shards graded into "
        "separate OUTs with --shard K/N)",
    )
    _term_options(gb)
    return gb


def misuse(args) -> str:
    """Why these options cannot go together ("" when they can)."""
    if args.out:
        return t("batch_no_single_outputs") if (args.json or args.html) else ""
    given = [f"--{name.replace('_', '-')}" for name in BATCH_ONLY if getattr(args, name, None)]
    return t("batch_needs_out", options=", ".join(given)) if given else ""


def class_hint(path: str, chapter: str) -> str:
    """A hint when PATH, given as one submission, looks like a class folder ("" otherwise)."""
    from .discover import discover, is_one_submission

    p = Path(path)
    if not p.is_dir() or is_one_submission(p, chapter):
        return ""
    try:
        entries, _ = discover(p)
    except OSError:
        return ""
    if len(entries) < 2:
        return ""
    names = ", ".join(e.source for e in entries[:3]) + (", ..." if len(entries) > 3 else "")
    return t("batch_class_hint", path=path, count=len(entries), names=names)


def grade(args, course, exercises, assignment=None) -> int:
    from .run import BatchError, Options, default_jobs, grade_class, mean_percent

    if problem := check_term_files(args):
        print(f"kata grade: {problem}", file=sys.stderr)
        return 2
    shard = None
    if args.shard:
        from .shards import Shard, ShardError

        try:
            shard = Shard.parse(args.shard)
        except ShardError as e:
            print(f"kata grade: {e}", file=sys.stderr)
            return 2
        later = [
            o
            for o, given in (
                ("--roster", args.roster),
                ("--lms-assignment", args.lms_assignment),
                ("--submitted-at FILE", args.submitted_at not in (None, "mtime", "manifest", "platform")),
                ("--extensions", args.extensions),
            )
            if given
        ]
        if later:
            print(f"kata grade: {t('shard_term_later', options=', '.join(later))}", file=sys.stderr)
            return 2
    # the late rule: the assignment's, else the course's only assignment's; a --due with none is refused
    rule = None if assignment is not None or len(course.assignments) != 1 else course.assignments[0].late_rule()
    if args.due and assignment is None and rule is None:
        ids = ", ".join(a.id for a in course.assignments)
        print(
            f"kata grade: {t('due_which_assignment', due=args.due, count=len(course.assignments), ids=ids)}"
            if ids
            else f"kata grade: {t('due_no_assignment', due=args.due)}",
            file=sys.stderr,
        )
        return 2
    opts = Options(
        exercises=[ex.id for ex in exercises],
        public_only=args.public_only,
        time_limit=args.time_limit,
        jobs=args.jobs or default_jobs(),
        force=args.force,
        timeout=args.timeout or max(1800.0, 2 * course.budget_s + 60),
        hidden=args.gradescope_hidden or "after_published",
        quiet=args.quiet,
        assignment=assignment,
        roster=args.roster,
        submitted_at=args.submitted_at,
        lms_assignment=args.lms_assignment or getattr(assignment, "lms_assignment", None),
        shard=shard,
        due=_due(args.due) if args.due else None,
        rule=rule,
        missing=args.missing,
        extensions=args.extensions,
    )
    console = Console()
    try:
        outcome = grade_class(course, args.path, args.out, opts, console)
    except BatchError as e:
        print(f"kata grade: {e}", file=sys.stderr)
        return 2
    except atomic.WriteError as e:  # a full disk: stop, keep what is written, say how to go on
        print(f"kata grade: {e}", file=sys.stderr)
        key = "batch_write_stopped_full" if e.full else "batch_write_stopped"
        print(t(key, done=len(store.load_records(Path(args.out))), out=args.out), file=sys.stderr)
        return atomic.EXIT
    except KeyboardInterrupt:  # before grading started (while looking at the submissions): nothing to keep
        return 130
    records = outcome.records
    if outcome.interrupted:
        print(t("batch_interrupted", done=len(records), total=outcome.total), file=sys.stderr)
        return 130
    counts = {"graded": 0, "refused": 0, "error": 0}
    for doc in records.values():
        status = status_of(doc) or "graded"
        counts[status] = counts.get(status, 0) + 1
    if shard:  # said even with --quiet: a scheduler's log is where the merge step is read
        console.print(
            t(
                "shard_done",
                shard=shard,
                total=len(records),
                graded=counts["graded"],
                refused=counts["refused"],
                errors=counts["error"],
                out=escape(args.out),
            ),
            highlight=False,
            soft_wrap=True,
        )
    elif not args.quiet:
        mean = mean_percent(records)
        console.print(
            t(
                "batch_summary",
                total=len(records),
                graded=counts["graded"],
                refused=counts["refused"],
                errors=counts["error"],
                mean="-" if mean is None else f"{mean:.1f}%",
            ),
            highlight=False,
        )
        console.print(t("batch_wrote", out=escape(args.out)), highlight=False, soft_wrap=True)
    unavailable = [
        st.reason
        for st in map(student_of, records.values())
        if st is not None and st.status == "error" and (st.reason or "").startswith("SandboxUnavailable: ")
    ]
    if unavailable:  # recorded as errors (graded again by the next run), and said once, plainly
        from ...worker.sandbox import EXIT as SANDBOX_EXIT

        print(f"kata grade: {unavailable[0].removeprefix('SandboxUnavailable: ')}", file=sys.stderr)
        return SANDBOX_EXIT
    if shard:  # no class files yet: the merge writes them, and gates the LMS files
        return 0 if outcome.ok else 1
    unsafe = lms_gate(Path(args.out), records, console, args.quiet)
    return (5 if unsafe else 0) if outcome.ok else 1


def lms_gate(out: Path, records: dict, console: Console, quiet: bool = False, found: tuple | None = None) -> bool:
    """Print what the LMS files hold and, when they are not safe to import as they are, why
    (summary.md's top, formats/lms.py); True when they are not (exit status lms.EXIT_CHECK).
    `found`: (problems, facts) as the writing of the files found them (gradebook.Written), else
    read from OUT's records and batch.json."""
    from ..formats.lms import EXIT_CHECK
    from .gradebook import gate

    problems, facts = found if found is not None else gate(out, records, store.read_meta(out))
    assert EXIT_CHECK == 5
    if quiet or (not problems and not facts):
        return bool(problems)
    console.print("")
    console.print(t("gate_title_check") if problems else t("gate_title_safe"), style="bold", highlight=False)
    for line in [*facts, *problems]:
        if line:
            console.print(escape(line.replace("\\", "")), highlight=False, soft_wrap=True)
    if not problems:
        console.print(t("gate_console_safe"), highlight=False)
    return bool(problems)


def gradebook(args) -> int:
    from .gradebook import is_batch_output, regenerate

    out = Path(args.out)
    from .store import Busy

    if getattr(args, "merge", None):
        from .shards import ShardError, gather

        try:
            with store.locked(out):
                count = gather(out, [Path(p) for p in args.merge])
        except ShardError as e:
            print(f"kata gradebook: {e}", file=sys.stderr)
            return 2
        except Busy:
            print(f"kata gradebook: {t('batch_busy', out=out)}", file=sys.stderr)
            return 2
        print(t("merge_gathered", count=count, sources=", ".join(args.merge), out=out))
    if not is_batch_output(out):
        print(f"kata gradebook: {t('gradebook_none', out=out)}", file=sys.stderr)
        return 2
    incomplete = False
    if (out / "shards").is_dir():
        try:
            incomplete = _merge_shards(out)
        except Busy:
            print(f"kata gradebook: {t('batch_busy', out=out)}", file=sys.stderr)
            return 2
        except ValueError as e:  # shards.ShardError
            print(f"kata gradebook: {e}", file=sys.stderr)
            return 2

    if problem := check_term_files(args):
        print(f"kata gradebook: {problem}", file=sys.stderr)
        return 2
    from ..formats.late import rule_of

    meta = store.read_meta(out) or {}
    # a --due is the run's own when no --assignment is given or it is the run's; else that assignment's
    run_due = bool(args.due) and (not args.assignment or args.assignment == meta.get("assignment"))
    if run_due and rule_of(meta) is None:  # no late rule to measure it with: refused, never dropped
        print(f"kata gradebook: {t('due_needs_assignment')}", file=sys.stderr)
        return 2
    if args.roster and not args.force:  # a roster that is not this class's changes nothing
        from ..formats.names import own_name
        from ..formats.roster import read, refusal

        records = store.load_records(out)
        problem = refusal(
            read(args.roster),
            {n: own_name(d, n) for n, d in records.items()},
            {n: st.platform for n, d in records.items() if (st := student_of(d)) and st.platform is not None},
        )
        if problem:
            print(f"kata gradebook: {problem}", file=sys.stderr)
            return 2
    # the term policy given here is stored in OUT: every later `kata gradebook OUT` (a merge too) applies it
    term_changed = bool(run_due or args.missing or args.extensions)
    if args.roster or args.submitted_at or args.lms_assignment or args.due or term_changed:  # kept
        from .run import term_files

        try:
            with store.locked(out):
                meta = store.read_meta(out) or {}
                term_files(
                    out,
                    meta,
                    args.roster,
                    args.submitted_at,
                    args.lms_assignment,
                    args.extensions,
                    {"due": _due(args.due) if run_due else None, "missing": args.missing},
                    later=True,
                )
                if args.due and not run_due:  # another assignment's due date: its formats' (--assignment)
                    meta["term"]["assignments"] = {
                        **(meta["term"].get("assignments") or {}),
                        args.assignment: _due(args.due),
                    }
                store.write_json(out / store.META, meta)
        except Busy:
            print(f"kata gradebook: {t('batch_busy', out=out)}", file=sys.stderr)
            return 2
    code = 0
    if getattr(args, "assignment", None):
        code = _gradebook_assignment(args, out)
        if code == 2 or not term_changed:
            return code
        # OUT's own files follow the term policy stored in it, as the assignment's do
    try:
        w = regenerate(out, args.gradescope_hidden)
    except Busy:
        print(f"kata gradebook: {t('batch_busy', out=out)}", file=sys.stderr)
        return 2
    print(t("gradebook_wrote", files=len(w.files), students=w.students, out=out))
    unsafe = lms_gate(out, {}, Console(), found=(w.problems, w.facts))
    return 1 if incomplete else 5 if unsafe or code == 5 else 0


def _merge_shards(out: Path) -> bool:
    """batch.json from OUT's shards (shards.merge), what the instructor set on an earlier merge
    (--roster, --submitted-at, --lms-assignment, and the term policy given to `kata gradebook`:
    --due, --missing, --extensions) kept over the shards' own; says which shards and students
    are missing and returns True when any is."""
    from ..formats.late import settle, term_of
    from .shards import merge, read_all

    if not read_all(out):
        return False
    with store.locked(out):
        merged = merge(out, store.load_records(out))
        old = store.read_meta(out) or {}
        for key in ("roster_name", "lms_assignment", "submitted_at"):
            merged.meta[key] = old.get(key) or merged.meta.get(key)
        before = term_of(old) if old.get("assignment") == merged.meta.get("assignment") else {}
        term = dict(term_of(merged.meta))
        for key in before.get("later") or []:
            term[key] = before.get(key)
        if before.get("later"):
            term["later"] = list(before["later"])
        if before.get("assignments"):
            term["assignments"] = before["assignments"]
        merged.meta["term"] = term
        store.write_json(out / store.META, settle(merged.meta))
    print(t("merge_read", count=len(merged.shards), n=merged.n, shards=", ".join(merged.shards)))
    if merged.not_run:
        print(t("merge_not_run", shards=", ".join(merged.not_run)), file=sys.stderr)
    if merged.missing:
        names = ", ".join(merged.missing[:20]) + (", ..." if len(merged.missing) > 20 else "")
        print(t("merge_missing", count=len(merged.missing), names=names), file=sys.stderr)
    return bool(merged.not_run or merged.missing)


def _gradebook_assignment(args, out: Path) -> int:
    from ...course.assignments import AssignmentError, find
    from ...course.commandline import load_grading_course
    from ..formats.late import term_of
    from .gradebook import NotInRun, regenerate_assignment
    from .store import Busy

    course = load_grading_course(args, "gradebook", [out])
    meta = store.read_meta(out) or {}
    term = term_of(meta)
    # the due date given now, else the one stored for it (given earlier, or the run's when it is this assignment)
    due = (
        args.due
        or (term.get("assignments") or {}).get(args.assignment)
        or (term.get("due") if args.assignment == meta.get("assignment") else None)
    )
    try:
        assignment = find(course.assignments, args.assignment).due_at(due)
        to, w = regenerate_assignment(
            out, assignment, Path(args.to) if args.to else None, getattr(args, "lms_assignment", None)
        )
    except AssignmentError as e:
        print(f"kata gradebook: {e}", file=sys.stderr)
        return 2
    except NotInRun as e:
        print(
            f"kata gradebook: {t('gradebook_assignment_missing', out=out, assignment=args.assignment, ids=e)}",
            file=sys.stderr,
        )
        return 2
    except Busy:
        print(f"kata gradebook: {t('batch_busy', out=out)}", file=sys.stderr)
        return 2
    print(t("gradebook_wrote", files=len(w.files), students=w.students, out=to))
    # the assignment's canvas.csv and moodle.csv pass the same gate as OUT's own (exit 5 until settled)
    return 5 if lms_gate(to, {}, Console(), found=(w.problems, w.facts)) else 0
