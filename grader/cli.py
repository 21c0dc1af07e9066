"""The `kata` command.

    kata grade PATH [--json FILE]   grade a submission (folder or .zip): all checks, hidden too
    kata check [ID]                 run the public checks against exercises/
    kata run LISTING [--book]       run a listing of the book with your code
    kata verify                     prove the course consistent (stubs fail, solutions pass, ...)
    kata stubs [--check]            regenerate exercises/ from solutions/
    kata fixtures                   regenerate grader/fixtures/ from the solutions
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys

from rich.console import Console

from . import __version__
from .messages import t


def _course(args):
    from .course import CourseError, load

    try:
        return load(getattr(args, "root", None))
    except CourseError as e:
        print(f"kata: course.toml: {e}", file=sys.stderr)
        raise SystemExit(2)


def _select(course, ids):
    if not ids:
        return course.exercises
    known = {ex.id: ex for ex in course.exercises}
    chosen = []
    for i in ids:
        if i in known:
            chosen.append(known[i])
            continue
        near = difflib.get_close_matches(i, list(known), n=3, cutoff=0.4)
        hint = t("did_you_mean", names=", ".join(near)) if near else ""
        print(t("no_exercise", id=i, hint=hint), file=sys.stderr)
        raise SystemExit(2)
    return chosen


def _grade(course, path, exercises, public_only: bool):
    """Grade `path`; None (after saying why) when it cannot be graded at all."""
    from .checking import runner
    from .submission import SubmissionError, open_submission

    try:
        sub = open_submission(path, course.chapter)
    except SubmissionError as e:
        print(t("cannot_grade", path=path, reason=e), file=sys.stderr)
        return None
    with sub:
        return runner.run(course, sub, exercises, public_only=public_only)


def cmd_grade(args) -> int:
    from .report import print_table, to_dict, write_json

    course = _course(args)
    exercises = _select(course, args.exercise)
    if args.time_limit:
        for ex in exercises:
            ex.time_limit_s = min(ex.time_limit_s, args.time_limit)
    result = _grade(course, args.path, exercises, args.public_only)
    if result is None:
        return 2
    if args.json:
        write_json(args.json, to_dict(course, result))
    if not args.quiet:
        print_table(course, result, Console(), show_messages=True)
    return 0


def cmd_check(args) -> int:
    from .report import print_table

    course = _course(args)
    result = _grade(course, course.exercises_dir, _select(course, [args.id] if args.id else []), True)
    if result is None:
        return 2
    print_table(course, result, Console(), show_messages=True)
    return 0 if all(r.status == "passed" for r in result.results) else 1


def cmd_run(args) -> int:
    from rich.table import Table
    from rich.text import Text

    from . import listings
    from .checking.runner import open_exercise, sandbox_for
    from .submission import SubmissionError, open_submission
    from .worker.client import WorkerFault
    from .worker.proxy import StudentError

    course = _course(args)
    registry = listings.load(course)
    lst = registry.get(args.listing)
    if lst is None:
        near = difflib.get_close_matches(args.listing, list(registry), n=3, cutoff=0.3)
        hint = t("did_you_mean", names=", ".join(near)) if near else ""
        print(t("no_listing", id=args.listing, hint=hint, known=", ".join(sorted(registry))), file=sys.stderr)
        return 2
    ex = course.get(lst.exercise)
    path = args.path or course.exercises_dir
    try:
        sub = open_submission(path, course.chapter)
    except SubmissionError as e:
        print(f"kata: {e}", file=sys.stderr)
        return 2
    lines: list[str] = []

    def show(*values) -> None:
        lines.append(" ".join(str(v) for v in values))

    error = ""
    with sub, sandbox_for(course, sub) as box:
        try:
            worker, remote = open_exercise(box, ex)
            try:
                lst.run(remote, show)
            finally:
                worker.close()
        except (StudentError, WorkerFault) as e:
            error = str(e)
    console = Console()
    titles = {item.id: item.display_title() for item in course.listings}
    title = t("listing_title", id=lst.id, exercise=ex.id, section=ex.section, title=titles.get(lst.id) or lst.title)
    ours = "\n".join(lines) + (f"\n✘ {error}" if error else "")
    if args.book:
        table = Table(title=title, show_lines=True)
        table.add_column(t("your_code", path="exercises/" if args.path is None else args.path))
        table.add_column(t("book_prints"))
        table.add_row(ours, lst.book or t("nothing_printed"))
        console.print(table)
        for entry in listings.errata_entries(course.root, lst.errata):
            console.print(Text(t("errata", entry=entry), style="yellow"))
    else:
        console.print(f"[bold]{title}[/]")
        console.print(ours, highlight=False, markup=False)
    return 1 if error else 0


def cmd_verify(args) -> int:
    from .verify import verify

    v = verify(getattr(args, "root", None), grade=not args.no_grade)
    for fact in v.facts:
        print(f"ok: {fact}")
    for p in v.problems:
        print(f"FAIL: {p}")
    print("kata verify: " + ("passed" if v.ok else f"{len(v.problems)} problem(s)"))
    return 0 if v.ok else 1


def cmd_stubs(args) -> int:
    from . import stubs
    from .course import CourseError, load

    try:  # a new exercise has no stub yet: do not demand the files this command writes
        course = load(getattr(args, "root", None), check_files=False)
    except CourseError as e:
        print(f"kata: course.toml: {e}", file=sys.stderr)
        return 2
    if args.check:
        stale = [ex.id for ex in course.exercises
                 if not (course.exercises_dir / ex.file).is_file()
                 or (course.exercises_dir / ex.file).read_text(encoding="utf-8") != stubs.stub_text(course, ex)]
        for s in stale:
            print(f"stale: exercises/{course.get(s).file}")
        return 1 if stale else 0
    written = stubs.write_stubs(course)
    for w in written:
        print(f"wrote {os.path.relpath(w)}")
    if not written:
        print("stubs are up to date")
    return 0


def cmd_fixtures(args) -> int:
    from .course import load
    from .fixturegen import generate

    course = load(getattr(args, "root", None), check_files=False)
    for p in generate(course, _select(course, args.exercise)):
        print(f"wrote {os.path.relpath(p)}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kata", description="The Transformer kata: exercises and a sandboxed grader.")
    p.add_argument("--version", action="version", version=f"kata {__version__}")
    p.add_argument("--lang", choices=["en", "zh"], help="language of messages (default: from the locale)")
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade a submission folder or .zip with every check")
    g.add_argument("path")
    g.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    g.add_argument("--exercise", "-e", action="append", help="grade only this exercise (repeatable)")
    g.add_argument("--public-only", action="store_true", help="run only the public checks")
    g.add_argument("--time-limit", type=float, metavar="S", help="cap every call's time limit at S seconds")
    g.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    g.set_defaults(func=cmd_grade)

    c = sub.add_parser("check", help="run the public checks of one exercise (or all) on exercises/")
    c.add_argument("id", nargs="?")
    c.set_defaults(func=cmd_check)

    r = sub.add_parser("run", help="run a listing of the book with your code (e.g. kata run 1.6 --book)")
    r.add_argument("listing", help="listing id: 1.6, or a worked example such as 1.11/softmax")
    r.add_argument("--book", action="store_true", help="print the book's printed output beside yours, and its errata")
    r.add_argument("--path", help="use this submission instead of exercises/ (e.g. solutions)")
    r.set_defaults(func=cmd_run)

    v = sub.add_parser("verify", help="developer check: stubs fail, solutions pass, files one-to-one")
    v.add_argument("--no-grade", action="store_true", help="skip grading the solutions and stubs")
    v.set_defaults(func=cmd_verify)

    s = sub.add_parser("stubs", help="regenerate exercises/ from solutions/ (backs up changed files)")
    s.add_argument("--check", action="store_true", help="only report stale stubs")
    s.set_defaults(func=cmd_stubs)

    f = sub.add_parser("fixtures", help="regenerate grader/fixtures/ from the solutions")
    f.add_argument("--exercise", "-e", action="append")
    f.set_defaults(func=cmd_fixtures)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.lang:
        os.environ["KATA_LANG"] = args.lang
    return int(args.func(args) or 0)


if __name__ == "__main__":
    raise SystemExit(main())
