# Exercise s1_11_attention_scores (§1.11): replace each `raise NotImplementedError` with your code.
"""§1.11 Attention scores (listing 1.5).

The score of query i against key j is their dot product. For all pairs at once:
scores = queries @ keys transposed, shape (seq_len, seq_len).
"""
import torch


def attention_scores(queries: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """Raw (unscaled) attention scores, listing 1.5.

    queries: (..., n_q, d) or a single query (d,); keys: (..., n_k, d).
    Returns (..., n_q, n_k), or (n_k,) for a single query: entry [i, j] = queries[i] · keys[j].
    Transpose only the last two dimensions of keys so that batches work too.
    """
    raise NotImplementedError('s1_11_attention_scores: multiply the queries by the keys with their last two dimensions swapped (in attention_scores)')
