"""Run the checks of a course against one submission and collect one result per check.

Checks are run by pytest in this (trusted) process; the `sub` fixture hands each check a
proxy of the exercise module in a fresh sandboxed worker process. One broken exercise never
stops the others: import errors, faults and forbidden APIs fail only that exercise's checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import re
import time

import pytest
from hypothesis import Phase, settings

from .hypothesis_home import private_hypothesis_home

# Property checks (hypothesis) never show hypothesis' own explanation of a failure, and a hidden
# check shows no input at all (every number masked), so neither pays for a search after its
# first failing example: on a stub that search was 2-3 s of one exercise's grading. A public
# check still shrinks its example to the smallest one, which its message names.
settings.register_profile(
    "kata-public", phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
)
settings.register_profile("kata-hidden", phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target])

from ..course.manifest import Course, Exercise
from ..course.messages import Msg, code, joined, t
from ..course.safe_text import one_line, plain
from ..course.scan import imported, scan_source
from ..worker.budget import Budget
from ..worker.client import Sandbox, WorkerFault
from ..worker.proxy import Remote, StudentError
from ..worker.sandbox import Limits, SandboxUnavailable
from . import asset_gate, compare
from .results import CheckResult, GradeResult, Kind
from .submission import Submission


class BudgetSpent(Exception):
    """A check not run: the submission's grading budget ran out before it."""


