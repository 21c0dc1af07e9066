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
        for name in ['W_query', 'W_key', 'W_value']:
            setattr(self, name, nn.Parameter(torch.randn(d_in, d_out)))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        q, k, v = (torch.einsum('...si,io->...so', x, w) for w in (self.W_query, self.W_key, self.W_value))
        a = torch.einsum('...qo,...ko->...qk', q, k) * k.shape[-1] ** -0.5
        return torch.einsum('...qk,...ko->...qo', a.softmax(-1), v)
