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
        ps = [nn.Parameter(torch.randn(d_in, d_out)) for _ in 'qkv']
        self.W_query, self.W_key, self.W_value = ps[0], ps[1], ps[2]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        kk = torch.matmul(x, self.W_key)
        vv = torch.matmul(x, self.W_value)
        qq = torch.matmul(x, self.W_query)
        sc = torch.matmul(qq, torch.transpose(kk, -2, -1)) / math.sqrt(kk.size(-1))
        return torch.matmul(torch.softmax(sc, dim=-1), vv)
