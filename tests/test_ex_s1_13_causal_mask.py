"""§1.13 causal masking graded for real: plausible wrong answers lose points with a message that names
the mistake; a correct answer written differently scores full marks."""

from tests.conftest import checks_of, failed_checks, grade, score_of, solution_with

EX = "s1_13_causal_mask"
MAX = 17


def _swap(old: str, new: str) -> str:
    return solution_with(EX, old, new)


def _failed(report):
    return failed_checks(report, EX)


def test_zero_instead_of_neg_inf(submission):
    wrong = _swap('scores.masked_fill(~mask, float("-inf"))', "scores.masked_fill(~mask, 0.0)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 8
    for name in ("test_book_neg_inf_examples", "test_listing_1_11_masked_scores", "test_listing_1_12_causal_weights"):
        assert "instead of -inf" in failed[name]["message"], failed[name]
    assert "test_listing_1_10_causal_mask" not in failed  # the mask itself is right


def test_upper_triangle(submission):
    wrong = _swap(
        "torch.tril(torch.ones(seq_len, seq_len, dtype=dtype))", "torch.triu(torch.ones(seq_len, seq_len, dtype=dtype))"
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= 1  # only renormalize_masked, which takes its mask as an argument, survives
    assert "upper triangle instead of lower" in failed["test_listing_1_10_causal_mask"]["message"]
    assert "torch.triu" in failed["test_listing_1_9_mask_of_ones"]["message"]
    assert "past was masked instead of the future" in failed["test_listing_1_11_masked_scores"]["message"]


def test_diagonal_masked_too(submission):
    """Issue 36: torch.triu(ones) as the future's mask, without diagonal=1, was shown as "3 values are
    NaN" under a softmax title; the public checks now say the diagonal is masked and why it matters."""
    wrong = _swap(
        'return scores.masked_fill(~mask, float("-inf"))',
        'return scores.masked_fill(torch.triu(torch.ones_like(mask)), float("-inf"))',
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    for name in ("test_book_neg_inf_examples", "test_listing_1_11_masked_scores"):
        assert "diagonal was masked too" in failed[name]["message"], failed[name]
        assert "diagonal=1" in failed[name]["message"] and "attend to itself" in failed[name]["message"]
    assert "test_listing_1_10_causal_mask" not in failed  # the mask itself is right


def test_mask_after_softmax_without_renormalising(submission):
    wrong = _swap(
        "return torch.softmax(mask_future(scaled_scores), dim=-1)",
        "return torch.softmax(scaled_scores, dim=-1) * causal_mask(scaled_scores.shape[-1])",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 8
    for name in (
        "test_book_neg_inf_examples",
        "test_listing_1_12_causal_weights",
        "test_mask_after_softmax_equals_neg_inf",
    ):
        assert "after softmax without renormalising" in failed[name]["message"], failed[name]
    hidden = failed["test_fresh_shapes"]
    assert hidden["visibility"] == "hidden" and "after softmax" in hidden["message"]
    assert "got " not in hidden["message"] and "index" not in hidden["message"]  # hidden: no values revealed


CORRECT_DIFFERENT = '''"""A correct answer written another way: comparisons instead of tril, torch.where, exp by hand,
and causal weights obtained by renormalising after softmax (which the book wrongly calls leaky)."""
import math

import torch


def causal_mask(seq_len, dtype=torch.bool):
    i = torch.arange(seq_len)
    return (i[:, None] >= i[None, :]).to(dtype)


def mask_future(scores):
    n = scores.shape[-1]
    future = torch.arange(n)[None, :] > torch.arange(n)[:, None]
    return torch.where(future, torch.full_like(scores, -math.inf), scores)


def causal_attention_weights(scaled_scores):
    e = torch.exp(scaled_scores - scaled_scores.amax(dim=-1, keepdim=True))
    return renormalize_masked(e / e.sum(-1, keepdim=True), causal_mask(scaled_scores.shape[-1]))


def renormalize_masked(weights, mask):
    kept = torch.where(mask, weights, torch.zeros_like(weights))
    return kept / kept.sum(-1, keepdim=True)


def causal_attention(queries, keys, values):
    scores = torch.einsum("...qd,...kd->...qk", queries, keys) / math.sqrt(keys.shape[-1])
    return torch.einsum("...qk,...kd->...qd", causal_attention_weights(scores), values)
'''


def test_correct_but_different_scores_full_marks(submission):
    r = grade(submission({EX: CORRECT_DIFFERENT}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_dividing_by_d_k_fails_a_public_check(submission):
    """Issue 28: causal_attention dividing the scores by d_k instead of sqrt(d_k) was caught by hidden
    checks only, unnamed. A public check now reads the listing's context vectors and names it."""
    wrong = _swap("/ keys.shape[-1] ** 0.5", "/ keys.shape[-1]")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert set(failed) == {"test_causal_context_of_the_listing"}, set(failed)
    said = failed["test_causal_context_of_the_listing"]["message"]
    assert "divided by d_k instead of sqrt(d_k)" in said, said
