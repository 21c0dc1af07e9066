# Exercise s1_12_self_attention (§1.12): replace each `raise NotImplementedError` with your code.
"""§1.12 Self-attention as a PyTorch module (listing 1.8).

The module owns the three projection matrices and runs the whole pipeline: project to
queries, keys and values; scores = Q K^T; weights = softmax(scores / sqrt(d_k)); context =
weights V.
"""
import math

import torch
import torch.nn as nn


class SelfAttention(nn.Module):
    """Scaled dot-product self-attention, listing 1.8.

    Parameters (names and shapes are part of the exercise):
      W_query, W_key, W_value: nn.Parameter of shape (d_in, d_out), initialised with
      torch.randn in that order.
    forward(x): x is (seq_len, d_in) or (batch, seq_len, d_in); returns (..., seq_len, d_out).
    """

    def __init__(self, d_in: int, d_out: int):
        super().__init__()
        weights = []
        for tag in ('query', 'key', 'value'):
            weights.append(nn.Parameter(torch.randn(d_in, d_out)))
        self.W_query = weights[0]
        self.W_key = weights[1]
        self.W_value = weights[2]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q_mat = torch.matmul(x, self.W_query)
        k_mat = torch.matmul(x, self.W_key)
        v_mat = torch.matmul(x, self.W_value)
        raw = torch.matmul(q_mat, torch.transpose(k_mat, -2, -1))
        depth = k_mat.size(-1)
        scaled = raw / math.sqrt(depth)
        attn = torch.softmax(scaled, dim=-1)
        mixed = torch.matmul(attn, v_mat)
        return mixed
