# Exercise s1_16_multihead (§1.16): replace each `raise NotImplementedError` with your code.
"""§1.16 Multi-head attention (listings 1.14–1.19).

One big projection of width d_out is cut into num_heads slices of head_dim = d_out // num_heads
features. Each slice is an independent attention head: it scores every pair of tokens with its
own queries and keys and mixes its own values. The heads' context vectors are then laid side by
side again (d_out features per token) and mixed by a final linear layer, out_proj.

Shapes (b = batch, n = tokens, h = heads, d = head_dim):
  (b, n, h*d) --view--> (b, n, h, d) --transpose(1, 2)--> (b, h, n, d)      split
  (b, h, n, d) --transpose(1, 2)--> (b, n, h, d) --reshape--> (b, n, h*d)  merge
"""
import math

import torch
import torch.nn as nn


def head_dim(d_out: int, num_heads: int) -> int:
    """Features per head, d_out // num_heads (listing 1.15: 6 // 2 = 3).

    Raise ValueError when d_out is not a multiple of num_heads: the heads must split the
    projection exactly, with no feature left over.
    """
    raise NotImplementedError('s1_16_multihead: check divisibility, then integer-divide (in head_dim)')


def view_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Cut the last dimension into heads (listing 1.16). (b, n, d_out) -> (b, n, num_heads, head_dim).

    No value changes: feature j of head i is feature i * head_dim + j of the input.
    """
    raise NotImplementedError('s1_16_multihead: view the last dimension as (num_heads, head_dim) (in view_heads)')


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Split into heads and group by head (listings 1.16–1.17). (b, n, d_out) -> (b, num_heads, n, head_dim).

    out[:, i] holds the n token vectors of head i.
    """
    raise NotImplementedError('s1_16_multihead: view as heads, then swap the token and head dimensions (in split_heads)')


def head_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False):
    """Scaled dot-product attention in every head at once (listing 1.18).

    q, k, v: (b, num_heads, n, head_dim). Scores q k^T are scaled by sqrt(head_dim) (the width
    of one head, not d_out) and softmax-normalised over the keys. With causal=True, token i may
    only attend to tokens 0..i (scores above the diagonal become -inf before the softmax).
    Returns (weights, context): (b, num_heads, n, n) and (b, num_heads, n, head_dim).
    """
    raise NotImplementedError('s1_16_multihead: scores, optional causal mask, softmax(scores / sqrt(head_dim)), weights @ v (in head_attention)')


def merge_heads(context: torch.Tensor) -> torch.Tensor:
    """Undo split_heads (listing 1.19). (b, num_heads, n, head_dim) -> (b, n, num_heads * head_dim).

    Row t of the result is head 0's vector for token t, then head 1's, and so on.
    """
    raise NotImplementedError('s1_16_multihead: move tokens back in front of heads, then flatten the last two dimensions (in merge_heads)')


class MultiHeadAttention(nn.Module):
    """Batched multi-head self-attention with an output projection (§1.16).

    Parameters (names are part of the exercise; create them in this order):
      W_query, W_key, W_value: nn.Linear(d_in, d_out, bias=qkv_bias)
      out_proj: nn.Linear(d_out, d_out)   (with bias)
    num_heads must divide d_out (raise ValueError otherwise). causal=True masks future tokens.
    forward(x): x is (b, n, d_in); returns (b, n, d_out): the merged heads' context passed
    through out_proj.
    """

    def __init__(self, d_in: int, d_out: int, num_heads: int, qkv_bias: bool = False, causal: bool = False):
        super().__init__()
        raise NotImplementedError('s1_16_multihead: store the sizes, create W_query, W_key, W_value and out_proj (in MultiHeadAttention.__init__)')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_16_multihead: project, split, attend per head, merge, project out (in MultiHeadAttention.forward)')
