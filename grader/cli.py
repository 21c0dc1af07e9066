"""The `kata` command: its arguments, and the dispatch to each command's body in its part
(student/, authoring/, capstone/ and instructor/commands.py; a class folder: instructor/batch/).

    kata grade PATH [--json FILE] [--html FILE]  grade a submission (folder or .zip): all checks, hidden too
    kata grade DIR --out OUT [--jobs N]  grade every submission in a class folder, N at a time, resumably
    kata grade DIR --out OUT --shard K/N  only the K-th of N parts of the class (one task of a job array)
    kata gradebook OUT [--merge OUT1 ...]  write the gradebook formats again from OUT's reports (merging shards)
    kata similarity DIR --out OUT   pairs of students whose code is alike, per exercise (the stubs never count)
    kata list [--json]              every exercise with its status, points and the course's progress
    kata check [ID] [--html FILE]   run the public checks against exercises/
    kata watch [ID]                 re-check the current exercise on every save; h: hint, q: quit
    kata hint [ID] [--all]          the next hint of an exercise
    kata reset ID                   restore an exercise's stub (the file replaced is backed up)
    kata run LISTING [--book] [--plot]  run a listing of the book with your code (and draw its figures)
    kata notebook ID|--all [--to-py] write exercises as notebooks (or their code back to the .py)
    kata submit [--out FILE]        zip your exercise files with a manifest for `kata grade`
    kata new ID [--section 1.x]     write a new exercise's skeleton and print what is left (CONTRIBUTING.md)
    kata verify [--draft]           prove the course consistent (stubs fail, solutions pass, ...); --draft: Chinese pending
    kata stubs [--check] [--lang]   regenerate exercises/ from solutions/ (in English or Chinese)
    kata fixtures                   regenerate grader/fixtures/ from the solutions
    kata train [--code student]     train the §1.23 BERT classifier (GPU if there is one)
    kata export nbgrader DIR        the course as an nbgrader course directory (autograded notebooks)
    kata release OUT [-a ID]        the student bundle (of one assignment): stubs, public checks, runtime; nothing hidden
    kata export gradescope OUT.zip  a Gradescope autograder (setup.sh, run_autograder, every check)
    kata assets fetch|status|pack FILE [--with-wheels]|unpack FILE|lock   the data files (and wheels) for offline machines
"""

from __future__ import annotations

import argparse
import os
import sys

from . import __version__
from .authoring import commands as authoring
from .capstone import commands as capstone
from .course.cli_text import argparse_words, chosen_language, lang_option, translate, untranslated
from .course.messages import language, t
from .course.safe_text import escaped
from .instructor import commands as instructor
from .instructor.similarity import commands as similarity
from .student import commands as student


def _add_assets_parser(sub) -> None:
    a = sub.add_parser(
        "assets",
        help="fetch the data files (tokenizer ranks, corpora), or move them to offline machines",
        description="fetch: GPT-2's merge ranks, the offline corpus and, when the hub answers, IMDb into "
        ".kata/assets and .kata/data; status: what is there; pack FILE: all of it in one "
        "tar.gz with sha256s (--with-wheels: and every wheel setup.sh installs); "
        "unpack FILE: verify such a file and install it; lock (course developers): write "
        "wheels.lock, the sha256 of every wheel pack --with-wheels packs, which unpack "
        "and setup.sh require",
    )
    a.add_argument(
        "action",
        choices=["fetch", "status", "pack", "unpack", "lock"],
        help="fetch: download the data files into the cache (.kata/assets, .kata/data), each sha256-checked; "
        "status: what the cache holds, verified; pack FILE: the cache in one tar.gz (--with-wheels: and "
        "the wheels setup.sh installs); unpack FILE: check such a file, then install it; lock (course "
        "developers): write wheels.lock",
    )
    a.add_argument("file", nargs="?", help="the archive (pack, unpack)")
    a.add_argument(
        "--with-wheels",
        action="store_true",
        help="pack: also every wheel setup.sh installs (pip download, from the index pip uses here), "
        "so that `KATA_ASSETS_FILE=FILE ./setup.sh` installs on lab machines with no package index",
    )
    a.add_argument(
        "--python-version",
        metavar="X.Y",
        help="pack --with-wheels (implied), lock: the lab machines' Python (default: this interpreter's)",
    )
    a.add_argument(
        "--platform",
        action="append",
        metavar="TAG",
        help="pack --with-wheels (implied), lock: a pip platform tag of the lab machines, e.g. manylinux_2_28_x86_64; "
        "repeatable (default: this machine's)",
    )
    a.set_defaults(func=capstone.cmd_assets)


