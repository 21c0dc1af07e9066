import torch
import torch.nn as nn
import torch.nn.functional as F


def mean_and_variance(x):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return mean, var


def normalize(x, eps=1e-5):
    centred = x - x.mean(dim=-1, keepdim=True)
    return F.rms_norm(centred, (x.shape[-1],), eps=eps)


class LayerNorm(nn.Module):
    def __init__(self, emb_dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(emb_dim))
        self.bias = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        centred = x - x.mean(dim=-1, keepdim=True)
        return F.rms_norm(centred, (x.shape[-1],), self.weight, self.eps) + self.bias
