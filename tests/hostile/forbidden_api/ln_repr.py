import torch
import torch.nn as nn


def mean_and_variance(x):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=False)
    return mean, var


def normalize(x, eps=1e-5):
    mean, var = mean_and_variance(x)
    return (x - mean) / (var + eps).sqrt()


class LayerNorm(nn.Module):
    def __init__(self, emb_dim, eps=1e-5):
        super().__init__()
        self.emb_dim = emb_dim
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(emb_dim))
        self.bias = nn.Parameter(torch.zeros(emb_dim))

    def __repr__(self):
        return f"LayerNorm({self.emb_dim}, eps={self.eps})"

    def forward(self, x):
        return self.weight * normalize(x, self.eps) + self.bias
