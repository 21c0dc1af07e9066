"""The `kata` command.

    kata grade PATH [--json FILE] [--html FILE]  grade a submission (folder or .zip): all checks, hidden too
    kata grade DIR --out OUT [--jobs N]  grade every submission in a class folder, N at a time, resumably
    kata gradebook OUT              write the gradebook formats again from OUT's reports
    kata list [--json]              every exercise with its status, points and the course's progress
    kata check [ID] [--html FILE]   run the public checks against exercises/
    kata watch [ID]                 re-check the current exercise on every save; h: hint, q: quit
    kata hint [ID] [--all]          the next hint of an exercise
    kata reset ID                   restore an exercise's stub (the file replaced is backed up)
    kata run LISTING [--book] [--plot]  run a listing of the book with your code (and draw its figures)
    kata notebook ID|--all [--to-py] write exercises as notebooks (or their code back to the .py)
    kata submit [--out FILE]        zip your exercise files with a manifest for `kata grade`
    kata verify                     prove the course consistent (stubs fail, solutions pass, ...)
    kata stubs [--check]            regenerate exercises/ from solutions/
    kata fixtures                   regenerate grader/fixtures/ from the solutions
    kata train [--code student]     train the §1.23 BERT classifier (GPU if there is one)
    kata export nbgrader DIR        the course as an nbgrader course directory (autograded notebooks)
    kata release OUT                the student bundle: stubs, public checks, runtime; nothing hidden
    kata export gradescope OUT.zip  a Gradescope autograder (setup.sh, run_autograder, every check)
    kata assets fetch|status|pack FILE|unpack FILE   the data files, and moving them to offline machines
"""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from rich.console import Console

from . import __version__, atomic
from .messages import t


def _course(args, require_stubs: bool = True):
    from .course import CourseError, load

    try:
        return load(getattr(args, "root", None), require_stubs=require_stubs)
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
        print(_unknown_exercise(i, list(known)), file=sys.stderr)
        raise SystemExit(2)
    return chosen


def _unknown_exercise(given: str, known: list[str]) -> str:
    from .messages import t

    near = difflib.get_close_matches(given, known, n=3, cutoff=0.4)
    if not near:  # "softmax" for s1_11_softmax: a part of the id
        near = [k for k in known if given.lower() in k][:3]
    hint = t("unknown_exercise_near", near=", ".join(near)) if near else ""
    return t("unknown_exercise", id=given, hint=hint)


def _grade(course, path, exercises, public_only: bool):
    """Grade `path`; None (after saying why) when it cannot be graded at all."""
    from .checking import runner
    from .submission import SubmissionError, open_submission

    try:
        sub = open_submission(path, course.chapter, course.exercises)
    except SubmissionError as e:
        print(t("cannot_grade", path=path, reason=e), file=sys.stderr)
        return None
    with sub:
        return runner.run(course, sub, exercises, public_only=public_only)


def cmd_grade(args) -> int:
    from .batch import commands as batch

    if problem := batch.misuse(args):
        print(f"kata grade: {problem}", file=sys.stderr)
        return 2
    course = _course(args)
    exercises = _select(course, args.exercise)
    if args.out:  # a class folder: every submission in it
        return batch.grade(args, course, exercises)
    from .atomic import write_json
    from .report import print_table, to_dict
    if args.time_limit:
        for ex in exercises:
            ex.time_limit_s = min(ex.time_limit_s, args.time_limit)
    result = _grade(course, args.path, exercises, args.public_only)
    if result is None:
        if hint := batch.class_hint(args.path, course.chapter):
            print(hint, file=sys.stderr)
        return 2
    if args.json:
        write_json(args.json, to_dict(course, result))
    if not args.quiet:
        print_table(course, result, Console(), show_messages=True)
    if args.html:
        _html(course, args.path, to_dict(course, result), args.html)
    return 0


def cmd_gradebook(args) -> int:
    from .batch import commands as batch

    return batch.gradebook(args)


def _html(course, path, doc, out) -> None:
    from .feedback import write_html
    from .messages import t

    written, _ = write_html(course, path, doc, out)
    print(t("html_wrote", path=_shown(written)))


def _shown(path: Path) -> str:
    """A path as a student would type it: relative when under the current folder, else absolute."""
    path = Path(path).resolve()
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def cmd_check(args) -> int:
    from .student import checkview

    course = _course(args, require_stubs=False)
    outcome = checkview.check(course, _select(course, [args.id] if args.id else []), bool(args.id), Console())
    if args.html and outcome.result is not None:
        from .report import to_dict
        _html(course, course.exercises_dir, to_dict(course, outcome.result), args.html)
    return 0 if outcome.ok else 1


