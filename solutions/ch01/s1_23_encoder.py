"""§1.23 The BERT encoder stack (listing 1.34).

The encoder turns token ids into one contextual vector per token: the embedding layer
(listing 1.30) makes the first vectors, then `layers` identical pre-LN blocks (listing 1.33)
refine them one after the other, each block reading the previous block's output. Every block
gets the same padding mask. The book's stack has no final LayerNorm after the last block.

Given: BERTEmbedding, MultiHeadSelfAttention, FeedForward and TransformerBlock from the
previous exercises.
"""
import math

import torch
import torch.nn as nn

PAD_ID = 50257
CLS_ID = 50258
SEP_ID = 50259
VOCAB_SIZE = 50260
MAX_LEN = 256


# ------------------------------------------------------------------ given (listings 1.30-1.33): not part of the exercise
class BERTEmbedding(nn.Module):
    """Listing 1.30: dropout(norm(token(x) + position(0..T-1) + segment(0))). x (B, T) -> (B, T, embed_dim)."""

    def __init__(self, vocab_size: int, embed_dim: int, max_len: int, dropout: float = 0.1):
        super().__init__()
        self.token = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.position = nn.Embedding(max_len, embed_dim)
        self.segment = nn.Embedding(2, embed_dim)
        self.norm = nn.LayerNorm(embed_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        B, T = x.shape
        if T > self.position.num_embeddings:
            raise ValueError(f"sequence of {T} tokens is longer than max_len={self.position.num_embeddings}")
        pos = torch.arange(T, device=x.device).unsqueeze(0)
        seg = torch.zeros_like(x)
        return self.dropout(self.norm(self.token(x) + self.position(pos) + self.segment(seg)))


class MultiHeadSelfAttention(nn.Module):
    """Listing 1.31: multi-head self-attention; padding keys (mask == 0) get no weight.

    x (B, T, dim), mask (B, T) int64 with 1 = real token, 0 = padding -> (B, T, dim).
    """

    def __init__(self, dim: int, heads: int, dropout: float = 0.1):
        super().__init__()
        if heads <= 0 or dim % heads != 0:
            raise ValueError(f"dim={dim} is not divisible by heads={heads}")
        self.heads = heads
        self.d = dim // heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, self.d).transpose(1, 2)
        k = k.view(B, T, self.heads, self.d).transpose(1, 2)
        v = v.view(B, T, self.heads, self.d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)
        scores = scores.masked_fill((mask == 0)[:, None, None, :], float("-inf"))
        attn = self.attn_dropout(torch.softmax(scores, dim=-1))
        out = (attn @ v).transpose(1, 2).reshape(B, T, C)
        return self.out_dropout(self.out(out))


class FeedForward(nn.Module):
    """Listing 1.32: Linear(dim, hidden), GELU, Dropout, Linear(hidden, dim), Dropout. (..., dim) -> (..., dim)."""

    def __init__(self, dim: int, hidden: int, dropout: float = 0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Dropout(dropout),
                                 nn.Linear(hidden, dim), nn.Dropout(dropout))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class TransformerBlock(nn.Module):
    """Listing 1.33: pre-LN block, x + attn(norm1(x), mask), then x + ff(norm2(x)). (B, T, dim) -> (B, T, dim)."""

    def __init__(self, dim: int, heads: int, ff_dim: int, dropout: float = 0.1):
        super().__init__()
        self.attn = MultiHeadSelfAttention(dim, heads, dropout)
        self.ff = FeedForward(dim, ff_dim, dropout)
        self.norm1 = nn.LayerNorm(dim)
        self.norm2 = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x), mask)
        return x + self.ff(self.norm2(x))


# ------------------------------------------------------------------ the exercise
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
