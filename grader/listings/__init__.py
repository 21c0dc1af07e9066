"""The chapter's listings, re-run with a student's code: `kata run LISTING [--book]`.

Each exercise may have a module `grader/listings/<exercise id>.py` whose functions re-create
the listings of that exercise, calling the student's code through `sub` (the same sandboxed
proxy the checks use) and printing with `show`, like the book's own code:

    @listing("1.6", book=\"\"\"Attention weights matrix: ...\"\"\", errata=["E-1.12-d"])
    def listing_1_6(sub, show):
        show("Attention weights matrix:")
        show(sub.attention_weights(scores, 4))

`book` is what the chapter prints; `errata` names the ERRATA.md entries about it.
"""
from __future__ import annotations

import importlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

REGISTRY: dict[str, "Listing"] = {}


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
        REGISTRY[listing_id] = Listing(listing_id, fn, exercise, doc[0] if doc else "",
                                       book.strip("\n"), list(errata))
        return fn

    return mark


def load(course) -> dict[str, Listing]:
    """Import the listing modules of every exercise of the course."""
    here = Path(__file__).resolve().parent
    for ex in course.exercises:
        if (here / f"{ex.id}.py").is_file():
            importlib.import_module(f"{__name__}.{ex.id}")
    return REGISTRY


def errata_entries(root: Path, ids: list[str]) -> list[str]:
    """The text of the named ERRATA.md entries (each from its '### E-...' heading to the next)."""
    path = root / "ERRATA.md"
    if not ids or not path.is_file():
        return []
    text = path.read_text(encoding="utf-8")
    out = []
    for entry_id in ids:
        m = re.search(rf"^### {re.escape(entry_id)}\s*$(.*?)(?=^### |^## |\Z)", text, re.M | re.S)
        if m:
            out.append(f"{entry_id}\n{m.group(1).strip()}")
    return out
