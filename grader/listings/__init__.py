"""The chapter's listings, re-run with a student's code: `kata run LISTING [--book]`. Imports
checks (their inputs), checking, worker.proxy, capstone and course; plots.py describes and draws
the listings' figures.

Each exercise may have a module `grader/listings/<exercise id>.py` whose functions re-create
the listings of that exercise, calling the student's code through `sub` (the same sandboxed
proxy the checks use) and printing with `show`, like the book's own code:

    @listing("1.6", book=\"\"\"Attention weights matrix: ...\"\"\", errata=["E-1.12-d"])
    def listing_1_6(sub, show):
        show("Attention weights matrix:")
        show(sub.attention_weights(scores, 4))

`book` is what the chapter prints; `errata` names the ERRATA.md entries about it.

A listing may also have figures (`kata run LISTING --plot`, the HTML report): a function
`(sub) -> [Heatmap | Curves | Table]` (grader.listings.plots) marked `@figure("1.6")`. It gets the
values from the student's code through `sub`; grader.listings.plots draws them in this process.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REGISTRY: dict[str, "Listing"] = {}
FIGURES: dict[str, list["Figure"]] = {}  # listing id -> its figures


@dataclass
class Listing:
    id: str
    run: Callable
    exercise: str
    title: str
    book: str = ""
    errata: list[str] = field(default_factory=list)


def listing(listing_id: str, book: str = "", errata=()):
    """Register a function `(sub, show) -> None` as the re-run of a listing."""

    def mark(fn):
        exercise = fn.__module__.rsplit(".", 1)[-1]
        doc = (fn.__doc__ or "").strip().splitlines()
        REGISTRY[listing_id] = Listing(listing_id, fn, exercise, doc[0] if doc else "", book.strip("\n"), list(errata))
        return fn

    return mark


@dataclass(frozen=True)
class Figure:
    name: str  # the function's name, e.g. "attention_heatmap"
    draw: Callable  # (sub) -> list of grader.listings.plots descriptions
    exercise: str
    listings: tuple[str, ...]


def figure(*listing_ids: str):
    """Register a function `(sub) -> [figure descriptions]` as the figure(s) of these listings."""

    def mark(fn):
        fig = Figure(fn.__name__, fn, fn.__module__.rsplit(".", 1)[-1], listing_ids)
        for lid in listing_ids:
            FIGURES.setdefault(lid, [])
            if all(f.draw is not fn for f in FIGURES[lid]):
                FIGURES[lid].append(fig)
        return fn

    return mark


def figures_of_exercise(exercise: str) -> list[Figure]:
    """Every figure of an exercise's listings, once each, in the order they were defined."""
    seen: dict[Callable, Figure] = {}
    for figs in FIGURES.values():
        for f in figs:
            if f.exercise == exercise:
                seen.setdefault(f.draw, f)
    return list(seen.values())


def load(course) -> dict[str, Listing]:
    """Import the listing modules of every exercise of the course."""
    here = Path(__file__).resolve().parent
    for ex in course.exercises:
        if (here / f"{ex.id}.py").is_file():
            importlib.import_module(f"{__name__}.{ex.id}")
    return REGISTRY
