# Exercise s1_23_classifier (§1.23): replace each `raise NotImplementedError` with your code.
"""§1.23 The sequence classifier on the [CLS] position (listings 1.35-1.36).

The encoder gives one vector per token. The classifier keeps only the first one, at the
[CLS] position: through self-attention it has read every real token of the review, so it
serves as the summary of the whole sequence. Dropout, then a linear layer, map it to two
logits (negative, positive). Padding never counts: the mask hides it from attention, and
the [CLS] token is always real and always at position 0.

Listing 1.36 builds the book's model: dim 256, 4 layers, feed-forward width 1024, MAX_LEN 256,
the 50,260-id vocabulary. The book asks for heads=6, but 256 is not a multiple of 6, so its
code stops at `assert dim % heads == 0`; and its printed model shows 6 blocks although it sets
layers=4 (ERRATA.md). Here: 4 heads of 64 features (the book notebook's own readme says 4
heads, 4 layers).

Given: BERTEncoder (listing 1.34), imported from your s1_23_encoder.py, which imports your
embedding, attention, feed-forward network and block in turn: finish those exercises first.
"""
import torch
import torch.nn as nn

from s1_23_encoder import BERTEncoder  # your exercise s1_23_encoder (listing 1.34)

PAD_ID = 50257
CLS_ID = 50258
SEP_ID = 50259
VOCAB_SIZE = 50260
MAX_LEN = 256


class BERTForClassification(nn.Module):
    """BERT encoder plus a classification head on the [CLS] position (listing 1.35).

    Sub-modules (names are part of the exercise; create them in this order):
      bert:       BERTEncoder(vocab_size, dim, max_len, layers, heads, ff_dim)
      classifier: nn.Sequential(nn.Dropout(0.1), nn.Linear(dim, 2))

    forward(x, mask): x (B, T) int64 token ids with [CLS] at position 0, mask (B, T) int64
    (1 = real, 0 = padding). Returns logits (B, 2) from the encoder output at position 0.
    """

    def __init__(self, vocab_size: int, dim: int, max_len: int, layers: int, heads: int, ff_dim: int):
        super().__init__()
        raise NotImplementedError('s1_23_classifier: create bert, then classifier (in BERTForClassification.__init__)')

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_23_classifier: encode, keep the [CLS] position, classify (in BERTForClassification.forward)')


def book_model() -> BERTForClassification:
    """Listing 1.36 with a head count that divides the width: vocab_size=VOCAB_SIZE, dim=256,
    max_len=MAX_LEN, layers=4, heads=4, ff_dim=1024 (the book's heads=6 fails: 256 % 6 = 4)."""
    raise NotImplementedError("s1_23_classifier: build the model with the book's sizes and heads=4 (in book_model)")
