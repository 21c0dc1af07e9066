# Exercise s1_14_dropout (§1.14): replace each `raise NotImplementedError` with your code.
"""§1.14 Dropout on causal attention weights (listing 1.13).

During training, dropout zeroes each attention weight with probability p and multiplies the
survivors by 1 / (1 - p) ("inverted" dropout), so every weight keeps its expected value and
nothing has to change at inference. In evaluation mode it does nothing. Weights that the
causal mask already set to 0 stay 0.
"""
import torch
import torch.nn as nn


def dropout_with_mask(x: torch.Tensor, keep: torch.Tensor, p: float) -> torch.Tensor:
    """Apply a given keep-mask with inverted-dropout scaling (§1.14, the scaling example).

    x: any shape; keep: boolean of the same shape, True = the element survives; p: the drop
    probability, 0 <= p < 1. Dropped elements become 0, kept ones are divided by (1 - p).
    """
    raise NotImplementedError('s1_14_dropout: zero the dropped elements and divide the kept ones by (1 - p) (in dropout_with_mask)')


def dropout(x: torch.Tensor, p: float = 0.5, training: bool = True) -> torch.Tensor:
    """Inverted dropout written by hand (listing 1.13). Same shape and dtype as x.

    In training, every element is kept independently with probability 1 - p (draw the mask
    from torch's global generator, e.g. torch.rand, so that torch.manual_seed makes it
    repeatable) and kept elements are scaled by 1 / (1 - p). With training=False or p = 0 the
    input is returned unchanged; with p = 1 the result is all zeros.
    """
    raise NotImplementedError('s1_14_dropout: keep each element with probability 1 - p (dropout_with_mask); handle training=False, p 0 and 1 (in dropout)')


class Dropout(nn.Module):
    """A module wrapping `dropout`, a stand-in for torch.nn.Dropout (listing 1.13).

    Dropout(p=0.5) stores p; forward(x) drops in training mode (self.training, the default)
    and is the identity after .eval().
    """

    def __init__(self, p: float = 0.5):
        super().__init__()
        raise NotImplementedError('s1_14_dropout: store p (in Dropout.__init__)')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_14_dropout: call dropout with self.p and self.training (in Dropout.forward)')
