"""§1.23 The encoder's feed-forward network (listing 1.32).

The same two-layer network runs on every token vector on its own: widen dim to hidden features
(1024 for dim 256 in listing 1.36), bend them with the exact GELU of §1.18, apply dropout,
bring them back to dim, apply dropout again. Dropout is active in train() mode only.
"""
import torch
import torch.nn as nn


class FeedForward(nn.Module):
    """Position-wise feed-forward network as one nn.Sequential (listing 1.32).

    Sub-module (the name and the order inside are part of the exercise):
      net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout),
                          nn.Linear(hidden, dim), nn.Dropout(dropout))
    so that the state_dict keys are net.0.weight, net.0.bias, net.3.weight, net.3.bias.

    forward(x): x (..., dim); returns (..., dim), the same shape.
    """

    def __init__(self, dim: int, hidden: int, dropout: float = 0.1):
        super().__init__()
        # BEGIN SOLUTION create net: Linear, GELU, Dropout, Linear, Dropout
        self.net = nn.Sequential(
            nn.Linear(dim, hidden),
            nn.GELU(),
            nn.Dropout(dropout),
            nn.Linear(hidden, dim),
            nn.Dropout(dropout),
        )
        # END SOLUTION

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # BEGIN SOLUTION run net
        return self.net(x)
        # END SOLUTION
