"""§1.23 Multi-head self-attention with a padding mask (listing 1.31).

BERT's attention is bidirectional: every token may look at every other token, before or after
it. The only thing hidden is padding. Listing 1.27's mask is 1 for a real token and 0 for a
[PAD]; here it hides padded *keys*: no token takes anything from a [PAD]. Padded queries still
get an output (it is never used), computed over the real tokens.

One linear layer `qkv` makes queries, keys and values at once (in that order along the last
dimension); each is cut into `heads` slices of d = dim // heads features, as in §1.16.

Shapes (B = batch, T = tokens, C = dim, h = heads, d = C // h):
  x (B, T, C) -> qkv (B, T, 3C) -> q, k, v (B, T, C) each -> (B, h, T, d)
  scores (B, h, T, T); mask (B, T) -> (B, 1, 1, T), broadcast over heads and queries
  out (B, h, T, d) -> (B, T, h, d) -> (B, T, C) -> out projection
"""
import math

import torch
import torch.nn as nn


class MultiHeadSelfAttention(nn.Module):
    """Multi-head self-attention that ignores padding keys (listing 1.31).

    Sub-modules (names are part of the exercise; create them in this order):
      qkv:          nn.Linear(dim, 3 * dim)   queries, keys, values side by side
      out:          nn.Linear(dim, dim)       the output projection
      attn_dropout: nn.Dropout(dropout)       on the attention weights
      out_dropout:  nn.Dropout(dropout)       on the projected output
    Also keep `heads` and `d` (= dim // heads). When heads does not divide dim, raise
    ValueError (the book's `assert dim % heads == 0` stops it too, with an AssertionError).

    forward(x, mask): x (B, T, dim) float; mask (B, T) int64, 1 = real token, 0 = padding.
    Returns (B, T, dim). Head i uses features i*d .. (i+1)*d - 1 of q, k and v. Scores are
    q k^T / sqrt(d); the scores of padding keys become -inf (the book writes -1e9: both give
    weight 0 after the softmax) before the softmax over the keys.
    """

    def __init__(self, dim: int, heads: int, dropout: float = 0.1):
        super().__init__()
        # BEGIN SOLUTION refuse a head count that does not divide dim; keep heads and d; create qkv, out, attn_dropout, out_dropout
        if heads <= 0 or dim % heads != 0:
            raise ValueError(f"dim={dim} is not divisible by heads={heads}")
        self.heads = heads
        self.d = dim // heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)
        # END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # BEGIN SOLUTION project and split into heads; scaled scores; hide padding keys; softmax; dropout; mix values; merge; project; dropout
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, self.d).transpose(1, 2)
        k = k.view(B, T, self.heads, self.d).transpose(1, 2)
        v = v.view(B, T, self.heads, self.d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)
        padding_keys = (mask == 0)[:, None, None, :]
        scores = scores.masked_fill(padding_keys, float("-inf"))
        attn = self.attn_dropout(torch.softmax(scores, dim=-1))
        out = (attn @ v).transpose(1, 2).reshape(B, T, C)
        return self.out_dropout(self.out(out))
        # END SOLUTION
