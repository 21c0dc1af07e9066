# Exercise s1_11_softmax (§1.11): replace each `raise NotImplementedError` with your code.
"""§1.11 Simple normalisation and softmax.

Both turn a row of scores into weights that sum to 1. Simple normalisation divides by the
sum (and breaks on negative scores); softmax divides exp(x) by the sum of exp(x), which is
always positive. Subtracting the row maximum first gives the same result without overflow.
"""
import torch


def simple_normalize(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """x divided by its sum along `dim` (§1.11, "simple normalisation"). Same shape as x."""
    totals = torch.sum(x, dim=dim, keepdim=True)
    normalized = torch.div(x, totals)
    return normalized


def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:
    """Numerically stable softmax along `dim` (§1.11). Same shape and dtype as x.

    exp(x - max) / sum(exp(x - max)): the same values as the textbook formula, but large
    inputs such as [1000, 1001] give no overflow, and -inf entries get weight 0.
    """
    top = torch.max(x, dim=dim, keepdim=True).values
    centred = torch.sub(x, top)
    raised = torch.exp(centred)
    partition = torch.sum(raised, dim=dim, keepdim=True)
    probs = torch.div(raised, partition)
    return probs
