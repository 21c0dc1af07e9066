"""§1.7-1.8 Bahdanau attention graded for real: a missing tanh, a context built from the raw scores
and a transposed cross-attention shape are named; a loop-by-loop correct answer scores full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of
from tests.mistakes import expect_named_publicly, variant

EX = "s1_07_additive_attention"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()


def _replace(src: str, old: str, new: str) -> str:
    assert old in src, old
    return src.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_missing_tanh_is_named(submission):
    wrong = _replace(
        SOURCE, "return torch.tanh(projected_s + projected_h) @ v", "return (projected_s + projected_h) @ v"
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    for name in ("test_i_will_eat", "test_scores_fresh", "test_attention_fresh"):
        assert "tanh is missing" in failed[name]["message"], failed[name]["message"]
    assert "test_cross_vs_self_shapes" not in failed


def test_context_from_scores_and_transposed_shape(submission):
    wrong = _replace(
        SOURCE,
        "    weights = torch.softmax(additive_scores(decoder_state, encoder_states, W_s, W_h, v), dim=-1)\n"
        "    context = (weights.unsqueeze(-1) * encoder_states).sum(dim=-2)",
        "    scores = additive_scores(decoder_state, encoder_states, W_s, W_h, v)\n"
        "    weights = torch.softmax(scores, dim=-1)\n"
        "    context = (scores.unsqueeze(-1) * encoder_states).sum(dim=-2)",
    )
    wrong = _replace(wrong, "return (len(query_tokens), len(keys))", "return (len(keys), len(query_tokens))")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "context used the scores, not the softmax weights" in failed["test_i_will_eat"]["message"]
    assert "context used the scores" in failed["test_attention_fresh"]["message"]
    assert "transposed" in failed["test_cross_vs_self_shapes"]["message"]
    assert "test_scores_fresh" not in failed


def test_loop_implementation_scores_full_marks(submission):
    alt = """
import torch


def additive_scores(decoder_state, encoder_states, W_s, W_h, v):
    if decoder_state.dim() == 2:
        return torch.stack([additive_scores(s, H, W_s, W_h, v) for s, H in zip(decoder_state, encoder_states)])
    query = W_s @ decoder_state
    return torch.stack([v @ torch.tanh(query + W_h @ h) for h in encoder_states])


def additive_attention(decoder_state, encoder_states, W_s, W_h, v):
    e = additive_scores(decoder_state, encoder_states, W_s, W_h, v)
    e = torch.exp(e - e.max(dim=-1, keepdim=True).values)
    weights = e / e.sum(dim=-1, keepdim=True)
    context = torch.einsum("...t,...td->...d", weights, encoder_states)
    return context, weights


def attention_matrix_shape(query_tokens, key_tokens=None):
    if key_tokens is None:
        key_tokens = query_tokens
    return len(query_tokens), len(key_tokens)
"""
    r = grade(submission({EX: alt}), "-e", EX)
    assert score_of(r, EX) == 12, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_softmax_over_the_batch_is_named_by_a_public_check(submission):
    """Issue 28: a softmax over dim 0 equals the right one on a single sentence; only the hidden
    test_batch read a batch. test_i_will_eat reads the book's steps as a batch of two now."""
    r = grade(submission({EX: variant(EX, "softmax over dim 0: the batch, once there is one").source()}), "-e", EX)
    expect_named_publicly(r, EX, "softmax over the batch instead of over the encoder states (`dim=-1`)")