class _Plugin:
    """pytest plugin: provides `sub`, filters checks, records outcomes."""

    def __init__(
        self,
        course: Course,
        submission: Submission,
        box: Sandbox,
        public_only: bool,
        lane=None,
        budget: Budget | None = None,
        grading: bool | None = None,
    ):
        self.grading = (not public_only) if grading is None else grading
        self.skipped_reads: set[str] = set()  # checks whose reads made only when grading were left out
        self.lane = lane
        self.budget = budget
        self.verdicts: dict[str, tuple[str, bool]] = {}  # exercise -> its forbidden-API verdict (_scan_exercise)
        self.scans: dict = {}  # the scans of this grading, by file and forbidden list
        self.reached: set[str] = set()  # the checks pytest started (after a spent budget it stops)
        self.course = course
        self.submission = submission
        self.box = box
        self.public_only = public_only
        self.by_id = {ex.id: ex for ex in course.exercises}
        self.by_index = {ex.id: i for i, ex in enumerate(course.exercises)}
        self.import_failures: dict[str, str] = {}
        self.errors: dict[str, BaseException] = {}
        self.durations: dict[str, float] = {}
        self.outcomes: dict[str, str] = {}
        self.items: list = []
        self._token = None
        self.sandbox_error: SandboxUnavailable | None = None
        self.loaded: dict[str, set[str]] = {}  # exercise -> the submission's files its workers imported
        self.mine: dict[str, bool] = {}  # in a lane: each exercise (or check) it met -> whether it took it
        self.index: dict[str, int] = {}  # check -> its place among the checks kept

    def exercise_of(self, item) -> Exercise:
        return self.by_id[item.path.stem.removeprefix("test_")]

    # -- collection
    def pytest_collection_modifyitems(self, session, config, items):
        keep, drop = [], []
        for item in items:
            info = getattr(getattr(item, "function", None), "_kata_check", None)
            if info is None or item.path.stem.removeprefix("test_") not in self.by_id:
                drop.append(item)
            elif self.public_only and info.hidden:
                drop.append(item)
            else:
                item.repr_failure = _exception_name  # the grader reads the exception itself
                keep.append(item)
        self.index = {item.nodeid: i for i, item in enumerate(keep)}
        items[:] = keep
        if drop:
            config.hook.pytest_deselected(items=drop)
        self.items = keep
        if keep:  # prove the sandbox before any check: one that cannot start stops the run, scoring nothing
            try:
                self.box.wait_ready()
            except SandboxUnavailable as e:
                self.sandbox_error = e
                items[:] = []
                self.items = []
            except WorkerFault:  # a fault after it once started: each check says so
                pass

    # -- running
    def owns(self, item) -> bool:
        """In a lane: whether this lane runs `item`, taking it now if no lane has. A lane of `kata
        grade` takes a whole exercise, so that its checks run in one process in their order, as
        without lanes (its first failed import says why, the later checks "failed in an earlier
        check"); the warm grader's lanes take single checks (one exercise's checks side by side)."""
        key = item.nodeid if self.lane.by_check else self.exercise_of(item).id
        if key not in self.mine:
            self.mine[key] = self.lane.claim(self.index[item.nodeid] if self.lane.by_check else self.by_index[key])
        return self.mine[key]

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtest_protocol(self, item, nextitem):
        """In a lane (lanes.Lane): run the check only if this lane took its exercise. Each check is
        then set up and torn down whole (no fixture lives from one check to the next), since the
        next one this lane runs is not known yet."""
        if self.lane is None:
            return None
        if not self.owns(item):
            return True
        from _pytest.runner import runtestprotocol

        item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
        runtestprotocol(item, nextitem=None, log=True)
        item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
        return True

    def pytest_runtest_setup(self, item):
        ex = self.exercise_of(item)
        self.reached.add(item.nodeid)
        if self.budget is not None and self.budget.exhausted(ex.id):
            # this check and every later one are not run: pytest stops after this one (the rest,
            # never reached, are "not run" in the results too), so a spent budget costs no more time
            item.session.shouldstop = "the grading budget is spent"
            raise BudgetSpent()
        if ex.id not in self.verdicts:  # the forbidden-API scan, before the exercise's first check, on its budget
            verdict = _scan_exercise(ex, self.submission, self.course, self.scans, self.budget)
            if verdict is None:
                raise BudgetSpent()
            self.verdicts[ex.id] = verdict
        hidden = item.function._kata_check.hidden
        self._token = compare.HIDDEN.set(hidden)
        self._grading = compare.GRADING.set(self.grading)
        self._skipped = compare.SKIPPED_READS.set([False])
        settings.load_profile("kata-hidden" if hidden else "kata-public")  # the check's @settings build on it

    def pytest_runtest_teardown(self, item):
        if self._token is not None:
            compare.HIDDEN.reset(self._token)
            compare.GRADING.reset(self._grading)
            if compare.SKIPPED_READS.get()[0]:
                self.skipped_reads.add(item.nodeid)
            compare.SKIPPED_READS.reset(self._skipped)
            self._token = None

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        self.durations[item.nodeid] = self.durations.get(item.nodeid, 0.0) + call.duration
        if report.failed and item.nodeid not in self.errors and call.excinfo is not None:
            self.errors[item.nodeid] = call.excinfo.value
            root = _root_cause(call.excinfo.value)
            if self.budget is not None and isinstance(root, WorkerFault) and root.kind == "budget":
                self.budget.mark(self.exercise_of(item).id)  # cut short by the budget: every later check is not run
        if report.skipped and item.nodeid not in self.outcomes:
            self.outcomes[item.nodeid] = "skipped"
            if call.excinfo is not None:
                self.errors[item.nodeid] = call.excinfo.value

    @pytest.fixture
    def sub(self, request):
        ex = self.exercise_of(request.node)
        if ex.id in self.import_failures:
            raise compare.ImportFailure(t("import_failed_before", file=ex.file, reason=self.import_failures[ex.id]))
        problem = self.submission.problems.get(ex.file)
        if problem:  # e.g. a notebook that cannot be read: its message names the file
            self.import_failures[ex.id] = problem
            raise compare.CheckFailure(problem)
        if not self.submission.path(ex.file).is_file():
            reason = t("file_missing", file=f"exercises/{ex.file}")
            self.import_failures[ex.id] = reason
            raise compare.CheckFailure(reason)
        try:
            worker, remote = open_exercise(
                self.box, ex, hidden=request.node.function._kata_check.hidden, course=self.course, budget=self.budget
            )
        except WorkerFault as e:
            if e.kind == "budget":  # the import ran out of budget: that is no verdict on the import
                raise
            self.import_failures[ex.id] = str(e)
            raise compare.ImportFailure(t("import_failed", file=ex.file, reason=str(e))) from None
        except StudentError as e:
            self.import_failures[ex.id] = str(e)
            raise compare.ImportFailure(t("import_failed", file=ex.file, reason=str(e))) from None
        self.loaded.setdefault(ex.id, set()).update(remote._loaded)
        try:
            yield remote
        finally:
            worker.close()


