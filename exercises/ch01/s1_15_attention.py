# Exercise s1_15_attention (§1.15): replace each `raise NotImplementedError` with your code.
"""§1.15 Self-attention in one function (summary of §1.10–1.14, figure 1.102).

The whole pipeline: scores = Q K^T, scaled by 1 / sqrt(d_k); an optional mask (causal, padding)
sets forbidden scores to -inf; softmax over the keys; optional dropout on the weights; the
weights mix the values. The result equals torch.nn.functional.scaled_dot_product_attention on
the same inputs, which this exercise asks you to write yourself.
"""
import torch


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              padding_mask: torch.Tensor | None = None, dropout_p: float = 0.0,
              training: bool = False) -> torch.Tensor:
    """Scaled dot-product attention with optional causal mask, padding mask and dropout.

    Shapes: q (..., n_q, d_k), k (..., n_k, d_k), v (..., n_k, d_v); any leading dims (batch,
    heads) broadcast as in matmul. Returns (..., n_q, d_v).

    causal: query i may attend only to keys 0..i (a lower-triangular mask of shape (n_q, n_k)).
    padding_mask: boolean, True = keep (a real token), False = padding that no query may
    attend to. Shape (batch, n_k) for a batched q of shape (batch, n_q, d_k) or
    (batch, heads, n_q, d_k), or (n_k,) for an unbatched q. It is combined with the causal mask
    by logical and. A query whose keys are all masked gets all-zero weights (output 0), as
    scaled_dot_product_attention does, never NaN.
    dropout_p, training: when training is True and dropout_p > 0, the weights go through
    inverted dropout (drop with probability dropout_p, scale the survivors by
    1 / (1 - dropout_p)) before they mix the values; otherwise dropout_p is ignored.
    """
    raise NotImplementedError('s1_15_attention: scale, mask with -inf, softmax, zero rows with no visible key, dropout, mix the values (in attention)')
