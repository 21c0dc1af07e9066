"""Grading fails closed on a missing or damaged asset (issue 37).

The checks of some exercises read a file of the course's assets folder (grader/course/pins.py,
NEEDED_BY). Where that file is missing or does not match the course's pin, those checks cannot
grade: rather than skipping them to 0 points, a grading stops with AssetUnavailable, whose message
names the asset (by its name, never by a host path) and the command that repairs it. `kata grade`
says it and exits non-zero; a class batch records it as an error, which its next run grades
again. A student's `kata check` does not stop: the checks say the same reason as they skip.

The folder is looked at before any check runs (`require`) and again when the checks are done
(`after`): an asset replaced while a grading runs (a concurrent `kata assets unpack`, a shared
disk) stops that grading as well, rather than skipping the checks that read it after the change.
The sandbox reads its own verified copy, made when it starts (grader/worker/client.py), so a
change after that never reaches the student's code.
"""

from __future__ import annotations

from ..course import pins
from ..course.messages import t


class AssetUnavailable(RuntimeError):
    """An asset the graded exercises' checks read is missing or does not match its pin."""


def unavailable(course, exercises) -> list[str]:
    """The names of the assets that `exercises` need and the course's assets folder lacks (or holds
    damaged), in pins.NEEDED_BY's order."""
    ids = {ex.id for ex in exercises}
    folder = course.assets_dir
    return [
        name
        for name, needed_by in pins.NEEDED_BY.items()
        if ids.intersection(needed_by) and not pins.matches(folder / name)
    ]


def reason(name: str) -> str:
    """What is wrong with the asset `name` and how to repair it, for any reader."""
    return t("asset_unavailable", name=name)


def require(course, exercises) -> None:
    """Raise AssetUnavailable when `exercises` need an asset that is missing or damaged."""
    _stop(unavailable(course, exercises), exercises)


def after(course, exercises, results, unmatched=()) -> None:
    """Raise AssetUnavailable when a check of an exercise that reads an asset was skipped (the
    trusted side found the asset missing or damaged while grading), or when the sandbox's copy of an
    asset these exercises need did not match its pin (`unmatched`: names, Sandbox.assets_unmatched)."""
    ids = {ex.id for ex in exercises}
    names = [
        name
        for name, needed_by in pins.NEEDED_BY.items()
        if ids.intersection(needed_by)
        and (name in unmatched or any(r.status == "skipped" and r.exercise in needed_by for r in results))
    ]
    _stop(names, exercises)


def _stop(names: list[str], exercises) -> None:
    """AssetUnavailable for the assets `names` (none: nothing), naming the exercises that read them."""
    if names:
        ids = {ex.id for ex in exercises}
        needing = sorted({i for n in names for i in pins.NEEDED_BY[n] if i in ids})
        raise AssetUnavailable(
            t("grading_stopped_asset", exercises=", ".join(needing), reason="; ".join(reason(n) for n in names))
        )