def _exception_name(excinfo) -> str:
    """A failed check's report text for pytest. The grader builds its messages from the exception
    (`_message`), so pytest's own traceback, which parses each check file's source again for every
    failure (a second of a stub's grading), is never drawn."""
    return excinfo.typename


def sandbox_for(course: Course, submission: Submission) -> Sandbox:
    """A sandbox for one submission: the grader, the solutions and the course stay hidden."""
    return sandbox_at(course, submission.root)


def sandbox_at(course: Course, folder) -> Sandbox:
    """A sandbox that sees `folder` as the submission (the warm grader refills it between gradings).
    The checks that follow read the assets of this course, the folder the sandbox gets."""
    from ..capstone.gpt2 import use_course

    use_course(course.root)
    return Sandbox(
        folder,
        hide=[str(course.checks_dir.parent), str(course.solutions_dir), str(course.root)],
        assets_dir=str(course.assets_dir),
    )


def open_exercise(
    box: Sandbox, ex: Exercise, hidden: bool = False, course: Course | None = None, budget: Budget | None = None
):
    """A fresh worker with the exercise's module imported: (worker, proxy). Raises StudentError
    or WorkerFault when the import fails (the worker is closed then). `hidden`: for a hidden
    check, whose messages show no text of the worker's (it has seen the hidden inputs).
    `course`: its exercises are the earlier ones an error may come from (the student's own
    code that this exercise imports), named as such in a public check's messages. `budget`: the
    submission's grading budget, which no call into the worker outlasts."""
    worker = box.spawn(Limits(memory_mb=ex.memory_mb, output_mb=ex.output_mb), preload=ex.preload)
    others = frozenset(e.file for e in course.exercises) if course is not None else frozenset()
    remote = Remote(
        worker, ex.module, ex.time_limit_s, assets=box.assets, hidden=hidden, exercises=others, budget=budget
    )
    try:
        remote._import(ex.file, ex.forbidden, ex.display_forbidden_hint(), ex.forbidden_ops)
    except BaseException:
        worker.close()
        raise
    return worker, remote


def _root_cause(exc: BaseException) -> BaseException:
    """The student-facing error inside wrappers (exception groups, hypothesis' Flaky errors)."""
    ours = (AssertionError, StudentError, WorkerFault)  # a check's own failure, or the student's
    seen = 0
    while seen < 10:
        seen += 1
        if isinstance(exc, ours):
            return exc
        inner = list(getattr(exc, "exceptions", ()) or ())
        inner += [e for e in (exc.__cause__, None if exc.__suppress_context__ else exc.__context__) if e is not None]
        found = next((e for e in inner if isinstance(e, ours)), None)
        if found is not None:
            return found
        if not inner:
            return exc
        exc = inner[0]
    return exc


def _message(exc: BaseException | None, hidden: bool = False) -> tuple[str, Kind]:
    """The check's message and what failed. `hidden`: a hidden check's, where an error the check's
    own code hit on the student's result (float() of their text, a key of their dict) is not named
    at all: its text may quote what the student returned, and which error it is (a TypeError or a
    KeyError) is the result's choice."""
    if exc is None:
        return "", ""
    exc = _root_cause(exc)
    if isinstance(exc, compare.CheckFailure):
        if hidden and not isinstance(exc, compare.ImportFailure):
            text = exc.text.render(conceal=True) if isinstance(exc.text, Msg) else str(exc)
            return conceal_values(text), "check"
        return str(exc), "check"
    if isinstance(exc, StudentError):
        return str(exc), "forbidden" if exc.kind == "forbidden" else "student"
    if isinstance(exc, WorkerFault):  # hidden: no exit code, signal or text the worker chose
        return t("fault", reason=exc.hidden_reason if hidden else exc.reason), "fault"
    if isinstance(exc, AssertionError):
        message = str(exc) or t("assertion_failed")
        return conceal_values(message) if hidden else message, "check"
    if type(exc).__name__ in ("Skipped", "XFailed"):
        return str(getattr(exc, "msg", exc)), "skipped"
    if hidden:
        return t("check_error_hidden"), "check"
    return t("check_error", type=type(exc).__name__, message=str(exc)[:500]), "check"


