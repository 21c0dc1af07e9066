from collections import namedtuple
from typing import NamedTuple

import torch

Dims = namedtuple("Dims", "rows inner cols")


class Shapes(NamedTuple):
    rows: int
    inner: int
    cols: int


def _dims(A: torch.Tensor, B: torch.Tensor) -> Shapes:
    n, k = A.shape
    k2, m = B.shape
    if k != k2:
        raise ValueError(f"inner dimensions differ: {tuple(A.shape)} and {tuple(B.shape)}")
    return Shapes(n, k, m)


def matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    d = _dims(A, B)
    out = torch.zeros(d.rows, d.cols, dtype=A.dtype)
    for i in range(d.rows):
        for j in range(d.cols):
            out[i, j] = (A[i, :] * B[:, j]).sum()
    return out
