# Exercise s1_05_embeddings (§1.5): replace each `raise NotImplementedError` with your code.
"""§1.5 Word embeddings: one-hot vectors and the embedding lookup table.

A one-hot vector of a token has vocab_size entries: 1 at the token's id, 0 everywhere else.
Any two different tokens are then orthogonal and equally far apart, so one-hot vectors carry
no meaning. An embedding layer keeps one dense, learned row per token instead. Looking up
row `id` of its weight matrix gives exactly what the one-hot vector times that matrix gives,
without building the vector of zeros.
"""
import torch


def one_hot(token_ids: torch.Tensor, vocab_size: int) -> torch.Tensor:
    """One-hot vectors of integer token ids (§1.5, "limits of simple encodings").

    token_ids: an integer tensor of any shape, e.g. () for one id or (batch, seq_len).
    Returns a float32 tensor of shape (*token_ids.shape, vocab_size): 1.0 at each id, 0.0
    elsewhere. Raises ValueError when an id is negative or not below vocab_size.
    """
    raise NotImplementedError('s1_05_embeddings: check the ids are in range, then compare each id with every index 0 .. vocab_size - 1 (in one_hot)')


def embedding_lookup(token_ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The embedding layer as a lookup table (§1.5, figure 1.27).

    token_ids: an integer tensor of any shape; weight: (vocab_size, d_model), one row per token.
    Returns (*token_ids.shape, d_model): the row of `weight` of each id.
    """
    raise NotImplementedError('s1_05_embeddings: index the rows of the weight matrix with the ids (in embedding_lookup)')


def one_hot_embedding(token_ids: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The same embeddings computed as one-hot vectors times the weight matrix (§1.5).

    token_ids: an integer tensor of any shape; weight: (vocab_size, d_model).
    Returns (*token_ids.shape, d_model), equal to embedding_lookup(token_ids, weight).
    """
    raise NotImplementedError('s1_05_embeddings: build the one-hot vectors for vocab_size = weight.shape[0] and multiply by weight (in one_hot_embedding)')


def cosine_similarity_matrix(vectors: torch.Tensor) -> torch.Tensor:
    """Cosine similarity of every pair of rows (§1.5, one-hot vs dense vectors).

    vectors: (n, d), no zero rows. Returns (n, n) whose entry (a, b) is the cosine of the angle
    between rows a and b: their dot product divided by the product of their lengths.
    """
    raise NotImplementedError('s1_05_embeddings: divide each row by its length, then take all dot products between rows (in cosine_similarity_matrix)')