_VALUE = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?|-?inf|nan"
_VALUES = [
    re.compile(r"\[[^\[\]]*(?:\d|inf|nan)[^\[\]]*\]"),  # a list of values: [2, 3, -inf]
    re.compile(r"(?<=[\w\])])\([^()]*(?:\d|inf|nan)[^()]*\)"),  # a call's arguments: softmax(x + 0.5), f([…])
    re.compile(rf"\((?:\s*(?:{_VALUE}|…)\s*,?)+\)"),  # a tuple of values, a shape: (3, 4, 5)
    re.compile(rf"(?<=[=≈<>])(?P<space>\s*)(?:{_VALUE})(?![\w.])"),  # x = 6.08, dim=1
    re.compile(r"(?<![\w.§])-?(?:\d+\.\d+|\.\d+|\d+[eE][-+]?\d+)(?:[eE][-+]?\d+)?(?![\w.])"),  # any other float
    # a count of three digits or more ("over 8192 rows", "8,192"): a size of the hidden input
    re.compile(r"(?<![\w.§,])(?:\d{1,3}(?:,\d{3})+|\d{3,})(?![\w.,])"),
]


def conceal_values(message: str) -> str:
    """A hidden check's message with the values in it masked: the net under the rule that follows
    the data (a field marked `from_input` renders as "…" in a hidden check, messages.FromInput),
    for a value a check wrote into its text. A check may describe its call with
    the values it used ("softmax([2, 3, -inf])", "x = [6.08]", "a (3, 4, 5) tensor"); in a hidden
    check those are the hidden input. One rule for every check, present and future: lists, call
    arguments, tuples, "= value", floats and counts of three digits or more ("8192 rows": the hidden
    input's size) become "…"; words with a small integer ("softmax over dim 0", "8 calls", "listing
    1.6", "§1.11") and code in backticks (the check's own constants) stay."""
    kept: list[str] = []

    def keep(m):
        kept.append(m.group(0))
        return f"\x00k{len(kept) - 1}k\x00"  # letters around the digits: not a number

    # the book's numbers, and code the check wrote in backticks (`labels=[0, 1]`): the course's text
    text = re.sub(r"`[^`\n]*`|(?:§|listings? )[\d.]+(?:/[\w-]+)?", keep, message)
    for pattern in _VALUES:
        text = pattern.sub(
            lambda m: (
                m.group(0)[0] + "…" + m.group(0)[-1]
                if m.group(0).startswith(("[", "("))
                else (m.groupdict().get("space") or "") + "…"
            ),
            text,
        )
    return re.sub("\x00k(\\d+)k\x00", lambda m: kept[int(m.group(1))], text)


MAX_MESSAGE_CHARS = 4000  # a check's message: the longest the course writes is under 1,000


def _bounded(message: str) -> str:
    """A check's message cut to MAX_MESSAGE_CHARS. A public check may quote what the student's code
    returned, and a 10 MB return value once made a 10 MB message that every report format (the
    terminal, JUnit, the HTML page) carried and drew outside the grading budget."""
    if len(message) <= MAX_MESSAGE_CHARS:
        return message
    return message[:MAX_MESSAGE_CHARS] + t("message_cut", count=f"{len(message) - MAX_MESSAGE_CHARS:,}")


def printable(value, lines: bool = True):
    """`value` with every string made writable as UTF-8 anywhere (a report file, a terminal): an
    unpaired surrogate — from a file name that is not UTF-8, a student's "\\ud800", a manifest —
    becomes its backslash escape instead of crashing the report, and terminal control (ANSI
    escapes, carriage returns, ...) is removed (grader/course/safe_text.py). `lines=False`: for names
    and notes, whose line breaks become a visible ⏎ (a folder named "x\n✔ ..." is one line)."""
    if isinstance(value, str):
        value = value.encode("utf-8", "backslashreplace").decode("utf-8")
        return plain(value) if lines else one_line(value)
    if isinstance(value, list):
        return [printable(v, lines) for v in value]
    if isinstance(value, dict):
        return {printable(k, lines): printable(v, lines) for k, v in value.items()}
    return value


