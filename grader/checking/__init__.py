"""Layer 4: what checks are written with, and the runner that grades a submission with them.

A check module `grader/checks/test_<id>.py` holds plain pytest functions:

    @check(points=2, listings=["1.6"])
    def test_listing_1_6_weights(sub):
        out = sub.attention_weights(scores, 4)
        expect_tensor(out, fx()["weights"], tol="softmax", what="attention weights")

`sub` is a proxy of the student's module in a fresh sandboxed worker process; every
comparison happens here, in the trusted process.
"""
from __future__ import annotations

from .compare import CheckFailure, Mistake, expect, expect_equal, expect_tensor, matches


def check(points: float = 1, listings=(), hidden: bool = False):
    """Mark a test function as a graded check. Arguments must be literals (read statically)."""

    def mark(fn):
        fn._kata_check = {"points": float(points), "listings": tuple([listings] if isinstance(listings, str) else listings),
                          "hidden": bool(hidden)}
        return fn

    return mark


__all__ = ["check", "CheckFailure", "Mistake", "expect", "expect_equal", "expect_tensor", "matches"]