def _add_selection(parser, verb: str, exercises: bool = True) -> None:
    """-e (an id, a section such as 1.11, or an id prefix such as s1_11) and --assignment."""
    if exercises:
        parser.add_argument(
            "--exercise",
            "-e",
            action="append",
            metavar="ID",
            help=f"{verb} only this exercise, section (1.11) or id prefix (s1_11); repeatable",
        )
    parser.add_argument(
        "--assignment",
        "-a",
        metavar="ID",
        help=f"{verb} only the exercises of this [[assignment]] of course.toml (e.g. week2), "
        "its points scaled to the assignment's",
    )


def _add_gradescope_target(targets) -> None:
    gs = targets.add_parser("gradescope", help="a Gradescope autograder zip: setup.sh and run_autograder, every check")
    gs.add_argument("out", help="the zip to write, e.g. autograder.zip")
    gs.add_argument(
        "--hidden-visibility",
        default="after_published",
        choices=["hidden", "after_due_date", "after_published", "visible"],
        help="when students see the hidden checks' results (default: after_published)",
    )
    gs.add_argument("--results-lang", choices=["en", "zh"], help="language of the results' messages (default: English)")
    gs.add_argument(
        "--grading-sandbox",
        choices=["bubblewrap", "limits-only"],
        default="bubblewrap",
        help="how Gradescope grades: bubblewrap (default; where it cannot start, no score is recorded "
        "and the log says why) or limits-only (for a container that allows no namespaces; "
        "every result says so)",
    )
    _add_selection(gs, "grade")
    gs.set_defaults(func=instructor.cmd_export_gradescope)
    _add_course_option(gs)


def _add_course_option(parser) -> None:
    """The instructor's commands grade and export with the grader's own course (grader/course/identity.py)."""
    parser.add_argument(
        "--course",
        metavar="DIR",
        help="the course that grades (the folder holding course.toml; default: the course this "
        "kata is installed from, never one found in or above the graded folder)",
    )


def _add_export_parser(sub) -> None:
    x = sub.add_parser("export", help="export the course to another grading platform (nbgrader, gradescope)")
    xs = x.add_subparsers(dest="target", required=True)
    nb = xs.add_parser(
        "nbgrader",
        help="write an nbgrader course directory: one notebook per exercise, "
        "graded by the kata's grader outside any kernel",
        description="Write DIR/nbgrader_config.py and DIR/source/<assignment>/<id>.ipynb from the "
        "solutions: nbgrader solution regions, and one autograded test cell per check "
        "(its points). The config makes `nbgrader autograde` run no cell: the kata's "
        "sandboxed grader grades each notebook and writes every check's outcome into "
        "its test cell, which nbgrader scores.",
    )
    nb.add_argument("dir", help="the nbgrader course directory (created if missing)")
    _add_selection(nb, "export")
    nb.add_argument(
        "--by",
        choices=["section", "exercise"],
        default="section",
        help="one assignment per section (default, e.g. s1_11) or per exercise",
    )
    nb.add_argument(
        "--force", action="store_true", help="replace files that differ (copied to DIR/.kata-backups/<time>/ first)"
    )
    nb.set_defaults(func=instructor.cmd_export_nbgrader)
    _add_course_option(nb)
    _add_gradescope_target(xs)