def exercise_files_imported(ex: Exercise, submission: Submission, course: Course) -> list[str]:
    """The course's exercise files that `ex`'s file imports in this submission, directly or through
    one another (`from s1_23_encoder import BERTEncoder`), found statically, in a stable order."""
    by_module = {e.module: e.file for e in course.exercises}
    seen, todo, out = {ex.file}, [ex.file], []
    while todo:
        source = submission.source(todo.pop(0))
        for module in sorted(imported(source or "")):
            f = by_module.get(module)
            if f is not None and f not in seen:
                seen.add(f)
                todo.append(f)
                out.append(f)
    return out


def _imports(
    exercises: list[Exercise], submission: Submission, course: Course, loaded: dict[str, set[str]]
) -> dict[str, dict[str, str]]:
    """What each exercise's verdict depends on besides its own file: the other exercise files it
    imports, found statically and as its workers reported them, each with the sha256 of the bytes
    graded ("" for a file that was not there). The student's verdict cache keys on them."""
    out = {}
    for ex in exercises:
        files = set(exercise_files_imported(ex, submission, course)) | loaded.get(ex.id, set())
        files.discard(ex.file)
        deps = {}
        for f in sorted(files):
            p = submission.path(f)
            try:
                deps[f] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""
            except OSError:
                deps[f] = ""
        out[ex.id] = deps
    return out


def _scan_exercise(
    ex: Exercise,
    submission: Submission,
    course: Course | None = None,
    cache: dict | None = None,
    budget: Budget | None = None,
) -> tuple[str, bool] | None:
    """The forbidden-API verdict of `ex`: its own file and every exercise file it imports from the
    submission are scanned under `ex`'s list (an earlier exercise may use what this one forbids,
    but not on this one's behalf). Returns the verdict ("" when none) and whether the escape rule
    (not only a forbidden name) is in it; None when the grading budget ran out before every file
    was read (the scan runs in the grader's process: its time is the submission's too).
    `cache`: scans of one grading, by file and list (a file that many exercises import is read once)."""
    if not ex.forbidden:
        return "", False
    files = [ex.file] + (exercise_files_imported(ex, submission, course) if course is not None else [])
    local = frozenset(e.module for e in course.exercises) if course is not None else frozenset()
    names, escapes = [], []
    cache = {} if cache is None else cache
    for f in files:
        found = submission.read(f)  # the text Python runs, or why the grader cannot vouch for one
        if found is None:
            continue
        if budget is not None and budget.exhausted(ex.id):
            return None
        label = f if f == ex.file else t("scan_imported_file", file=f, by=ex.file)
        key = (f, tuple(ex.forbidden))
        if key not in cache:
            cache[key] = scan_source(found, ex.forbidden, local)
        for v in cache[key]:
            (escapes if v.why else names).append(v.describe(label))
    verdicts = []
    if names:
        hint = ex.display_forbidden_hint()
        verdicts.append(t("scan", items=_sentences(names), instead=t("scan_instead", hint=hint) if hint else ""))
    if escapes:
        verdicts.append(t("scan_escapes", items=_sentences(escapes), hint="" if names else ex.display_forbidden_hint()))
    return " ".join(verdicts), bool(escapes)


def _sentences(violations: list[str]) -> str:
    """One sentence per violation ("a.py:3: uses F.softmax (...). a.py:7: uses ..."): joined by "; "
    two violations of one file read as one run-on sentence."""
    return joined([code(v) for v in violations], ". ", "。").render()


# pytest plugins the checks never use. unraisableexception and threadexception run gc.collect()
# several times at the end of every session: with torch loaded that alone took 0.2 s of a 0.4 s
# one-check run, the price of every `kata check` and every save in `kata watch`.
QUIET_PLUGINS = [
    arg
    for name in (
        "cacheprovider",
        "terminal",
        "stepwise",
        "unraisableexception",
        "threadexception",
        "pastebin",
        "junitxml",
        "doctest",
        "legacypath",
        "setuponly",
        "setupplan",
        "faulthandler",
        "logging",
    )
    for arg in ("-p", f"no:{name}")
]


def _pytest_args(course: Course, exercises: list[Exercise]) -> list[str]:
    files = [str(course.check_file(ex)) for ex in exercises]
    return [
        *files,
        *QUIET_PLUGINS,
        "--assert=plain",
        "--rootdir",
        str(course.checks_dir),
        "-c",
        os.devnull,
        "--import-mode=importlib",
        "-W",
        "ignore::DeprecationWarning",
        "-W",
        "ignore::UserWarning",
    ]


