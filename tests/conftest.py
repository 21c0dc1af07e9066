"""Shared helpers: build submissions from the reference solutions and grade them for real."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course import manifest as course

ROOT = Path(__file__).resolve().parent.parent
if shutil.which("bwrap") is None and "KATA_SANDBOX" not in os.environ:
    # Without bubblewrap every command stops unless limits-only is asked for: ask, as a student
    # without it is told to (`--sandbox limits-only`); tests of the sandbox itself skip there.
    os.environ["KATA_SANDBOX"] = "none"
# `kata check`, `watch` and `list` grade through a warm grader per course (grader/student/warm/),
# a background process that stays up to ten minutes: hundreds of test projects would each leave
# one. The suite grades in each command's own process; tests/test_warm.py turns it on.
os.environ.setdefault("KATA_WARM", "0")
# Under pytest-xdist (`-n 2` on two cores) each test process gets its share of the cores for torch's
# own threads, and so do the `kata` processes it starts: two processes each running two threads on
# two cores ran the trusted side's statistics 2-3 times slower than one thread each.
if os.environ.get("PYTEST_XDIST_WORKER_COUNT", "").isdigit():
    _threads = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_name, _threads)
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(int(os.environ["OMP_NUM_THREADS"]))
# The quick tier (CONTRIBUTING.md): `python -m pytest -q -n 2 -m quick`, under a minute on two cores.
# The static rules a new or changed exercise breaks most often (manifest, layers, stubs, Chinese,
# listings, the wrong-answer corpus, help texts), not the gradings; a file name takes all its tests.
QUICK = (
    "test_layers.py",
    "test_architecture.py",
    "test_course.py",
    "test_stubs.py",
    "test_stubs_zh.py::test_every_exercise_has_a_complete_chinese_stub_with_the_english_code",
    "test_i18n.py::test_every_catalog_message_has_both_languages_with_the_same_fields",
    "test_i18n.py::test_course_and_every_check_are_in_both_languages",
    "test_message_catalog.py::test_the_real_catalog_passes_the_rules",
    "test_errata_i18n.py::test_every_entry_is_translated_and_none_is_stale",
    "test_glossary.py::test_the_kata_writes_one_chinese_vocabulary",
    "test_run.py::test_every_code_listing_can_be_run",
    "test_verify.py::test_the_course_stubs_give_no_answer_away",
    "test_public_teaching.py::test_corpus_is_sound",
    "test_cli_help.py::test_every_argument_of_every_command_has_help_text",
    "test_cli_help.py::test_every_subcommand_has_a_one_line_help",
    "test_docs_reference.py",  # a new option or course.toml key leaves docs/reference/cli.md stale
    "test_docs_commands.py::test_every_kata_command_of_the_guides_parses_with_the_real_parser",
)

# `kata train` options for a tiny BERT (test_train_pretrain.py, test_train_i18n.py)
TINY_TRAIN = "--dim 32 --layers 1 --heads 2 --ff-dim 64 --max-len 48 --lr 3e-3 --batch-size 16 --seed 0 --quiet".split()


def pytest_ignore_collect(collection_path, config):
    """`-m quick` alone imports only the files of QUICK: importing every test file took 14 s."""
    if (
        config.getoption("markexpr", "") == "quick"
        and collection_path.name.startswith("test_")
        and collection_path.suffix == ".py"
    ):
        return collection_path.name not in {q.partition("::")[0] for q in QUICK} or None
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        name = item.nodeid.rpartition("/")[2].partition("[")[0]
        if name.partition("::")[0] in QUICK or name in QUICK:
            item.add_marker(pytest.mark.quick)


SOLUTIONS = ROOT / "solutions"
MAX_SCORE = course.load(ROOT, check_files=False).max_score  # the whole course, from the manifest
EXERCISES = ROOT / "exercises"


def make_submission(base: Path, replace: dict[str, str] | None = None, from_stubs: bool = False) -> Path:
    """A submission folder shaped like exercises/: the solutions (or stubs), with the files of
    the exercises named in `replace` (id -> source) swapped for the given source."""
    sub = base / "submission"
    shutil.copytree(EXERCISES if from_stubs else SOLUTIONS, sub)
    for ex_id, source in (replace or {}).items():
        (sub / "ch01" / f"{ex_id}.py").write_text(source)
    return sub


def kata(*args: str, cwd: Path = ROOT, timeout: float = 600) -> subprocess.CompletedProcess:
    """Run the real `kata` command line: this checkout's grader package, whatever `cwd` is."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT)},
    )


