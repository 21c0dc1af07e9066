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

from s1_23_encoder_block import TransformerBlock  # your exercise s1_23_encoder_block (listing 1.33)

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
        return self.classifier(x[:, 0])


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
    # BEGIN SOLUTION return the loss module of listing 1.37
    return nn.CrossEntropyLoss()
    # END SOLUTION


def make_optimizer(model: nn.Module, lr: float = 3e-4) -> torch.optim.Optimizer:
    """The optimizer of listing 1.37: AdamW over all of the model's parameters, learning rate `lr`."""
    # BEGIN SOLUTION return the optimizer of listing 1.37
    return torch.optim.AdamW(model.parameters(), lr=lr)
    # END SOLUTION


def train_step(model: nn.Module, batch, optimizer: torch.optim.Optimizer, loss_fn) -> float:
    """One update (the body of listing 1.38's inner loop); returns the batch's loss as a Python float.

    batch = (ids, mask, labels). Clear the gradients left by the previous step, compute the loss of
    model(ids, mask) against labels with loss_fn, backpropagate, and step the optimizer.
    """
    # BEGIN SOLUTION zero the gradients, forward, loss, backward, step; return the loss as a float
    ids, mask, labels = batch
    optimizer.zero_grad()
    loss = loss_fn(model(ids, mask), labels)
    loss.backward()
    optimizer.step()
    return loss.item()
    # END SOLUTION


def train(model: nn.Module, loader, optimizer: torch.optim.Optimizer, loss_fn, epochs: int) -> list[float]:
    """Listing 1.38: `epochs` passes over `loader`, one train_step per batch; returns one loss per epoch.

    Put the model in training mode at the start of every epoch (dropout on). Each epoch's value is
    the mean of its batch losses: the book prints their sum instead, which grows with the number
    of batches. Printing progress is allowed.
    """
    # BEGIN SOLUTION loop over epochs: model.train(), a train_step per batch, append the mean batch loss
    means = []
    for epoch in range(epochs):
        model.train()
        total, batches = 0.0, 0
        for batch in loader:
            total += train_step(model, batch, optimizer, loss_fn)
            batches += 1
        means.append(total / batches)
        print(f"Epoch {epoch + 1} | Train Loss: {means[-1]:.4f}")
    return means
    # END SOLUTION


def count_updates(n_examples: int, batch_size: int, epochs: int, drop_last: bool = False) -> int:
    """How many optimizer steps `epochs` epochs take: one per batch, the last smaller batch included.

    With drop_last=True the DataLoader leaves out the last incomplete batch, so it is not counted.
    """
    # BEGIN SOLUTION batches per epoch (rounded up, or down with drop_last) times epochs
    per_epoch = n_examples // batch_size if drop_last else -(-n_examples // batch_size)
    return per_epoch * epochs
    # END SOLUTION
