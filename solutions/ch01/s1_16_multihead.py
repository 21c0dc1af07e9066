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
    # BEGIN SOLUTION check divisibility, then integer-divide
    if num_heads <= 0 or d_out % num_heads != 0:
        raise ValueError(f"d_out={d_out} is not divisible by num_heads={num_heads}")
    return d_out // num_heads
    # END SOLUTION


def view_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Cut the last dimension into heads (listing 1.16). (b, n, d_out) -> (b, n, num_heads, head_dim).

    No value changes: feature j of head i is feature i * head_dim + j of the input.
    """
    # BEGIN SOLUTION view the last dimension as (num_heads, head_dim)
    b, n, d_out = x.shape
    return x.view(b, n, num_heads, d_out // num_heads)
    # END SOLUTION


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Split into heads and group by head (listings 1.16–1.17). (b, n, d_out) -> (b, num_heads, n, head_dim).

    out[:, i] holds the n token vectors of head i.
    """
    # BEGIN SOLUTION view as heads, then swap the token and head dimensions
    return view_heads(x, num_heads).transpose(1, 2)
    # END SOLUTION


def head_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False):
    """Scaled dot-product attention in every head at once (listing 1.18).

    q, k, v: (b, num_heads, n, head_dim). Scores q k^T are scaled by sqrt(head_dim) (the width
    of one head, not d_out) and softmax-normalised over the keys. With causal=True, token i may
    only attend to tokens 0..i (scores above the diagonal become -inf before the softmax).
    Returns (weights, context): (b, num_heads, n, n) and (b, num_heads, n, head_dim).
    """
    # BEGIN SOLUTION scores, optional causal mask, softmax(scores / sqrt(head_dim)), weights @ v
    scores = q @ k.transpose(-2, -1)
    if causal:
        n = scores.shape[-1]
        future = torch.triu(torch.ones(n, n, dtype=torch.bool, device=scores.device), diagonal=1)
        scores = scores.masked_fill(future, float("-inf"))
    weights = torch.softmax(scores / math.sqrt(q.shape[-1]), dim=-1)
    return weights, weights @ v
    # END SOLUTION


def merge_heads(context: torch.Tensor) -> torch.Tensor:
    """Undo split_heads (listing 1.19). (b, num_heads, n, head_dim) -> (b, n, num_heads * head_dim).

    Row t of the result is head 0's vector for token t, then head 1's, and so on.
    """
    # BEGIN SOLUTION move tokens back in front of heads, then flatten the last two dimensions
    b, h, n, d = context.shape
    return context.transpose(1, 2).contiguous().view(b, n, h * d)
    # END SOLUTION


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
        # BEGIN SOLUTION store the sizes, create W_query, W_key, W_value and out_proj
        self.num_heads = num_heads
        self.head_dim = head_dim(d_out, num_heads)
        self.causal = causal
        self.W_query = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_key = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.W_value = nn.Linear(d_in, d_out, bias=qkv_bias)
        self.out_proj = nn.Linear(d_out, d_out)
        # END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # BEGIN SOLUTION project, split, attend per head, merge, project out
        q = split_heads(self.W_query(x), self.num_heads)
        k = split_heads(self.W_key(x), self.num_heads)
        v = split_heads(self.W_value(x), self.num_heads)
        _, context = head_attention(q, k, v, causal=self.causal)
        return self.out_proj(merge_heads(context))
        # END SOLUTION
