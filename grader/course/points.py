"""Points as a person reads them, the same in every place a student or an instructor sees one:
the terminal report, feedback.html, the nbgrader log and test cells, the LMS feedback column and
summary.md. Standard library only: a notebook's kernel imports it
(grader/instructor/exports/nbgrader_cell.py).

A check's points are whole numbers; an assignment's points scale them (week2: 100 points over 92
raw ones). Scaled points are hundredths (`apportion_groups`): each exercise's share is its exact
share rounded to two decimals so that the shares add up to the assignment's points exactly
(largest remainder), and each exercise's share is divided among its checks the same way; a score
is the sum of its checks' scores. The reference scores exactly 100 in the
report, Gradescope's results, the gradebook and nbgrader alike, and no score has more than two
decimals anywhere."""

from __future__ import annotations

from fractions import Fraction


def pts(x: float) -> str:
    """At most two decimals (an assignment's scaled points are fractions), no trailing zeros:
    13.04, 2.17, 100."""
    return f"{round(float(x), 2):g}"


def apportion(weights, total: float) -> dict:
    """{key: share} for `weights` ((key, raw points) pairs; keys sortable and distinct): each
    share in hundredths, in proportion to its weight, the shares adding up to `total` (rounded to
    hundredths) exactly. Largest remainder: every share is its exact value rounded down to the
    hundredth, then the hundredths left over go to the largest remainders, ties to the smaller
    key, so the same checks get the same shares whatever order they come in. Weights of 0 get 0;
    when every weight is 0, so is every share."""
    items = [(key, Fraction(w)) for key, w in weights]
    whole = sum((w for _, w in items), Fraction(0))
    target = round(Fraction(total) * 100)
    if whole <= 0 or target <= 0:
        return {key: 0.0 for key, _ in items}
    exact = {key: w * target / whole for key, w in items}
    cents = {key: int(x) for key, x in exact.items()}  # x >= 0: int() rounds down
    left = target - sum(cents.values())
    for key in sorted(exact, key=lambda k: (-(exact[k] - cents[k]), k))[:left]:
        cents[key] += 1
    return {key: c / 100 for key, c in cents.items()}


def apportion_groups(groups, total: float) -> dict:
    """{key: share} for `groups` ((group key, [(key, raw points), ...]) pairs: an exercise and its
    checks): first each group's share of `total`, then each group's share among its own items,
    both by `apportion`. A group's share is its exact share within half a hundredth, so a solved
    exercise is worth what its raw points say, whatever its checks' roundings."""
    groups = [(g, list(items)) for g, items in groups]
    of_group = apportion([(g, sum((Fraction(w) for _, w in items), Fraction(0))) for g, items in groups], total)
    out = {}
    for g, items in groups:
        out.update(apportion(items, of_group[g]))
    return out


def cents(x: float) -> int:
    """`x` points in hundredths, rounded half up (a score is never a hair short of its share)."""
    return int(Fraction(x) * 100 + Fraction(1, 2)) if x >= 0 else -cents(-x)


def share_of(score: float, max_score: float, share: float) -> float:
    """A check's score in its scaled points: `share` × score / max_score, in hundredths; the full
    share exactly for full marks, never more than the share."""
    if max_score <= 0 or score <= 0:
        return 0.0
    if score >= max_score:
        return share
    return min(cents(Fraction(share) * Fraction(score) / Fraction(max_score)), cents(share)) / 100
