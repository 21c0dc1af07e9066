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
    # BEGIN SOLUTION check the inner dimensions, then fill each entry with a dot product
    if A.dim() != 2 or B.dim() != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"cannot multiply shapes {tuple(A.shape)} and {tuple(B.shape)}")
    out = torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            out[i, j] = (A[i, :] * B[:, j]).sum()
    return out
    # END SOLUTION
