"""Honest attention; the products are written as broadcast-and-sum (no @), as in the matmul-by-hand section."""
import math
import torch


def _scores(q, k):
    # (..., n_q, 1, d) * (..., 1, n_k, d) -> sum over d
    return (q.unsqueeze(-2) * k.unsqueeze(-3)).sum(-1)


def _mix(w, v):
    # (..., n_q, n_k, 1) * (..., 1, n_k, d_v) -> sum over keys
    return (w.unsqueeze(-1) * v.unsqueeze(-3)).sum(-2)


def attention(q, k, v, causal=False, padding_mask=None, dropout_p=0.0, training=False):
    d_k = q.shape[-1]
    scores = _scores(q, k) / math.sqrt(d_k)
    n_q, n_k = scores.shape[-2], scores.shape[-1]
    keep = torch.ones(n_q, n_k, dtype=torch.bool)
    if causal:
        keep = torch.tril(keep)
    if padding_mask is not None:
        pm = padding_mask.bool()
        if q.dim() >= 3 and pm.dim() == 2:
            pm = pm.reshape(pm.shape[0], *([1] * (scores.dim() - 2)), n_k)
        keep = keep & pm
    scores = scores.masked_fill(~keep, float("-inf"))
    m = scores.amax(dim=-1, keepdim=True)
    m = torch.where(torch.isfinite(m), m, torch.zeros_like(m))
    e = torch.exp(scores - m)
    s = e.sum(dim=-1, keepdim=True)
    w = torch.where(s > 0, e / torch.where(s > 0, s, torch.ones_like(s)), torch.zeros_like(e))
    if training and dropout_p > 0:
        drop_keep = torch.rand(w.shape) >= dropout_p
        w = torch.where(drop_keep, w / (1 - dropout_p), torch.zeros_like(w))
    return _mix(w, v)
