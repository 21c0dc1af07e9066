import math
from typing import Tuple

import torch
import torch.nn as nn
from torch import Tensor
from torch.nn import Parameter, init


def mean_and_variance(x: Tensor) -> Tuple[Tensor, Tensor]:
    var, mean = torch.var_mean(x, dim=-1, unbiased=False, keepdim=True)
    return mean, var


def _normalize(x: Tensor, eps: float) -> Tensor:
    mean, var = mean_and_variance(x)
    return (x - mean) * torch.rsqrt(var + eps)


def normalize(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    return _normalize(x, eps)


class LayerNorm(nn.Module):
    __constants__ = ["eps"]

    def __init__(self, emb_dim: int, eps: float = 1e-5):
        super(LayerNorm, self).__init__()
        self.eps = eps
        self._dim = emb_dim
        self.weight = Parameter(torch.empty(emb_dim))
        self.register_parameter("bias", Parameter(torch.empty(emb_dim)))
        self.register_buffer("_eps_t", torch.tensor(eps), persistent=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.ones_(self.weight)
        with torch.no_grad():
            self.bias.zero_()

    @property
    def normalized_shape(self):
        return (self._dim,)

    def extra_repr(self) -> str:
        return f"{self._dim}, eps={self.eps}"

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.weight * normalize(x, self.eps) + self.bias