# kata train's numeric options: (name, type, help); the defaults come from TrainConfig
TRAIN_NUMBERS = (
    ("dim", int, "model width: the embedding and hidden size (default %(default)s)"),
    ("layers", int, "encoder blocks (default %(default)s)"),
    ("heads", int, "attention heads per block; must divide --dim (default %(default)s)"),
    ("ff_dim", int, "hidden width of each block's feed-forward network (default %(default)s)"),
    (
        "max_len",
        int,
        "tokens per review, [CLS] and [SEP] included; longer reviews are cut (--truncation) (default %(default)s)",
    ),
    ("epochs", int, "passes over the training split (default %(default)s)"),
    (
        "batch_size",
        int,
        "reviews per training step, per process under torchrun (default %(default)s: 64 on CUDA, 32 elsewhere)",
    ),
    ("eval_every", int, "validate every N steps (default %(default)s: once per epoch)"),
    ("max_steps", int, "stop after N training steps (default %(default)s: train every epoch)"),
    (
        "limit",
        int,
        "train on at most N examples of the training set, drawn with --seed, before the "
        "validation split is taken (default %(default)s: all)",
    ),
    (
        "seed",
        int,
        "random seed: initial weights, shuffling, the validation split, --limit's draw (default %(default)s)",
    ),
    (
        "lr",
        float,
        "peak learning rate of AdamW, reached after --warmup and then decayed linearly to 0 (default %(default)s)",
    ),
    ("weight_decay", float, "AdamW's weight decay, on weight matrices only, not biases or norms (default %(default)s)"),
    ("warmup", float, "share of all steps over which the learning rate rises linearly to --lr (default %(default)s)"),
    ("clip", float, "clip the gradients' norm to this value; 0: no clipping (default %(default)s)"),
    (
        "val_fraction",
        float,
        "share of the training set held out for validation, which picks the best checkpoint (default %(default)s)",
    ),
)


def _add_similarity_parser(sub) -> None:
    from .instructor.similarity import DEFAULT_THRESHOLD, MIN_TOKENS  # not run.py: it loads numpy

    sim = sub.add_parser(
        "similarity",
        help="find pairs of students whose code is alike, exercise by exercise (copydetect)",
        description="Compare every pair of submissions in a class folder, exercise by exercise, with copydetect's "
        "winnowing fingerprints: names, comments and the order of functions do not matter, and the "
        "stub each student was given (exercises/) never counts. Writes OUT/similarity.csv (every "
        "pair), similarity.md (the pairs above the threshold, ranked) and similarity.html (each flagged "
        "pair side by side, the matching regions highlighted). The code is read as text, never run.",
    )
    sim.add_argument(
        "path",
        metavar="DIR",
        help="the class folder: one entry per student (folders, zips, notebooks), "
        "as `kata grade DIR --out OUT` takes it",
    )
    sim.add_argument(
        "--out",
        metavar="OUT",
        required=True,
        help="where to write the results; the folder of `kata grade DIR --out OUT` adds a Similarity "
        "section to its summary.md",
    )
    sim.add_argument(
        "--threshold",
        type=similarity.threshold,
        default=DEFAULT_THRESHOLD,
        metavar="X",
        help="flag a pair when at least this share of either student's own code (not the stub's) is "
        "also in the other's: a fraction or a percentage (default %(default)s; copies with renamed "
        "names and comments score about 0.9-1, independent solutions below 0.3); fewer than "
        f"{MIN_TOKENS} matching tokens never flag a pair",
    )
    sim.add_argument(
        "--exercise",
        "-e",
        action="append",
        metavar="ID",
        help="compare only this exercise, section (1.11) or id prefix (s1_11); repeatable",
    )
    sim.add_argument(
        "--assignment",
        "-a",
        metavar="ID",
        help="compare only the exercises of this [[assignment]] of course.toml (e.g. week2)",
    )
    sim.set_defaults(func=similarity.cmd_similarity)


