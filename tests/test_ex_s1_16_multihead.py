"""Real submissions of §1.16 multi-head attention: plausible wrong answers lose points with a
message naming the mistake; a correct answer written differently scores full marks."""

import torch

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_16_multihead"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 24


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_merge_without_transposing_back_is_named(submission):
    wrong = _replace(
        "return context.transpose(1, 2).contiguous().view(b, n, h * d)", "return context.contiguous().view(b, n, h * d)"
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    msg = failed["test_listing_1_19_merge_heads"]["message"]
    assert "without transposing back" in msg and "the layout the book prints" in msg
    assert "without transposing back" in failed["test_mha_matches_torch_multihead_attention"]["message"]
    assert "test_two_heads_of_the_figures" in failed


def test_view_after_transpose_without_contiguous_is_named(submission):
    wrong = _replace(
        "return context.transpose(1, 2).contiguous().view(b, n, h * d)",
        "return context.transpose(1, 2).view(b, n, h * d)",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert score_of(r, EX) < MAX
    for name in ("test_listing_1_19_merge_heads", "test_mha_matches_torch_multihead_attention"):
        msg = failed[name]["message"]
        assert "RuntimeError" in msg and ".contiguous()" in msg and ".reshape()" in msg, msg


def test_split_without_transpose_is_named(submission):
    wrong = _replace(
        "return view_heads(x, num_heads).transpose(1, 2)",
        "b, n, d = x.shape\n    return x.view(b, num_heads, n, d // num_heads)",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert "a view straight to (b, heads, n, head_dim)" in failed["test_listing_1_17_split_heads"]["message"]
    assert "split with .view(b, heads, n, head_dim)" in failed["test_mha_matches_torch_multihead_attention"]["message"]
    assert "test_listings_1_14_to_1_16_view_heads" not in failed  # view_heads itself is right


def test_scaling_by_d_out_is_named(submission):
    wrong = _replace(
        "_, context = head_attention(q, k, v, causal=self.causal)",
        "scores = q @ k.transpose(-2, -1)\n"
        "        if self.causal:\n"
        "            n = scores.shape[-1]\n"
        "            scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float('-inf'))\n"
        "        context = torch.softmax(scores / math.sqrt(self.W_query.out_features), dim=-1) @ v",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    # test_mha_parameters also compares the output: the right parameters around a wrong forward earn nothing.
    assert set(failed) == {"test_mha_matches_torch_multihead_attention", "test_mha_parameters"}, set(failed)
    for c in failed.values():
        assert "scaled by sqrt(d_out) instead of sqrt(head_dim)" in c["message"], c["message"]


def test_forbidden_torch_attention_scores_zero(submission):
    cheat = _replace(
        "_, context = head_attention(q, k, v, causal=self.causal)",
        "context = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=self.causal)",
    )
    r = grade(submission({EX: cheat}), "-e", EX, "--public-only")
    assert score_of(r, EX) == 0
    assert all("scaled_dot_product_attention" in c["message"] for c in checks_of(r, EX))


ALTERNATIVE = '''"""Multi-head attention written with reshape, permute and einsum."""
import math

import torch
import torch.nn as nn


def head_dim(d_out, num_heads):
    q, r = divmod(d_out, num_heads)
    if r:
        raise ValueError("num_heads must divide d_out")
    return q


def view_heads(x, num_heads):
    return x.reshape(*x.shape[:-1], num_heads, -1)


def split_heads(x, num_heads):
    return view_heads(x, num_heads).permute(0, 2, 1, 3)


def head_attention(q, k, v, causal=False):
    scores = torch.einsum("bhqd,bhkd->bhqk", q / math.sqrt(q.size(-1)), k)
    if causal:
        n = q.size(-2)
        keep = torch.ones(n, n, dtype=torch.bool).tril()
        scores = torch.where(keep, scores, torch.tensor(-1e30))
    scores = scores - scores.max(dim=-1, keepdim=True).values
    e = scores.exp()
    weights = e / e.sum(-1, keepdim=True)
    return weights, torch.einsum("bhqk,bhkd->bhqd", weights, v)


def merge_heads(context):
    b, h, n, d = context.shape
    return context.permute(0, 2, 1, 3).reshape(b, n, h * d)


class MultiHeadAttention(nn.Module):
    def __init__(self, d_in, d_out, num_heads, qkv_bias=False, causal=False):
        super().__init__()
        head_dim(d_out, num_heads)
        self.h, self.causal = num_heads, causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)

    def forward(self, x):
        qkv = [split_heads(lin(x), self.h) for lin in (self.W_query, self.W_key, self.W_value)]
        return self.out_proj(merge_heads(head_attention(*qkv, causal=self.causal)[1]))
'''


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: ALTERNATIVE}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_book_printoptions_raise():
    """Listing 1.14 calls torch.set_printoptions(precision=3, suppress=True): torch has no such
    option (it is numpy's), so the listing stops there (ERRATA E-1.16-a)."""
    try:
        torch.set_printoptions(precision=3, suppress=True)
    except TypeError as e:
        assert "suppress" in str(e)
    else:  # pragma: no cover
        torch.set_printoptions(profile="default")
        raise AssertionError("torch accepted suppress=True")
    finally:
        torch.set_printoptions(profile="default")
