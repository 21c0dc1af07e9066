"""Real submissions of §1.23's MultiHeadSelfAttention (listing 1.31): plausible wrong answers lose
points with a message naming the mistake; a correct answer written differently scores full marks."""
import importlib.util

import torch

from grader.checks import bert_reference as R
from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_self_attention"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 14
KEYS = "padding_keys = (mask == 0)[:, None, None, :]"


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_mask_on_queries_is_named(submission):
    wrong = _replace(KEYS, "padding_keys = (mask == 0)[:, None, :, None]")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert {"test_listing_1_31_given_weights", "test_fresh_sizes", "test_padding_is_hidden"} <= set(failed), set(failed)
    assert "applied to the queries (rows) instead of the keys (columns)" in \
        failed["test_listing_1_31_given_weights"]["message"]
    assert score_of(r, EX) <= MAX - 10


def test_inverted_mask_is_named(submission):
    wrong = _replace(KEYS, "padding_keys = (mask == 1)[:, None, None, :]")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    # The layout check compares the output too: the right layout around a wrong forward earns nothing.
    assert set(failed) == {"test_listing_1_31_given_weights", "test_listing_1_31_structure"}, set(failed)
    for c in failed.values():
        assert "the mask is inverted" in c["message"], c["message"]


def test_scaling_by_the_full_width_is_named(submission):
    wrong = _replace("/ math.sqrt(self.d)", "/ math.sqrt(C)")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "scaled by sqrt(dim) instead of sqrt(d)" in _failed(r)["test_listing_1_31_given_weights"]["message"]


def test_head_count_that_does_not_divide_is_refused(submission):
    wrong = _replace("""        if heads <= 0 or dim % heads != 0:
            raise ValueError(f"dim={dim} is not divisible by heads={heads}")
""", "")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "MultiHeadSelfAttention(256, 6) must raise ValueError" in _failed(r)["test_listing_1_31_structure"]["message"]


ALTERNATIVE = '''import math

import torch
import torch.nn as nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout=0.1):
        super().__init__()
        assert dim % heads == 0          # as in the book
        self.heads, self.d = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        B, T, C = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.heads, self.d)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]          # (B, T, h, d) each
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.d ** 0.5
        scores = scores + (1.0 - mask.float())[:, None, None, :] * -1e9  # additive mask on keys
        weights = self.attn_dropout(scores.softmax(dim=-1))
        ctx = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, C)
        return self.out_dropout(self.out(ctx))
'''


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: ALTERNATIVE}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_scaled_dot_product_attention_is_forbidden(submission):
    cheat = _replace("""        attn = self.attn_dropout(torch.softmax(scores, dim=-1))
        out = (attn @ v).transpose(1, 2).reshape(B, T, C)""", """        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=~padding_keys)
        out = out.transpose(1, 2).reshape(B, T, C)""")
    r = grade(submission({EX: cheat}), "-e", EX, "--public-only")
    assert score_of(r, EX) == 0
    assert all("scaled_dot_product_attention" in c["message"] for c in checks_of(r, EX))


def test_reference_equals_the_solution():
    spec = importlib.util.spec_from_file_location(EX, SOLUTIONS / "ch01" / f"{EX}.py")
    sol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sol)
    sd = R.random_state(R.attention_shapes(12), seed=1)
    m = sol.MultiHeadSelfAttention(12, 3).eval()
    m.load_state_dict(sd)
    x = torch.randn(3, 5, 12, generator=torch.Generator().manual_seed(2))
    mask = torch.tensor([[1] * 5, [1] * 3 + [0] * 2, [1] + [0] * 4])
    with torch.no_grad():
        assert torch.allclose(m(x, mask), R.attention(x, mask, sd, 3), atol=1e-6)
        # -1e9 (the book) and -inf (the solution) give the same weights when a real key exists
        assert torch.equal(R.attention(x, mask, sd, 3), R.attention(x, mask, sd, 3, fill=float("-inf")))


BOOK_LISTING_1_31 = '''import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout=0.1):
        super().__init__()
        assert dim % heads == 0
        self.heads = heads
        self.d = dim // heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, self.d).transpose(1, 2)
        k = k.view(B, T, self.heads, self.d).transpose(1, 2)
        v = v.view(B, T, self.heads, self.d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)
        mask = mask.unsqueeze(1).unsqueeze(2)
        scores = scores.masked_fill(mask == 0, -1e9)
        attn = F.softmax(scores, dim=-1)
        attn = self.attn_dropout(attn)
        out = attn @ v
        out = out.transpose(1, 2).reshape(B, T, C)
        out = self.out(out)
        out = self.out_dropout(out)
        return out
'''


def test_the_books_listing_scores_full_marks(submission):
    """Listing 1.31 as printed (assert, -1e9) is a correct answer."""
    r = grade(submission({EX: BOOK_LISTING_1_31}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]