def _add_train_parser(sub) -> None:
    from .capstone.training.config import TrainConfig

    d = TrainConfig()
    train = sub.add_parser(
        "train",
        help="train the §1.23 BERT sentiment classifier (reference or your code)",
        description="Train listing 1.35's classifier: GPU (bf16) if there is one, the attention "
        "fast path, AdamW with warmup and decay, the best checkpoint kept. "
        "Runs under torchrun for several processes (DDP).",
    )
    train.add_argument(
        "--code",
        default="auto",
        help="reference (solutions/), student (exercises/) or a folder "
        "holding ch01/s1_23_classifier.py and ch01/s1_23_tokenizer.py: "
        "the model and the tokenizer both come from there (default: "
        "reference where solutions/ exists, else student)",
    )
    train.add_argument(
        "--data",
        default=d.data,
        help="offline (default: the offline corpus), imdb, synthetic[:N], or a path (aclImdb folder, CSV, parquet)",
    )
    train.add_argument("--out", default="", help="output folder (default .kata/runs/<time>)")
    for name, kind, text in TRAIN_NUMBERS:
        train.add_argument("--" + name.replace("_", "-"), type=kind, default=getattr(d, name), dest=name, help=text)
    train.add_argument(
        "--pretrain-mlm",
        type=int,
        default=d.pretrain_mlm,
        dest="pretrain_mlm",
        metavar="STEPS",
        help="beyond the book: first pre-train the encoder for STEPS steps as a masked language model "
        "(the s1_23_mlm exercise from --code) on the source's unlabelled text (the offline "
        "corpus's neutral posts, IMDb's unsupervised split) and its train texts without labels "
        "(never the test split's; with --limit N, N of them), then fine-tune as usual; the "
        "vocabulary grows by [MASK] = 50260 (default %(default)s: no pre-training)",
    )
    train.add_argument(
        "--truncation",
        choices=["head", "head_tail"],
        default=d.truncation,
        help="how a review longer than --max-len is cut: head keeps its first tokens (the book), "
        "head_tail its first quarter and its end (default %(default)s)",
    )
    train.add_argument(
        "--device",
        choices=["auto", "cuda", "mps", "cpu"],
        default=d.device,
        help="where to train (default auto: CUDA, else Apple's MPS, else the CPU)",
    )
    train.add_argument(
        "--pretrain-batch-size",
        type=int,
        default=d.pretrain_batch_size,
        dest="pretrain_batch_size",
        help="texts per pre-training step (default %(default)s: --batch-size)",
    )
    train.add_argument(
        "--pretrain-lr",
        type=float,
        default=d.pretrain_lr,
        dest="pretrain_lr",
        help="peak learning rate of pre-training (default %(default)s: --lr)",
    )
    train.add_argument(
        "--pretrain-warmup",
        type=float,
        default=d.pretrain_warmup,
        dest="pretrain_warmup",
        help="share of the pre-training steps over which its learning rate rises (default %(default)s)",
    )
    train.add_argument(
        "--preset",
        choices=["gpu"],
        default=d.preset,
        help="recommended settings for what is not set otherwise; gpu: --pretrain-mlm 6000, "
        "--pretrain-batch-size 256, --pretrain-lr 1e-3, --batch-size 64, --lr 1e-4, --epochs 4",
    )
    train.add_argument(
        "--amp",
        choices=["auto", "bf16", "off"],
        default=d.amp,
        help="bf16 autocast (auto: on CUDA from batch 256 on; fp32 with TF32 below, fp32 elsewhere)",
    )
    train.add_argument(
        "--compile",
        nargs="?",
        const="on",
        default=d.compile,
        choices=["auto", "off", "on", "cudagraphs"],
        help="torch.compile the model: on (--compile alone), cudagraphs (mode reduce-overhead), off; "
        "auto (default): cudagraphs on CUDA, off elsewhere",
    )
    train.add_argument(
        "--buckets",
        default=d.buckets,
        help="pad every batch to one of a few lengths, e.g. 32,64,128 (max-len is always one): auto "
        "(default): 32,64,128,256 on CUDA, off elsewhere (each batch to its longest row)",
    )
    train.add_argument(
        "--sync-every",
        type=int,
        default=d.sync_every,
        dest="sync_every",
        help="read the loss (a wait for the device) every N steps (default %(default)s: 50 on CUDA, "
        "every step elsewhere)",
    )
    train.add_argument(
        "--no-fast-attention",
        dest="fast_attention",
        action="store_false",
        help="keep the model's own attention instead of scaled_dot_product_attention",
    )
    train.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    train.set_defaults(func=capstone.cmd_train)


def build_parser(lang: str | None = None) -> argparse.ArgumentParser:
    """The `kata` parser with its help texts and argparse's words in `lang` (default: the current
    language; grader/course/cli_text.py)."""
    lang = lang or language()
    with argparse_words(lang):
        return translate(_build_parser(), lang)


