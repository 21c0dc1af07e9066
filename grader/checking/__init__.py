"""What checks are written with (this file, compare.py, fixtures.py, book.py, replay.py), the runner
that grades a submission with them (runner.py), and the submission itself: copied and read
(submission.py), its notebooks (notebook.py) and the manifest `kata submit` put in it
(submit_manifest.py). Imports course and worker; every verdict is decided here, in the trusted process.

A check module `grader/checks/test_<id>.py` holds plain pytest functions:

    @check(points=2, listings=["1.6"], title="attention weights of listing 1.6", title_zh="代码清单 1.6 的注意力权重")
    def test_listing_1_6_weights(sub):
        out = sub.attention_weights(scores, 4)
        expect_tensor(out, fx()["weights"], tol="softmax", what=Msg("attention weights", "注意力权重"))

`sub` is a proxy of the student's module in a fresh sandboxed worker process; every
comparison happens here, in the trusted process. Every text a student sees is written in
English and Chinese: the check's title (`title`, `title_zh`) and its messages (`Msg(en, zh)`,
or `code(text)` for code that reads the same in both); `kata verify` checks the pairs. A value
that comes from the check's input goes into a message as a field marked `from_input(value)`
(`Msg("softmax({x})", "softmax({x})", x=from_input(x))`): a hidden check shows it as "…".
"""

from __future__ import annotations

from ..course.manifest import CheckInfo
from ..course.messages import Msg, code, from_input, joined  # noqa: F401

_FROM_COMPARE = ("CheckFailure", "Mistake", "expect", "expect_equal", "expect_tensor", "grading", "matches")


def __getattr__(name: str):
    """The comparison helpers, imported when a check first asks for them: compare.py imports
    torch, which the student's side of `kata check` (the warm grader's client) never loads."""
    if name in _FROM_COMPARE:
        from . import compare

        return getattr(compare, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def check(points: float = 1, listings=(), hidden: bool = False, *, title: str, title_zh: str):
    """Mark a test function as a graded check, titled in English and Chinese (what the report
    shows). Arguments must be literals (read statically)."""

    def mark(fn):
        fn._kata_check = CheckInfo(
            fn.__name__,
            float(points),
            tuple([listings] if isinstance(listings, str) else listings),
            bool(hidden),
            fn.__code__.co_firstlineno,
            title,
            title_zh,
        )
        return fn

    return mark


__all__ = [
    "check",
    "CheckFailure",
    "Mistake",
    "Msg",
    "code",
    "expect",
    "expect_equal",
    "expect_tensor",
    "joined",
    "matches",
]
