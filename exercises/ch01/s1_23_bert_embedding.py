# Exercise s1_23_bert_embedding (§1.23): replace each `raise NotImplementedError` with your code.
"""§1.23 The BERT embedding layer (listing 1.30).

A token id becomes a vector in three parts that are added: a learned vector for the token
itself, a learned vector for its position 0, 1, ..., T-1 (BERT learns its position table instead
of using sines and cosines), and a learned segment vector (sentence A or B; an IMDb review is a
single sentence, so every token is in segment 0). The sum is layer-normalised, then dropout.

The ids come from listing 1.25: GPT-2's 50,257 tokens, then [PAD] = 50257, [CLS] = 50258 and
[SEP] = 50259, 50,260 ids in all; listing 1.26 pads every review to MAX_LEN = 256 tokens.
"""
import torch
import torch.nn as nn

PAD_ID = 50257
CLS_ID = 50258
SEP_ID = 50259
VOCAB_SIZE = 50260
MAX_LEN = 256


class BERTEmbedding(nn.Module):
    """Token + position + segment embeddings, then LayerNorm and dropout (listing 1.30).

    Sub-modules (names are part of the exercise; create them in this order):
      token:    nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
      position: nn.Embedding(max_len, embed_dim)   one learned row per position
      segment:  nn.Embedding(2, embed_dim)         segments A (0) and B (1)
      norm:     nn.LayerNorm(embed_dim)
      dropout:  nn.Dropout(dropout)
    The [PAD] row of the token table is PAD_ID, the module's constant, as in the book.

    forward(x): x is (B, T) int64 token ids. Returns (B, T, embed_dim):
      dropout(norm(token(x) + position(0..T-1) + segment(0))).
    Raise ValueError when T > max_len: the position table has no row for such a position.
    """

    def __init__(self, vocab_size: int, embed_dim: int, max_len: int, dropout: float = 0.1):
        super().__init__()
        raise NotImplementedError('s1_23_bert_embedding: create `token`, `position`, `segment`, `norm` and `dropout`, in that order (in BERTEmbedding.__init__)')

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_23_bert_embedding: refuse T > max_len; add the three embeddings (positions 0..T-1, segment 0), normalise, dropout (in BERTEmbedding.forward)')