def preload(course: Course, exercises: list[Exercise] | None = None) -> None:
    """Import every check module and load what they read (the fixtures, GPT-2's encoding where its
    asset is), as a grading would: for a process that forks gradings (the warm grader), so that no
    grading pays for them again. Runs no check."""
    from ..capstone import gpt2
    from . import fixtures

    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        pytest.main([*_pytest_args(course, exercises or course.exercises), "--collect-only", "-q"])
    for ex in exercises or course.exercises:
        if fixtures.path(ex.id).is_file():
            fixtures.load(ex.id)
    if gpt2.have_asset():
        try:
            gpt2.encoding()
        except Exception:  # a check that needs it says why
            pass


def import_preloads(exercises: list[Exercise]) -> None:
    """Import the modules `exercises` name as slow to import (their `preload`) in this process: for
    one that forks gradings or lanes, so that each does not import them again."""
    for name in dict.fromkeys(m for ex in exercises for m in ex.preload):
        try:
            __import__(name)
        except Exception:  # the check that needs it says why
            pass


def run(
    course: Course,
    submission: Submission,
    exercises: list[Exercise] | None = None,
    public_only: bool = False,
    box: Sandbox | None = None,
    plugins: tuple = (),
    lane=None,
    budget_s: float | None = None,
    budget_cpu_s: float | None = None,
    grading: bool | None = None,
    skip_missing_assets: bool = False,
) -> GradeResult:
    """Grade `submission` on `exercises` (default: all). Never raises for student faults.
    `plugins`: more pytest plugins (`kata release` records what the public checks read).
    `lane` (a lanes.Lane): only the checks no other lane took first, on the budget the lanes share
    (`kata grade` of one submission and the warm grader run lanes side by side, each in its own
    sandbox, and merge them: lanes.py).
    `budget_s`, `budget_cpu_s`: the grading budget (default: the course's); when it runs out, the
    checks after it fail as "not run" and the result says so in its notes.
    `grading`: whether the checks make the reads they make only when grading (default: all but a
    public-only run; `kata check --full` asks for them on the public checks).
    `skip_missing_assets`: a student's `kata check`, whose checks that read a missing or damaged
    asset skip, saying why; otherwise the grading stops before it starts (asset_gate.AssetUnavailable)."""
    t0 = time.perf_counter()
    private_hypothesis_home()
    exercises = exercises or course.exercises
    if not skip_missing_assets:
        asset_gate.require(course, exercises)
    own_box = box is None
    if own_box:
        box = sandbox_for(course, submission)
        box.launch()
    cpu_used = box.cpu_seconds if lane is None else (lambda: lane.cpu_used(box.cpu_seconds()))
    budget = Budget(budget_s or course.budget_s, budget_cpu_s or course.budget_cpu_s, cpu_used=cpu_used, shared=lane)
    plugin = _Plugin(course, submission, box, public_only, lane, budget, grading)
    args = _pytest_args(course, exercises)
    budget.start()  # collecting the checks counts too
    try:
        _run_checks(plugin, args, plugins, budget)
        results, not_run = [], 0
        for item in plugin.items:
            if lane is not None and not plugin.owns(item):
                continue  # another lane's (an exercise no lane reached, the budget spent, is this one's: "not run")
            result, unreached = _check_result(plugin, item, budget)
            results.append(result)
            not_run += unreached
        _apply_scan_verdicts(results, exercises, plugin.verdicts)
        notes = list(submission.notes)
        if budget.spent_on is not None and lane is None:
            notes.append(t("budget_note", exercise=budget.spent_in or "?", count=not_run, **budget.said()))
        if not skip_missing_assets:  # an asset changed while the checks ran: stop, as before they ran
            asset_gate.after(course, exercises, results, getattr(box, "assets_unmatched", ()))
        order = {ex.id: i for i, ex in enumerate(course.exercises)}
        results.sort(key=lambda r: order[r.exercise])
        for r in results:
            r.message = _bounded(printable(r.message))
        # names, notes and the manifest's fields on one line each; the total time in whole
        # seconds: a hidden check's own time is shown nowhere (it could tell its inputs)
        result = GradeResult(
            printable(submission.label or submission.origin.name, lines=False),
            box.kind,
            results,
            printable(notes, lines=False),
            round(box.startup_s, 3),
            float(round(time.perf_counter() - t0)),
            printable(submission.manifest, lines=False),
            imports=_imports(exercises, submission, course, plugin.loaded),
        )
        if lane is not None and budget.spent_on is not None:  # the lanes' merge writes the one note
            result.budget_spent = {"exercise": budget.spent_in or "?", "not_run": not_run, **budget.said()}
        return result
    finally:
        if own_box:
            box.close()


