"""grader/checking/draws.py: the statistics that hold a randomised exercise to its rule (one
independent draw per element) find each structured fake and nothing in honest draws."""

import pytest
import torch

from grader.checking import draws
from grader.course.messages import Msg

SHAPE, P, CALLS = (16, 400), 0.15, 16


def _honest(g):
    return torch.rand(SHAPE, generator=g) < P


def _stride(g):
    n = SHAPE[0] * SHAPE[1]
    k = round(P * n)
    m = torch.zeros(n, dtype=torch.bool)
    m[(torch.arange(k) * n // k + int(torch.randint(0, n, (1,), generator=g))) % n] = True
    return m.reshape(SHAPE)


def _exact(g):
    n = SHAPE[0] * SHAPE[1]
    m = torch.zeros(n, dtype=torch.bool)
    m[torch.randperm(n, generator=g)[: round(P * n)]] = True
    return m.reshape(SHAPE)


FAKES = {
    "stride": (_stride, "count_fixed"),
    "exact count": (_exact, "count_fixed"),
    "same every call": (lambda g: _honest(torch.Generator().manual_seed(0)), "same_mask"),
    "same every row": (lambda g: (torch.rand(SHAPE[1], generator=g) < P).expand(SHAPE), "count_wild"),
    "pairs": (lambda g: (lambda h: h | torch.roll(h, 1, -1))(torch.rand(SHAPE, generator=g) < P / 2), "rows_uneven"),
}


@pytest.mark.parametrize("name", list(FAKES))
def test_each_fake_is_found_and_named_first(name):
    rule, kind = FAKES[name]
    found = draws.bernoulli_findings(
        [(rule(torch.Generator().manual_seed(k)), torch.ones(SHAPE, dtype=torch.bool)) for k in range(CALLS)], P
    )
    assert found and found[0].kind == kind, found


def test_honest_draws_find_nothing_for_any_seed():
    ones = torch.ones(SHAPE, dtype=torch.bool)
    for seed in range(30):
        calls = [(_honest(torch.Generator().manual_seed(100 * seed + k)), ones) for k in range(CALLS)]
        assert not draws.bernoulli_findings(calls, P), seed


def test_a_fixed_cycle_of_outcomes_is_found_and_independent_outcomes_are_not():
    chosen = torch.ones(40, 100, dtype=torch.bool)
    cycle = (torch.arange(4000) % 10).reshape(40, 100)
    cycle = torch.where(cycle < 8, 0, cycle - 7)
    probs = {0: 0.8, 1: 0.1, 2: 0.1}
    assert draws.category_findings([(cycle, chosen)], probs)[0].kind == "outcome_cycle"
    for seed in range(20):
        fair = torch.multinomial(
            torch.tensor([0.8, 0.1, 0.1]), 4000, replacement=True, generator=torch.Generator().manual_seed(seed)
        ).reshape(40, 100)
        assert not draws.category_findings([(fair, chosen)], probs), seed


def test_random_ids_must_be_uniform():
    g = torch.Generator().manual_seed(1)
    assert not draws.uniform_findings(torch.randint(0, 50257, (2000,), generator=g), 50257)
    assert draws.uniform_findings(torch.randint(0, 25000, (2000,), generator=g), 50257)[0].kind == "uniform"


def test_every_finding_has_a_message_in_both_languages():
    what, drawn, hint = draws.Msg("x", "x"), draws.Msg("chosen", "选中"), draws.Msg("draw", "抽样")
    kinds = draws.ORDER + ["outcome_cycle", "outcome_position", "outcome_tied", "uniform"]
    for kind in kinds:
        f = draws.Finding(
            kind,
            0.5,
            0.25,
            {
                "n": 10,
                "calls": 16,
                "rows": 40,
                "lag": 2,
                "a": 0,
                "b": 1,
                "mod": 2,
                "rest": 0,
                "bins": 10,
                "axis": "key",
                "index": 3,
                "size": 256,
            },
        )
        m = draws.describe(f, what, drawn, hint)
        assert "draws do not follow" not in m.en, kind
        assert m.en and m.zh and m.en != m.zh


# Round 2 of the outside attack: structure at an offset the first statistics did not read (a lag
# past 12, rows or calls further apart, a shifted copy). Every row offset, column lag and call lag
# is read at once (draws._offset_finding), so each is found, with where it is.
def _rolled(shift, rows_apart):
    def rule(g):
        m = torch.rand(SHAPE, generator=g) < P
        for r in range(rows_apart, SHAPE[0], 2 * rows_apart):
            m[r] = torch.roll(m[r - rows_apart], shift)
        return m

    return rule


def _lagged_pairs(lag):
    return lambda g: (lambda h: h | torch.roll(h, lag, -1))(torch.rand(SHAPE, generator=g) < P / 2)


FAMILY = {
    "pairs 13 apart in a row": (_lagged_pairs(13), "neighbours", {"lag": 13}),
    "pairs 190 apart in a row": (_lagged_pairs(190), "neighbours", {"lag": 190}),
    "rows copied 2 rows down": (_rolled(0, 2), "rows_alike", {"rows": 2, "lag": 0}),
    "rows copied 5 rows down, shifted 3": (_rolled(3, 5), "rows_alike", {"rows": 5, "lag": 3}),
}


@pytest.mark.parametrize("name", list(FAMILY))
def test_structure_at_any_offset_is_found_where_it_is(name):
    rule, kind, where = FAMILY[name]
    ones = torch.ones(SHAPE, dtype=torch.bool)
    found = draws.bernoulli_findings([(rule(torch.Generator().manual_seed(k)), ones) for k in range(CALLS)], P)
    at = [f for f in found if f.kind == kind]  # (pairs also make the rows' counts too uneven: named first)
    assert at and all(at[0].detail[k] == v for k, v in where.items()), found


@pytest.mark.parametrize("lag", [1, 2, 3, 7])
def test_calls_that_reuse_an_earlier_calls_mask_are_found(lag):
    """Calls t and t + lag share one mask for every other block of `lag` calls (the global
    generator still advances), as a module-level history makes them."""
    ones = torch.ones(SHAPE, dtype=torch.bool)
    masks = []
    for t in range(CALLS):
        fresh = torch.rand(SHAPE, generator=torch.Generator().manual_seed(t)) < P
        masks.append(masks[t - lag] if (t // lag) % 2 == 1 else fresh)
    found = draws.bernoulli_findings([(m, ones) for m in masks], P)
    assert found and found[0].kind in ("calls_alike", "same_mask"), found
    assert found[0].detail["calls"] % lag == 0 and found[0].detail["rows"] == 0 and found[0].detail["lag"] == 0, found


def test_a_low_discrepancy_sequence_is_found():
    """chosen iff frac(a * position + salt) < p, one salt per call: every count is right on average."""
    ones = torch.ones(SHAPE, dtype=torch.bool)
    pos = torch.arange(SHAPE[0] * SHAPE[1], dtype=torch.float64).reshape(SHAPE)
    calls = [(((pos * 0.7548776662466927 + 0.5698402909980532 * (k + 1) * 977) % 1.0) < P, ones) for k in range(CALLS)]
    assert draws.bernoulli_findings(calls, P)


def test_outcomes_copied_across_rows_are_found_and_independent_outcomes_are_not():
    probs = {0: 0.8, 1: 0.1, 2: 0.1}
    for seed in range(10):
        g = torch.Generator().manual_seed(seed)
        chosen = torch.rand(64, 400, generator=g) < 0.6
        fair = torch.multinomial(torch.tensor([0.8, 0.1, 0.1]), 64 * 400, replacement=True, generator=g)
        fair = fair.reshape(64, 400)
        assert not draws.category_findings([(fair, chosen)], probs), seed
        copied = fair.clone()
        copied[2::4] = fair[0::4]  # rows 2, 6, 10, ... take the outcomes of rows 0, 4, 8, ...
        found = draws.category_findings([(copied, chosen)], probs)
        assert found and found[0].kind == "outcome_tied" and found[0].detail["rows"] == 2, found


def test_honest_draws_with_gaps_find_nothing_at_any_offset():
    """Eligible elements with holes (a causal triangle, padding): pairs are counted among eligible
    ones only, so honest draws find nothing for any seed."""
    shape = (16, 48, 48)
    elig = torch.ones(shape, dtype=torch.bool).tril()
    elig[::3, :, 40:] = False
    for seed in range(20):
        g = torch.Generator().manual_seed(500 + seed)
        calls = [((torch.rand(shape, generator=g) < 0.3) & elig, elig) for _ in range(CALLS)]
        assert not draws.bernoulli_findings(calls, 0.3), seed


# Round 3 of the outside attack: structure above pairs. Every pair at every offset looks
# independent, but a row's count is rounded to a multiple of 2..16 (its variance kept), or a third
# element is (a + b) mod 1 of two others (in blocks of 2^k - 1 positions, or of calls). The count
# distribution's shape and triples are read (draws._count_shape_findings, draws._triple_findings).
# The rules below are the attacker's, on the dropout check's input: 16 calls of (64, 256), p = 0.2.
R3_SHAPE, R3_P = (64, 256), 0.2


def _pw_uniform(shape, g, bits):
    """Blocks of 2^bits - 1 elements in memory order, each the sum mod 1 of a distinct non-empty
    subset of `bits` seeds: pairwise independent uniforms, not mutually independent."""
    n = shape[0] * shape[1]
    B = 2**bits - 1
    seeds = torch.rand((n + B - 1) // B, bits, generator=g, dtype=torch.float64)
    sets = ((torch.arange(1, B + 1)[:, None] >> torch.arange(bits)[None, :]) & 1).double()
    return torch.remainder((seeds[:, None, :] * sets[None]).sum(-1), 1.0).reshape(-1)[:n].reshape(shape)


def _row_multiple(m, keep_variance):
    def rule(g):
        drop = torch.rand(R3_SHAPE, generator=g) < R3_P
        n = R3_SHAPE[1]
        cnt = drop.sum(-1, keepdim=True).double()
        if keep_variance:
            alpha = max(0.0, 1 - (m * m / 12) / (n * R3_P * (1 - R3_P))) ** 0.5
            cnt = n * R3_P + alpha * (cnt - n * R3_P)
        target = (torch.round(cnt / m) * m).clamp(0, n).long()
        have = drop.sum(-1, keepdim=True)
        down = target < have
        pri = torch.where(torch.where(down, drop, ~drop), torch.rand(R3_SHAPE, generator=g), torch.full(R3_SHAPE, 2.0))
        flip = (pri.argsort(-1).argsort(-1) < (target - have).abs()) & (pri < 2)
        return drop ^ flip

    return rule


def _row_parity_random_column(g):
    drop = torch.rand(R3_SHAPE, generator=g) < R3_P
    odd = drop.sum(-1) % 2 == 1
    col = torch.randint(0, R3_SHAPE[1], odd.shape, generator=g)
    return drop ^ torch.zeros_like(drop).scatter_(-1, col[:, None], odd[:, None])


def _call_sums(blocks):
    """Calls in blocks of 2^blocks - 1: call j (1-based) is the sum mod 1 of the fresh draws of the
    calls whose number is a power of two within j's bits (blocks=2: c + 2 = c + (c + 1) mod 1)."""
    B = 2**blocks - 1
    us = []
    for t in range(CALLS):
        j = t % B + 1
        if j & (j - 1) == 0:
            u = torch.rand(R3_SHAPE, generator=torch.Generator().manual_seed(t), dtype=torch.float64)
        else:
            base = t - (j - 1)
            u = torch.remainder(sum(us[base + (1 << b) - 1] for b in range(blocks) if j >> b & 1), 1.0)
        us.append(u)
    return [u < R3_P for u in us]


ROUND3 = {
    "every row's count even (fix-up at a drawn column)": (_row_parity_random_column, "count_residue"),
    "every row's count a multiple of 4": (_row_multiple(4, False), "count_residue"),
    "every row's count a multiple of 8": (_row_multiple(8, False), "count_residue"),
    "every row's count a multiple of 16, variance kept": (_row_multiple(16, True), "count_residue"),
    "a, b, a + b mod 1 in blocks of 3": (lambda g: _pw_uniform(R3_SHAPE, g, 2) < R3_P, "triples"),
    "sums of 3 seeds in blocks of 7": (lambda g: _pw_uniform(R3_SHAPE, g, 3) < R3_P, "triples"),
    "sums of 7 seeds in blocks of 127": (lambda g: _pw_uniform(R3_SHAPE, g, 7) < R3_P, "triples"),
}


@pytest.mark.parametrize("name", list(ROUND3))
def test_structure_above_pairs_is_found(name):
    rule, kind = ROUND3[name]
    ones = torch.ones(R3_SHAPE, dtype=torch.bool)
    found = draws.bernoulli_findings([(rule(torch.Generator().manual_seed(k)), ones) for k in range(CALLS)], R3_P)
    assert found and found[0].kind == kind, found


@pytest.mark.parametrize("blocks", [2, 3])
def test_calls_computed_from_earlier_calls_are_found(blocks):
    """Every third call (a + b mod 1 of the two before), or blocks of 7 calls from 3 fresh ones."""
    ones = torch.ones(R3_SHAPE, dtype=torch.bool)
    found = draws.bernoulli_findings([(m, ones) for m in _call_sums(blocks)], R3_P)
    assert found and found[0].kind == "triples" and found[0].detail["along"] == "call_block", found
    assert found[0].detail["block"] == 2**blocks - 1, found


HONEST_STYLES = {
    "rand < p": lambda shape, p: torch.rand(shape) < p,
    "bernoulli": lambda shape, p: torch.bernoulli(torch.full(shape, p)).bool(),
    "rand >= 1 - p, float64": lambda shape, p: torch.rand(shape, dtype=torch.float64) >= 1 - p,
    "transposed draw": lambda shape, p: (torch.rand(tuple(reversed(shape))) < p).permute(*reversed(range(len(shape)))),
}


@pytest.mark.slow
@pytest.mark.parametrize("shape,p", [((64, 256), 0.2), ((64, 256), 0.5), ((4, 4, 32, 32), 0.3), ((16, 48, 48), 0.1)])
def test_honest_draws_pass_the_statistics_above_pairs_for_every_seed(shape, p):
    """Honest styles x 20 seeds on the checks' shapes: neither the counts' shape nor any triple is
    found (nor anything else)."""
    ones = torch.ones(shape, dtype=torch.bool)
    with torch.random.fork_rng():
        for style, fn in HONEST_STYLES.items():
            for seed in range(20):
                torch.manual_seed(seed)
                calls = [(fn(shape, p), ones) for _ in range(CALLS)]
                assert not draws.bernoulli_findings(calls, p), (style, seed)


def test_the_findings_above_pairs_have_messages_in_both_languages():
    what, drawn, hint = draws.Msg("x", "x"), draws.Msg("dropped", "丢弃"), draws.Msg("draw", "抽样")
    for kind, detail in [("count_residue", {"rows": 1024, "mod": 4, "rest": 0}), ("count_shape", {"rows": 1024})] + [
        ("triples", {"along": a, "first": 1, "second": 2, "block": 7, "phase": 0, "triples": 10})
        for a in ("row", "rows", "calls", "block", "call_block")
    ]:
        m = draws.describe(draws.Finding(kind, 0.02, 0.008, detail), what, drawn, hint)
        en, zh = m.render("en"), m.render("zh")
        assert "draws do not follow" not in en and "{" not in en + zh and en != zh, (kind, detail)
        assert kind in draws.MISTAKES


# ----------------------------------------------------------------------------- regions drawn apart
# The fourth outside attack drew honestly only where the checks' inputs reached: keys past the head
# size, tokens from 128 on, sequences past the first 2 or 16, elements past 2^18 never drawn.
# region_findings reads each index of each axis at the course's training sizes.
def _region_fakes():
    g = torch.Generator().manual_seed(7)
    shape = (8, 4, 64, 256)  # (batch, heads, queries, keys)

    def honest():
        return torch.rand(shape, generator=g) < 0.1

    def keys_past(d):
        c = honest()
        c[..., d:] = False
        return c

    def batch_past(b):
        c = honest()
        c[b:] = False
        return c

    def flat_past(n):
        c = honest().flatten()
        c[n:] = False
        return c.reshape(shape)

    return {
        "keys past the head size": lambda: keys_past(64),
        "sequences past the first 2": lambda: batch_past(2),
        "elements past 2^18": lambda: flat_past(2**18),
    }


@pytest.mark.parametrize("name", ["keys past the head size", "sequences past the first 2", "elements past 2^18"])
def test_a_region_never_drawn_is_found(name):
    fake = _region_fakes()[name]
    calls = [(fake(), torch.ones(8, 4, 64, 256, dtype=torch.bool)) for _ in range(3)]
    found = draws.region_findings(calls, 0.1, ["sequence", "head", "query", "key"])
    assert [f.kind for f in found] == ["region"], found
    msg = draws.describe(found[0], Msg("x", "x"), Msg("dropped", "丢弃"), Msg("h", "h")).render("en")
    assert "should be, at every index of every axis" in msg and found[0].detail["axis"] in msg


def test_honest_draws_in_every_region_find_nothing_for_every_seed():
    for seed in range(20):
        g = torch.Generator().manual_seed(seed)
        for p in (0.1, 0.15, 0.3):
            elig = torch.rand(4, 2, 32, 128, generator=g) < 0.9
            calls = [((torch.rand(4, 2, 32, 128, generator=g) < p) & elig, elig) for _ in range(3)]
            assert not draws.region_findings(calls, p), (seed, p)


# ----------------------------------------------------------------------------- counts are exact
def _window_triples_by_hand(x, e, p, window):
    """_window_triples by loops over every (t, d1, d2): the counts it reads from packed bits."""
    T, best = x.shape[0], None
    xs, es = x.reshape(T, -1).long(), e.reshape(T, -1).long()
    for d1 in range(1, min(window, T - 1)):
        for d2 in range(d1 + 1, min(window, T - 1) + 1):
            got = int((xs[: T - d2] * xs[d1 : T - d2 + d1] * xs[d2:]).sum())
            pairs = int((es[: T - d2] * es[d1 : T - d2 + d1] * es[d2:]).sum())
            z = draws._triple_score(got, pairs * p**3, draws._phi3(p))
            if best is None or z > best[0]:
                best = (z, d1, d2, got, pairs)
    return best


@pytest.mark.parametrize(
    "shape,window", [((300, 7), 6), ((64, 3, 5), 16), ((9, 40), 4), ((70, 65), 16), ((5, 2, 130), 4)]
)
def test_triple_counts_read_from_packed_bits_are_the_counts_by_hand(shape, window):
    """The triple counts are counts of ones in ANDs of rows packed 64 to a word (rows of 65 and 260
    positions cross a word): they equal the integer counts, for a rule with gaps in what is
    eligible and one with a planted triple pattern."""
    g = torch.Generator().manual_seed(sum(shape) + window)
    e = torch.rand(shape, generator=g) < 0.9
    for x in (
        torch.rand(shape, generator=g) < 0.3,
        (torch.arange(shape[0]) % 3 == 0).reshape(-1, *[1] * (len(shape) - 1)).expand(shape),
    ):
        x = x & e
        assert draws._window_triples(x, e, 0.3, window) == _window_triples_by_hand(x, e, 0.3, window)


def test_the_fast_counts_are_the_counts_of_the_plain_gathers_and_transforms():
    """The packed bit counts of the block triples, and the closed forms used when every element is
    eligible (pairs at each offset, triples in a window), give exactly the numbers the plain
    gathers and autocorrelations give, on random masks of many shapes and rates."""
    from unittest import mock

    from grader.checking import draws as D

    g = torch.Generator().manual_seed(7)
    for bits in range(2, 9):
        lines, _ = D._block_lines(bits)
        for nb, M in [(1, 1), (3, 5), (7, 3), (33, 2), (9, 100)]:
            for p in (0.05, 0.5, 0.95):
                v = torch.rand(nb, 2**bits - 1, M, generator=g) < p
                plain = int((v[:, lines[:, 0]] & v[:, lines[:, 1]] & v[:, lines[:, 2]]).sum())
                assert D._line_count(v, lines) == plain, (bits, nb, M, p)
    for n, L in [(1, 1), (1, 5), (4, 1), (7, 13), (32, 64)]:
        assert torch.equal(D._all_pairs(n, L), D._autocorr(torch.ones(n, L, dtype=torch.float64)))
    for T, M, w in [(3, 1, 16), (20, 7, 16), (50, 4, 4), (9, 3, 6)]:
        x, e = torch.rand(T, M, generator=g) < 0.4, torch.ones(T, M, dtype=torch.bool)
        fast = D._window_triples(x, e, 0.4, w)
        with mock.patch.object(torch.Tensor, "all", lambda self, *a, **k: torch.tensor(False)):
            assert D._window_triples(x, e, 0.4, w) == fast  # the generic count of the eligible triples
