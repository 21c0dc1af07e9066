import torch
import torch.nn.functional as F


def matmul(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"inner dimensions differ: {tuple(A.shape)} and {tuple(B.shape)}")
    ones = torch.ones(A.shape[0], 1, dtype=A.dtype)
    w = B.t().unsqueeze(-1).to(A.dtype).contiguous()
    return F.bilinear(A, ones, w)
