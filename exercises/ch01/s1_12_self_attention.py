# Exercise s1_12_self_attention (§1.12): replace each `raise NotImplementedError` with your code.
"""§1.12 Self-attention as a PyTorch module (listing 1.8).

The module owns the three projection matrices and runs the whole pipeline: project to
queries, keys and values; scores = Q K^T; weights = softmax(scores / sqrt(d_k)); context =
weights V.
"""
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
        raise NotImplementedError('s1_12_self_attention: create W_query, W_key and W_value with torch.randn(d_in, d_out), in that order (in SelfAttention.__init__)')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_12_self_attention: project, score, scale, softmax over the last dim, mix the values (in SelfAttention.forward)')
