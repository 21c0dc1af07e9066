import torch
import torch.nn.functional as F


def matmul(A, B):
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"inner dimensions differ: {tuple(A.shape)} and {tuple(B.shape)}")
    n, k = A.shape
    idx = torch.arange(k).repeat(n)
    offsets = torch.arange(0, n * k, k)
    return F.embedding_bag(idx, B.to(A.dtype), offsets, mode="sum", per_sample_weights=A.reshape(-1))
