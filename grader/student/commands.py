"""The student's commands: `kata check`, `list`, `hint`, `reset`, `watch`, `run`, `notebook` and
`submit`."""

from __future__ import annotations

import difflib
import os
import sys
from pathlib import Path

from rich.console import Console

from ..course import atomic
from ..course.commandline import load_course, select, shown
from ..course.messages import t


def _html(course, path, doc, out) -> None:
    from ..reports.report_html import write_html

    written, _ = write_html(course, path, doc, out)
    print(t("html_wrote", path=shown(written)))


def cmd_check(args) -> int:
    from . import checkview

    course = load_course(args, require_stubs=False)
    outcome = checkview.check(
        course,
        select(course, [args.id] if args.id else []),
        bool(args.id),
        Console(),
        full=bool(getattr(args, "full", False)),
    )
    if args.html and outcome.result is not None:
        from ..reports.report import to_dict

        _html(course, course.exercises_dir, to_dict(course, outcome.result), args.html)
    return 0 if outcome.ok else 1


def cmd_list(args) -> int:
    from . import listing, progress

    course = load_course(args, require_stubs=False)
    err = Console(stderr=True)

    def running(exercises):
        err.print(t("list_running", count=len(exercises)), style="dim", highlight=False)

    found = progress.standings(course, run=not args.no_run, on_run=running)
    if args.json:
        listing.print_json(found, course)
    else:
        listing.show(course, found, Console())
    return 0


def _current(course, ex_id):
    """The exercise named, or the first one not passing (None when all pass)."""
    from . import progress

    if ex_id:
        return select(course, [ex_id])[0]
    nxt = progress.next_unsolved(progress.standings(course, run=False))
    return nxt.exercise if nxt else None


def cmd_hint(args) -> int:
    from . import hints

    course = load_course(args, require_stubs=False)
    ex = _current(course, args.id)
    if ex is None:
        print(t("list_all_done"))
        return 0
    hints.show(hints.reveal(course, ex, everything=args.all), Console())
    return 0


def cmd_reset(args) -> int:
    from . import reset

    course = load_course(args, require_stubs=False)
    for done in reset.reset(course, select(course, args.id)):
        ex = done.exercise
        path = f"exercises/{ex.file}"
        if not done.changed:
            print(t("reset_unchanged", path=path))
        elif done.backup:
            print(t("reset_done_backup", path=path, backup=os.path.relpath(done.backup, course.root)))
        else:
            print(t("reset_done", path=path))
    return 0


def cmd_watch(args) -> int:
    from .watch import Watch

    course = load_course(args, require_stubs=False)
    start = select(course, [args.id])[0] if args.id else None
    return Watch(course, start, Console()).run()


def cmd_run(args) -> int:
    """`kata run 1.6` runs listing 1.6; `kata run §1.11` every listing of section 1.11's exercises."""
    from .. import listings

    course = load_course(args)
    registry = listings.load(course)
    asked = args.listing.strip()
    if asked.startswith("§"):  # a section of the book: every listing of its exercises, in order
        section = asked.lstrip("§").strip()
        ids = [i for i, lst in registry.items() if course.get(lst.exercise).section == section]
        if not ids:
            sections = sorted(
                {course.get(lst.exercise).section for lst in registry.values()},
                key=lambda s: [int(x) if x.isdigit() else x for x in s.split(".")],
            )
            print(t("no_section_listing", section=section, known=", ".join("§" + s for s in sections)), file=sys.stderr)
            return 2
        rcs = [_run_listing(args, course, registry[i]) for i in ids]
        return max(rcs)
    lst = registry.get(asked)
    if lst is None:
        near = difflib.get_close_matches(asked, list(registry), n=3, cutoff=0.3)
        hint = t("did_you_mean", names=", ".join(near)) if near else ""
        print(t("no_listing", id=asked, hint=hint, known=", ".join(sorted(registry))), file=sys.stderr)
        return 2
    section = course.get(lst.exercise).section
    if section != asked and any(course.get(o.exercise).section == asked for o in registry.values()):
        # "1.11" is listing 1.11 (of §1.13) and also a section: say so before running the listing
        print(t("listing_not_section", id=asked, section=section), file=sys.stderr)
    return _run_listing(args, course, lst)


