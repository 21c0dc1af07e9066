"""`kata check [ID]`: the public checks of one exercise (or all) on exercises/, shown so that
a student sees at once what passes and, for the first failure, what is wrong and where.

    §1.11 s1_11_softmax · Simple normalisation and a numerically stable softmax      2/7
      ✔ book_softmax_examples                                                         3/3
      ✘ book_simple_normalization                                                     0/2
    First failure: s1_11_softmax › book_simple_normalization (your result is not right)
      simple_normalize([1.0, 2.0, 3.0, 6.0]):
        wrong shape: expected (4,), got ()
      Edit exercises/ch01/s1_11_softmax.py · stuck? kata hint s1_11_softmax

Exercises whose file is missing or empty are not run: the command names the file and offers
`kata reset ID`. With no ID, exercises not started yet (still the stub) are listed, not run.

In the bundle of one assignment (`kata release OUT -a ID`) the points are the assignment's, and
an exercise of another assignment that its exercises use says so instead of showing points (it is
worth nothing here); a failure raised in such an exercise's file says where to get it from.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from ..checking.submission import SubmissionError
from ..course import bundle_assignment
from ..course.manifest import Course, Exercise
from ..course.messages import CATALOG, language, t
from ..course.safe_text import block, one_line
from ..course.wrapping import Wrapped
from ..reports.report import pts
from . import progress
from .progress import EMPTY, MISSING, NOT_STARTED

if TYPE_CHECKING:
    from ..checking.results import CheckResult, GradeResult

MARK = {"passed": ("✔", "green"), "failed": ("✘", "red"), "skipped": ("–", "yellow")}


def check_label(r: CheckResult) -> str:
    """The name a student sees for a check."""
    return r.title or r.name.removeprefix("test_")


@dataclass
class Outcome:
    ok: bool
    result: GradeResult | None
    unrun: dict[str, str]  # exercise id -> missing / empty / not_started


def check(course: Course, exercises: list[Exercise], explicit: bool, console: Console, full: bool = False) -> Outcome:
    """Run and show the public checks. `explicit`: the student named the exercise, so a file
    that is still the stub is run too (its checks say what to write). `full`: as the grade runs
    them, with the reads made only when grading (the training size)."""
    unrun: dict[str, str] = {}
    to_run: list[Exercise] = []
    for ex in exercises:
        status, _ = progress.static_status(course, ex)
        if status in (MISSING, EMPTY) or (status == NOT_STARTED and not explicit):
            unrun[ex.id] = status
        else:
            to_run.append(ex)
    result = None
    if to_run:
        try:
            result, _ = progress.grade(course, to_run, full=full)
        except SubmissionError as e:
            console.print(Wrapped(t("check_cannot_run", path="exercises/", reason=str(e)), style="red"))
            return Outcome(False, None, unrun)
    show(course, exercises, result, unrun, console)
    if result is not None:
        graded_reads_note(result, full, console)
    ok = not unrun and result is not None and all(r.status == "passed" for r in result.results)
    return Outcome(ok, result, unrun)


def show(
    course: Course,
    exercises: list[Exercise],
    result: GradeResult | None,
    unrun: dict[str, str],
    console: Console,
    summary: bool = True,
) -> None:
    rows = result.results if result else []
    bundle = bundle_assignment.of(course)
    elsewhere = set(bundle.needed) if bundle else set()
    for ex in exercises:
        lead = Text(f"§{ex.section} ", style="bold cyan")
        head = Text()
        head.append(ex.id, style="bold")
        head.append(f" · {ex.display_title()}", style="dim")
        mine = [r for r in rows if r.exercise == ex.id]
        if unrun.get(ex.id) == NOT_STARTED:
            head.append("  · " + t("status_not_started"), style="dim")
            console.print(Rows(lead, head, Text()))
            continue
        if ex.id in unrun:
            console.print(Rows(lead, head, Text()))
            console.print(Wrapped(_unrun_line(course, ex, unrun[ex.id])))
            continue
        got, total = sum(r.score for r in mine), sum(r.max_score for r in mine)
        points = Text()
        if ex.id in elsewhere:
            head.append("  · " + t("bundle_check_needed", id=bundle.id), style="yellow")
        else:
            points = Text(f"{pts(got)}/{pts(total)}", style="bold green" if mine and got == total else "bold")
        console.print(Rows(lead, head, points))
        label_width = max((cell_len(check_label(r)) for r in mine), default=0)  # display cells: 词 takes two
        scores = ["" if ex.id in elsewhere else f"{pts(r.score)}/{pts(r.max_score)}" for r in mine]
        for r, score in zip(mine, scores):
            mark, style = MARK.get(r.status, ("?", "white"))
            console.print(
                Rows(
                    Text.assemble("  ", (mark, style), " "),
                    Text(check_label(r)),
                    Text(score, style="dim"),
                    body_width=label_width,
                    tail_width=max(map(len, scores)),
                )
            )
            if r.status == "skipped" and r.message:  # why it did not run: a missing asset, a missing tool
                console.print(block(one_line(r.message), 6, style="yellow"))
    fresh = [ex_id for ex_id, status in unrun.items() if status == NOT_STARTED]
    if fresh:
        console.print(Wrapped(t("check_not_started", count=len(fresh), id=fresh[0]), style="dim"))
    failures = [r for r in rows if r.status == "failed"]
    if failures:
        console.print()
        explain(course, failures[0], console)
        if len(failures) > 1:
            console.print(Wrapped(t("check_more_failures", count=len(failures) - 1), style="dim"))
    if summary and result is not None:
        passed = sum(1 for r in rows if r.status == "passed")
        console.print()
        console.print(
            Wrapped(
                t(
                    "check_summary",
                    passed=passed,
                    total=len(rows),
                    score=pts(result.score),
                    max_score=pts(result.max_score),
                    seconds=f"{result.duration_s:.1f}",
                ),
                style="bold",
            )
        )
        if bundle is not None:
            worth = sum(ex.points for ex in course.exercises if ex.id in bundle.graded) * bundle.factor
            console.print(Wrapped(t("bundle_check_points", id=bundle.id, points=pts(worth)), style="dim"))
        if result.sandbox != "bubblewrap":
            console.print(Wrapped(t("check_limits_only"), style="yellow"))
        for note in result.notes:  # one line each: a name's line break is a visible ⏎
            console.print(Wrapped(f"note: {one_line(note)}", style="yellow"))


class Rows:
    """One row of the check view: `lead` ("§1.11 ", "  ✘ "), `body` (a title, a check's name)
    and `tail` (its points). The body wraps inside its own column, by the kata's rule; the tail
    stays at the end of the row's first line, after the body's first line padded to
    `body_width` cells, so the points of all rows begin in one column while the terminal is wide
    enough, and never move to a line of their own when it is not."""

    def __init__(self, lead: Text, body: Text, tail: Text, body_width: int = 0, tail_width: int = 0):
        self.lead, self.body, self.tail = lead, body, tail
        self.body_width, self.tail_width = body_width, tail_width

    def __rich_console__(self, console, options):
        lead = self.lead.cell_len
        tail = max(self.tail.cell_len, self.tail_width)
        gap = 2 if tail else 0
        width = max(self.body_width, self.body.cell_len)
        width = max(1, min(width, options.max_width - lead - gap - tail))
        lines = Wrapped(self.body).lines(console, width)
        first = Text.assemble(self.lead, lines[0])
        if tail:
            first.pad_right(lead + width + gap - first.cell_len)
            first.append_text(self.tail)
        yield first
        for line in lines[1:]:
            yield Text.assemble(" " * lead, line)


def graded_reads_note(result: GradeResult, full: bool, console: Console) -> None:
    """What `kata check` left out of checks that passed: the reads they make only when graded, at
    the training size (code correct on small inputs may not fit there, in memory or in time). One
    line per exercise whose public checks all passed; with --full, that they were made."""
    if full:
        console.print(Wrapped(t("check_full_done"), style="dim"))
        return
    by_ex: dict[str, list] = {}
    for r in result.results:
        by_ex.setdefault(r.exercise, []).append(r)
    for ex_id, rows in by_ex.items():
        more = [r for r in rows if r.graded_reads]
        if more and all(r.status == "passed" for r in rows):
            console.print(Wrapped(t("check_graded_reads", count=len(more), id=ex_id), style="dim"))
            console.print(Text(f"  kata check --full {ex_id}", style="bold", no_wrap=True))


def _unrun_line(course: Course, ex: Exercise, status: str) -> Text:
    path = progress.shown_path(course, ex)
    if status == MISSING:
        return Text("  ✘ " + t("check_file_missing", path=path, id=ex.id), style="red")
    return Text("  ✘ " + t("check_file_empty", path=path, id=ex.id), style="red")


# -- the first failure, explained


def _prefix(key: str) -> str:
    """The fixed start of a catalog message in the current language, e.g. "not implemented yet: "."""
    template = CATALOG[key].get(language()) or CATALOG[key]["en"]
    fields = {name: "\0" for _, name, _, _ in string.Formatter().parse(template) if name}
    return t(key, **fields).split("\0")[0]


def kind_of(r: CheckResult) -> str:
    if r.kind == "student" and r.message.startswith(_prefix("not_implemented")):
        return "not_implemented"
    if r.message.startswith((_prefix("import_failed"), _prefix("import_failed_before"))):
        return "import"
    return r.kind if r.kind in ("check", "student", "fault", "forbidden") else "check"


# A sentence ends at "." and a space, or at "。": never inside code such as keys.T or nn.Linear.
_SENTENCE = re.compile(r"(?<=\.)\s+(?=[A-Z\u4e00-\u9fff])|(?<=。)\s*(?=[A-Z\u4e00-\u9fff])")


def split_message(message: str) -> tuple[str, list[str]]:
    """("what:", [sentences]) of a check's message: "softmax(x): 2 of 4 values differ (...).
    Worst at ..." becomes ("softmax(x):", ["2 of 4 values differ (...).", "Worst at ..."])."""
    what = ""
    m = re.match(r"^(.{1,120}?(?:: |：))(.+)$", message, re.S)
    if m and "(" not in m.group(1).split(")")[-1]:
        what, message = m.group(1).rstrip(), m.group(2)
    parts = [p.strip() for p in _SENTENCE.split(message) if p.strip()]
    return what, parts or [message]


def _line_of(course: Course, ex: Exercise, needle: str) -> int | None:
    try:
        lines = progress.student_file(course, ex).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for no, line in enumerate(lines, 1):
        if needle and needle in line:
            return no
    return None


def explain(course: Course, r: CheckResult, console: Console) -> None:
    ex = course.get(r.exercise)
    kind = kind_of(r)
    head = Text(
        t("check_first_failure", id=r.exercise, check=check_label(r), kind=t("check_kind_" + kind)), style="bold red"
    )
    console.print(Wrapped(head))
    message = r.message
    line = None
    if kind == "not_implemented":
        task = message[len(_prefix("not_implemented")) :]
        line = _line_of(course, ex, task[:60])
        console.print(block(task, 2))
    else:
        what, sentences = split_message(message)
        called = re.match(r"^([A-Za-z_]\w*)\(", what)
        if called:  # "softmax([1.0, 2.0]): ..." -> the line of `def softmax(`
            line = _line_of(course, ex, f"def {called.group(1)}(")
        mistake = _prefix("mistake")
        indent = "  "
        if what:
            console.print(block(what, 2, style="bold"))
            indent = "    "
        for s in sentences:  # a message's every line, a wrapped one too, under the grader's own line
            if mistake and s.startswith(mistake):
                console.print(block(f"→ {s}", 2, style="yellow bold"))
            else:
                console.print(block(s, len(indent)))
    named = re.search(re.escape(ex.file) + r":(\d+)", message)  # "... (at ch01/x.py:12)"
    if named:
        line = int(named.group(1))
    earlier = next((e for e in course.exercises if e.id != ex.id and f"{e.file}:" in message), None)
    if earlier is not None and kind == "student":  # raised in the file of an earlier exercise it imports: edit that
        ex = earlier
        line = int(re.search(re.escape(ex.file) + r":(\d+)", message).group(1))
        bundle = bundle_assignment.of(course)
        if bundle is not None and ex.id in bundle.needed:  # an exercise of another assignment: bring it over
            console.print(
                block(t("bundle_earlier_hint", other=ex.id, path=progress.shown_path(course, ex)), 2, style="yellow")
            )
    where = progress.shown_path(course, ex) + (f":{line}" if line else "")
    tail = Text("  " + t("check_edit", path=where), style="cyan")
    if ex.hints:
        tail.append(" · " + t("check_stuck", id=ex.id), style="cyan")
    console.print(Wrapped(tail))
