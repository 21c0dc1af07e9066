# Exercise s1_12_context (§1.12): replace each `raise NotImplementedError` with your code.
"""§1.12 From attention weights to context vectors (listing 1.7).

Each context vector is the weighted sum of all value vectors, weighted by one row of the
attention weights: context = weights @ values.
"""
import torch


def context_vectors(attn_weights: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Context vectors, listing 1.7.

    attn_weights: (..., n_q, n_k), or one row (n_k,); values: (..., n_k, d_v).
    Returns (..., n_q, d_v), or (d_v,) for one row.
    """
    raise NotImplementedError('s1_12_context: multiply the weights by the values (in context_vectors)')
