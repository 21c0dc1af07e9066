# Exercise s1_17_layer_norm (§1.17): replace each `raise NotImplementedError` with your code.
"""§1.17 Layer normalisation.

Each vector (the last dimension: the features of one token of one example) is centred on its
own mean and divided by its own standard deviation, so that it has mean 0 and variance 1. The
variance is the biased one (divide by the number of features, not by that number minus one),
and a small eps is added under the square root so that a constant vector does not divide by
zero. A learned scale (gamma) and shift (beta) per feature follow: y = gamma * x_hat + beta.
"""
import torch
import torch.nn as nn


def mean_and_variance(x: torch.Tensor):
    """Mean and biased variance of each vector along the last dimension (§1.17, six-value example).

    x: (..., d). Returns (mean, var), each of shape (..., 1) so that they broadcast against x.
    var = mean((x - mean) ** 2): divide by d, not d - 1.
    """
    raise NotImplementedError('s1_17_layer_norm: mean over the last dim (keepdim), then the mean of the squared deviations (in mean_and_variance)')


def normalize(x: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    """(x - mean) / sqrt(var + eps) along the last dimension, without scale and shift. Same shape as x."""
    raise NotImplementedError('s1_17_layer_norm: centre, then divide by the square root of (biased variance + eps) (in normalize)')


class LayerNorm(nn.Module):
    """Layer normalisation over the last dimension, with a learned scale and shift (§1.17).

    Parameters (names are part of the exercise, the same as torch's own layer norm, so that
    state dicts are interchangeable):
      weight: nn.Parameter of shape (emb_dim,), initialised to ones   (the scale, gamma)
      bias:   nn.Parameter of shape (emb_dim,), initialised to zeros  (the shift, beta)
    forward(x): x is (..., emb_dim); returns weight * normalize(x, eps) + bias, same shape.
    """

    def __init__(self, emb_dim: int, eps: float = 1e-5):
        super().__init__()
        raise NotImplementedError('s1_17_layer_norm: store eps, create weight (ones) and bias (zeros) (in LayerNorm.__init__)')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_17_layer_norm: normalise, then scale and shift (in LayerNorm.forward)')
