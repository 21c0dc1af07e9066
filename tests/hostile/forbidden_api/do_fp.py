"""Dropout, written with ordinary idioms."""
from __future__ import annotations

import numbers
from typing import Final

import torch
import torch.nn as nn
import torch.nn.functional as F

_EPS: Final = 0.0


def _check_p(p: float) -> None:
    if not isinstance(p, numbers.Real) or not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def dropout_with_mask(x: torch.Tensor, keep: torch.Tensor, p: float) -> torch.Tensor:
    scale = 1.0 / (1.0 - p)
    return torch.where(keep, x * scale, torch.zeros_like(x))


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True) -> torch.Tensor:
    _check_p(p)
    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    keep = torch.rand_like(x, dtype=torch.float32) >= p
    return dropout_with_mask(x, keep, p)


class Dropout(nn.Module):
    __constants__ = ["p"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        _check_p(p)
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return dropout(x, self.p, self.training)
