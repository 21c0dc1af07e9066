"""The `kata` command: its arguments, and the dispatch to each command's body in its part
(student/, authoring/, capstone/ and instructor/commands.py; a class folder: instructor/batch/).

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
    kata stubs [--check] [--lang]   regenerate exercises/ from solutions/ (in English or Chinese)
    kata fixtures                   regenerate grader/fixtures/ from the solutions
    kata train [--code student]     train the §1.23 BERT classifier (GPU if there is one)
    kata export nbgrader DIR        the course as an nbgrader course directory (autograded notebooks)
    kata release OUT                the student bundle: stubs, public checks, runtime; nothing hidden
    kata export gradescope OUT.zip  a Gradescope autograder (setup.sh, run_autograder, every check)
    kata assets fetch|status|pack FILE|unpack FILE   the data files, and moving them to offline machines
"""
from __future__ import annotations

import argparse
import os
import sys

from . import __version__
from .authoring import commands as authoring
from .capstone import commands as capstone
from .course.messages import t
from .instructor import commands as instructor
from .student import commands as student


def _add_assets_parser(sub) -> None:
    a = sub.add_parser("assets", help="fetch the data files (tokenizer ranks, corpora), or move them to offline machines",
                       description="fetch: GPT-2's merge ranks, the offline corpus and, when the hub answers, IMDb into "
                                   ".kata/assets and .kata/data; status: what is there; pack FILE: all of it in one "
                                   "tar.gz with sha256s; unpack FILE: verify such a file and install it")
    a.add_argument("action", choices=["fetch", "status", "pack", "unpack"])
    a.add_argument("file", nargs="?", help="the archive (pack, unpack)")
    a.set_defaults(func=capstone.cmd_assets)


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
    gs.set_defaults(func=instructor.cmd_export_gradescope)


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
    nb.set_defaults(func=instructor.cmd_export_nbgrader)
    _add_gradescope_target(xs)


def _add_train_parser(sub) -> None:
    from .capstone.training.config import TrainConfig

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
    t.set_defaults(func=capstone.cmd_train)


def build_parser() -> argparse.ArgumentParser:
    from .instructor.batch import commands as batch

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
    g.set_defaults(func=instructor.cmd_grade)
    batch.add_gradebook_parser(sub).set_defaults(func=instructor.cmd_gradebook)

    c = sub.add_parser("check", help="run the public checks of one exercise (or all) on exercises/")
    c.add_argument("id", nargs="?")
    c.add_argument("--html", metavar="FILE", help="also write a self-contained HTML feedback page (with figures)")
    c.set_defaults(func=student.cmd_check)

    ls = sub.add_parser("list", help="every exercise by section with its status and points, and your progress")
    ls.add_argument("--json", action="store_true", help="print the list as JSON")
    ls.add_argument("--no-run", action="store_true", help="run nothing: exercises changed since their last check show as such")
    ls.set_defaults(func=student.cmd_list)

    w = sub.add_parser("watch", help="re-check the current exercise each time you save it (h: hint, q: quit)")
    w.add_argument("id", nargs="?", help="start here (default: the first exercise not passing)")
    w.set_defaults(func=student.cmd_watch)

    h = sub.add_parser("hint", help="show the next hint of an exercise (one more each time)")
    h.add_argument("id", nargs="?", help="default: the first exercise not passing")
    h.add_argument("--all", action="store_true", help="reveal every hint of the exercise at once")
    h.set_defaults(func=student.cmd_hint)

    rs = sub.add_parser("reset", help="restore an exercise's stub; the file it replaces is backed up in .kata/backups/")
    rs.add_argument("id", nargs="+")
    rs.set_defaults(func=student.cmd_reset)

    r = sub.add_parser("run", help="run a listing of the book with your code (e.g. kata run 1.6 --book)")
    r.add_argument("listing", help="listing id: 1.6, or a worked example such as 1.11/softmax")
    r.add_argument("--book", action="store_true", help="print the book's printed output beside yours, and its errata")
    r.add_argument("--path", help="use this submission instead of exercises/ (e.g. solutions)")
    r.add_argument("--plot", action="store_true", help="also draw the listing's figures from your code (PNG files)")
    r.add_argument("--out", metavar="DIR", help="folder for --plot's PNG files (default: .kata/plots/)")
    r.set_defaults(func=student.cmd_run)

    n = sub.add_parser("notebook", help="write exercises as Jupyter notebooks beside their .py (or, with --to-py, back)")
    n.add_argument("id", nargs="*", help="exercise id(s)")
    n.add_argument("--all", action="store_true", help="every exercise")
    n.add_argument("--to-py", action="store_true", help="copy each notebook's code into its .py (the .py is backed up first)")
    n.add_argument("--force", action="store_true",
                   help="replace even a file saved after its source, or an unreadable notebook (backed up first)")
    n.set_defaults(func=student.cmd_notebook)

    sm = sub.add_parser("submit", help="zip your exercise files (.py and notebooks) with a manifest for `kata grade`")
    sm.add_argument("--out", metavar="FILE", help="where to write the zip (default: kata-submission.zip in the project folder)")
    sm.add_argument("--no-check", action="store_true", help="do not run the public checks (the manifest says 'not run')")
    sm.set_defaults(func=student.cmd_submit)

    v = sub.add_parser("verify", help="developer check: stubs fail, solutions pass, files one-to-one")
    v.add_argument("--no-grade", action="store_true", help="skip grading the solutions and stubs")
    v.set_defaults(func=authoring.cmd_verify)

    s = sub.add_parser("stubs", help="regenerate exercises/ from solutions/ (backs up changed files)")
    s.add_argument("--check", action="store_true", help="only report stale stubs (in any language)")
    s.add_argument("--update-catalogs", action="store_true",
                   help="add the solutions' new or changed English texts to the translation catalogs "
                        "(locale/<lang>/), then stop")
    s.set_defaults(func=authoring.cmd_stubs)

    f = sub.add_parser("fixtures", help="regenerate grader/fixtures/ from the solutions")
    f.add_argument("--exercise", "-e", action="append")
    f.set_defaults(func=authoring.cmd_fixtures)

    _add_train_parser(sub)

    rl = sub.add_parser("release", help="write the student bundle: stubs, public checks and the runtime, nothing hidden")
    rl.add_argument("out", help="the bundle's folder (new, or an earlier bundle with --force)")
    rl.add_argument("--force", action="store_true", help="replace an earlier bundle in OUT")
    rl.set_defaults(func=instructor.cmd_release)
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
    from .course.atomic import EXIT, WriteError

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