def _run_listing(args, course, lst) -> int:
    """One listing with the student's code (or --path), as `kata run` prints it."""
    from rich.text import Text

    from .. import listings
    from ..checking.runner import open_exercise, sandbox_for
    from ..checking.submission import SubmissionError, open_submission
    from ..course.safe_text import plain
    from ..reports import figures
    from ..worker.client import WorkerFault
    from ..worker.proxy import StudentError

    ex = course.get(lst.exercise)
    figs = listings.FIGURES.get(lst.id, [])
    if args.plot and not figs:
        print(t("plot_none", listing=lst.id, known=", ".join(sorted(listings.FIGURES))), file=sys.stderr)
        return 2
    path = args.path or course.exercises_dir
    try:
        sub = open_submission(path, course.chapter, course.exercises)
    except SubmissionError as e:
        print(f"kata: {e}", file=sys.stderr)
        return 2
    lines: list[str] = []

    def show(*values) -> None:
        lines.append(" ".join(str(v) for v in values))

    error = ""
    with sub, sandbox_for(course, sub) as box:
        try:
            worker, remote = open_exercise(box, ex, course=course)
            try:
                lst.run(remote, show)
            finally:
                worker.close()
        except (StudentError, WorkerFault) as e:
            error = str(e)
        drawn = figures.draw(course, box, figs, budget_s=course.budget_s) if args.plot else []
    console = Console()
    titles = {item.id: item.display_title() for item in course.listings}
    title = t("listing_title", id=lst.id, exercise=ex.id, section=ex.section, title=titles.get(lst.id) or lst.title)
    ours = plain("\n".join(lines) + (f"\n✘ {error}" if error else ""))  # the student's values: no terminal control
    if args.book:
        book = lst.book or t("beyond_book_listing" if ex.beyond_book else "nothing_printed")
        console.print(
            book_view(
                title,
                t("your_code", path="exercises/" if args.path is None else args.path),
                ours,
                t("book_prints"),
                book,
                console.width,
            )
        )
        from ..course.messages import language
        from ..listings import errata

        for entry in errata.entries(course.root, lst.errata, language()):
            console.print(Text(t("errata", entry=entry), style="yellow"))
    else:
        console.print(f"[bold]{title}[/]")
        console.print(ours, highlight=False, markup=False)
    out = Path(args.out) if args.out else course.root / ".kata" / "plots"
    for d in drawn:
        if d.error:
            console.print(f"✘ {d.error}", style="red", highlight=False, markup=False, soft_wrap=True)
            continue
        atomic.write_bytes(out / d.file_name(lst.id), d.png, mode=0o644)
        print(t("plot_wrote", path=shown(out / d.file_name(lst.id))), flush=True)  # unwrapped: a path to copy
    return 1 if error or any(d.error for d in drawn) else 0


def cmd_notebook(args) -> int:
    from ..checking.notebook import Backups, notebook_path, to_notebook, to_py

    course = load_course(args)
    if not args.all and not args.id:
        print(f"kata notebook: {t('nb_choose')}", file=sys.stderr)
        return 2
    chosen = select(course, [] if args.all else args.id)
    if args.all and args.to_py:  # every notebook there is
        chosen = [ex for ex in chosen if notebook_path(course, ex).exists()]
    backups, code = Backups(course), 0
    for ex in chosen:
        done = to_py(course, ex, backups, args.force) if args.to_py else to_notebook(course, ex, backups, args.force)
        stream = sys.stdout if done.ok else sys.stderr
        print(done.message if done.ok else f"kata notebook: {done.message}", file=stream)
        if done.backup:
            print(t("backed_up", backup=os.path.relpath(done.backup)), file=stream)
        code = max(code, 0 if done.ok else 1 if done.action == "refused" else 2)
    return code


def cmd_submit(args) -> int:
    from pathlib import Path

    from .submit import SubmitError, student_folder, submit

    course = load_course(args)
    folder = student_folder(Path.cwd())  # the student's folder, never the installed course's (submit.py)
    if folder is None:
        print(f"kata submit: {t('submit_no_folder', here=Path.cwd())}", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else folder / "kata-submission.zip"

    def starting(ex_dir, n_files):
        print(t("submit_packing", folder=ex_dir, files=n_files))
        if not args.no_check:
            print(t("submit_running"), file=sys.stderr)

    try:
        done = submit(
            course,
            out,
            run_checks=not args.no_check,
            folder=folder,
            anyway=getattr(args, "anyway", False),
            on_start=starting,
        )
    except SubmitError as e:
        print(f"kata submit: {e}", file=sys.stderr)
        return 2
    for note in done.notes:
        print(f"note: {note}")
    exercises = done.manifest["exercises"]
    for ex_id, e in exercises.items():
        if e["status"] in ("failing", "missing"):
            print(
                t(
                    "submit_status",
                    id=ex_id,
                    status=t(f"status_{e['status']}"),
                    passed=e["passed"],
                    total=e["total"],
                    graded=e["graded"] or "-",
                )
            )
    n_files, written = len(done.manifest["files"]), os.path.relpath(done.path)
    if args.no_check:
        print(t("submit_wrote_unchecked", out=written, files=n_files))
    else:
        print(
            t(
                "submit_wrote",
                out=written,
                files=n_files,
                total=len(exercises),
                passing=sum(e["status"] == "passing" for e in exercises.values()),
            )
        )
    return 0


def book_view(title: str, mine: str, ours: str, theirs: str, book: str, width: int):
    """Your output beside the book's when both fit on the terminal's lines; else one above the
    other, so that no printed line (a row of a tensor) is broken inside a narrow column."""
    from rich.cells import cell_len
    from rich.console import Group
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    def widest(text: str) -> int:
        return max((cell_len(line) for line in text.splitlines()), default=0)

    if max(widest(ours), cell_len(mine)) + max(widest(book), cell_len(theirs)) + 7 <= width:
        table = Table(title=title, show_lines=True)
        table.add_column(mine)
        table.add_column(theirs)
        table.add_row(ours, book)
        return table
    return Group(
        Text(title, style="bold"),
        Panel(ours, title=mine, title_align="left", expand=False),
        Panel(book, title=theirs, title_align="left", expand=False),
    )
