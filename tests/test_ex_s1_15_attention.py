"""§1.15 attention() graded for real: plausible wrong answers lose points with a message that names the
mistake; calling scaled_dot_product_attention is refused; a correct answer written differently scores
full marks."""
from tests.conftest import checks_of, failed_checks, grade, score_of, solution_with

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
    wrong = _swap("        weights = weights.masked_fill(~keep, 0.0)  # rows with every key masked: NaN -> 0\n",
                  "        pass\n")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_query_that_sees_no_key", "test_fully_masked_rows_are_zero"}  # public, and hidden
    for c in failed.values():
        assert "NaN" in c["message"], c
    assert "masked_fill(~keep, 0.0)" in failed["test_query_that_sees_no_key"]["message"]
    assert score_of(r, EX) == MAX - 2


def test_sdpa_is_forbidden(submission):
    cheat = '''import torch
import torch.nn.functional as F


def attention(q, k, v, causal=False, padding_mask=None, dropout_p=0.0, training=False):
    mask = None
    if padding_mask is not None:
        mask = padding_mask.reshape(*padding_mask.shape[:-1], *[1] * (q.dim() - padding_mask.dim()), k.shape[-2])
    if causal:
        tril = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        mask = tril if mask is None else mask & tril
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p if training else 0.0)
'''
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