def _run_checks(plugin: _Plugin, args: list[str], plugins: tuple, budget: Budget) -> None:
    """Run pytest over the checks with the grader's plugin, its output kept out of the terminal.
    Raises what the sandbox raised, or RuntimeError when pytest itself failed."""
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()) as err:
        code = pytest.main(args, plugins=[plugin, *plugins])
    if plugin.sandbox_error is not None:
        raise plugin.sandbox_error
    stopped = code == 2 and budget.spent_on is not None  # 2: pytest stopped, as asked when the budget ran out
    if code not in (0, 1, 5) and not stopped:  # 5: nothing collected (e.g. only hidden checks, public run)
        raise RuntimeError(f"running the checks failed (pytest exit code {code}): {err.getvalue()[-2000:]}")


def _check_result(plugin: _Plugin, item, budget: Budget) -> tuple[CheckResult, bool]:
    """One check's result from what the plugin saw, and whether the check was never run (the
    budget was spent before it)."""
    ex = plugin.exercise_of(item)
    info = item.function._kata_check
    exc = plugin.errors.get(item.nodeid)
    if item.nodeid not in plugin.reached:  # pytest stopped before it: the budget was spent
        exc = BudgetSpent()
    status = plugin.outcomes.get(item.nodeid) or ("failed" if exc is not None else "passed")
    message, kind = _message(exc, hidden=info.hidden)
    root = _root_cause(exc) if exc is not None else None
    unreached = False
    if isinstance(root, BudgetSpent) or (isinstance(root, WorkerFault) and root.kind == "budget"):
        message = t(
            "budget_spent_before" if isinstance(root, BudgetSpent) else "budget_spent_here",
            exercise=budget.spent_in or ex.id,
            **budget.said(),
        )
        kind, status = "budget", "failed"
        unreached = isinstance(root, BudgetSpent)
    failure = root if isinstance(root, compare.CheckFailure) else None
    result = CheckResult(
        exercise=ex.id,
        section=ex.section,
        name=item.name,
        status=status,
        score=info.points if status == "passed" else 0.0,
        max_score=info.points,
        message=message,
        listing=list(info.listings),
        visibility="hidden" if info.hidden else "public",
        duration_s=None if info.hidden else round(plugin.durations.get(item.nodeid, 0.0), 4),
        kind=kind,
        title=info.display_title(),
        mistake=failure.mistake if failure else "",
        mistake_zh=failure.mistake_zh if failure else "",
        graded_reads=not info.hidden and item.nodeid in plugin.skipped_reads,
    )
    return result, unreached


def _apply_scan_verdicts(results: list[CheckResult], exercises: list[Exercise], verdicts: dict) -> None:
    """Fail every check of an exercise whose file the forbidden-API scan refused (scanned before
    the exercise's first check; an exercise never reached, the budget spent before it, has only
    checks that were not run), with the scan's verdict as (part of) its message."""
    for ex in exercises:
        verdict, escaped = verdicts.get(ex.id, ("", False))
        if not verdict:
            continue
        for r in results:
            if r.exercise != ex.id:
                continue
            r.score = 0.0
            r.status = "failed"
            # a hidden check says only what the grader wrote: not the student's code or names
            said = verdict if r.visibility == "public" else t("scan_hidden")
            if r.kind == "forbidden" and r.visibility == "public" and not escaped:
                r.message = said  # the guard refused what the verdict names: one message, not two
            else:
                r.message = t("two_messages", first=r.message, second=said) if r.message else said
            r.kind = "forbidden"
