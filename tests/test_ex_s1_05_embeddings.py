"""§1.5 embeddings graded for real: plausible wrong answers lose points with a message naming the
mistake; a correct answer written differently from the solution scores full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of
from tests.mistakes import expect_named_publicly, variant

EX = "s1_05_embeddings"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_integer_one_hot_and_unnormalised_cosine_lose_points(submission):
    wrong = _replace(".to(torch.float32)\n", ".long()\n").replace(
        "    unit = vectors / vectors.norm(dim=-1, keepdim=True)\n    return unit @ unit.transpose(-2, -1)",
        "    return vectors @ vectors.T",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "test_book_one_hot_cat" in failed and "float32" in failed["test_book_one_hot_cat"]["message"]
    assert "one-hot vectors must be `float32`" in failed["test_one_hot_batch"]["message"]
    assert "dot products without dividing by the lengths" in failed["test_dense_cosine_similarity"]["message"]
    assert "test_lookup_batch" in failed  # int64 one-hot @ float32 weight cannot multiply
    assert 0 < score_of(r, EX) < 10


def test_off_by_one_and_silent_out_of_range_ids_lose_points(submission):
    # 1-based thinking: the 1 lands one place early; and no range check on the ids.
    wrong = _replace(
        "    if token_ids.numel() and (token_ids.min() < 0 or token_ids.max() >= vocab_size):\n"
        '        raise ValueError(f"token ids must lie in [0, {vocab_size}), got {token_ids.min()} .. {token_ids.max()}")\n'
        "    return (token_ids.unsqueeze(-1) == torch.arange(vocab_size)).to(torch.float32)",
        "    return (token_ids.unsqueeze(-1) - 1 == torch.arange(vocab_size)).to(torch.float32)",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "ids count from 0" in failed["test_book_one_hot_cat"]["message"]
    assert "must raise ValueError" in failed["test_one_hot_rejects_bad_ids"]["message"]


def test_library_one_hot_is_forbidden(submission):
    cheat = _replace(
        "    return (token_ids.unsqueeze(-1) == torch.arange(vocab_size)).to(torch.float32)",
        "    import torch.nn.functional as F\n    return F.one_hot(token_ids, vocab_size).float()",
    )
    r = grade(submission({EX: cheat}), "-e", EX)
    assert score_of(r, EX) == 0
    for c in checks_of(r, EX):  # a hidden check that never called it shows the scan's one-line verdict
        assert "torch.nn.functional.one_hot" in c["message"] or (
            c["visibility"] == "hidden" and "breaks its rules" in c["message"]
        ), c
    assert any(f"{EX}.py:" in c["message"] for c in checks_of(r, EX) if c["visibility"] == "public")


def test_different_correct_answer_scores_full_marks(submission):
    alt = """
import torch


def one_hot(token_ids, vocab_size):
    flat = token_ids.reshape(-1)
    if ((flat < 0) | (flat >= vocab_size)).any():
        raise ValueError("id out of range")
    out = torch.zeros(flat.shape[0], vocab_size)
    out[torch.arange(flat.shape[0]), flat] = 1.0
    return out.reshape(*token_ids.shape, vocab_size)


def embedding_lookup(token_ids, weight):
    return weight.index_select(0, token_ids.reshape(-1)).reshape(*token_ids.shape, weight.shape[1])


def one_hot_embedding(token_ids, weight):
    return torch.einsum("...v,vd->...d", one_hot(token_ids, weight.shape[0]), weight)


def cosine_similarity_matrix(vectors):
    lengths = (vectors * vectors).sum(dim=1).sqrt()
    return (vectors @ vectors.T) / (lengths[:, None] * lengths[None, :])
"""
    r = grade(submission({EX: alt}), "-e", EX)
    assert score_of(r, EX) == 10, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_integer_one_hot_is_named_by_a_public_check(submission):
    """Issue 28: integer one-hot vectors were named by the hidden test_one_hot_batch only; the
    public test_book_one_hot_cat said 'wrong dtype' without naming the mistake."""
    r = grade(submission({EX: variant(EX, "integer one-hot vectors").source()}), "-e", EX)
    expect_named_publicly(r, EX, "the one-hot vectors must be `float32`, not integers")
