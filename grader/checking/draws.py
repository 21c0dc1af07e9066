"""Is a random rule drawn as its specification says? Statistics of independent draws, computed on
the trusted side from what several calls returned.

A randomised exercise (dropout, BERT's masking rule) specifies one independent draw per element:
each eligible element is chosen with probability p, whatever happened to any other element, in
any other row, in any other call. One consequence of that rule (the share chosen) is easy to
fake: a rule that picks exactly round(p * n) elements at a fixed stride from one random offset
has the right share every time. So the checks test the rule itself, by the statistics a fake
gets wrong:

- the count of each call varies from call to call as Binomial(n, p) does (a dispersion statistic
  over the calls, chi-square with one degree per call): a fixed count varies too little, a draw
  that decides for many elements at once too much;
- the counts of the rows within a call vary as binomials do (a fixed stride, or an exact count per
  row, makes them too even; a draw per row too uneven);
- two elements at any offset are both chosen p² of the time: the rows of all calls with rows of
  one length, in call order, are one sequence, and every row offset (rows of one call, then of
  the next calls) with every column lag is read at once from autocorrelations (a stride or pairs
  at any lag, rows copied or shifted from other rows, masks reused by a later call: an earlier
  version read lags 1..12, neighbouring rows and consecutive calls only, and pairs 13 apart, rows
  copied two rows down and calls reusing the masks of two calls before each scored full marks);
- where chosen elements are then sorted into outcomes (BERT's 80/10/10), each chosen element's
  outcome is drawn on its own: the outcome of a chosen element and of the chosen elements 1..3
  after it are independent (a fixed cycle fails), the shares hold at every column class, and two
  chosen elements at any offset (as above) have independent outcomes;
- beyond pairs (a third attack built rules that every pair statistic passes): the rows' counts
  have the binomial's shape, binned by standard score and modulo m = 2..16 against exact
  binomial frequencies (every row's count even, or a multiple of 4..16 with the variance kept,
  fails), and three elements are all chosen p³ of the time: along a row within 16, across rows
  within 4, across calls within 6, and the triples {i, j, i | j} that a sum of seeds ties inside
  blocks of 2^k - 1 elements (k = 2..8) or calls (k = 2..4) (a, b and a + b mod 1 fail).

Every bound is about 6.5 standard deviations (or a chi-square tail of 1e-10), 7 for the scan of
every offset (each offset's tail below about 1e-13, hundreds of thousands of offsets), so an
honest rule, drawn in any style and order, fails for no seed (tests/test_draws.py and the
exercises' tests run the statistics on several honest styles x 20 seeds); the fakes above are
off by tens of standard deviations.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch

from ..course.messages import Msg, from_input

Z = 6.5  # bound of a normal statistic, in standard deviations
TAIL = 1e-10  # bound of a chi-square tail probability
Z_OFFSETS = 7.0  # bound of the scan over every offset between two elements (see _offset_finding)
MIN_PAIRS = 10  # an offset is tested where independent draws expect at least this many pairs chosen
CATEGORY_LAGS = 3
# which finding a message names first: the one that says most plainly what the rule does instead
ORDER = [
    "ineligible",
    "rate",
    "region",
    "same_mask",
    "count_fixed",
    "calls_alike",
    "count_wild",
    "rows_alike",
    "rows_even",
    "rows_uneven",
    "neighbours",
    "count_residue",
    "count_shape",
    "triples",
]


def ones(t: torch.Tensor) -> int:
    """How many elements of a boolean tensor are True (numpy's count: exact, and some 50 times
    faster than torch's sum of a boolean tensor, which widens it to int64 first)."""
    return int(np.count_nonzero(torch.as_tensor(t).numpy()))


def ones_along(t: torch.Tensor, dims) -> torch.Tensor:
    """The True elements of a boolean tensor counted over `dims` (an int or a tuple), as int64:
    t.sum(dims), exact, counted by numpy."""
    return torch.from_numpy(np.asarray(np.count_nonzero(torch.as_tensor(t).numpy(), axis=dims), dtype=np.int64))


@dataclass
class Finding:
    """One property of the rule that the draws break: `kind` names it, `got` and `want` are the
    statistic and what independent draws give, `detail` the numbers a message may show."""

    kind: str
    got: float
    want: float
    detail: dict = field(default_factory=dict)


def _rows(t: torch.Tensor) -> torch.Tensor:
    t = torch.as_tensor(t)
    if t.dim() == 0:
        return t.reshape(1, 1)
    return t.reshape(-1, t.shape[-1]) if t.dim() > 1 else t.reshape(1, -1)


def _pairs(chosen_a, chosen_b, elig, p_a: float, p_b: float, cov: float, kind: str, detail: dict):
    """Count where both are chosen among eligible pairs; with n pairs, E = n p_a p_b and the
    variance n q (1 - q) + 2 n cov (cov: an overlapping pair's covariance, if any)."""
    n = ones(elig)
    if n == 0:
        return None
    got = ones(chosen_a & chosen_b & elig)
    q = p_a * p_b
    var = n * q * (1 - q) + 2 * n * max(cov, 0.0)
    if var <= 0:
        return None
    want = n * q
    if abs(got - want) > Z * math.sqrt(var):
        return Finding(kind, got / n, q, dict(detail, pairs=n))
    return None


def _chi2_tails(stat: float, dof: int) -> tuple[float, float]:
    """P(X <= stat) and P(X >= stat) for X ~ chi-square(dof)."""
    a, x = torch.tensor(dof / 2, dtype=torch.float64), torch.tensor(stat / 2, dtype=torch.float64)
    return float(torch.special.gammainc(a, x)), float(torch.special.gammaincc(a, x))


def _autocorr(x: torch.Tensor) -> torch.Tensor:
    """out[dr, dl + L - 1] = sum over i, j of x[i, j] * x[i + dr, j + dl], for every row offset
    0 <= dr < N and every column lag -L < dl < L of an (N, L) tensor (zero beyond its edges)."""
    n, L = x.shape
    f = torch.fft.rfft2(x.double(), s=(2 * n, 2 * L))
    a = torch.fft.irfft2(f * f.conj(), s=(2 * n, 2 * L))[:n]
    return torch.cat([a[:, L + 1 :], a[:, :L]], dim=1).round()


def _all_pairs(n: int, L: int) -> torch.Tensor:
    """_autocorr of an (n, L) tensor of ones, in closed form: (n - dr) (L - |dl|) pairs at each
    offset. Every element eligible is the common case (dropout), and this is its FFT saved."""
    rows = (n - torch.arange(n, dtype=torch.float64))[:, None]
    lags = (L - (torch.arange(2 * L - 1, dtype=torch.float64) - (L - 1)).abs())[None, :]
    return rows * lags


def _offset_finding(
    calls, p: float, kind: str | None = None, detail: dict | None = None, eligible_pairs: dict | None = None
) -> Finding | None:
    """The offset at which chosen elements pair up least like independent draws, if any is beyond
    Z_OFFSETS. The rows of all calls with rows of one length, in call order, are one sequence;
    for every row offset dr (the same call's rows, then the next calls') and every column lag dl,
    the pairs of eligible elements that far apart must both be chosen p² of the time. Counts
    come from autocorrelations (FFT) of the chosen and of the eligible elements.

    With n pairs, a count S has mean lam = n p² and a variance of at most lam phi, phi = (1 - p)
    (1 + 3p) (each pair shares an element with at most two others). Offsets with lam < MIN_PAIRS
    are skipped; too many pairs is read on the square-root scale (2 (sqrt(S) - sqrt(lam)) /
    sqrt(phi), safe for the skewed upper tail of small counts), too few on the plain one. Every
    offset's tail is below about 1e-13, so the hundreds of thousands of offsets tested fail an
    honest rule less than once in a million checks. `eligible_pairs` keeps the eligible elements'
    autocorrelation between scans of the same eligible elements."""
    groups: dict[int, list] = {}
    for c, e in calls:
        groups.setdefault(c.shape[-1], []).append((c & e, e))
    phi = (1 - p) * (1 + 3 * p)
    best = None
    for length, group in groups.items():
        x = torch.cat([c for c, _ in group]).double()
        e = torch.cat([m for _, m in group])
        if x.numel() < 2 or not bool(e.any()):
            continue
        n = eligible_pairs.get(length) if eligible_pairs is not None else None
        if n is None:
            n = _all_pairs(*e.shape) if bool(e.all()) else _autocorr(e.double())
            if eligible_pairs is not None:
                eligible_pairs[length] = n
        s = _autocorr(x)
        lam = n * p * p
        test = lam >= MIN_PAIRS
        test[0, :length] = False  # offset 0 and the mirror images of the lags along a row
        if not bool(test.any()):
            continue
        high = 2 * ((s + 0.375).sqrt() - (lam + 0.375).sqrt()) / math.sqrt(phi)
        low = (lam - s) / (lam * phi).clamp_min(1e-12).sqrt()
        score = torch.where(test, torch.maximum(high, low), torch.zeros_like(high))
        at = int(score.argmax())
        dr, j = divmod(at, score.shape[1])
        z = float(score[dr, j])
        if z > Z_OFFSETS and (best is None or z > best[0]):
            rows = {c.shape[0] for c, _ in group}
            best = (z, dr, j - (length - 1), rows.pop() if len(rows) == 1 else 0, float(s[dr, j]), float(n[dr, j]))
    if best is None:
        return None
    _, dr, dl, per_call, got, pairs = best
    where = {"lag": dl, "rows": dr, "calls": 0, "pairs": int(pairs)}
    if dr == 0:
        k = "neighbours"
    elif per_call and dr >= per_call:
        where.update(calls=dr // per_call, rows=dr % per_call)
        k = "same_mask" if dr % per_call == 0 and dl == 0 and got / pairs > 0.9 * p else "calls_alike"
    else:
        k = "rows_alike"
    return Finding(kind or k, got / pairs, p * p, dict(detail or {}, **where))


def bernoulli_findings(draws, p: float) -> list[Finding]:
    """What in `draws` breaks "each eligible element chosen independently with probability p".

    draws: one (chosen, eligible) pair of boolean tensors per call, of one shape within a pair;
    the last dimension is a row's positions, leading dimensions are rows. Calls of the same shape
    and eligibility are compared position by position (the same mask in two calls)."""
    if not 0 < p < 1 or not draws:
        return []
    q = 1 - p
    found: list[Finding] = []
    calls = [(_rows(c).bool(), _rows(e).bool()) for c, e in draws]
    counts = [(ones(c & e), ones(e)) for c, e in calls]
    chosen, total = sum(c for c, _ in counts), sum(n for _, n in counts)
    if total == 0:
        return []
    if any(ones(c & ~e) for c, e in calls):
        found.append(Finding("ineligible", 1, 0))
    if abs(chosen - total * p) > Z * math.sqrt(total * p * q):
        found.append(Finding("rate", chosen / total, p, {"n": total}))
        return found  # the statistics below measure independence around p; they would only echo this
    # every offset between two elements: along a row, across rows, across calls (one scan)
    f = _offset_finding(calls, p)
    if f:
        found.append(f)
    # the count of each call: sum of (c - np)^2 / npq over the calls ~ chi-square(calls)
    used = [(c, n) for c, n in counts if n > 0]
    if len(used) >= 8:
        stat = sum((c - n * p) ** 2 / (n * p * q) for c, n in used)
        low, high = _chi2_tails(stat, len(used))
        spread = math.sqrt(stat / len(used))  # 1 for binomial counts
        if low < TAIL:
            found.append(Finding("count_fixed", spread, 1.0, {"calls": len(used)}))
        elif high < TAIL:
            found.append(Finding("count_wild", spread, 1.0, {"calls": len(used)}))
    # the counts of the rows: the same statistic, its exact mean and variance, a normal bound
    stat = mean = var = 0.0
    rows = 0
    for c, e in calls:
        n = ones_along(e, -1).double()
        k = ones_along(c & e, -1).double()
        keep = n >= 2
        if not bool(keep.any()):
            continue
        n, k = n[keep], k[keep]
        npq = n * p * q
        stat += float(((k - n * p) ** 2 / npq).sum())
        mean += float(keep.sum())
        var += float((2 + (1 - 6 * p * q) / npq).sum())
        rows += int(keep.sum())
    if rows >= 32 and var > 0:
        z = (stat - mean) / math.sqrt(var)
        if z < -Z:
            found.append(Finding("rows_even", stat / mean, 1.0, {"rows": rows}))
        elif z > Z:
            found.append(Finding("rows_uneven", stat / mean, 1.0, {"rows": rows}))
    if not found:  # beyond pairs: the counts' shape, then triples (see _count_shape_findings)
        found += _count_shape_findings(calls, p)
        found += _triple_findings(calls, p)
    return sorted(found, key=lambda f: ORDER.index(f.kind))


def heads_findings(draws, p: float) -> list[Finding]:
    """bernoulli_findings of (batch, heads, rows, positions) draws, then, if it finds nothing, of
    the same draws read with the heads last: heads that share one mask show as neighbours there."""
    found = bernoulli_findings(draws, p)
    if not found and draws and all(torch.as_tensor(c).dim() == 4 for c, _ in draws):
        found = bernoulli_findings([(c.permute(0, 2, 3, 1), e.permute(0, 2, 3, 1)) for c, e in draws], p)
    return found


def rate_findings(draws, p: float) -> list[Finding]:
    """The share chosen over every eligible element of every call, (chosen, eligible) pairs: a
    "rate" finding beyond Z standard deviations of p. The cheap first read at the training size,
    before region_findings."""
    n = sum(ones(e) for _, e in draws)
    chosen = sum(ones(c & e) for c, e in draws)
    if n and abs(chosen - n * p) > Z * math.sqrt(n * p * (1 - p)):
        return [Finding("rate", chosen / n, p, {"n": n})]
    return []


def region_findings(draws, p: float, axes: list | None = None) -> list[Finding]:
    """Every part of the input is drawn at rate p: along each axis of the draws (batch, head, query,
    key, feature, ...), each index is chosen at rate p over everything else (all calls together).
    The fourth outside attack drew honestly only where the checks looked, by region: keys past the
    head size, tokens from 128 on, sequences past the first 2 or 16, elements past 2^18 were never
    dropped, and at the checks' shapes those regions did not exist. Read at the sizes the course
    trains with, a region never drawn is a rate far from p at its indices.

    draws: (chosen, eligible) boolean tensors of one shape per call. axes: names for the message
    (default "axis 0", ...). An index is flagged beyond Z standard deviations; an axis as a whole
    when the chi-square of its indices' z-scores has a tail below TAIL (many indices a little off)."""
    if not 0 < p < 1 or not draws:
        return []
    shape = tuple(torch.as_tensor(draws[0][0]).shape)
    if any(tuple(torch.as_tensor(c).shape) != shape for c, _ in draws):
        return []
    chosen = torch.stack([torch.as_tensor(c).bool() & torch.as_tensor(e).bool() for c, e in draws])
    elig = torch.stack([torch.as_tensor(e).bool() for _, e in draws])
    q = 1 - p
    for a in range(len(shape)):
        if shape[a] < 2:
            continue
        dims = tuple(d for d in range(chosen.dim()) if d != a + 1)
        n, k = ones_along(elig, dims).double(), ones_along(chosen, dims).double()
        use = n * p * q >= 5  # indices with a few elements only: their z-scores are far from normal
        if int(use.sum()) < 2:
            continue
        n, k, idx = n[use], k[use], torch.arange(shape[a])[use]
        z = (k - n * p) / (n * p * q).sqrt()
        worst = int(z.abs().argmax())
        stat, dof = float((z**2).sum()), int(use.sum())
        if abs(float(z[worst])) > Z or _chi2_tails(stat, dof)[1] < TAIL:
            name = axes[a] if axes and a < len(axes) else f"axis {a}"
            return [
                Finding(
                    "region",
                    float(k[worst] / n[worst]),
                    p,
                    {"axis": name, "index": int(idx[worst]), "n": int(n[worst]), "size": shape[a]},
                )
            ]
    return []


def category_findings(draws, probs: dict) -> list[Finding]:
    """What in `draws` breaks "each chosen element's outcome drawn on its own, with `probs`".

    draws: one (outcome, chosen) pair per call: `outcome` holds an outcome code per element (any
    int tensor), `chosen` the elements that got one; rows as in bernoulli_findings. The chosen
    elements of a call, in row-major order, form one sequence: its outcomes 1..CATEGORY_LAGS
    apart must be independent, and each outcome's share the same at every column class; and the
    outcomes of two chosen elements at any offset (along a row, across rows and calls, as in
    _offset_finding) must be independent."""
    found: list[Finding] = []
    seqs, cols = [], []
    for outcome, chosen in draws:
        o, c = _rows(outcome), _rows(chosen).bool()
        seqs.append(o[c])
        cols.append(torch.arange(c.shape[-1]).expand_as(c)[c])
    if not seqs or sum(len(s) for s in seqs) < 100:
        return found
    for d in range(1, CATEGORY_LAGS + 1):
        first = torch.cat([s[:-d] for s in seqs if len(s) > d])
        then = torch.cat([s[d:] for s in seqs if len(s) > d])
        elig = torch.ones_like(first, dtype=torch.bool)
        for a, pa in probs.items():
            for b, pb in probs.items():
                cov = (pa * pa * pb if a == b else 0.0) - (pa * pb) ** 2
                f = _pairs(first == a, then == b, elig, pa, pb, cov, "outcome_cycle", {"lag": d, "a": a, "b": b})
                if f:
                    found.append(f)
                    return found
    outcome, col = torch.cat(seqs), torch.cat(cols)
    for m in (2, 3, 4):
        for r in range(m):
            here = col % m == r
            n = int(here.sum())
            if n < 50:
                continue
            for a, pa in probs.items():
                got = int((outcome[here] == a).sum())
                if abs(got - n * pa) > Z * math.sqrt(n * pa * (1 - pa)):
                    found.append(Finding("outcome_position", got / n, pa, {"a": a, "mod": m, "rest": r}))
                    return found
    # two chosen elements any offset apart (in a row, across rows, across calls) draw their
    # outcomes independently: the chosen elements are the eligible ones of each outcome's scan
    grid = [(_rows(o), _rows(c).bool()) for o, c in draws]
    pairs: dict = {}
    for a, pa in probs.items():
        if 0 < pa < 1:
            f = _offset_finding([(o == a, c) for o, c in grid], pa, "outcome_tied", {"a": a}, pairs)
            if f:
                found.append(f)
                return found
    return found


def uniform_findings(values: torch.Tensor, high: int, bins: int = 10) -> list[Finding]:
    """What breaks "each value drawn uniformly from 0..high - 1": counts in `bins` equal bins,
    a chi-square statistic with bins - 1 degrees, failing beyond a tail of TAIL."""
    v = torch.as_tensor(values).reshape(-1).long()
    if len(v) < 20 * bins or high < bins:
        return []
    if bool(((v < 0) | (v >= high)).any()):
        return [Finding("uniform", 0.0, 1.0, {"n": len(v)})]
    edges = torch.linspace(0, high, bins + 1).floor().long()
    counts = torch.bucketize(v, edges[1:-1], right=True).bincount(minlength=bins).double()
    want = (edges[1:] - edges[:-1]).double() / high * len(v)
    stat = float(((counts - want) ** 2 / want).sum())
    _, upper = _chi2_tails(stat, bins - 1)
    if upper < TAIL:
        return [Finding("uniform", float((counts / want).min()), 1.0, {"n": len(v), "bins": bins})]
    return []


# ----------------------------------------------------------------------------- beyond pairs
# Pairs at every offset and the variance of the counts are what a rule built from pairwise-
# independent pieces gets right: three elements drawn as a, b and (a + b) mod 1 are pairwise
# independent, and a count rounded to a multiple of 16 (then spread to keep its variance) has
# the right mean and variance. So the shape of the count distribution and triples are read too.
RESIDUES = range(2, 17)  # the rows' counts modulo m
MIN_CELL = 10  # a cell of a goodness-of-fit test expects at least this many rows
WINDOW = 16  # triples (i, i + d1, i + d2), 0 < d1 < d2 <= WINDOW, along a row
ROW_WINDOW = 4  # ... across rows r, r + d1, r + d2
CALL_WINDOW = 6  # ... across calls c, c + d1, c + d2 (the same element)
BLOCK_BITS = range(2, 9)  # triples {i, j, i | j} of disjoint bit sets inside blocks of 2^k - 1
CALL_BLOCK_BITS = range(2, 5)


def _binom_pmf(n: int, p: float) -> torch.Tensor:
    k = torch.arange(n + 1, dtype=torch.float64)
    lg = math.lgamma(n + 1) - torch.lgamma(k + 1) - torch.lgamma(n - k + 1)
    return (lg + k * math.log(p) + (n - k) * math.log1p(-p)).exp()


def _fit_tail(observed: torch.Tensor, expected: torch.Tensor) -> tuple[float, int]:
    """Pearson's statistic of counts per cell against their expectations (a sum of independent
    rows' categories: no more spread than a multinomial's), cells expecting < MIN_CELL pooled;
    returns the chi-square upper tail and the degrees of freedom (0: too few rows to test)."""
    small = expected < MIN_CELL
    o = torch.cat([observed[~small], observed[small].sum().reshape(1)])
    e = torch.cat([expected[~small], expected[small].sum().reshape(1)])
    if float(e[-1]) < MIN_CELL:  # the pooled cell is still small: fold it into the largest cell
        i = int(e[:-1].argmax()) if len(e) > 1 else 0
        o, e = o.clone(), e.clone()
        o[i] += o[-1]
        e[i] += e[-1]
        o, e = o[:-1], e[:-1]
    if len(e) < 2:
        return 1.0, 0
    stat = float(((o - e) ** 2 / e).sum())
    return _chi2_tails(stat, len(e) - 1)[1], len(e) - 1


def _count_shape_findings(calls, p: float) -> list[Finding]:
    """The rows' counts against Binomial(n, p), each row with its own n: binned by their
    standard score (a goodness of fit of the distribution's shape), and modulo m for every m in
    RESIDUES (every row's count even, or a multiple of 4, 8 or 16, has the right mean and
    variance). Expected frequencies are exact (the binomial pmf of each row's n); the tails are
    bounded by TAIL over the number of tests."""
    ns, ks = [], []
    for c, e in calls:
        ns.append(ones_along(e, -1))
        ks.append(ones_along(c & e, -1))
    n, k = torch.cat(ns).long(), torch.cat(ks).long()
    keep = n >= 2
    n, k = n[keep], k[keep]
    if len(n) < 32:
        return []
    edges = torch.tensor([-2.0, -1.5, -1.0, -0.5, 0.0, 0.5, 1.0, 1.5, 2.0], dtype=torch.float64)
    bins = len(edges) + 1
    mods = list(RESIDUES)
    exp_bins = torch.zeros(bins, dtype=torch.float64)
    obs_bins = torch.zeros(bins, dtype=torch.float64)
    exp_mod = {m: torch.zeros(m, dtype=torch.float64) for m in mods}
    obs_mod = {m: torch.zeros(m, dtype=torch.float64) for m in mods}
    for size in n.unique().tolist():
        here = k[n == size]
        rows = len(here)
        pmf = _binom_pmf(size, p)
        ks_all = torch.arange(size + 1)
        z = (ks_all.double() - size * p) / math.sqrt(size * p * (1 - p))
        b = torch.bucketize(z, edges, right=True)
        exp_bins += rows * torch.zeros(bins, dtype=torch.float64).index_add_(0, b, pmf)
        obs_bins += torch.bincount(b[here], minlength=bins).double()
        for m in mods:
            exp_mod[m] += rows * torch.zeros(m, dtype=torch.float64).index_add_(0, ks_all % m, pmf)
            obs_mod[m] += torch.bincount(here % m, minlength=m).double()
    tests = 1 + len(mods)
    found = []
    tail, dof = _fit_tail(obs_bins, exp_bins)
    if dof and tail < TAIL / tests:
        found.append(Finding("count_shape", tail, TAIL, {"rows": len(n)}))
    worst = None
    for m in mods:
        tail, dof = _fit_tail(obs_mod[m], exp_mod[m])
        if dof and tail < TAIL / tests and (worst is None or tail < worst[0]):
            top = int(obs_mod[m].argmax())
            worst = (tail, m, top, float(obs_mod[m][top] / len(n)), float(exp_mod[m][top] / len(n)))
    if worst:
        _, m, top, got, want = worst
        found.append(Finding("count_residue", got, want, {"rows": len(n), "mod": m, "rest": top}))
    return found


def _phi3(p: float) -> float:
    """Variance over mean of a count of chosen triples among shifted copies of one triple: each
    overlaps at most 6 others (in one element, covariance p^5 (1 - p), or two, p^4 (1 - p^2))."""
    return (1 - p**3) + 6 * p * (1 - p * p)


def _triple_score(s: float, lam: float, phi: float) -> float:
    if lam < MIN_PAIRS:
        return 0.0
    high = 2 * (math.sqrt(s + 0.375) - math.sqrt(lam + 0.375)) / math.sqrt(phi)
    low = (lam - s) / math.sqrt(lam * phi)
    return max(high, low)


def _window_triples(x: torch.Tensor, e: torch.Tensor, p: float, window: int):
    """The worst (score, d1, d2, got, n) over triples (t, t + d1, t + d2) along dim 0 of x,
    0 < d1 < d2 <= window, all three eligible (e), against p^3. Each count is exact: the rows of x
    packed 64 positions to a word, x[t] & x[t + d1] & x[t + d2] ANDed word by word and its bits counted."""
    T = x.shape[0]
    w = min(window, T - 1)
    if w < 2:
        return None

    def counts(v):  # s[d1 - 1, d2 - 1] for d1 < d2, exact: rows packed 64 to a word, ANDed, bits counted
        words = _packed(v.reshape(T, -1))
        words = np.concatenate([words, np.zeros((w, words.shape[1]), dtype=words.dtype)])
        out = np.zeros((w, w), dtype=np.int64)
        for d1 in range(1, w):
            first = words[:T] & words[d1 : d1 + T]
            for d2 in range(d1 + 1, w + 1):
                out[d1 - 1, d2 - 1] = int(np.bitwise_count(first & words[d2 : d2 + T]).sum(dtype=np.int64))
        return out

    s = counts(x)
    if bool(e.all()):  # every triple inside the sequence eligible: T - d2 of them per column
        d = np.arange(1, w + 1, dtype=np.int64)
        n = (T - np.maximum(d[:, None], d[None, :])) * (e.numel() // T)
    else:
        n = counts(e)
    phi = _phi3(p)
    best = None
    for d1 in range(1, w):
        for d2 in range(d1 + 1, w + 1):
            got, pairs = float(s[d1 - 1, d2 - 1]), float(n[d1 - 1, d2 - 1])
            z = _triple_score(got, pairs * p**3, phi)
            if best is None or z > best[0]:
                best = (z, d1, d2, int(got), int(pairs))
    return best


_LINES: dict = {}


def _block_lines(bits: int):
    """Triples {i, j, i | j} (1-based positions) of disjoint non-empty bit sets i, j below
    2^bits, the triples a sum-of-seeds construction ties; and the variance-over-mean bound of
    their count in one block of independent draws (two share at most one position)."""
    if bits not in _LINES:
        B = 2**bits - 1
        i, j = torch.meshgrid(torch.arange(1, B + 1), torch.arange(1, B + 1), indexing="ij")
        ok = ((i & j) == 0) & (i < j)
        i, j = i[ok], j[ok]
        lines = torch.stack([i, j, i | j], 1) - 1
        per_point = torch.bincount(lines.reshape(-1), minlength=B).double()
        sharing = float((per_point * (per_point - 1)).sum())  # ordered pairs of lines sharing a point
        _LINES[bits] = (lines, sharing / len(lines))
    return _LINES[bits]


def _packed(rows: torch.Tensor) -> np.ndarray:
    """A (R, M) 0/1 tensor as (R, ceil(M / 64)) uint64 words, each row's bits packed in order and
    zero-padded: an AND of rows is an AND of words, and a count of ones np.bitwise_count's."""
    bits = np.packbits(rows.bool().numpy(), axis=1)
    pad = (-bits.shape[1]) % 8
    if pad:
        bits = np.pad(bits, ((0, 0), (0, pad)))
    return np.ascontiguousarray(bits).view(np.uint64)


def _line_count(v: torch.Tensor, lines: torch.Tensor) -> int:
    """sum of v[:, i] & v[:, j] & v[:, k] over the lines (i, j, k) of an (blocks, B, M) boolean
    tensor: the same count as gathering the three, with the blocks and columns packed 64 to a
    word (the three ANDed, then np.bitwise_count)."""
    nb, B, M = v.shape
    words = _packed(v.permute(1, 0, 2).reshape(B, nb * M))
    idx = lines.numpy()
    step = max(1, (1 << 22) // max(1, words.shape[1]))  # about 32 MB of words at a time
    total = 0
    for at in range(0, len(idx), step):
        chunk = idx[at : at + step]
        both = words[chunk[:, 0]] & words[chunk[:, 1]] & words[chunk[:, 2]]
        total += int(np.bitwise_count(both).sum(dtype=np.int64))
    return total


def _block_triples(seqs, p: float, bits_range, phases: bool):
    """The worst (score, B, phase, got, n) over blocks of B = 2^k - 1 along each (x, e) sequence
    (dim 0), aligned at 0 (or at every phase), the triples of _block_lines inside each block."""
    best = None
    for bits in bits_range:
        B = 2**bits - 1
        lines, share = _block_lines(bits)
        phi = (1 - p**3) + share * p * p * (1 - p)
        for phase in range(B) if phases else [0]:
            s = n = 0
            for x, e in seqs:
                nb = (x.shape[0] - phase) // B
                if nb < 1:
                    continue
                xb = x[phase : phase + nb * B].reshape(nb, B, -1)
                eb = e[phase : phase + nb * B].reshape(nb, B, -1)
                s += _line_count(xb, lines)
                n += len(lines) * eb.numel() // B if bool(eb.all()) else _line_count(eb, lines)
            z = _triple_score(s, n * p**3, phi)
            if best is None or z > best[0]:
                best = (z, B, phase, s, n)
    return best


def _triple_findings(calls, p: float) -> list[Finding]:
    """Three elements all chosen p^3 of the time: along a row within WINDOW, across rows within
    ROW_WINDOW, across calls (the same element) within CALL_WINDOW, and the triples a sum of
    seeds ties inside blocks of 2^k - 1 elements of a call (flat order) or of consecutive calls.
    Bound Z_OFFSETS on each, as in _offset_finding."""
    cands = []
    groups: dict = {}
    for c, e in calls:
        groups.setdefault(c.shape[-1], []).append((c & e, e))
    for length, group in groups.items():
        x = torch.cat([c for c, _ in group])
        e = torch.cat([m for _, m in group])
        r = _window_triples(x.T, e.T, p, WINDOW)  # along a row: columns are dim 0
        if r:
            cands.append(("row", r))
        r = _window_triples(x, e, p, ROW_WINDOW)  # across rows, the same column
        if r:
            cands.append(("rows", r))
    shapes: dict = {}
    for c, e in calls:
        shapes.setdefault(tuple(c.shape), []).append(((c & e).reshape(-1), e.reshape(-1)))
    for group in shapes.values():
        if len(group) >= 3:
            x = torch.stack([c for c, _ in group])
            e = torch.stack([m for _, m in group])
            r = _window_triples(x, e, p, CALL_WINDOW)
            if r:
                cands.append(("calls", r))
            r = _block_triples([(x, e)], p, [b for b in CALL_BLOCK_BITS if 2**b - 1 <= len(group)], True)
            if r:
                cands.append(("call_block", r))
    flat: dict = {}
    for c, e in calls:  # calls of one size side by side: dim 0 is the flat position in a call
        flat.setdefault(c.numel(), []).append(((c & e).reshape(-1), e.reshape(-1)))
    r = _block_triples(
        [(torch.stack([c for c, _ in g], 1), torch.stack([m for _, m in g], 1)) for g in flat.values()],
        p,
        BLOCK_BITS,
        False,
    )
    if r:
        cands.append(("block", r))
    if not cands:
        return []
    where, (z, a, b, s, n) = max(cands, key=lambda t: t[1][0])
    if z <= Z_OFFSETS:
        return []
    detail = {"along": where, "triples": n}
    if where in ("row", "rows", "calls"):
        detail.update(first=a, second=b)
    else:
        detail.update(block=a, phase=b)
    return [Finding("triples", s / n, p**3, detail)]


# ----------------------------------------------------------------------------- messages
def _f(x: float) -> str:
    return f"{x:.4f}"


def describe(finding: Finding, what: Msg, drawn: Msg, hint: Msg, outcome_names: dict | None = None) -> Msg:
    """A message that says which property the draws break and how a right rule draws: `drawn`
    names what a draw does ("dropped", "chosen"), `hint` the right way to draw."""
    k, got, want = finding.kind, _f(finding.got), _f(finding.want)
    d = finding.detail
    if k == "ineligible":
        return Msg(
            "{what}: an element that must never be {drawn} was {drawn}: {hint}",
            "{what}：不应被{drawn}的元素被{drawn}了：{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
        )
    if k == "rate":
        return Msg(
            "{what}: {got} of the {n} elements were {drawn}; {want} should be: {hint}",
            "{what}：{n} 个元素中有 {got} 被{drawn}；应为 {want}：{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            n=from_input(d["n"]),
        )
    if k == "region":
        return Msg(
            "{what}: at {axis} {index} (of {size}) {got} of the {n} elements were {drawn}; {want} should be, "
            "at every index of every axis: a part of the input is drawn apart from the rest (by its position, "
            "its size or its place in the batch). {hint}",
            "{what}：在{axis} {index}（共 {size}）处，{n} 个元素中有 {got} 被{drawn}；每个轴的每个位置都应为 {want}："
            "输入的某一部分（按位置、大小或在批次中的位置）没有按同样的规则抽样。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            n=from_input(d["n"]),
            axis=from_input(d["axis"]),
            index=from_input(d["index"]),
            size=from_input(d["size"]),
        )
    if k == "count_fixed":
        return Msg(
            "{what}: over {calls} calls the number of elements {drawn} hardly varies ({got} of the spread "
            "that independent draws give): the count is fixed, not drawn. Each element is {drawn} by a draw "
            "of its own, so the count varies from call to call as Binomial(n, p) does: {hint}",
            "{what}：在 {calls} 次调用中，被{drawn}的元素个数几乎不变（只有独立抽样应有波动的 {got}）：个数是固定的，"
            "而不是抽出来的。每个元素都由它自己的一次抽样决定是否被{drawn}，所以个数在每次调用之间按 Binomial(n, p) "
            "波动：{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            calls=from_input(d["calls"]),
        )
    if k == "count_wild":
        return Msg(
            "{what}: over {calls} calls the number of elements {drawn} varies {got} times as much as "
            "independent draws allow: one draw decides for many elements at once. {hint}",
            "{what}：在 {calls} 次调用中，被{drawn}的元素个数的波动是独立抽样所允许的 {got} 倍：一次抽样同时决定了许多"
            "元素。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            calls=from_input(d["calls"]),
        )
    if k == "rows_even":
        return Msg(
            "{what}: every row has almost exactly p of its elements {drawn} ({got} of the spread that "
            "independent draws give over {rows} rows): a fixed stride or a fixed count per row is not "
            "the rule. {hint}",
            "{what}：每一行被{drawn}的元素比例几乎都恰好是 p（在 {rows} 行上只有独立抽样应有波动的 {got}）：固定步长"
            "或每行固定个数都不是规则。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            rows=from_input(d["rows"]),
        )
    if k == "rows_uneven":
        return Msg(
            "{what}: the rows differ far more than independent draws allow ({got} times the spread over "
            "{rows} rows): a draw decides for a whole row or a block. {hint}",
            "{what}：各行之间的差异远大于独立抽样所允许的（在 {rows} 行上是应有波动的 {got} 倍）：一次抽样决定了"
            "整行或一整块。{hint}",
            what=what,
            hint=hint,
            got=from_input(got),
            rows=from_input(d["rows"]),
        )
    if k == "neighbours":
        return Msg(
            "{what}: two elements {lag} apart in a row were both {drawn} {got} of the time; independent "
            "draws give p x p = {want}: the elements are spaced or tied to their neighbours (a stride, a "
            "pattern). {hint}",
            "{what}：同一行中相距 {lag} 的两个元素同时被{drawn}的比例是 {got}；独立抽样应为 p x p = {want}：这些元素"
            "是按间隔排列的，或与相邻元素相关（固定步长、固定模式）。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            lag=from_input(d["lag"]),
        )
    if k == "rows_alike":
        return Msg(
            "{what}: two elements {rows} row(s) apart and {lag} column(s) to the side were both {drawn} {got} "
            "of the time; independent draws give p x p = {want}: every row gets its own draws, not a copy or "
            "a shift of another row's. {hint}",
            "{what}：相隔 {rows} 行、横向相距 {lag} 列的两个元素同时被{drawn}的比例是 {got}；独立抽样应为 "
            "p x p = {want}：每一行都要有自己的抽样，而不是另一行的副本或平移。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            rows=from_input(d.get("rows", 1)),
            lag=from_input(d.get("lag", 0)),
        )
    if k in ("calls_alike", "same_mask"):
        if not d.get("rows") and not d.get("lag"):
            return Msg(
                "{what}: the same element was {drawn} in two calls {calls} apart {got} of the time; "
                "independent draws give p x p = {want}: draw a new mask on every call. {hint}",
                "{what}：同一个元素在相隔 {calls} 次的两次调用中都被{drawn}的比例是 {got}；独立抽样应为 p x p = "
                "{want}：每次调用都要重新抽取掩码。{hint}",
                what=what,
                drawn=drawn,
                hint=hint,
                got=from_input(got),
                want=from_input(want),
                calls=from_input(d.get("calls", 1)),
            )
        return Msg(
            "{what}: an element, and the element {rows} row(s) down and {lag} column(s) to the side of it "
            "{calls} call(s) later, were both {drawn} {got} of the time; independent draws give p x p = "
            "{want}: draw a new mask on every call. {hint}",
            "{what}：一个元素，与 {calls} 次调用之后向下 {rows} 行、横向 {lag} 列的元素，同时被{drawn}的比例是 {got}；"
            "独立抽样应为 p x p = {want}：每次调用都要重新抽取掩码。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            calls=from_input(d.get("calls", 1)),
            rows=from_input(d.get("rows", 0)),
            lag=from_input(d.get("lag", 0)),
        )
    if k == "count_residue":
        return Msg(
            "{what}: in {got} of {rows} rows the number of elements {drawn} leaves the remainder {rest} when "
            "divided by {mod}; independent draws give {want}: the count of a row is rounded or adjusted, not "
            "the sum of its elements' own draws. {hint}",
            "{what}：在 {rows} 行中，有 {got} 的行被{drawn}的元素个数除以 {mod} 余 {rest}；独立抽样应为 {want}："
            "每行的个数被取整或调整过，而不是由各元素自己的抽样加起来的。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            rows=from_input(d.get("rows", 0)),
            mod=from_input(d.get("mod", 2)),
            rest=from_input(d.get("rest", 0)),
        )
    if k == "count_shape":
        return Msg(
            "{what}: over {rows} rows the numbers of elements {drawn} are not spread as Binomial(n, p) is "
            "(the right mean and variance, the wrong shape): every element is {drawn} by a draw of its own. "
            "{hint}",
            "{what}：在 {rows} 行上，被{drawn}的元素个数的分布不是 Binomial(n, p)（均值和方差都对，形状不对）："
            "每个元素都要由它自己的一次抽样决定是否被{drawn}。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            rows=from_input(d.get("rows", 0)),
        )
    if k == "triples":
        where = {
            "row": Msg(
                "three elements of a row, {first} and {second} apart",
                "同一行中相距 {first} 和 {second} 的三个元素",
                first=from_input(d.get("first", 0)),
                second=from_input(d.get("second", 0)),
            ),
            "rows": Msg(
                "three elements of one column, {first} and {second} rows apart",
                "同一列中相隔 {first} 行和 {second} 行的三个元素",
                first=from_input(d.get("first", 0)),
                second=from_input(d.get("second", 0)),
            ),
            "calls": Msg(
                "the same element in three calls, {first} and {second} calls apart",
                "同一个元素在相隔 {first} 次和 {second} 次的三次调用中",
                first=from_input(d.get("first", 0)),
                second=from_input(d.get("second", 0)),
            ),
            "block": Msg(
                "three elements of a block of {block} (in the order of memory)",
                "（按内存顺序）每 {block} 个元素一块、块中的三个元素",
                block=from_input(d.get("block", 0)),
            ),
            "call_block": Msg(
                "the same element in three calls of a block of {block} calls",
                "同一个元素在每 {block} 次调用一组、组内的三次调用中",
                block=from_input(d.get("block", 0)),
            ),
        }
        at = where.get(d.get("along"), Msg("three elements", "三个元素"))
        return Msg(
            "{what}: {at} were all {drawn} {got} of the time; independent draws give p x p x p = {want}: "
            "every pair looks independent, but the third is computed from the other two (a + b mod 1 is "
            "not a draw). {hint}",
            "{what}：{at}全部被{drawn}的比例是 {got}；独立抽样应为 p x p x p = {want}：任意两个看起来都是独立的，"
            "但第三个是由另外两个算出来的（a + b mod 1 不是一次抽样）。{hint}",
            what=what,
            drawn=drawn,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            at=at,
        )
    names = outcome_names or {}
    if k == "outcome_cycle":
        return Msg(
            "{what}: when a chosen token {a}, the chosen token {lag} after it {b} {got} of the time; "
            "independent draws give {want}: each chosen token draws its own outcome, independent of the "
            "ones before it (a fixed cycle is not the rule). {hint}",
            "{what}：当一个被选中的词元{a}时，它之后第 {lag} 个被选中的词元{b}的比例是 {got}；独立抽样应为 {want}："
            "每个被选中的词元都独立地抽取自己的结果，与前面的词元无关（固定循环不是规则）。{hint}",
            what=what,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            lag=from_input(d["lag"]),
            a=names.get(d["a"], str(d["a"])),
            b=names.get(d["b"], str(d["b"])),
        )
    if k == "outcome_position":
        return Msg(
            "{what}: among the chosen tokens at columns c with c % {mod} = {rest}, {got} {a}; {want} "
            "should, at every position: each chosen token draws its outcome independently of where it "
            "is. {hint}",
            "{what}：在列号 c 满足 c % {mod} = {rest} 的被选中词元中，有 {got} {a}；在每个位置都应为 {want}：每个"
            "被选中的词元独立地抽取结果，与它所在的位置无关。{hint}",
            what=what,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            mod=from_input(d["mod"]),
            rest=from_input(d["rest"]),
            a=names.get(d["a"], str(d["a"])),
        )
    if k == "outcome_tied":
        return Msg(
            "{what}: among chosen tokens {calls} call(s), {rows} row(s) and {lag} column(s) apart, both {a} "
            "{got} of the time; independent draws give {want}: each chosen token draws its own outcome, not a "
            "copy of another token's. {hint}",
            "{what}：在相隔 {calls} 次调用、{rows} 行、{lag} 列的被选中词元中，两者都{a}的比例是 {got}；独立抽样应为 "
            "{want}：每个被选中的词元都抽取自己的结果，而不是复制另一个词元的结果。{hint}",
            what=what,
            hint=hint,
            got=from_input(got),
            want=from_input(want),
            calls=from_input(d.get("calls", 0)),
            rows=from_input(d.get("rows", 0)),
            lag=from_input(d.get("lag", 0)),
            a=names.get(d.get("a"), str(d.get("a"))),
        )
    if k == "uniform":
        return Msg(
            "{what}: the {n} random replacements are not spread evenly over 0..vocab_size - 1 (the emptiest "
            "tenth of the range got {got} of its share): draw each one uniformly and on its own, "
            "torch.randint(0, vocab_size, ..., generator=generator)",
            "{what}：{n} 个随机替换词元没有均匀分布在 0..vocab_size - 1 上（最空的十分之一区间只得到应有数量的 {got}）："
            "每个都要独立、均匀地抽取，torch.randint(0, vocab_size, ..., generator=generator)",
            what=what,
            got=from_input(got),
            n=from_input(d["n"]),
        )
    return Msg(
        "{what}: the draws do not follow the rule. {hint}", "{what}：抽样不符合规则。{hint}", what=what, hint=hint
    )


MISTAKES = {
    "count_fixed": "a fixed count, not drawn",
    "region": "a part of the input drawn apart",
    "rows_even": "a fixed stride or count per row",
    "neighbours": "draws tied to their neighbours",
    "rows_alike": "rows tied to other rows",
    "calls_alike": "masks tied across calls",
    "same_mask": "the same mask in every call",
    "outcome_cycle": "a fixed cycle of outcomes",
    "outcome_position": "outcomes tied to the position",
    "outcome_tied": "outcomes tied across tokens",
    "count_wild": "one draw for many elements",
    "rows_uneven": "one draw per row",
    "uniform": "random ids not uniform",
    "count_residue": "row counts rounded or adjusted",
    "count_shape": "row counts not binomial",
    "triples": "a draw computed from two others",
}


def expect_drawn(findings: list[Finding], what: Msg, drawn: Msg, hint: Msg, outcome_names: dict | None = None):
    """Fail with the first finding's message (and its mistake's name) if there is one."""
    from .compare import CheckFailure

    if findings:
        f = findings[0]
        raise CheckFailure(describe(f, what, drawn, hint, outcome_names), mistake=MISTAKES.get(f.kind, ""))