def cmd_list(args) -> int:
    from .messages import t
    from .student import listing, progress

    course = _course(args, require_stubs=False)
    err = Console(stderr=True)

    def running(exercises):
        err.print(t("list_running", count=len(exercises)), style="dim", highlight=False)

    found = progress.standings(course, run=not args.no_run, on_run=running)
    if args.json:
        listing.print_json(found)
    else:
        listing.show(course, found, Console())
    return 0


def _current(course, ex_id):
    """The exercise named, or the first one not passing (None when all pass)."""
    from .student import progress

    if ex_id:
        return _select(course, [ex_id])[0]
    nxt = progress.next_unsolved(progress.standings(course, run=False))
    return nxt.exercise if nxt else None


def cmd_hint(args) -> int:
    from .messages import t
    from .student import hints

    course = _course(args, require_stubs=False)
    ex = _current(course, args.id)
    if ex is None:
        print(t("list_all_done"))
        return 0
    hints.show(hints.reveal(course, ex, everything=args.all), Console())
    return 0


def cmd_reset(args) -> int:
    from .messages import t
    from .student import reset

    course = _course(args, require_stubs=False)
    for done in reset.reset(course, _select(course, args.id)):
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
    from .student.watch import Watch

    course = _course(args, require_stubs=False)
    start = _select(course, [args.id])[0] if args.id else None
    return Watch(course, start, Console()).run()


def cmd_run(args) -> int:
    from rich.table import Table
    from rich.text import Text

    from . import figures, listings
    from .checking.runner import open_exercise, sandbox_for
    from .messages import t
    from .safe_text import plain
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
        drawn = figures.draw(course, box, figs) if args.plot else []
    console = Console()
    titles = {item.id: item.display_title() for item in course.listings}
    title = t("listing_title", id=lst.id, exercise=ex.id, section=ex.section, title=titles.get(lst.id) or lst.title)
    ours = plain("\n".join(lines) + (f"\n✘ {error}" if error else ""))  # the student's values: no terminal control
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
    out = Path(args.out) if args.out else course.root / ".kata" / "plots"
    for d in drawn:
        if d.error:
            console.print(f"✘ {d.error}", style="red", highlight=False, markup=False, soft_wrap=True)
            continue
        atomic.write_bytes(out / d.file_name(lst.id), d.png, mode=0o644)
        print(t("plot_wrote", path=_shown(out / d.file_name(lst.id))), flush=True)  # unwrapped: a path to copy
    return 1 if error or any(d.error for d in drawn) else 0


def cmd_notebook(args) -> int:
    from .messages import t
    from .notebook import Backups, notebook_path, to_notebook, to_py

    course = _course(args)
    if not args.all and not args.id:
        print(f"kata notebook: {t('nb_choose')}", file=sys.stderr)
        return 2
    chosen = _select(course, [] if args.all else args.id)
    if args.all and args.to_py:  # every notebook there is
        chosen = [ex for ex in chosen if notebook_path(course, ex).exists()]
    backups, code = Backups(course), 0
    for ex in chosen:
        done = (to_py(course, ex, backups, args.force) if args.to_py
                else to_notebook(course, ex, backups, args.force))
        stream = sys.stdout if done.ok else sys.stderr
        print(done.message if done.ok else f"kata notebook: {done.message}", file=stream)
        if done.backup:
            print(t("backed_up", backup=os.path.relpath(done.backup)), file=stream)
        code = max(code, 0 if done.ok else 1 if done.action == "refused" else 2)
    return code


