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
    kinds = draws.ORDER + ["outcome_cycle", "outcome_position", "uniform"]
    for kind in kinds:
        f = draws.Finding(kind, 0.5, 0.25, {"n": 10, "calls": 16, "rows": 40, "lag": 2, "a": 0, "b": 1, "mod": 2,
                                            "rest": 0, "bins": 10})
        m = draws.describe(f, what, drawn, hint)
        assert "draws do not follow" not in m.en, kind
        assert m.en and m.zh and m.en != m.zh
