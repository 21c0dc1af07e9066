"""§1.23 The pre-LN transformer encoder block (listing 1.33).

A block has two sub-layers, attention (tokens exchange information) and the feed-forward
network (each token on its own). Each sub-layer reads a layer-normalised copy of the running
vector x and its result is added back onto x (the shortcut of §1.19):

    x = x + attn(norm1(x), mask)
    x = x + ff(norm2(x))

This is "pre-LN": the norm sits before each sub-layer, inside its branch, and the shortcut
carries x itself, never a normalised x. (The original transformer was "post-LN",
x = norm(x + sublayer(x)); pre-LN trains more stably in deep stacks.)

Given: MultiHeadSelfAttention (listing 1.31) and FeedForward (listing 1.32), as in the
previous exercises.
"""
import math

import torch
import torch.nn as nn


# ------------------------------------------------------------------ given (listings 1.31-1.32): not part of the exercise
class MultiHeadSelfAttention(nn.Module):
    """Listing 1.31: multi-head self-attention; padding keys (mask == 0) get no weight.

    x (B, T, dim), mask (B, T) int64 with 1 = real token, 0 = padding -> (B, T, dim).
    """

    def __init__(self, dim: int, heads: int, dropout: float = 0.1):
        super().__init__()
        if heads <= 0 or dim % heads != 0:
            raise ValueError(f"dim={dim} is not divisible by heads={heads}")
        self.heads = heads
        self.d = dim // heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, self.d).transpose(1, 2)
        k = k.view(B, T, self.heads, self.d).transpose(1, 2)
        v = v.view(B, T, self.heads, self.d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)
        scores = scores.masked_fill((mask == 0)[:, None, None, :], float("-inf"))
        attn = self.attn_dropout(torch.softmax(scores, dim=-1))
        out = (attn @ v).transpose(1, 2).reshape(B, T, C)
        return self.out_dropout(self.out(out))


class FeedForward(nn.Module):
    """Listing 1.32: Linear(dim, hidden), GELU, Dropout, Linear(hidden, dim), Dropout. (..., dim) -> (..., dim)."""

    def __init__(self, dim: int, hidden: int, dropout: float = 0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, dim), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


# ------------------------------------------------------------------ the exercise
class TransformerBlock(nn.Module):
    """Pre-LN encoder block (listing 1.33).

    Sub-modules (names are part of the exercise; create them in this order):
      attn:  MultiHeadSelfAttention(dim, heads, dropout)
      ff:    FeedForward(dim, ff_dim, dropout)
      norm1: nn.LayerNorm(dim)   before attention
      norm2: nn.LayerNorm(dim)   before the feed-forward network

    forward(x, mask): x (B, T, dim), mask (B, T) int64 (1 = real token, 0 = padding).
    Returns (B, T, dim): x + attn(norm1(x), mask), then that plus ff(norm2(that)).
    """

    def __init__(self, dim: int, heads: int, ff_dim: int, dropout: float = 0.1):
        super().__init__()
        # BEGIN SOLUTION create attn, ff, norm1 and norm2, in that order
        self.attn = MultiHeadSelfAttention(dim, heads, dropout)
        self.ff = FeedForward(dim, ff_dim, dropout)
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)
        # END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # BEGIN SOLUTION two pre-LN residual steps: attention, then the feed-forward network
        x = x + self.attn(self.norm1(x), mask)
        x = x + self.ff(self.norm2(x))
        return x
        # END SOLUTION