def _build_parser() -> argparse.ArgumentParser:
    from .instructor.batch import commands as batch

    p = argparse.ArgumentParser(prog="kata", description="The Transformer kata: exercises and a sandboxed grader.")
    p.add_argument("--version", action="version", version=f"kata {__version__}")
    p.add_argument("--lang", choices=["en", "zh"], help="language of messages (default: from the locale)")
    _add_sandbox_option(p)
    sub = p.add_subparsers(dest="command", required=True)

    grade = sub.add_parser("grade", help="grade a submission folder or .zip with every check")
    grade.add_argument(
        "path",
        help="the submission: a folder shaped like exercises/, a project folder holding "
        "exercises/, or a .zip of either; with --out, a folder of submissions, or a Canvas, Moodle or "
        "Gradescope bulk download (its folder or the .zip itself)",
    )
    grade.add_argument("--json", metavar="FILE", help="also write the report as JSON")
    _add_selection(grade, "grade")
    grade.add_argument("--public-only", action="store_true", help="run only the public checks")
    grade.add_argument("--time-limit", type=float, metavar="S", help="cap every call's time limit at S seconds")
    grade.add_argument(
        "--budget",
        type=_seconds,
        metavar="S",
        help="each submission's grading budget: S seconds of wall time across all its checks "
        "(default: course.toml's budget_s, 300); the checks after it are not run",
    )
    grade.add_argument(
        "--budget-cpu",
        type=_seconds,
        metavar="S",
        help="... and S CPU seconds of its sandbox's processes, where a cgroup counts them "
        "(default: course.toml's budget_cpu_s, 600)",
    )
    grade.add_argument("--quiet", "-q", action="store_true", help="print nothing but errors")
    grade.add_argument("--html", metavar="FILE", help="also write a self-contained HTML feedback page (with figures)")
    grade.add_argument(
        "--expect",
        choices=["full", "zero"],
        help="exit 1, naming every check that breaks it, unless the submission scores full marks "
        "(the reference solutions) or nothing (the stubs): setup.sh proves itself with it",
    )
    batch.add_grade_options(grade)
    grade.set_defaults(func=instructor.cmd_grade)
    batch.add_gradebook_parser(sub).set_defaults(func=instructor.cmd_gradebook)
    _add_similarity_parser(sub)

    check = sub.add_parser("check", help="run the public checks of one exercise (or all) on exercises/")
    check.add_argument(
        "id",
        nargs="?",
        help="the exercise to check: its id, a section (1.12) or an id prefix (s1_12) (default: every exercise)",
    )
    check.add_argument("--html", metavar="FILE", help="also write a self-contained HTML feedback page (with figures)")
    check.add_argument(
        "--full",
        action="store_true",
        help="run the public checks as kata grade runs them, with the reads at the training size "
        "that kata check leaves out (seconds more)",
    )
    check.set_defaults(func=student.cmd_check)

    listing = sub.add_parser("list", help="every exercise by section with its status and points, and your progress")
    listing.add_argument("--json", action="store_true", help="print the list as JSON")
    listing.add_argument(
        "--no-run", action="store_true", help="run nothing: exercises changed since their last check show as such"
    )
    listing.set_defaults(func=student.cmd_list)

    watch = sub.add_parser("watch", help="re-check the current exercise each time you save it (h: hint, q: quit)")
    watch.add_argument("id", nargs="?", help="start here (default: the first exercise not passing)")
    watch.set_defaults(func=student.cmd_watch)

    hint = sub.add_parser("hint", help="show the next hint of an exercise (one more each time)")
    hint.add_argument("id", nargs="?", help="default: the first exercise not passing")
    hint.add_argument("--all", action="store_true", help="reveal every hint of the exercise at once")
    hint.set_defaults(func=student.cmd_hint)

    reset = sub.add_parser(
        "reset", help="restore an exercise's stub; the file it replaces is backed up in .kata/backups/"
    )
    reset.add_argument("id", nargs="+", help="the exercise(s) to restore")
    reset.set_defaults(func=student.cmd_reset)

    run = sub.add_parser("run", help="run a listing of the book with your code (e.g. kata run 1.6 --book)")
    run.add_argument("listing", help="listing id: 1.6, or a worked example such as 1.11/softmax")
    run.add_argument("--book", action="store_true", help="print the book's printed output beside yours, and its errata")
    run.add_argument("--path", help="use this submission instead of exercises/ (e.g. solutions)")
    run.add_argument("--plot", action="store_true", help="also draw the listing's figures from your code (PNG files)")
    run.add_argument("--out", metavar="DIR", help="folder for --plot's PNG files (default: .kata/plots/)")
    run.set_defaults(func=student.cmd_run)

    notebook = sub.add_parser(
        "notebook", help="write exercises as Jupyter notebooks beside their .py (or, with --to-py, back)"
    )
    notebook.add_argument("id", nargs="*", help="exercise id(s)")
    notebook.add_argument("--all", action="store_true", help="every exercise")
    notebook.add_argument(
        "--to-py", action="store_true", help="copy each notebook's code into its .py (the .py is backed up first)"
    )
    notebook.add_argument(
        "--force",
        action="store_true",
        help="replace even a file saved after its source, or an unreadable notebook (backed up first)",
    )
    notebook.set_defaults(func=student.cmd_notebook)

    submit = sub.add_parser(
        "submit",
        help="zip your exercise files (.py and notebooks) with a manifest for `kata grade`",
        description="Zip the exercises/ of the folder you run it in (or of the nearest folder above "
        "it that has one), never the installed course's; it names the folder and the "
        "number of files. It stops, writing nothing, when there is no such folder or "
        "every exercise file in it is still the untouched stub (--anyway hands those in).",
    )
    submit.add_argument(
        "--out", metavar="FILE", help="where to write the zip (default: kata-submission.zip in the folder packed)"
    )
    submit.add_argument(
        "--no-check", action="store_true", help="do not run the public checks (the manifest says 'not run')"
    )
    submit.add_argument(
        "--anyway", action="store_true", help="hand in a folder whose every exercise file is still the stub"
    )
    submit.set_defaults(func=student.cmd_submit)

    new = sub.add_parser(
        "new",
        help="course developers: write the skeleton of a new exercise (CONTRIBUTING.md)",
        description="Write the hand-written parts of a new exercise, never replacing a file: its entry "
        "in course.toml at the end of its section, its solution (one function, its "
        "answer between # BEGIN SOLUTION and # END SOLUTION), its checks (one public "
        "check), its untranslated Chinese catalog, its tests in tests/ and, with "
        "--listing, the listing's re-run; then print what is left, in order. An id that "
        "is malformed or taken is refused (exit 2) and nothing is written.",
    )
    new.add_argument(
        "id",
        help="the new exercise's id, s<chapter>_<section>_<name> (e.g. s1_11_softmax); <name> "
        "names the function it defines",
    )
    new.add_argument("--section", help="its section, e.g. 1.11 (default: the one its id names, which it must be)")
    new.add_argument("--title", help="its title in English (default: made from its name)")
    new.add_argument(
        "--title-zh", help="its title in Chinese (default: none yet, which kata verify --draft lists as pending)"
    )
    new.add_argument(
        "--listing",
        metavar="LISTING",
        help="a listing of the book it re-runs, e.g. 1.44: also its [[listing]] entry and grader/listings/<id>.py",
    )
    new.set_defaults(func=authoring.cmd_new)

    verify = sub.add_parser("verify", help="developer check: stubs fail, solutions pass, files one-to-one")
    verify.add_argument("--no-grade", action="store_true", help="skip grading the solutions and stubs")
    verify.add_argument(
        "--draft",
        action="store_true",
        help="list what is still to write (Chinese texts missing, fuzzy or stale; a listing's printed "
        "book output) as pending instead of failing on it; CI runs verify without it",
    )
    verify.add_argument(
        "--exercise",
        "-e",
        action="append",
        metavar="ID",
        help="grade only this exercise, section (1.11) or id prefix (s1_11); repeatable "
        "(the rest of verify still covers the whole course)",
    )
    # the command line is above authoring: it hands verify the help texts that lack their Chinese
    verify.set_defaults(func=authoring.cmd_verify, untranslated_help=lambda: untranslated(_build_parser()))

    stubs = sub.add_parser("stubs", help="regenerate exercises/ from solutions/ (backs up changed files)")
    stubs.add_argument("--check", action="store_true", help="only report stale stubs (in any language)")
    stubs.add_argument(
        "--update-catalogs",
        action="store_true",
        help="add the solutions' new or changed English texts to the translation catalogs (locale/<lang>/), then stop",
    )
    stubs.set_defaults(func=authoring.cmd_stubs)

    fixtures = sub.add_parser("fixtures", help="regenerate grader/fixtures/ from the solutions")
    fixtures.add_argument(
        "--exercise",
        "-e",
        action="append",
        metavar="ID",
        help="regenerate only this exercise's fixtures; repeatable (default: every exercise)",
    )
    fixtures.set_defaults(func=authoring.cmd_fixtures)

    _add_train_parser(sub)

    release = sub.add_parser(
        "release", help="write the student bundle: stubs, public checks and the runtime, nothing hidden"
    )
    release.add_argument("out", help="the bundle's folder (new, or an earlier bundle with --force)")
    release.add_argument("--force", action="store_true", help="replace an earlier bundle in OUT")
    release.add_argument(
        "--assignment",
        "-a",
        metavar="ID",
        help="only the exercises of this [[assignment]] of course.toml (e.g. week2), and the exercises "
        "of other assignments they import; points shown scaled to the assignment's",
    )
    release.set_defaults(func=instructor.cmd_release)
    _add_export_parser(sub)
    _add_assets_parser(sub)
    for command in ("grade", "gradebook", "similarity", "release"):
        _add_course_option(sub.choices[command])
    for command in ("grade", "check", "list", "watch", "run", "submit", "verify", "release"):
        if command in sub.choices:
            _add_sandbox_option(sub.choices[command])
    for parser in sub.choices.values():  # `kata stubs --lang zh` as well as `kata --lang zh stubs`
        parser.add_argument(
            "--lang",
            choices=["en", "zh"],
            default=argparse.SUPPRESS,
            help="language of messages and of the exercises written (default: from the locale)",
        )
    return p