def cmd_submit(args) -> int:
    from pathlib import Path

    from .messages import t
    from .submit import SubmitError, submit

    course = _course(args)
    out = Path(args.out) if args.out else course.root / "kata-submission.zip"
    if not args.no_check:
        print(t("submit_running"), file=sys.stderr)
    try:
        done = submit(course, out, run_checks=not args.no_check)
    except SubmitError as e:
        print(f"kata submit: {e}", file=sys.stderr)
        return 2
    for note in done.notes:
        print(f"note: {note}")
    exercises = done.manifest["exercises"]
    for ex_id, e in exercises.items():
        if e["status"] in ("failing", "missing"):
            print(t("submit_status", id=ex_id, status=t(f"status_{e['status']}"), passed=e["passed"],
                    total=e["total"], graded=e["graded"] or "-"))
    n_files, shown = len(done.manifest["files"]), os.path.relpath(done.path)
    if args.no_check:
        print(t("submit_wrote_unchecked", out=shown, files=n_files))
    else:
        print(t("submit_wrote", out=shown, files=n_files, total=len(exercises),
                passing=sum(e["status"] == "passing" for e in exercises.values())))
    return 0


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
    if args.update_catalogs:
        for line in stubs.update_catalogs(course):
            print(line)
        return 0
    if args.check:
        stale = [ex.id for ex in course.exercises
                 if not (course.exercises_dir / ex.file).is_file()
                 or (course.exercises_dir / ex.file).read_text(encoding="utf-8") not in stubs.stub_variants(course, ex)]
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


def cmd_train(args) -> int:
    from .training.loop import main_cli

    course = _course(args)
    if args.code == "auto":
        args.code = "reference" if (course.root / "solutions").is_dir() else "student"
    return main_cli(args, course.root)


def cmd_release(args) -> int:
    try:
        from .release import ReleaseError, build
    except ImportError:  # a student bundle does not ship the tools that build it
        print("kata release: only in the instructor's course (this is a bundle kata release built)", file=sys.stderr)
        return 2

    course = _course(args)
    try:
        done = build(course, args.out, force=args.force, log=lambda m: print(f"kata release: {m}", file=sys.stderr),
                     lang=os.environ.get("KATA_LANG") or None)
    except ReleaseError as e:
        print(f"kata release: {e}", file=sys.stderr)
        return 2
    print(f"kata release: wrote {_shown(done.out)} in {done.duration_s:g} s: {done.exercises} exercises, "
          f"{done.public_checks} public checks ({done.hidden_checks} hidden checks left out), "
          f"{done.keys_kept} of {done.keys_total} fixture values, {done.calls} recorded reference calls; "
          "nothing hidden found inside")
    for note in done.notes:
        print(f"note: {note}")
    return 0


def cmd_export_gradescope(args) -> int:
    from .gradescope import ExportError, export

    course = _course(args)
    try:
        out, notes = export(course, args.out, args.hidden_visibility, args.results_lang or "", args.grading_sandbox)
    except ExportError as e:
        print(f"kata export: {e}", file=sys.stderr)
        return 2
    for note in notes:
        print(f"note: {note}")
    print(f"kata export: wrote {_shown(out)} ({out.stat().st_size / 2**20:.1f} MB): upload it as the assignment's "
          f"autograder; hidden checks are shown {args.hidden_visibility.replace('_', ' ')}")
    return 0


def cmd_assets(args) -> int:
    from . import assets
    from .messages import t

    def show(items) -> None:
        marks = {"ok": "✔", "skipped": "·"}
        for it in items:
            where = f"  {_shown(it.path)}" if it.path is not None else ""
            mark = marks.get(it.status, "·" if it.optional else "✘")
            print(f"{mark} {it.name:<16} {t('assets_status_' + it.status):<8} {it.detail}{where}")

    if args.action == "fetch":
        items = assets.fetch(log=lambda m: print(m, file=sys.stderr))
        show(items)
        failed = [it for it in items if it.status == "failed"]
        if failed:
            print(t("assets_fetch_failed", count=len(failed)), file=sys.stderr)
        return 1 if failed else 0
    if args.action == "status":
        show(assets.status())
        return 0
    if not args.file:
        print(f"kata assets {args.action}: give the archive's file name", file=sys.stderr)
        return 2
    try:
        if args.action == "pack":
            out, files, size = assets.pack(args.file)
            print(t("assets_packed", file=_shown(out), files=files, mb=f"{size / 2**20:.1f}", manifest=assets.MANIFEST,
                    name=out.name))
        else:
            installed = assets.unpack(args.file)
            print(t("assets_unpacked", files=len(installed), file=args.file))
            show(assets.status())
    except assets.AssetsError as e:
        print(f"kata assets: {e}", file=sys.stderr)
        return 2
    return 0


def _add_assets_parser(sub) -> None:
    a = sub.add_parser("assets", help="fetch the data files (tokenizer ranks, corpora), or move them to offline machines",
                       description="fetch: GPT-2's merge ranks, the offline corpus and, when the hub answers, IMDb into "
                                   ".kata/assets and .kata/data; status: what is there; pack FILE: all of it in one "
                                   "tar.gz with sha256s; unpack FILE: verify such a file and install it")
    a.add_argument("action", choices=["fetch", "status", "pack", "unpack"])
    a.add_argument("file", nargs="?", help="the archive (pack, unpack)")
    a.set_defaults(func=cmd_assets)


