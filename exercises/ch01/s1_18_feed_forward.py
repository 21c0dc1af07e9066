# Exercise s1_18_feed_forward (§1.18): replace each `raise NotImplementedError` with your code.
"""§1.18 The position-wise feed-forward network and GELU.

The same small network runs on every token vector on its own: a linear layer widens 768
features to 4 * 768 = 3072, GELU bends them, a second linear layer brings them back to 768.
GELU(x) = x * Phi(x), with Phi the standard normal CDF: like ReLU far from 0, but smooth at 0
and slightly negative for small negative inputs (its minimum is about -0.17 near x = -0.75).
"""
import math

import torch
import torch.nn as nn


def gelu(x: torch.Tensor) -> torch.Tensor:
    """Exact GELU, x * Phi(x) with Phi(x) = (1 + erf(x / sqrt(2))) / 2. Same shape and dtype as x."""
    raise NotImplementedError('s1_18_feed_forward: x times the normal CDF, written with torch.erf (in gelu)')


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    """The tanh approximation of GELU (as in GPT-2). Same shape and dtype as x.

    0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3))).
    """
    raise NotImplementedError('s1_18_feed_forward: the tanh formula (in gelu_tanh)')


class FeedForward(nn.Module):
    """Position-wise feed-forward network: Linear -> GELU (exact) -> Linear (§1.18, figure 1.121).

    Parameters (names are part of the exercise; create them in this order):
      fc1: nn.Linear(emb_dim, hidden_dim)   (the expansion, 768 -> 3072 in the book)
      fc2: nn.Linear(hidden_dim, emb_dim)   (the contraction, 3072 -> 768)
    hidden_dim defaults to 4 * emb_dim.
    forward(x): x is (..., emb_dim); returns (..., emb_dim), the same shape as x.
    """

    def __init__(self, emb_dim: int = 768, hidden_dim: int | None = None):
        super().__init__()
        raise NotImplementedError('s1_18_feed_forward: default hidden_dim to 4 * emb_dim, create fc1 and fc2 (in FeedForward.__init__)')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_18_feed_forward: expand, apply your gelu, contract (in FeedForward.forward)')