def _seconds(text: str) -> float:
    """A positive number of seconds, for argparse."""
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(t("seconds_invalid", value=repr(text)))
    return value


def _add_sandbox_option(parser: argparse.ArgumentParser) -> None:
    """--sandbox, before or after the command (`kata --sandbox limits-only check`, `kata grade X
    --sandbox limits-only`). Limits-only grading is only ever this explicit choice (or
    KATA_SANDBOX=none): a missing or broken bubblewrap stops the command instead."""
    parser.add_argument(
        "--sandbox",
        choices=["bubblewrap", "limits-only"],
        default=argparse.SUPPRESS,
        help="bubblewrap (the default; the command stops if it cannot start), or limits-only: "
        "resource limits without isolation, only for code you trust (your own)",
    )


def main(argv=None) -> int:
    from .course.atomic import EXIT, WriteError

    from .worker.sandbox import EXIT as SANDBOX_EXIT
    from .worker.sandbox import SandboxUnavailable

    argv = sys.argv[1:] if argv is None else argv
    if lang_option(argv):  # before parsing: an argument's type check (--budget, --threshold) speaks it too
        os.environ["KATA_LANG"] = lang_option(argv)
    lang = chosen_language(argv)
    with argparse_words(lang):  # its errors and --help
        args = build_parser(lang).parse_args(argv)
    if args.lang:
        os.environ["KATA_LANG"] = args.lang
    before = os.environ.get("KATA_SANDBOX")
    safe_before = os.environ.get("PYTHONSAFEPATH")
    # Every Python this command starts (the batch's multiprocessing forkserver runs `python -c`)
    # leaves the working directory off sys.path: an instructor may stand in a student's folder, and
    # a `grader/` package there once ran as root in `kata grade CLASS --out OUT` and rewrote its report.
    os.environ["PYTHONSAFEPATH"] = "1"
    from .checking.hypothesis_home import private_hypothesis_home

    private_hypothesis_home()  # and Hypothesis keeps its files in a folder of the grader's, not there
    if getattr(args, "sandbox", None):  # in the environment, so that batch grading processes see it too
        os.environ["KATA_SANDBOX"] = "none" if args.sandbox == "limits-only" else "bwrap"
    try:
        return int(args.func(args) or 0)
    except SandboxUnavailable as e:  # nothing was graded: a grader error, never a score of zero
        print(f"kata {args.command}: {e}", file=sys.stderr)
        return SANDBOX_EXIT
    except WriteError as e:  # a full disk, a read-only folder: said plainly, never a traceback
        print(escaped(f"kata {args.command}: {e}"), file=sys.stderr)  # a path someone named: no terminal control
        print(escaped(t("write_hint_full" if e.full else "write_hint_other", path=e.path)), file=sys.stderr)
        return EXIT
    finally:  # main() called in-process (the tests) leaves the environment as it found it
        if safe_before is None:
            os.environ.pop("PYTHONSAFEPATH", None)
        else:
            os.environ["PYTHONSAFEPATH"] = safe_before
        if before is None:
            os.environ.pop("KATA_SANDBOX", None)
        else:
            os.environ["KATA_SANDBOX"] = before


if __name__ == "__main__":
    raise SystemExit(main())
