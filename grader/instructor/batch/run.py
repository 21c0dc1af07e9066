"""Grade every submission of a class folder, N at a time, resumably (`kata grade DIR --out OUT`).

The scheduler (this process) discovers the submissions, names each student, skips those OUT
already holds a final record for (same entry, same fingerprint, unless --force), and keeps up to
`jobs` grading processes running (child.py). When a process reports back, the scheduler writes
the student's record atomically, then the student's derived files; when all are done it writes
the class files. A process that dies or runs past `timeout` gives an "error" record, which the
next run grades again. Ctrl-C or SIGTERM stops the running processes, keeps every finished
record, writes the class files from them and says how to go on. A file that cannot be written
(a full disk: atomic.WriteError) stops the run the same way, but writes nothing more: every
record written before stays whole, no temporary file stays behind, and the same command run
again (once there is space) goes on from there.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import multiprocessing.util
import os
import signal
import statistics
import tempfile
import time
from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from ... import __version__
from ...course.assignments import Assignment
from ...course.messages import t
from ...course.safe_text import one_line
from ...reports.assignment import view
from ..formats import late as late_mod
from ..formats.late import SOURCES, newest_mtime
from ..similarity.outputs import FILES as SIMILARITY_FILES
from . import gradebook, platforms, shards, store
from .shards import Shard
from .discover import Entry, assign_names, discover, fingerprint, is_one_submission
from .records import Status, Student, status_of, student_of
from .scratch import Scratch
from .store import EXTENSIONS, ROSTER, TIMES


class BatchError(Exception):
    """The run cannot start (bad folder, an output folder of another course version, ...)."""


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


@dataclass
class Options:
    exercises: list[str]  # ids, course order
    public_only: bool = False
    time_limit: float | None = None
    jobs: int = field(default_factory=default_jobs)
    force: bool = False
    timeout: float = 1800.0  # seconds per submission
    hidden: str = "after_published"  # Gradescope visibility of hidden checks
    quiet: bool = False
    assignment: Assignment | None = None  # its exercises only, points scaled
    roster: str | None = None  # a roster CSV (formats/roster.py), copied into OUT
    lms_assignment: str | None = None  # canvas.csv's column, Canvas's `Title (id)` (formats/lms.py)
    submitted_at: str | None = None  # "mtime", "manifest" or a platform's timestamp CSV (formats/late.py)
    shard: Shard | None = None  # grade only the K-th of N parts of the class (shards.py)
    due: str | None = None  # --due, ISO with its offset: the term's due date (formats/late.py `term`)
    rule: dict | None = None  # the late rule without --assignment: the course's only assignment's
    missing: str | None = None  # --missing zero|blank (None: as OUT has it, else zero)
    extensions: str | None = None  # --extensions FILE: the students' own due dates, copied into OUT


@dataclass
class Outcome:
    total: int = 0
    resumed: int = 0  # final records kept from an earlier run
    graded: int = 0
    refused: int = 0
    errors: int = 0
    interrupted: bool = False
    records: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.interrupted and all(status_of(d) == "graded" for d in self.records.values())


@dataclass
class _Slot:
    """A grading process that keeps its sandbox from one submission to the next (child.py)."""

    proc: multiprocessing.Process
    conn: multiprocessing.connection.Connection
    tmp: Path  # its scratch folder
    entry: Entry | None = None  # the submission it is grading
    started: float = 0.0

    def give(self, entry: Entry) -> None:
        self.entry, self.started = entry, time.monotonic()
        try:
            self.conn.send(entry)
        except OSError:  # the slot is gone: the scheduler finds it dead and records an error
            pass

    def stop(self, kill: bool) -> None:
        if not kill and self.proc.exitcode is None:
            try:
                self.conn.send(None)
            except OSError:
                kill = True
            self.proc.join(10)
        if self.proc.exitcode is None:
            self.proc.kill()
        self.proc.join()
        self.conn.close()


def _max_of(course, ex_ids: list[str], public_only: bool) -> list[dict]:
    rows = []
    for i in ex_ids:
        ex = course.get(i)
        pts = sum(c.points for c in ex.checks if not (public_only and c.hidden))
        rows.append({"id": ex.id, "section": ex.section, "title": ex.title, "score": 0.0, "max_score": float(pts)})
    return rows


def _skeleton(course, opts: Options, entry: Entry, reason: str) -> dict:
    """The record of a submission that has no grade: every exercise at 0, the reason as a note."""
    from importlib.metadata import version  # not `import torch`: this process never needs it

    exercises = _max_of(course, opts.exercises, opts.public_only)
    doc = {
        "schema": 1,
        "kata_version": __version__,
        "torch": version("torch").split("+")[0],
        "submission": entry.source,
        "score": 0.0,
        "max_score": round(sum(e["max_score"] for e in exercises), 6),
        "sandbox": "none",
        "worker_startup_s": 0.0,
        "duration_s": 0.0,
        "notes": [reason],
        "manifest": None,
        "exercises": exercises,
        "checks": [],
    }
    return view(doc, opts.assignment) if opts.assignment else doc


def _meta(course, opts: Options, course_fp: str) -> dict:
    """batch.json of this run (of this shard); its term policy (formats/late.py): the assignment's
    late rule (or the course's only assignment's), the due date and --missing given (a whole run
    keeps OUT's own for what is not given: term_files)."""
    meta = {
        "kind": "kata-batch",
        "format": 1,
        "kata_version": __version__,
        "course": course_fp,
        "title": course.title,
        "exercises": list(opts.exercises),
        "public_only": opts.public_only,
        "time_limit": opts.time_limit,
        "gradescope_hidden": opts.hidden,
        "budget_s": course.budget_s,
        "budget_cpu_s": course.budget_cpu_s,
        "assignment": opts.assignment.id if opts.assignment else None,
        "late_rule": opts.assignment.late_rule() if opts.assignment else opts.rule,
        "term": {"due": opts.due, "missing": opts.missing, "extensions": None},
    }
    return late_mod.settle(meta)


def term_files(
    out: Path,
    meta: dict,
    roster: str | None,
    submitted_at: str | None,
    lms_assignment: str | None = None,
    extensions: str | None = None,
    given: dict | None = None,
    later: bool = False,
) -> None:
    """A given roster, timestamp and extensions file go into OUT (roster.csv, submitted_at.csv,
    extensions.csv), so that `kata gradebook OUT` uses them again; `meta["submitted_at"]`: the
    source of submission times ("mtime", "manifest", "file"), kept from an earlier run when none
    is given; so are the roster's file name (`roster_name`, what summary.md calls it), canvas.csv's
    column (`lms_assignment`, Canvas's `Title (id)`) and the term policy (`term`: the due date,
    --missing, the extensions file's name; `given`: {"due": ..., "missing": ...} of this command,
    which replace OUT's). `later`: given to `kata gradebook`, which a merge of shards keeps over
    the shards' own (`term["later"]`); a grading run's replace them. meta["late"] follows."""
    old = store.read_meta(out) or {}
    if roster:
        store.atomic_write(out / ROSTER, Path(roster).read_bytes())
    meta["roster_name"] = Path(roster).name if roster else old.get("roster_name")
    meta["lms_assignment"] = lms_assignment or meta.get("lms_assignment") or old.get("lms_assignment")
    if submitted_at and submitted_at not in SOURCES and submitted_at != "platform":
        store.atomic_write(out / TIMES, Path(submitted_at).read_bytes())
        submitted_at = "file"
    meta["submitted_at"] = submitted_at or old.get("submitted_at")
    given = {k: v for k, v in (given or {}).items() if v is not None}
    if extensions:
        store.atomic_write(out / EXTENSIONS, Path(extensions).read_bytes())
        given["extensions"] = Path(extensions).name
    same_run = old.get("assignment") == meta.get("assignment")  # another assignment's due date is not this one's
    kept = dict(late_mod.term_of(old)) if same_run else {}
    term = {**kept, **{k: v for k, v in late_mod.term_of(meta).items() if v is not None}, **given}
    for key in late_mod.TERM:
        term.setdefault(key, None)
    term["later"] = sorted(
        (set(term.get("later") or []) | set(given)) if later else set(term.get("later") or []) - set(given)
    )
    meta["term"] = term
    late_mod.settle(meta)


def _check_out(out: Path, meta: dict, force: bool) -> None:
    old = store.read_meta(out)
    if old is None:
        if (
            out.is_dir()
            and any(
                not p.name.startswith(".")
                and p.name not in SIMILARITY_FILES
                and p.name != shards.SHARDS  # another shard's lock, before its record
                for p in out.iterdir()
            )
            and not force
        ):  # kata similarity may have written first
            raise BatchError(t("batch_out_foreign", out=out))
        return
    diffs = store.meta_differences(old, meta)
    if diffs and not force:
        raise BatchError(t("batch_out_other_version", out=out, diffs="; ".join(diffs)))


def _finished(record: dict | None, entry: Entry) -> bool:
    st = student_of(record) if record else None
    return st is not None and st.final and st.source == entry.source and st.fingerprint == entry.fingerprint


def _how(exitcode: int | None) -> str:
    if exitcode is None:
        return "no exit status"
    if exitcode < 0:
        try:
            return f"killed by {signal.Signals(-exitcode).name}"
        except ValueError:
            return f"killed by signal {-exitcode}"
    return f"exit status {exitcode}"


def grade_class(
    course, class_dir: str | Path, out: str | Path, opts: Options, console: Console | None = None
) -> Outcome:
    console = console or Console()
    class_dir, out = Path(class_dir), Path(out)
    if not class_dir.exists() and not class_dir.is_symlink():  # a typo: say so, not "must be a class folder"
        raise BatchError(t("batch_missing", path=class_dir))
    try:  # a platform's download (Canvas, Moodle, Gradescope), a folder or its zip, graded as it is
        layout = platforms.recognise(class_dir)
    except platforms.PlatformError as e:
        raise BatchError(str(e)) from None
    if layout is not None:
        try:
            with platforms.staged(layout, course.chapter, [ex.id for ex in course.exercises]) as download:
                if not opts.quiet:
                    console.print(escape(layout.describe()), highlight=False, soft_wrap=True)
                return _grade_class_at(course, class_dir, out, opts, console, download)
        finally:
            layout.close()
    if not class_dir.is_dir():
        raise BatchError(t("batch_not_folder", path=class_dir))
    if is_one_submission(class_dir, course.chapter):
        raise BatchError(t("batch_one_submission", path=class_dir, chapter=course.chapter))
    return _grade_class_at(course, class_dir, out, opts, console, None)


def _grade_class_at(course, class_dir: Path, out: Path, opts: Options, console: Console, download) -> Outcome:
    """grade_class once DIR is known to be a class: `download`, a platform's download staged
    (platforms.Download), else None."""
    course_fp = store.course_fingerprint(course)
    meta = _meta(course, opts, course_fp)
    if out.exists() and not out.is_dir():
        raise BatchError(t("batch_out_not_folder", out=out))
    if opts.shard:
        _check_shard_out(out, meta, opts)
        try:
            with shards.locked(out, opts.shard):
                _check_shard_out(out, meta, opts)  # again, now that no whole run can change it
                return _grade_class(course, class_dir, out, opts, console, meta, course_fp, download)
        except store.Busy:
            raise BatchError(t("shard_busy", out=out, shard=opts.shard)) from None
    _check_out(out, meta, opts.force)
    try:
        with store.locked(out):
            _check_out(out, meta, opts.force)  # again, now that no other run can change it
            return _grade_class(course, class_dir, out, opts, console, meta, course_fp, download)
    except store.Busy:
        raise BatchError(t("batch_busy", out=out)) from None


def _check_shard_out(out: Path, meta: dict, opts: Options) -> None:
    """A shard writes into an OUT that is empty, or holds this class's run (batch.json) or other
    shards of it graded with the same settings and the same N (unless --force)."""
    if opts.force:
        return
    old = store.read_meta(out)
    found = shards.read_all(out)  # this shard's own record too: a rerun resumes only with the same settings
    others = {name: doc for name, doc in found.items() if name != opts.shard.name}
    if old is None and not found:
        _check_out(out, meta, False)
        return
    if old is not None and (diffs := store.meta_differences(old, meta)):
        raise BatchError(t("batch_out_other_version", out=out, diffs="; ".join(diffs)))
    if other_n := sorted(name for name, doc in others.items() if doc.get("shard", [0, 0])[1] != opts.shard.n):
        raise BatchError(t("shard_other_n", out=out, shard=opts.shard, shards=", ".join(other_n)))
    if problems := shards.differences(found, meta):
        raise BatchError(t("shard_cannot_join", out=out, shard=opts.shard, problems="\n".join(problems)))


def _grade_class(
    course, class_dir: Path, out: Path, opts: Options, console: Console, meta: dict, course_fp: str, download=None
) -> Outcome:
    if not opts.shard:
        store.remove_partials(out)
    entries, skipped = _submissions(class_dir, out, opts, meta, download)
    entries, records, renamed = _named_entries(out, opts.shard, entries)
    _roster(opts, entries, console)  # a roster that is not this class's stops here, before any write
    todo, outcome = _plan(out, opts, entries, records, console)
    _write_run_meta(out, class_dir, opts, meta, entries, skipped, renamed)
    if not opts.quiet:
        _say_plan(console, out, skipped, renamed, outcome, len(todo))
    recorder = _Recorder(course, opts, out, course_fp, outcome)
    _refuse_past_limits(todo, recorder, opts, console)
    try:
        _run(course, opts, todo, outcome, recorder.record, _line, console)
    except KeyboardInterrupt:
        outcome.interrupted = True
    return _finish_class(out, opts, entries, outcome)


def _submissions(class_dir: Path, out: Path, opts: Options, meta: dict, download) -> tuple[list[Entry], list]:
    """(the class's entries, those skipped) from a platform's download or the class folder. A
    download with a due date and no --submitted-at is timed by the platform's own times."""
    if download is not None:
        entries, skipped = download.entries()
        if not opts.submitted_at and (meta.get("late") or {}).get("due"):  # the platform's own times, with a due date
            opts.submitted_at = "platform"
        return entries, skipped
    entries, skipped = discover(class_dir)
    inside = out.resolve()
    return [e for e in entries if e.path.resolve() != inside], skipped  # OUT inside DIR is not a student


def _named_entries(out: Path, shard: Shard | None, entries: list[Entry]) -> tuple[list[Entry], dict, list[str]]:
    """(the entries this run grades, each named and fingerprinted; OUT's records of them; the notes
    on names given): names are the whole run's, so that every shard names a student alike."""
    records = store.load_records(out)
    # a record's own source, as written: load_records keeps any student block, a damaged one too
    known = {doc["student"].get("source"): name for name, doc in records.items()}
    renamed = assign_names(entries, known, set(records))  # every entry: the names of a whole run
    if shard:  # this shard's entries only, and only their partial files: other shards write beside it
        entries = [e for e in entries if shard.holds(e.source)]
        for e in entries:
            store.remove_partials(store.student_dir(out, e.name))
        records = {e.name: records[e.name] for e in entries if e.name in records}
    for e in entries:
        e.fingerprint = fingerprint(e.path)
    return entries, records, renamed


def _plan(
    out: Path, opts: Options, entries: list[Entry], records: dict, console: Console
) -> tuple[list[Entry], Outcome]:
    """(the entries to grade, the Outcome counting those kept from an earlier run): a final record
    of the same submission is kept unless --force; one whose submission changed is said and graded;
    a record file store.load_records left out (unreadable, or edited into a shape no run writes) is
    said, even with --quiet, since grading replaces it."""
    todo, outcome = [], Outcome(total=len(entries))
    for e in entries:
        if e.name not in records and store.record_path(out, e.name).exists():
            console.print(t("batch_record_replaced", name=escape(e.name)), highlight=False)
        if not opts.force and _finished(records.get(e.name), e):
            outcome.resumed += 1
            continue
        old = student_of(records[e.name]) if e.name in records else None
        if old is not None and old.final and not opts.force and not opts.quiet:
            console.print(t("batch_changed", name=escape(e.name)), highlight=False)
        todo.append(e)
    return todo, outcome


def _write_run_meta(
    out: Path, class_dir: Path, opts: Options, meta: dict, entries: list[Entry], skipped: list, renamed: list[str]
) -> None:
    """batch.json (a shard: its own file, Shard.meta_path) with this run's class, jobs, skipped
    entries and names; a whole run copies the roster, times and extensions files into OUT too."""
    meta.update(
        {
            "created": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "class_dir": str(class_dir.resolve()),
            "jobs": opts.jobs,
            "skipped": [s.as_dict() for s in skipped],
            "renamed": renamed,
        }
    )
    shard = opts.shard
    if shard:
        meta.update(
            shard=[shard.k, shard.n],
            entries={e.name: e.source for e in entries},
            roster_name=None,
            lms_assignment=opts.lms_assignment,
            submitted_at=opts.submitted_at,
        )
        store.write_json(shard.meta_path(out), meta)
        return
    term_files(
        out,
        meta,
        opts.roster,
        opts.submitted_at,
        opts.lms_assignment,
        opts.extensions,
        {"due": opts.due, "missing": opts.missing},
    )
    store.write_json(out / store.META, meta)


def _say_plan(console: Console, out: Path, skipped: list, renamed: list[str], outcome: Outcome, todo: int) -> None:
    """The entries skipped, the names changed, and how many a resumed run keeps."""
    for s in skipped:
        console.print(
            t("batch_skipped_entry", source=escape(one_line(s.source)), reason=escape(one_line(s.reason))),
            highlight=False,
            soft_wrap=True,
        )
    for note in renamed:
        console.print(f"note: {escape(one_line(note))}", highlight=False, soft_wrap=True)
    if outcome.resumed:
        console.print(
            t("batch_resume", done=outcome.resumed, total=outcome.total, out=escape(str(out)), todo=todo),
            highlight=False,
        )


@dataclass
class _Recorder:
    """Writes a submission's record when its grading ends (graded, refused, died or timed out),
    then its derived files, and counts it in the Outcome."""

    course: object
    opts: Options
    out: Path
    course_fp: str
    outcome: Outcome

    def record(self, entry: Entry, message: dict | None, exitcode: int | None, timed_out: bool) -> dict:
        status, reason, doc = self._result(entry, message, exitcode, timed_out)
        doc["student"] = self._student(entry, status, reason, message).to_json()
        store.write_json(store.record_path(self.out, entry.name), doc, durable=True)
        gradebook.write_student(self.out, entry.name, doc, self.opts.hidden)
        if status == "graded":
            self.outcome.graded += 1
        elif status == "refused":
            self.outcome.refused += 1
        else:
            self.outcome.errors += 1
        return doc

    def _result(
        self, entry: Entry, message: dict | None, exitcode: int | None, timed_out: bool
    ) -> tuple[Status, str, dict]:
        """(status, reason, the report): the grading process's, or a skeleton at 0 with the reason
        it has no grade (refused, its own error, past --timeout, died)."""
        status = (message or {}).get("status")
        if status == "graded":
            return status, message.get("reason", ""), message["doc"]  # reason: links left out, else nothing
        if status in ("refused", "error"):
            reason = message["reason"]
        elif timed_out:
            status, reason = "error", t("batch_timeout", seconds=f"{self.opts.timeout:g}")
        else:
            status, reason = "error", t("batch_died", how=_how(exitcode))
        return status, reason, _skeleton(self.course, self.opts, entry, reason)

    def _student(self, entry: Entry, status: Status, reason: str, message: dict | None) -> Student:
        extra = {}
        if entry.platform:  # who the student is on the platform whose download this was (platforms.py)
            extra["platform"] = {k: v for k, v in entry.platform.items() if k != "refused"}
        if (message or {}).get("traceback"):  # the grader's own failure: for whoever debugs it
            extra["traceback"] = message["traceback"]
        return Student.new(
            name=entry.name,
            source=entry.source,
            fingerprint=entry.fingerprint,
            status=status,
            reason=reason,
            course=self.course_fp,
            mtime=newest_mtime(entry.path),  # a submission time, for --submitted-at mtime
            **extra,
        )


def _line(entry: Entry, doc: dict, seconds: float) -> str:
    """The one line said of a submission when its record is written (logs are grepped)."""
    st = Student.from_json(doc["student"])
    if st.graded:
        return t(
            "batch_line_graded",
            name=escape(one_line(entry.name)),
            score=f"{doc['score']:g}",
            max=f"{doc['max_score']:g}",
            seconds=f"{seconds:.1f}",
        )
    key = "batch_line_refused" if st.status == "refused" else "batch_line_error"
    return t(key, name=escape(one_line(entry.name)), reason=escape(one_line(st.reason)))  # one line each


def _refuse_past_limits(todo: list[Entry], recorder: _Recorder, opts: Options, console: Console) -> None:
    """Record as refused, without grading, the entries past a submission's limits as the platform
    gave them; they leave `todo`."""
    for e in [e for e in todo if e.platform.get("refused")]:
        doc = recorder.record(e, {"status": "refused", "reason": e.platform["refused"]}, 0, False)
        todo.remove(e)
        if not opts.quiet:
            console.print(_line(e, doc, 0.0), highlight=False, soft_wrap=True)


def _finish_class(out: Path, opts: Options, entries: list[Entry], outcome: Outcome) -> Outcome:
    """The Outcome with OUT's records; the derived files a killed run did not write; a whole run's
    class files. A shard writes its own students' files only: the class files are the merge's
    (kata gradebook OUT)."""
    outcome.records = store.load_records(out)
    if opts.shard:
        outcome.records = {e.name: outcome.records[e.name] for e in entries if e.name in outcome.records}
        gradebook.complete(out, outcome.records, opts.hidden)
        if outcome.interrupted:
            for e in entries:
                store.remove_partials(store.student_dir(out, e.name))
        return outcome
    gradebook.complete(out, outcome.records, opts.hidden)  # derived files a killed run did not write
    gradebook.write_class(out, outcome.records, store.read_meta(out))
    if outcome.interrupted:  # a write that Ctrl-C cut short left its .part file; this run holds the lock
        store.remove_partials(out)
    return outcome


def _roster(opts: Options, entries: list[Entry], console: Console):
    """The roster given with --roster, said how it was read; BatchError when it matches fewer than
    half of the submissions or none of its students (roster.refusal), unless --force."""
    if not opts.roster:
        return None
    from ..formats.names import stem
    from ..formats.roster import read, refusal

    roster = read(opts.roster)
    if not opts.quiet:
        console.print(
            t(
                "roster_read",
                roster=escape(opts.roster),
                shape=t(f"roster_shape_{roster.shape}"),
                count=len(roster.students),
                column=escape(roster.key),
            ),
            highlight=False,
            soft_wrap=True,
        )
    problem = refusal(
        roster, {e.name: stem(e.source) for e in entries}, {e.name: e.platform for e in entries if e.platform}
    )
    if problem and not opts.force:
        raise BatchError(problem)
    return roster


def _run(course, opts: Options, todo: list[Entry], outcome: Outcome, done, line, console: Console) -> None:
    if not todo:
        return
    _short_socket_folder()
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(["grader.instructor.batch.child"])
    jobs = max(1, min(opts.jobs, len(todo)))
    threads = max(1, default_jobs() // jobs)
    queue: deque[Entry] = deque(todo)
    slots: list[_Slot] = []
    scratch = Scratch()  # the slots' temporary files, removed even when one is killed
    previous_term = signal.signal(signal.SIGTERM, _raise_interrupt)
    columns = [
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("•"),
        TimeElapsedColumn(),
        TextColumn("• ETA"),
        TimeRemainingColumn(),
    ]

    def start_slot() -> _Slot:
        here, there = ctx.Pipe(duplex=True)
        tmp = scratch.folder()
        proc = ctx.Process(
            target=_serve_slot,
            name=f"kata-grade-{len(slots) + 1}",
            daemon=True,
            args=(str(tmp), course, opts.exercises, opts.public_only, opts.time_limit, threads, there, opts.assignment),
        )
        proc.start()
        there.close()
        return _Slot(proc, here, tmp)

    def finish(slot: _Slot, message: dict | None, timed_out: bool, progress, task) -> None:
        entry, seconds = slot.entry, time.monotonic() - slot.started
        slot.entry = None
        doc = done(entry, message or None, slot.proc.exitcode, timed_out and not message)
        if not opts.quiet:
            progress.console.print(
                line(entry, doc, seconds), highlight=False, soft_wrap=True
            )  # one line per student, whole: logs are grepped
        progress.advance(task)

    with Progress(*columns, console=console, disable=opts.quiet, transient=False) as progress:
        task = progress.add_task(t("batch_progress"), total=outcome.total, completed=outcome.resumed)
        try:
            while queue or any(s.entry is not None for s in slots):
                for slot in slots:
                    if slot.entry is None and queue:
                        slot.give(queue.popleft())
                while queue and len(slots) < jobs:
                    slots.append(start_slot())
                    slots[-1].give(queue.popleft())
                busy = [s for s in slots if s.entry is not None]
                multiprocessing.connection.wait([s.conn for s in busy] + [s.proc.sentinel for s in busy], timeout=1.0)
                for slot in busy:
                    message = None
                    if slot.conn.poll():
                        try:
                            message = slot.conn.recv()
                        except (EOFError, OSError):
                            message = None
                    if message is not None:  # graded (or refused): the slot takes the next one
                        finish(slot, message, False, progress, task)
                        continue
                    timed_out = time.monotonic() - slot.started > opts.timeout
                    if slot.proc.exitcode is None and not timed_out:
                        continue
                    slot.stop(kill=True)  # died, or past --timeout: its sandbox and grading process go with it
                    scratch.remove(slot.tmp)
                    slots.remove(slot)
                    finish(slot, None, timed_out, progress, task)
        finally:
            for slot in slots:  # done: each closes its sandbox; interrupted: what is running is not recorded
                slot.stop(kill=slot.entry is not None)
            scratch.close()
            signal.signal(signal.SIGTERM, previous_term)


# AF_UNIX addresses hold 107 bytes; multiprocessing binds its fork server's socket at
# TMPDIR/pymp-XXXXXXXX/listener-XXXXXXXX, about 40 bytes past TMPDIR.
_SOCKET_ROOM = 107 - 40


def _short_socket_folder() -> None:
    """Give multiprocessing a folder short enough for its fork server's socket. With a long TMPDIR
    (a CI job's, a deep home folder) Python 3.11 fails with "AF_UNIX path too long"; 3.13 falls back
    to /tmp, and so do we. Only the socket's folder moves: the slots' scratch stays under TMPDIR."""
    if len(os.fsencode(tempfile.gettempdir())) <= _SOCKET_ROOM:
        return
    for base in ("/tmp", "/var/tmp", "/usr/tmp"):
        if os.path.isdir(base) and os.access(base, os.W_OK | os.X_OK):
            saved, tempfile.tempdir = tempfile.tempdir, base
            try:
                multiprocessing.util.get_temp_dir()  # created now, under base; removed at exit
            finally:
                tempfile.tempdir = saved
            return


def _serve_slot(tmp: str, *args) -> None:
    """A slot's entry point: its temporary files go to `tmp` (the scheduler's scratch folder for
    it). Importing child.py here, not in the scheduler, keeps torch out of the scheduler; the fork
    server has imported it already."""
    import tempfile

    tempfile.tempdir = tmp
    from .child import serve

    serve(*args)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def mean_percent(records: dict) -> float | None:
    p = [100 * d["score"] / d["max_score"] for d in records.values() if status_of(d) == "graded" and d.get("max_score")]
    return statistics.fmean(p) if p else None
