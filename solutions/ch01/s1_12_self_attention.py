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
        # BEGIN SOLUTION create W_query, W_key and W_value with torch.randn(d_in, d_out), in that order
        self.W_query = nn.Parameter(torch.randn(d_in, d_out))
        self.W_key = nn.Parameter(torch.randn(d_in, d_out))
        self.W_value = nn.Parameter(torch.randn(d_in, d_out))
        # END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # BEGIN SOLUTION project, score, scale, softmax over the last dim, mix the values
        queries = x @ self.W_query
        keys = x @ self.W_key
        values = x @ self.W_value
        scores = queries @ keys.transpose(-2, -1)
        weights = torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)
        return weights @ values
        # END SOLUTION