def _add_gradescope_target(targets) -> None:
    gs = targets.add_parser("gradescope", help="a Gradescope autograder zip: setup.sh and run_autograder, every check")
    gs.add_argument("out", help="the zip to write, e.g. autograder.zip")
    gs.add_argument("--hidden-visibility", default="after_published",
                    choices=["hidden", "after_due_date", "after_published", "visible"],
                    help="when students see the hidden checks' results (default: after_published)")
    gs.add_argument("--results-lang", choices=["en", "zh"], help="language of the results' messages (default: English)")
    gs.add_argument("--grading-sandbox", choices=["bubblewrap", "limits-only"], default="bubblewrap",
                    help="how Gradescope grades: bubblewrap (default; where it cannot start, no score is recorded "
                         "and the log says why) or limits-only (for a container that allows no namespaces; "
                         "every result says so)")
    gs.set_defaults(func=cmd_export_gradescope)


def cmd_export_nbgrader(args) -> int:
    import importlib.util

    from .export_nbgrader import ExportError, export
    from .messages import t

    course = _course(args)
    try:
        done = export(course, _select(course, args.exercise), Path(args.dir), by=args.by, force=args.force)
    except ExportError as e:
        print(f"kata export nbgrader: {e}", file=sys.stderr)
        return 2
    for path in done.written:
        print(t("nbg_wrote", path=_shown(path)))
    if done.unchanged:
        print(t("nbg_unchanged", count=len(done.unchanged)))
    if done.backups:
        print(t("nbg_backed_up", path=_shown(done.backups)))
    names = list(done.assignments)
    print(t("nbg_next", count=len(names), assignments=", ".join(names), first=names[0], folder=_shown(done.folder)))
    if importlib.util.find_spec("nbgrader") is None:
        print(t("nbg_not_installed"), file=sys.stderr)
    return 0


def _add_export_parser(sub) -> None:
    x = sub.add_parser("export", help="export the course to another grading platform (nbgrader, gradescope)")
    xs = x.add_subparsers(dest="target", required=True)
    nb = xs.add_parser("nbgrader", help="write an nbgrader course directory: one notebook per exercise, "
                                        "graded by the kata's grader outside any kernel",
                       description="Write DIR/nbgrader_config.py and DIR/source/<assignment>/<id>.ipynb from the "
                                   "solutions: nbgrader solution regions, and one autograded test cell per check "
                                   "(its points). The config makes `nbgrader autograde` run no cell: the kata's "
                                   "sandboxed grader grades each notebook and writes every check's outcome into "
                                   "its test cell, which nbgrader scores.")
    nb.add_argument("dir", help="the nbgrader course directory (created if missing)")
    nb.add_argument("--exercise", "-e", action="append", help="export only this exercise (repeatable)")
    nb.add_argument("--by", choices=["section", "exercise"], default="section",
                    help="one assignment per section (default, e.g. s1_11) or per exercise")
    nb.add_argument("--force", action="store_true",
                    help="replace files that differ (copied to DIR/.kata-backups/<time>/ first)")
    nb.set_defaults(func=cmd_export_nbgrader)
    _add_gradescope_target(xs)


