"""`kata hint [ID] [--all]`: the hints of course.toml, revealed one level at a time.

Each call reveals the next hint and shows it below the ones revealed before; `--all` reveals
every hint at once. How many hints of each exercise a student has seen is kept in
`.kata/hints.json` ({exercise id: number revealed}); a damaged file is moved aside and the
hints start again from the first (the command says so).
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.console import Console
from rich.text import Text

from ..course.manifest import Course, Exercise
from ..course.messages import t
from .state import StateFile, kata_dir

SCHEMA = 1


def texts(ex: Exercise) -> list[str]:
    """The hints of an exercise, easiest first."""
    return list(ex.display_hints())


@dataclass
class Reveal:
    exercise: Exercise
    hints: list[str]
    shown: int  # how many are revealed now
    new: int  # how many of them this call revealed
    problem: str = ""  # the state file was damaged: why, and where it went
    saved: bool = True


def _state(course: Course) -> StateFile:
    return StateFile.open(kata_dir(course.root) / "hints.json", SCHEMA)


def revealed(course: Course, ex: Exercise) -> int:
    return _count(_state(course).data.get(ex.id), len(texts(ex)))


def _count(value, limit: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        return 0
    return max(0, min(value, limit))


def reveal(course: Course, ex: Exercise, everything: bool = False) -> Reveal:
    state = _state(course)
    hints = texts(ex)
    before = _count(state.data.get(ex.id), len(hints))
    after = len(hints) if everything else min(before + 1, len(hints))
    problem = ""
    if state.problem:
        where = state.moved_to.relative_to(course.root) if state.moved_to else state.path
        problem = t("hint_state_damaged", path=state.path.relative_to(course.root), reason=state.problem, moved=where)
    saved = True
    if after != before or state.problem:
        state.data[ex.id] = after
        try:
            state.save()
        except OSError:
            saved = False
    return Reveal(ex, hints, after, after - before, problem, saved)


def show(rev: Reveal, console: Console, key: str = "") -> None:
    """Print the revealed hints, the new ones bright. `key`: the key that shows the next one
    (in `kata watch`); else the command is named."""
    ex = rev.exercise
    if rev.problem:
        console.print(Text(rev.problem, style="yellow"))
    if not rev.saved:
        console.print(Text(t("hint_not_saved"), style="yellow"))
    if not rev.hints:
        console.print(Text(t("hint_none", id=ex.id), style="yellow"))
        return
    console.print(Text(t("hint_title", id=ex.id, section=ex.section, title=ex.display_title()), style="bold"))
    total = len(rev.hints)
    for i, hint in enumerate(rev.hints[: rev.shown], 1):
        fresh = i > rev.shown - rev.new
        line = Text(f"  {t('hint_label', n=i, total=total)}  ", style="bold yellow" if fresh else "dim")
        line.append(hint, style="" if fresh else "dim")
        console.print(line)
    left = total - rev.shown
    if left:
        more = t("hint_more_key", count=left, letter=key) if key else t("hint_more", count=left, id=ex.id)
        console.print(Text(more, style="cyan"))
    elif rev.new == 0:
        console.print(Text(t("hint_all_shown", id=ex.id), style="cyan"))
    else:
        console.print(Text(t("hint_last", id=ex.id), style="cyan"))
