# Exercise s1_09_input_embeddings (§1.9): replace each `raise NotImplementedError` with your code.
"""§1.9 The input embedding matrix (listing 1.1).

Every token of a sentence becomes one row: its word embedding plus the embedding of its
position. Stacking the rows gives the input embedding matrix, shape (seq_len, d_model);
for "The next day is bright" with 8-dimensional embeddings that is (5, 8).
"""
import torch

# Listing 1.1: one 8-dimensional vector per word of "The next day is bright".
WORDS = ["The", "next", "day", "is", "bright"]
BOOK_VECTORS = [
    [0.32, 0.21, 0.43, 0.21, 0.86, 0.67, 0.98, 0.23],  # The
    [0.43, 0.56, 0.43, 0.56, 0.69, 0.21, 0.56, 0.21],  # next
    [0.56, 0.21, 0.43, 0.21, 0.54, 0.12, 0.89, 0.98],  # day
    [0.87, 0.34, 0.18, 0.32, 0.75, 0.12, 0.54, 0.92],  # is
    [0.76, 0.21, 0.85, 0.34, 0.98, 0.23, 0.68, 0.34],  # bright
]


def input_embedding_matrix(word_vectors, position_vectors=None) -> torch.Tensor:
    """Stack per-word vectors into the input embedding matrix (§1.9, listing 1.1).

    word_vectors: a list of seq_len lists (or a tensor) of d_model numbers.
    position_vectors: optional, same shape; added element-wise to the word vectors.
    Returns a float32 tensor of shape (seq_len, d_model).
    """
    raise NotImplementedError('s1_09_input_embeddings: turn the rows into a float32 tensor and add the positions if given (in input_embedding_matrix)')


def embed_tokens(token_ids: torch.Tensor, token_table: torch.Tensor, position_table: torch.Tensor) -> torch.Tensor:
    """Input embeddings of token ids: token embedding + position embedding (§1.9, figure 1.43).

    token_ids: (seq_len,) or (batch, seq_len) integer tensor.
    token_table: (vocab_size, d_model); position_table: (max_len, d_model), max_len >= seq_len.
    Returns (seq_len, d_model) or (batch, seq_len, d_model): row t is
    token_table[token_ids[t]] + position_table[t].
    """
    raise NotImplementedError("s1_09_input_embeddings: look up each id's row, then add the row of its position (in embed_tokens)")
