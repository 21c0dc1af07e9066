import torch
import torch.nn.functional as F


def simple_normalize(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    return x / x.sum(dim=dim, keepdim=True)


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    xt = x.movedim(dim, -1)
    shape = xt.shape
    n = shape[-1]
    rows = xt.reshape(-1, 1, n, 1).to(torch.float64)
    b = rows.shape[0]
    e = 8
    q = torch.zeros(b, 1, 1, e, dtype=torch.float64)
    q[..., 0] = 1.0
    k = torch.zeros(b, 1, n, e, dtype=torch.float64)
    k[..., 0:1] = rows
    v = torch.zeros(b, 1, n, max(n, e), dtype=torch.float64)
    v[..., :n] = torch.eye(n, dtype=torch.float64)
    out = F.scaled_dot_product_attention(q, k, v, scale=1.0)[..., :n]
    return out.reshape(shape).to(x.dtype).movedim(-1, dim)