def _add_train_parser(sub) -> None:
    from .training.config import TrainConfig

    d = TrainConfig()
    t = sub.add_parser("train", help="train the §1.23 BERT sentiment classifier (reference or your code)",
                       description="Train listing 1.35's classifier: GPU (bf16) if there is one, the attention "
                                   "fast path, AdamW with warmup and decay, the best checkpoint kept. "
                                   "Runs under torchrun for several processes (DDP).")
    t.add_argument("--code", default="auto", help="reference (solutions/), student (exercises/) or a folder "
                                                  "holding ch01/s1_23_classifier.py and ch01/s1_23_tokenizer.py: "
                                                  "the model and the tokenizer both come from there (default: "
                                                  "reference where solutions/ exists, else student)")
    t.add_argument("--data", default=d.data, help="offline (default: the offline corpus), imdb, synthetic[:N], "
                                                  "or a path (aclImdb folder, CSV, parquet)")
    t.add_argument("--out", default="", help="output folder (default .kata/runs/<time>)")
    for name in ("dim", "layers", "heads", "ff_dim", "max_len", "epochs", "batch_size", "eval_every", "max_steps",
                 "limit", "seed"):
        t.add_argument("--" + name.replace("_", "-"), type=int, default=getattr(d, name), dest=name)
    for name in ("lr", "weight_decay", "warmup", "clip", "val_fraction"):
        t.add_argument("--" + name.replace("_", "-"), type=float, default=getattr(d, name), dest=name)
    t.add_argument("--truncation", choices=["head", "head_tail"], default=d.truncation)
    t.add_argument("--device", choices=["auto", "cuda", "mps", "cpu"], default=d.device)
    t.add_argument("--amp", choices=["auto", "bf16", "off"], default=d.amp, help="bf16 autocast (auto: on CUDA)")
    t.add_argument("--compile", action="store_true", help="torch.compile the model")
    t.add_argument("--no-fast-attention", dest="fast_attention", action="store_false",
                   help="keep the model's own attention instead of scaled_dot_product_attention")
    t.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    t.set_defaults(func=cmd_train)


def build_parser() -> argparse.ArgumentParser:
    from .batch import commands as batch

    p = argparse.ArgumentParser(prog="kata", description="The Transformer kata: exercises and a sandboxed grader.")
    p.add_argument("--version", action="version", version=f"kata {__version__}")
    p.add_argument("--lang", choices=["en", "zh"], help="language of messages (default: from the locale)")
    _add_sandbox_option(p)
    sub = p.add_subparsers(dest="command", required=True)

    g = sub.add_parser("grade", help="grade a submission folder or .zip with every check")
    g.add_argument("path")
    g.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    g.add_argument("--exercise", "-e", action="append", help="grade only this exercise (repeatable)")
    g.add_argument("--public-only", action="store_true", help="run only the public checks")
    g.add_argument("--time-limit", type=float, metavar="S", help="cap every call's time limit at S seconds")
    g.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    g.add_argument("--html", metavar="FILE", help="also write a self-contained HTML feedback page (with figures)")
    batch.add_grade_options(g)
    g.set_defaults(func=cmd_grade)
    batch.add_gradebook_parser(sub).set_defaults(func=cmd_gradebook)

    c = sub.add_parser("check", help="run the public checks of one exercise (or all) on exercises/")
    c.add_argument("id", nargs="?")
    c.add_argument("--html", metavar="FILE", help="also write a self-contained HTML feedback page (with figures)")
    c.set_defaults(func=cmd_check)

    ls = sub.add_parser("list", help="every exercise by section with its status and points, and your progress")
    ls.add_argument("--json", action="store_true", help="print the list as JSON")
    ls.add_argument("--no-run", action="store_true", help="run nothing: exercises changed since their last check show as such")
    ls.set_defaults(func=cmd_list)

    w = sub.add_parser("watch", help="re-check the current exercise each time you save it (h: hint, q: quit)")
    w.add_argument("id", nargs="?", help="start here (default: the first exercise not passing)")
    w.set_defaults(func=cmd_watch)

    h = sub.add_parser("hint", help="show the next hint of an exercise (one more each time)")
    h.add_argument("id", nargs="?", help="default: the first exercise not passing")
    h.add_argument("--all", action="store_true", help="reveal every hint of the exercise at once")
    h.set_defaults(func=cmd_hint)

    rs = sub.add_parser("reset", help="restore an exercise's stub; the file it replaces is backed up in .kata/backups/")
    rs.add_argument("id", nargs="+")
    rs.set_defaults(func=cmd_reset)

    r = sub.add_parser("run", help="run a listing of the book with your code (e.g. kata run 1.6 --book)")
    r.add_argument("listing", help="listing id: 1.6, or a worked example such as 1.11/softmax")
    r.add_argument("--book", action="store_true", help="print the book's printed output beside yours, and its errata")
    r.add_argument("--path", help="use this submission instead of exercises/ (e.g. solutions)")
    r.add_argument("--plot", action="store_true", help="also draw the listing's figures from your code (PNG files)")
    r.add_argument("--out", metavar="DIR", help="folder for --plot's PNG files (default: .kata/plots/)")
    r.set_defaults(func=cmd_run)

    n = sub.add_parser("notebook", help="write exercises as Jupyter notebooks beside their .py (or, with --to-py, back)")
    n.add_argument("id", nargs="*", help="exercise id(s)")
    n.add_argument("--all", action="store_true", help="every exercise")
    n.add_argument("--to-py", action="store_true", help="copy each notebook's code into its .py (the .py is backed up first)")
    n.add_argument("--force", action="store_true",
                   help="replace even a file saved after its source, or an unreadable notebook (backed up first)")
    n.set_defaults(func=cmd_notebook)

    sm = sub.add_parser("submit", help="zip your exercise files (.py and notebooks) with a manifest for `kata grade`")
    sm.add_argument("--out", metavar="FILE", help="where to write the zip (default: kata-submission.zip in the project folder)")
    sm.add_argument("--no-check", action="store_true", help="do not run the public checks (the manifest says 'not run')")
    sm.set_defaults(func=cmd_submit)

    v = sub.add_parser("verify", help="developer check: stubs fail, solutions pass, files one-to-one")
    v.add_argument("--no-grade", action="store_true", help="skip grading the solutions and stubs")
    v.set_defaults(func=cmd_verify)

    s = sub.add_parser("stubs", help="regenerate exercises/ from solutions/ (backs up changed files)")
    s.add_argument("--check", action="store_true", help="only report stale stubs (in any language)")
    s.add_argument("--update-catalogs", action="store_true",
                   help="add the solutions' new or changed English texts to the translation catalogs "
                        "(locale/<lang>/), then stop")
    s.set_defaults(func=cmd_stubs)

    f = sub.add_parser("fixtures", help="regenerate grader/fixtures/ from the solutions")
    f.add_argument("--exercise", "-e", action="append")
    f.set_defaults(func=cmd_fixtures)

    _add_train_parser(sub)

    rl = sub.add_parser("release", help="write the student bundle: stubs, public checks and the runtime, nothing hidden")
    rl.add_argument("out", help="the bundle's folder (new, or an earlier bundle with --force)")
    rl.add_argument("--force", action="store_true", help="replace an earlier bundle in OUT")
    rl.set_defaults(func=cmd_release)
    _add_export_parser(sub)
    _add_assets_parser(sub)
    for command in ("grade", "check", "list", "watch", "run", "submit", "verify", "release"):
        if command in sub.choices:
            _add_sandbox_option(sub.choices[command])
    for parser in sub.choices.values():  # `kata stubs --lang zh` as well as `kata --lang zh stubs`
        parser.add_argument("--lang", choices=["en", "zh"], default=argparse.SUPPRESS,
                            help="language of messages and of the exercises written (default: from the locale)")
    return p


