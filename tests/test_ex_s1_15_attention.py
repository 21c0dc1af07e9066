"""§1.15 attention() graded for real: plausible wrong answers lose points with a message that names the
mistake; calling scaled_dot_product_attention is refused; a correct answer written differently scores
full marks."""

import pytest
import torch

from grader.checks import test_s1_15_attention as C
from tests.conftest import LocalSubmission, checks_of, failed_checks, grade, score_of, solution_with

EX = "s1_15_attention"
MAX = 15


def _swap(old: str, new: str) -> str:
    return solution_with(EX, old, new)


def _failed(report):
    return failed_checks(report, EX)


def test_unscaled_scores(submission):
    wrong = _swap("scores = q @ k.transpose(-2, -1) / q.shape[-1] ** 0.5", "scores = q @ k.transpose(-2, -1)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) == 0
    for name in ("test_plain_matches_sdpa", "test_causal_matches_sdpa", "test_padding_mask_matches_sdpa"):
        assert "not scaled by sqrt(d_k)" in failed[name]["message"], failed[name]


def test_padding_mask_read_the_wrong_way(submission):
    wrong = _swap("pad = padding_mask.to(torch.bool)", "pad = ~padding_mask.to(torch.bool)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "wrong way round" in failed["test_padding_mask_matches_sdpa"]["message"]
    assert "test_plain_matches_sdpa" not in failed and "test_causal_matches_sdpa" not in failed
    assert score_of(r, EX) <= MAX - 6


def test_nan_for_queries_that_see_no_key(submission):
    wrong = _swap(
        "        weights = weights.masked_fill(~keep, 0.0)  # rows with every key masked: NaN -> 0\n", "        pass\n"
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_query_that_sees_no_key", "test_fully_masked_rows_are_zero"}  # public, and hidden
    for c in failed.values():
        assert "NaN" in c["message"], c
    assert "masked_fill(~keep, 0.0)" in failed["test_query_that_sees_no_key"]["message"]
    assert score_of(r, EX) == MAX - 2


def test_sdpa_is_forbidden(submission):
    cheat = """import torch
import torch.nn.functional as F


def attention(q, k, v, causal=False, padding_mask=None, dropout_p=0.0, training=False):
    mask = None
    if padding_mask is not None:
        mask = padding_mask.reshape(*padding_mask.shape[:-1], *[1] * (q.dim() - padding_mask.dim()), k.shape[-2])
    if causal:
        tril = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        mask = tril if mask is None else mask & tril
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p if training else 0.0)
"""
    r = grade(submission({EX: cheat}), "-e", EX)
    assert score_of(r, EX) == 0
    for c in checks_of(r, EX):  # the public checks name the API, the file and the line; a hidden one only
        if c["visibility"] == "public":  # says that a rule broke, without naming what the code called
            assert "scaled_dot_product_attention" in c["message"] and f"{EX}.py:" in c["message"], c
        else:
            assert "scaled_dot_product_attention" not in c["message"] and f"{EX}.py:" not in c["message"], c
            assert "the public checks name the file and the line" in c["message"], c


CORRECT_DIFFERENT = '''"""A correct answer written another way: an additive float mask, einsum, exp by hand,
nan_to_num for the rows that see no key, a Bernoulli dropout mask."""
import math

import torch


def attention(q, k, v, causal=False, padding_mask=None, dropout_p=0.0, training=False):
    scores = torch.einsum("...qd,...kd->...qk", q, k) * (1.0 / math.sqrt(q.size(-1)))
    bias = torch.zeros(scores.shape[-2:], dtype=scores.dtype)
    if causal:
        bias = bias.masked_fill(torch.ones_like(bias, dtype=torch.bool).triu(1), -math.inf)
    if padding_mask is not None:
        pad = torch.where(padding_mask, 0.0, -math.inf).to(scores.dtype)
        for _ in range(q.dim() - padding_mask.dim()):
            pad = pad.unsqueeze(-2)
        bias = bias + pad
    scores = scores + bias
    top = scores.amax(dim=-1, keepdim=True).nan_to_num(0.0, neginf=0.0)
    e = torch.exp(scores - top)
    w = (e / e.sum(dim=-1, keepdim=True)).nan_to_num(0.0)
    if training and dropout_p > 0.0:
        w = w * torch.bernoulli(torch.full_like(w, 1.0 - dropout_p)) / (1.0 - dropout_p)
    return torch.einsum("...qk,...kd->...qd", w, v)
'''


def test_correct_but_different_scores_full_marks(submission):
    r = grade(submission({EX: CORRECT_DIFFERENT}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


# ----------------------------------------------------------------------------- dropout: the rule, not its share
# Dropout on the weights is one independent draw per visible weight. A single call's share of zeros
# is one consequence of it that a structured rule fakes; test_dropout_on_the_weights (public) and
# test_dropout_in_training (hidden, heads and padding) read 12 calls through V = I and hold the
# dropped weights to draws.bernoulli_findings, and the kept ones to weight / (1 - p).
_DRAW = "            survive = torch.rand(weights.shape, device=weights.device) >= dropout_p\n"
BOTH = {"test_dropout_on_the_weights", "test_dropout_in_training"}
STRUCTURED = {
    "a fixed count at a fixed stride": (
        """            n = weights.numel()
            k = round((1 - dropout_p) * n)
            off = int(torch.randint(0, n, (1,)))
            survive = torch.zeros(n, dtype=torch.bool)
            survive[(torch.arange(k) * n // k + off) % n] = True
            survive = survive.reshape(weights.shape)
""",
        BOTH,
    ),
    "the same mask in every row": (
        "            survive = (torch.rand(weights.shape[-1:]) >= dropout_p).expand(weights.shape)\n",
        BOTH,
    ),
    "the same mask in every call": (
        "            survive = torch.rand(weights.shape, generator=torch.Generator().manual_seed(0)) >= dropout_p\n",
        BOTH,
    ),
    "the same mask in every head": (
        """            if weights.dim() == 4:
                survive = (torch.rand(weights.shape[0], 1, *weights.shape[2:]) >= dropout_p).expand(weights.shape)
            else:
                survive = torch.rand(weights.shape) >= dropout_p
""",
        BOTH,
    ),  # the public check reads 4 heads at the book's size: the next head is a row offset
    "dropped in neighbouring pairs": (
        """            half = torch.rand(weights.shape) < 1 - (1 - dropout_p) ** 0.5
            survive = ~(half | torch.roll(half, 1, -1))
""",
        BOTH,
    ),
    "no dropout at all": ("            survive = torch.ones(weights.shape, dtype=torch.bool)\n", BOTH),
    "no rescaling": (_DRAW + "            dropout_p = 0.0\n", BOTH),
}


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_a_structured_dropout_scores_zero_on_the_checks_of_dropout(submission, name):
    body, rule_checks = STRUCTURED[name]
    r = grade(submission({EX: _swap(_DRAW, body)}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in rule_checks if checks[n]["score"] > 0}
    assert not earned, earned
    assert score_of(r, EX) == MAX - sum(checks[n]["max_score"] for n in rule_checks), [
        c["name"] for c in checks.values() if c["status"] != "passed"
    ]
    if "test_dropout_on_the_weights" in rule_checks:  # the public check says what the rule does wrong
        msg = checks["test_dropout_on_the_weights"]["message"]
        assert (
            "attention(q, k, torch.eye(8), causal=True, dropout_p=0.4, training=True)" in msg
            or "weights, head dim 64 (the book's sizes)" in msg
        ), msg  # the small call, or the book's size


@pytest.mark.parametrize(
    "name,says",
    [
        ("no dropout at all", ["no attention weight was dropped"]),
        ("no rescaling", ["not rescaled by `1 / (1 - p)`"]),
        (
            "a fixed count at a fixed stride",
            ["the count is fixed, not drawn", "torch.rand(weights.shape) >= dropout_p"],
        ),
    ],
)
def test_a_wrong_dropout_is_told_what_is_wrong(submission, name, says):
    r = grade(submission({EX: _swap(_DRAW, STRUCTURED[name][0])}), "-e", EX)
    msg = {c["name"]: c["message"] for c in checks_of(r, EX)}["test_dropout_on_the_weights"]
    assert all(s in msg for s in says), msg


HONEST = {
    "rand >= p": _DRAW,
    "bernoulli of keep probabilities": "            survive = torch.bernoulli(torch.full_like(weights, 1 - dropout_p))\n",
    "empty.bernoulli_": "            survive = torch.empty_like(weights).bernoulli_(1 - dropout_p)\n",
    "rand_like < 1 - p": "            survive = torch.rand_like(weights) < 1 - dropout_p\n",
}


def test_honest_dropout_passes_the_statistics_for_every_seed():
    """Every honest style x 20 seeds, on the trusted side, with the checks' own inputs: the
    statistics find nothing (bounds ~6.5 standard deviations)."""
    g = torch.Generator().manual_seed(1516)
    q, k = torch.randn(64, 8, 4, generator=g), torch.randn(64, 8, 4, generator=g)
    g = torch.Generator().manual_seed(31)
    hq, hk = torch.randn(16, 4, 8, 4, generator=g), torch.randn(16, 4, 8, 4, generator=g)
    pad = torch.ones(16, 8, dtype=torch.bool)
    pad[8:, 5:] = False
    cases = [(q, k, None, torch.eye(8).expand(64, 8, 8)), (hq, hk, pad, torch.eye(8).expand(16, 4, 8, 8))]
    with torch.random.fork_rng():
        for style, line in HONEST.items():
            space: dict = {}
            exec(compile(_swap(_DRAW, line), f"<{style}>", "exec"), space)
            for q_, k_, pad_, eye in cases:
                weights = C.sdpa(q_, k_, eye, causal=True, padding_mask=pad_)
                for seed in range(20):
                    torch.manual_seed(seed)
                    outs = [
                        space["attention"](q_, k_, eye, causal=True, padding_mask=pad_, dropout_p=0.4, training=True)
                        for _ in range(C.DROPOUT_CALLS)
                    ]
                    found = C.dropout_findings(outs, weights, 0.4)
                    assert not found, (style, seed, found)


BIG_SEEDS = 5  # a call group at the book's size costs 10-100 times one at the small sizes (20 seeds)


@pytest.mark.slow  # BIG_SEEDS seeds x every style at (1, 4, 128, 128) and (1, 4, 256, 256)
def test_honest_dropout_passes_the_statistics_at_the_books_size_for_every_seed():
    """The same at the book's sizes the dropout checks also read (both inputs)."""
    with torch.random.fork_rng():
        for style, line in HONEST.items():
            space: dict = {}
            exec(compile(_swap(_DRAW, line), f"<{style}>", "exec"), space)
            for seed_in, padded, t, calls in (
                (1517, False, C.BIG_T, C.BIG_CALLS),
                (32, True, 2 * C.BIG_T, C.BIG_CALLS // 2),
            ):
                q_, k_, pad_, eye = C.books_size_inputs(seed_in, padded, t)
                weights = C.sdpa(q_, k_, eye, causal=True, padding_mask=pad_)
                for seed in range(BIG_SEEDS):
                    torch.manual_seed(seed)
                    outs = [
                        space["attention"](q_, k_, eye, causal=True, padding_mask=pad_, dropout_p=0.4, training=True)
                        for _ in range(calls)
                    ]
                    found = C.dropout_findings(outs, weights, 0.4)
                    assert not found, (style, seed, found)


STRIDE_AT = """            survive = torch.rand(weights.shape) >= dropout_p
            if weights.shape[-1] >= {t}:  # honest below T keys, a fixed stride from T on
                survive = (torch.arange(weights.shape[-1]) % 10 != 0).expand(weights.shape)
"""


@pytest.mark.parametrize("t", [32, 64, 128, 256])
def test_a_dropout_keyed_on_the_books_sizes_scores_zero_on_the_checks_of_dropout(submission, t):
    """Honest on the small shapes, a deterministic stride once the sequence reaches T: the rule
    checks also read (1, 4, 128, 128) weights (listing 1.36's 4 heads of 64, 128 tokens), the
    hidden one (1, 4, 256, 256)."""
    r = grade(submission({EX: _swap(_DRAW, STRIDE_AT.format(t=t))}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    rule_checks = {"test_dropout_in_training"} | ({"test_dropout_on_the_weights"} if t <= C.BIG_T else set())
    earned = {n: checks[n]["message"][:300] for n in rule_checks if checks[n]["score"] > 0}
    assert not earned, earned
    if t <= C.BIG_T:  # the public check names what it read (a hidden check's message is cut short)
        msg = checks["test_dropout_on_the_weights"]["message"]
        assert "attention on (batch 1, heads 4, 128, 128) weights, head dim 64 (the book's sizes)" in msg, msg


# ----------------------------------------------------------------------------- the course's training size
# Rules keyed on where the course trains (docs/threat-log.md, 2026-12-04): with batch > 1 and 128+ keys only batch
# element 0 dropped (a20, B5), or no dropout in any dtype but float32 (a29, B8): 15/15 each. The
# dropout checks now also read (32, 4, 256, 256) weights under a padding mask (float32) and
# (4, 4, 256, 256) in float64 and bfloat16, one call each.
KEYED = {
    "a20: only batch element 0 dropped with 128+ keys": _DRAW
    + """            if weights.dim() >= 3 and weights.shape[0] > 1 and weights.shape[-1] >= 128:
                survive[1:] = True
""",
    "a29: no dropout in any dtype but float32": _DRAW
    + """            if weights.dtype != torch.float32:
                survive[...] = True
""",
    "a30: no dropout when the weights require grad (in real training)": _DRAW
    + """            if weights.requires_grad:
                survive[...] = True
""",
    "no dropout under autocast": _DRAW
    + """            if torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda"):
                survive[...] = True
""",
}


@pytest.mark.parametrize("name", list(KEYED))
def test_a_dropout_keyed_on_the_training_batch_or_dtype_scores_zero_on_the_checks_of_dropout(submission, name):
    r = grade(submission({EX: _swap(_DRAW, KEYED[name])}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {
        n: checks[n]["message"][:300]
        for n in ("test_dropout_on_the_weights", "test_dropout_in_training")
        if checks[n]["score"] > 0
    }
    assert not earned, earned
    msg = checks["test_dropout_on_the_weights"]["message"]
    assert "the course's training size" in msg, msg


def _Honest(fn, seed: int) -> LocalSubmission:
    """A stand-in for the proxy: one honest style, seeded apart for each of the test's seeds."""
    return LocalSubmission({}, 1000 * seed, {"attention": fn})


TRAIN_SEEDS = 5


@pytest.mark.slow  # TRAIN_SEEDS seeds x every style x both checks' reads at (32, 4, 256, 256)
def test_honest_dropout_passes_the_training_size_reads_for_every_seed():
    """Every honest style x 5 seeds through the checks' own reads at the training size (float32,
    float64, bfloat16: the rate, the region and the survivors' scale)."""
    with torch.random.fork_rng():
        for style, line in HONEST.items():
            space: dict = {}
            exec(compile(_swap(_DRAW, line), f"<{style}>", "exec"), space)
            for seed in range(TRAIN_SEEDS):
                sub = _Honest(space["attention"], seed)
                try:
                    C.expect_dropout_in_training(sub, 1518)
                    C.expect_dropout_in_training(sub, 33)
                except Exception as e:
                    raise AssertionError((style, seed, str(getattr(e, "msg", e))[:500])) from e