def grade(path: Path, *args: str, timeout: float = 600) -> dict:
    """Grade `path` with `kata grade --json` and return the report.

    The command line runs in this process (the same argparse and code path as the `kata`
    command, minus a new interpreter's torch import per call); set KATA_TEST_SUBPROCESS=1 to
    run each grading as a separate `kata` process instead. Timeouts are the grader's own."""
    out = path.parent / f"report-{path.name}.json"
    argv = ["grade", str(path), "--json", str(out), "--quiet", *args]
    if os.environ.get("KATA_TEST_SUBPROCESS"):
        proc = kata(*argv, timeout=timeout)
        assert proc.returncode == 0, f"kata grade failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    else:
        from grader.cli import main

        old = os.environ.get("KATA_LANG")
        os.environ["KATA_LANG"] = "en"
        try:
            code = main(argv)
        finally:
            if old is None:
                os.environ.pop("KATA_LANG", None)
            else:
                os.environ["KATA_LANG"] = old
        assert code == 0, f"kata grade failed ({code})"
    return json.loads(out.read_text())


def solution_with(exercise: str, old: str, new: str) -> str:
    """The reference solution of `exercise` with `old` replaced by `new` (which must be there)."""
    source = (SOLUTIONS / "ch01" / f"{exercise}.py").read_text()
    assert old in source, f"{exercise}: {old!r} is not in the solution"
    return source.replace(old, new)


def failed_checks(report: dict, exercise: str) -> dict[str, dict]:
    """The failed checks of `exercise`, by name."""
    return {c["name"]: c for c in checks_of(report, exercise) if c["status"] == "failed"}


def checks_of(report: dict, exercise: str) -> list[dict]:
    return [c for c in report["checks"] if c["exercise"] == exercise]


def score_of(report: dict, exercise: str) -> float:
    return sum(c["score"] for c in checks_of(report, exercise))


@pytest.fixture
def tmp_course(tmp_path):
    """A private copy of the course (manifest, solutions, stubs, errata) to break on purpose."""
    for name in (
        "course.toml",
        "solutions",
        "exercises",
        "locale",
        "ERRATA.md",
        "tests",
        "wheels.lock",
        "pyproject.toml",
    ):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    return tmp_path


@pytest.fixture
def submission(tmp_path):
    def build(replace=None, from_stubs=False):
        return make_submission(tmp_path, replace, from_stubs)

    return build


PAGE = 4096  # tmpfs counts space in pages


@pytest.fixture
def small_disk(tmp_path):
    """`small_disk(name, size_kb)` mounts a tmpfs of that size at tmp_path/name, a real file
    system that runs out of space (root only: the test is skipped otherwise); `fill(disk, left)`
    then leaves only `left` bytes free in it. Everything mounted is unmounted at the end."""
    mounted = []

    def mount(name: str, size_kb: int) -> Path:
        if os.geteuid() != 0:
            pytest.skip("a full disk is simulated with a small tmpfs, which only root can mount")
        where = tmp_path / name
        where.mkdir()
        proc = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size_kb}k,mode=0755", "tmpfs", str(where)],
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {(proc.stderr or proc.stdout).strip()}")
        mounted.append(where)
        return where

    yield mount
    for where in reversed(mounted):
        if subprocess.run(["umount", str(where)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(where)], capture_output=True)  # busy: detach it anyway


def free_bytes(disk: Path) -> int:
    st = os.statvfs(disk)
    return st.f_bavail * st.f_frsize


def fill(disk: Path, left: int) -> Path:
    """Add to `disk` a filler file that leaves `left` bytes (rounded down to a page) free."""
    filler = disk / "filler"
    with open(filler, "ab") as f:
        f.write(b"\0" * max(0, free_bytes(disk) - left // PAGE * PAGE))
    assert free_bytes(disk) == left // PAGE * PAGE, (free_bytes(disk), left)
    return filler


class LocalSubmission:
    """The proxy's few calls (seed, new, get, a module's call and attributes, in_training) on local
    module classes and functions, on the trusted side: the honest-seed tests run a check's own
    reading code on honest styles this way."""

    def __init__(self, classes: dict, offset: int, functions: dict | None = None):
        self.classes, self.offset, self.functions = classes, offset, dict(functions or {})

    def seed(self, n: int):
        import torch

        torch.manual_seed(n + self.offset)

    def __getattr__(self, name: str):
        functions = self.__dict__.get("functions", {})
        if name in functions:
            return lambda *a, **k: functions[name](*a, **k).detach()
        raise AttributeError(name)

    def get(self, name: str):
        return self.functions[name]

    def in_training(self, fn, *args, bf16_autocast: bool = False, label: str = "", **kwargs):
        from grader.worker.runtime.given import as_in_training

        return as_in_training(getattr(fn, "module", fn), *args, bf16_autocast=bf16_autocast, **kwargs).detach()

    def new(self, name: str, *args, **kwargs):
        m = self.classes[name](*args, **kwargs)

        class Handle:
            module = m

            def __call__(self, *a):
                return m(*a).detach()

            def __getattr__(self, attr):
                return getattr(m, attr)

        return Handle()
