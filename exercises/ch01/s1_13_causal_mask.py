# Exercise s1_13_causal_mask (§1.13): replace each `raise NotImplementedError` with your code.
"""§1.13 Causal (masked) attention (listings 1.9–1.12).

A language model writes one token at a time, so the context vector of token i may only mix
tokens 0..i. A lower-triangular boolean mask (True = may attend) says which keys each query
sees. Future scores are set to -inf before softmax: exp(-inf) = 0, so they get weight 0 and the
visible weights still sum to 1. Zeroing the future weights after softmax and dividing each row
by its new sum gives the same weights.
"""
import torch


def causal_mask(seq_len: int, dtype: torch.dtype = torch.bool) -> torch.Tensor:
    """Lower-triangular mask of shape (seq_len, seq_len) (listings 1.9 and 1.10).

    Entry (i, j) is "on" (True, or 1 for a numeric dtype) when j <= i: query i may look at key j.
    With dtype=torch.bool this is listing 1.10's mask; with a float dtype it is listing 1.9's
    mask of ones, which zeroes the upper triangle of a matrix when multiplied with it.
    """
    raise NotImplementedError('s1_13_causal_mask: keep the diagonal and everything below it: torch.tril of a matrix of ones (in causal_mask)')


def mask_future(scores: torch.Tensor) -> torch.Tensor:
    """Scores with every future position set to -inf (listing 1.11).

    scores: (..., seq_len, seq_len), queries along dim -2 and keys along dim -1. Entries above
    the diagonal (key j > query i) become float("-inf"); the others are unchanged. Same shape
    and dtype; the input is not modified.
    """
    raise NotImplementedError('s1_13_causal_mask: fill the positions where the causal mask is False with float("-inf") (in mask_future)')


def causal_attention_weights(scaled_scores: torch.Tensor) -> torch.Tensor:
    """Causal attention weights from already scaled scores (listing 1.12).

    scaled_scores: (..., seq_len, seq_len). Mask the future with -inf, then softmax over the
    keys (the last dim). Every row sums to 1 and every entry above the diagonal is exactly 0.
    """
    raise NotImplementedError('s1_13_causal_mask: mask_future, then softmax over dim=-1 (in causal_attention_weights)')


def renormalize_masked(weights: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Zero the masked weights, then divide each row by its new sum (§1.13, steps 2 and 3).

    weights: (..., n_q, n_k), e.g. softmax weights; mask: boolean, broadcastable to weights,
    True = keep. Each row of the result sums to 1 over the kept positions. Applied to
    softmax(scaled_scores) with the causal mask, this equals causal_attention_weights.
    """
    raise NotImplementedError('s1_13_causal_mask: multiply by the mask, then divide by the row sums (keepdim=True) (in renormalize_masked)')


def causal_attention(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """Causal context vectors: softmax(mask_future(Q K^T / sqrt(d_k))) V (§1.13).

    queries, keys: (..., seq_len, d_k); values: (..., seq_len, d_v). Returns
    (..., seq_len, d_v). Row i depends only on the tokens 0..i.
    """
    raise NotImplementedError('s1_13_causal_mask: scale the scores by sqrt(d_k), take the causal weights, mix the values (in causal_attention)')
