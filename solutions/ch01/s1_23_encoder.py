"""§1.23 The BERT encoder stack (listing 1.34).

The encoder turns token ids into one contextual vector per token: the embedding layer
(listing 1.30) makes the first vectors, then `layers` identical pre-LN blocks (listing 1.33)
refine them one after the other, each block reading the previous block's output. Every block
gets the same padding mask. The book's stack has no final LayerNorm after the last block.

Given: BERTEmbedding (listing 1.30) and TransformerBlock (listing 1.33), imported from your
s1_23_bert_embedding.py and s1_23_encoder_block.py (which imports your attention and
feed-forward network in turn): finish those exercises first.
"""
import torch
import torch.nn as nn

from s1_23_bert_embedding import BERTEmbedding  # your exercise s1_23_bert_embedding (listing 1.30)
from s1_23_encoder_block import TransformerBlock  # your exercise s1_23_encoder_block (listing 1.33)

PAD_ID = 50257
CLS_ID = 50258
SEP_ID = 50259
VOCAB_SIZE = 50260
MAX_LEN = 256


class BERTEncoder(nn.Module):
    """Embedding plus a stack of encoder blocks (listing 1.34).

    Sub-modules (names are part of the exercise; create them in this order):
      embed:  BERTEmbedding(vocab_size, dim, max_len)
      layers: nn.ModuleList of `layers` TransformerBlock(dim, heads, ff_dim)

    forward(x, mask): x (B, T) int64 token ids, mask (B, T) int64 (1 = real, 0 = padding).
    Returns (B, T, dim): the embeddings passed through every block in order, each with mask.
    """

    def __init__(self, vocab_size: int, dim: int, max_len: int, layers: int, heads: int, ff_dim: int):
        super().__init__()
        # BEGIN SOLUTION create embed, then layers as an nn.ModuleList of blocks
        self.embed = BERTEmbedding(vocab_size, dim, max_len)
        self.layers = nn.ModuleList([TransformerBlock(dim, heads, ff_dim) for _ in range(layers)])
        # END SOLUTION

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        # BEGIN SOLUTION embed, then run every block in turn on the previous output
        x = self.embed(x)
        for layer in self.layers:
            x = layer(x, mask)
        return x
        # END SOLUTION
