"""grader/checking/draws.py: the statistics that hold a randomised exercise to its rule (one
independent draw per element) find each structured fake and nothing in honest draws."""
import pytest
import torch

from grader.checking import draws

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
    m[torch.randperm(n, generator=g)[:round(P * n)]] = True
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
    found = draws.bernoulli_findings([(rule(torch.Generator().manual_seed(k)), torch.ones(SHAPE, dtype=torch.bool))
                                      for k in range(CALLS)], P)
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
        fair = torch.multinomial(torch.tensor([0.8, 0.1, 0.1]), 4000, replacement=True,
                                 generator=torch.Generator().manual_seed(seed)).reshape(40, 100)
        assert not draws.category_findings([(fair, chosen)], probs), seed


def test_random_ids_must_be_uniform():
    g = torch.Generator().manual_seed(1)
    assert not draws.uniform_findings(torch.randint(0, 50257, (2000,), generator=g), 50257)
    assert draws.uniform_findings(torch.randint(0, 25000, (2000,), generator=g), 50257)[0].kind == "uniform"


def test_every_finding_has_a_message_in_both_languages():
    what, drawn, hint = draws.Msg("x", "x"), draws.Msg("chosen", "选中"), draws.Msg("draw", "抽样")
    kinds = draws.ORDER + ["outcome_cycle", "outcome_position", "outcome_tied", "uniform"]
    for kind in kinds:
        f = draws.Finding(kind, 0.5, 0.25, {"n": 10, "calls": 16, "rows": 40, "lag": 2, "a": 0, "b": 1, "mod": 2,
                                            "rest": 0, "bins": 10})
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
    calls = [(((pos * 0.7548776662466927 + 0.5698402909980532 * (k + 1) * 977) % 1.0) < P, ones)
             for k in range(CALLS)]
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
