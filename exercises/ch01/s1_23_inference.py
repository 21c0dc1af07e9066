# Exercise s1_23_inference (§1.23): replace each `raise NotImplementedError` with your code.
"""§1.23 Saving, loading and predicting on new text (listings 1.41-1.43).

A trained model is only useful if it can be stored and brought back: the checkpoint keeps the
weights (the state_dict), the configuration that fixes the architecture, and the tokenizer
facts (special ids, maximum length) needed to encode new text the way the training data was
encoded. Loading refuses a checkpoint of another configuration: its tensors may even have the
right shapes (another head count) and still mean something else. Prediction encodes the text,
marks the padding, and takes the argmax of the logits in evaluation mode.

Given (not part of the exercise): a tiny tokenizer standing in for GPT-2's BPE (`tokenize`,
`encode`, the special ids appended after its 1,000 word ids as in listing 1.25) and
`TinyBERT`, a small version of listing 1.35's classifier with a `config` dict, whose blocks are
your TransformerBlock, imported from your s1_23_encoder_block.py (finish it, and the attention
and feed-forward network it imports, first).
Everything runs on the CPU: the book's `map_location=device` is "cpu" here.
"""
import os
import re
import zlib

import torch
import torch.nn as nn

from s1_23_encoder_block import TransformerBlock  # your exercise s1_23_encoder_block (listing 1.33)

BASE_VOCAB = 1000
PAD_ID, CLS_ID, SEP_ID = BASE_VOCAB, BASE_VOCAB + 1, BASE_VOCAB + 2
VOCAB_SIZE = BASE_VOCAB + 3
MAX_LEN = 64
TOKENIZER_INFO = {"pad_id": PAD_ID, "cls_id": CLS_ID, "sep_id": SEP_ID, "max_len": MAX_LEN}
CLASS_NAMES = ["Negative", "Positive"]


def tokenize(text: str) -> list[int]:
    """Word ids of a tiny stand-in for GPT-2's BPE: each lower-cased word or punctuation mark, hashed into 0-999."""
    return [zlib.crc32(word.encode("utf-8")) % BASE_VOCAB for word in re.findall(r"\w+|[^\w\s]", text.lower())]


def encode(text: str) -> list[int]:
    """Listing 1.26 with the tiny tokenizer: [CLS] + the first MAX_LEN - 2 ids + [SEP], padded to MAX_LEN."""
    ids = [CLS_ID] + tokenize(text)[:MAX_LEN - 2] + [SEP_ID]
    return ids + [PAD_ID] * (MAX_LEN - len(ids))


class TinyBERT(nn.Module):
    """A small BERT-style classifier: model(ids, mask) -> logits (batch, 2), read at position 0 ([CLS]).

    ids (batch, seq_len) int64 with seq_len <= max_len; mask (batch, seq_len), 1 = token, 0 = padding.
    `config` holds the constructor arguments that fix the architecture.
    """

    def __init__(self, vocab_size: int = VOCAB_SIZE, dim: int = 32, max_len: int = MAX_LEN, layers: int = 1,
                 heads: int = 2, ff_dim: int = 64, dropout: float = 0.1):
        super().__init__()
        self.config = dict(vocab_size=vocab_size, dim=dim, max_len=max_len, layers=layers, heads=heads,
                           ff_dim=ff_dim)
        self.token = nn.Embedding(vocab_size, dim, padding_idx=PAD_ID)
        self.position = nn.Embedding(max_len, dim)
        self.norm = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(TransformerBlock(dim, heads, ff_dim, dropout) for _ in range(layers))
        self.classifier = nn.Sequential(nn.Dropout(dropout), nn.Linear(dim, 2))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.token(ids) + self.position(torch.arange(ids.shape[1], device=ids.device))
        x = self.dropout(self.norm(x))
        for block in self.blocks:
            x = block(x, mask)
        return self.classifier(x[:, 0])


def save_checkpoint(model: nn.Module, path: str) -> None:
    """Listing 1.41: write one checkpoint file at `path`, creating its folders if needed.

    The file holds a dict, saved with torch.save:
      "state_dict": model.state_dict(), "config": model.config, "tokenizer": TOKENIZER_INFO.
    """
    raise NotImplementedError('s1_23_inference: create the folder, then torch.save the three entries in one dict (in save_checkpoint)')


def load_checkpoint(model: nn.Module, path: str) -> dict:
    """Listing 1.42: load a checkpoint written by save_checkpoint into `model`; return its tokenizer dict.

    Read it with torch.load(path, map_location="cpu", weights_only=True) (weights_only: a checkpoint
    must not be able to run code). If its "config" differs from model.config, raise ValueError
    naming every key that differs, with both values, and leave the model unchanged. Otherwise load
    the weights and switch the model to evaluation mode. A missing file raises FileNotFoundError.
    """
    raise NotImplementedError('s1_23_inference: torch.load, compare the configs, load_state_dict, eval, return the tokenizer info (in load_checkpoint)')


def predict(model: nn.Module, texts: list[str]) -> list[int]:
    """Listing 1.43: the predicted class (0 = Negative, 1 = Positive) of each text, as Python ints.

    Encode every text with `encode`, build the mask (1 for real tokens, 0 for PAD), and take the
    argmax of the logits in evaluation mode without gradients. An empty list gives []. A text with
    no words (empty or only whitespace) raises ValueError: there is nothing to classify.
    """
    raise NotImplementedError('s1_23_inference: reject empty texts, encode, mask, eval, no_grad, argmax (in predict)')


def predict_sentiment(model: nn.Module, text: str) -> str:
    """Listing 1.43 for one text: "Positive" or "Negative"."""
    raise NotImplementedError('s1_23_inference: predict one text and name its class (in predict_sentiment)')
