"""Softmax, written with a few ordinary idioms."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache, partial, reduce
from typing import Optional, Union, TYPE_CHECKING, Callable

import torch
from torch import Tensor

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["simple_normalize", "softmax"]


@dataclass(frozen=True)
class _Config:
    keepdim: bool = True
    tags: list = field(default_factory=list)


_CFG = _Config()


def _reduce_sum(t: Tensor, dim: int) -> Tensor:
    return t.sum(dim=dim, keepdim=_CFG.keepdim)


def simple_normalize(x: Tensor, dim: int = -1) -> Tensor:
    total = _reduce_sum(x, dim)
    return x / total


def softmax(x: Tensor, dim: int = -1, *, out_dtype: Optional[torch.dtype] = None) -> Tensor:
    assert isinstance(x, torch.Tensor), f"expected a tensor, got {type(x).__name__}"
    if (m := x.amax(dim=dim, keepdim=True)).numel() == 0:
        return x.clone()
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    exps = [torch.exp(x - m)]
    e = exps[0]
    s = reduce(lambda a, b: a + b, [e.sum(dim=dim, keepdim=True)])
    result = e / s
    match out_dtype:
        case None:
            return result
        case _:
            return result.to(out_dtype)