def _add_sandbox_option(parser: argparse.ArgumentParser) -> None:
    """--sandbox, before or after the command (`kata --sandbox limits-only check`, `kata grade X
    --sandbox limits-only`). Limits-only grading is only ever this explicit choice (or
    KATA_SANDBOX=none): a missing or broken bubblewrap stops the command instead."""
    parser.add_argument("--sandbox", choices=["bubblewrap", "limits-only"], default=argparse.SUPPRESS,
                        help="bubblewrap (the default; the command stops if it cannot start), or limits-only: "
                             "resource limits without isolation, only for code you trust (your own)")


def main(argv=None) -> int:
    from .atomic import EXIT, WriteError

    from .worker.sandbox import EXIT as SANDBOX_EXIT
    from .worker.sandbox import SandboxUnavailable

    args = build_parser().parse_args(argv)
    if args.lang:
        os.environ["KATA_LANG"] = args.lang
    before = os.environ.get("KATA_SANDBOX")
    if getattr(args, "sandbox", None):  # in the environment, so that batch grading processes see it too
        os.environ["KATA_SANDBOX"] = "none" if args.sandbox == "limits-only" else "bwrap"
    try:
        return int(args.func(args) or 0)
    except SandboxUnavailable as e:  # nothing was graded: a grader error, never a score of zero
        print(f"kata {args.command}: {e}", file=sys.stderr)
        return SANDBOX_EXIT
    except WriteError as e:  # a full disk, a read-only folder: said plainly, never a traceback
        print(f"kata {args.command}: {e}", file=sys.stderr)
        print(t("write_hint_full" if e.full else "write_hint_other", path=e.path), file=sys.stderr)
        return EXIT
    finally:  # main() called in-process (the tests) leaves the environment as it found it
        if before is None:
            os.environ.pop("KATA_SANDBOX", None)
        else:
            os.environ["KATA_SANDBOX"] = before


if __name__ == "__main__":
    raise SystemExit(main())
