# Exercise s1_12_scaled_attention (§1.12): replace each `raise NotImplementedError` with your code.
"""§1.12 Why scale attention scores (listing 1.6).

A dot product of d_k terms has a variance that grows with d_k; dividing the scores by
sqrt(d_k) keeps softmax out of saturation. weights = softmax(scores / sqrt(d_k)) per row.
"""
import torch


def scale_scores(scores: torch.Tensor, d_k: int) -> torch.Tensor:
    """Scores divided by the square root of the key dimension d_k. Same shape as scores."""
    raise NotImplementedError('s1_12_scaled_attention: divide by d_k ** 0.5 (in scale_scores)')


def attention_weights(scores: torch.Tensor, d_k: int) -> torch.Tensor:
    """Scaled attention weights, listing 1.6: softmax of the scaled scores over the last dim.

    scores: (..., n_q, n_k) or one row (n_k,). Returns the same shape; each row sums to 1.
    """
    raise NotImplementedError('s1_12_scaled_attention: scale the scores, then softmax over the key dimension (the last one) (in attention_weights)')
