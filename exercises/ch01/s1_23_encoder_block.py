# Exercise s1_23_encoder_block (§1.23): replace each `raise NotImplementedError` with your code.
"""§1.23 The pre-LN transformer encoder block (listing 1.33).

A block has two sub-layers, attention (tokens exchange information) and the feed-forward
network (each token on its own). Each sub-layer reads a layer-normalised copy of the running
vector x and its result is added back onto x (the shortcut of §1.19):

    x = x + attn(norm1(x), mask)
    x = x + ff(norm2(x))

This is "pre-LN": the norm sits before each sub-layer, inside its branch, and the shortcut
carries x itself, never a normalised x. (The original transformer was "post-LN",
x = norm(x + sublayer(x)); pre-LN trains more stably in deep stacks.)

Given: MultiHeadSelfAttention (listing 1.31) and FeedForward (listing 1.32), imported from
your s1_23_self_attention.py and s1_23_feed_forward.py: finish those two exercises first.
"""
import torch
import torch.nn as nn

from s1_23_feed_forward import FeedForward  # your exercise s1_23_feed_forward (listing 1.32)
from s1_23_self_attention import MultiHeadSelfAttention  # your exercise s1_23_self_attention (listing 1.31)


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
        raise NotImplementedError('s1_23_encoder_block: create attn, ff, norm1 and norm2, in that order (in TransformerBlock.__init__)')

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_23_encoder_block: two pre-LN residual steps: attention, then the feed-forward network (in TransformerBlock.forward)')
