# Exercise s1_11_matmul (§1.11): replace each `raise NotImplementedError` with your code.
"""§1.11 A quick note on matrix multiplication.

Entry (i, j) of A @ B is the dot product of row i of A with column j of B; the inner
dimensions must agree: (n, k) @ (k, m) -> (n, m).
"""
import torch


def matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    """Matrix product of A (n, k) and B (k, m), written with row-times-column dot products.

    Returns an (n, m) tensor with the dtype of A. Raises ValueError naming both shapes when the
    inner dimensions differ. The matmul functions and the @ operator are off limits here.
    """
    raise NotImplementedError('s1_11_matmul: check the inner dimensions, then fill each entry with a dot product (in matmul)')
