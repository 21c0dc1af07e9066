"""Batches for `kata train`: token ids computed once, grouped by length, padded per batch.

The book's pipeline (listings 1.26-1.29) tokenizes every review again in each `__getitem__` and
pads every sequence to 256 ids, so a batch of short reviews costs as much as one of long ones.
Here the ids come from grader.capstone.data.tokenize (datasets.map: tokenized once, cached on disk),
read as tensors with `with_format("torch")`, and each batch is padded only to its own longest
sequence, rounded up to a multiple of 8 (friendlier to GPU kernels).
Shuffled batches are drawn from pools of similar length: shuffle, cut into pools of `pool`
batches, sort each pool by length, cut into batches, shuffle the batch order. Under DDP every
process walks the same seeded order and takes every world-th batch.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

ROUND_TO = 8


@dataclass
class Encoded:
    """Unpadded ids of n texts, flat (text i is ids[offsets[i]:offsets[i+1]]), with labels (n,)."""

    ids: torch.Tensor  # int32 or int64, flat
    offsets: torch.Tensor  # int64, n + 1
    labels: torch.Tensor  # int64, n

    @classmethod
    def from_dataset(cls, dataset) -> "Encoded":
        """A tokenized split (a datasets.Dataset with input_ids and label columns), read once through
        `with_format("torch")` and laid flat."""
        if not len(dataset):
            return cls(torch.zeros(0, dtype=torch.int32), torch.zeros(1, dtype=torch.long),
                       torch.zeros(0, dtype=torch.long))
        rows = dataset.with_format("torch", columns=["input_ids", "label"])[:]
        ids = list(rows["input_ids"])  # a list of 1-D tensors (or one 2-D tensor when all rows are as long)
        offsets = torch.zeros(len(ids) + 1, dtype=torch.long)
        offsets[1:] = torch.cumsum(torch.tensor([len(r) for r in ids], dtype=torch.long), 0)
        return cls(torch.cat(ids).to(torch.int32), offsets, rows["label"].to(torch.long))

    def __len__(self) -> int:
        return len(self.labels)

    @property
    def lengths(self) -> torch.Tensor:
        return self.offsets[1:] - self.offsets[:-1]

    def subset(self, index: list[int] | torch.Tensor) -> "Encoded":
        index = torch.as_tensor(index, dtype=torch.long)
        lengths = self.lengths[index]
        offsets = torch.zeros(len(index) + 1, dtype=torch.long)
        offsets[1:] = torch.cumsum(lengths, 0)
        parts = [self.ids[int(self.offsets[i]):int(self.offsets[i + 1])] for i in index.tolist()]
        ids = torch.cat(parts) if parts else self.ids[:0]
        return Encoded(ids, offsets, self.labels[index])


def collate(data: Encoded, index: list[int], pad_id: int, max_len: int | None = None):
    """(ids, mask, labels) of the rows `index`: ids (B, T) int64 padded with pad_id, T the longest
    row rounded up to a multiple of ROUND_TO (at most max_len); mask 1 = token, 0 = padding."""
    lengths = [int(data.offsets[i + 1] - data.offsets[i]) for i in index]
    T = -(-max(lengths) // ROUND_TO) * ROUND_TO
    if max_len is not None:
        T = min(T, max(max_len, max(lengths)))
    ids = torch.full((len(index), T), pad_id, dtype=torch.long)
    mask = torch.zeros((len(index), T), dtype=torch.long)
    for row, (i, n) in enumerate(zip(index, lengths)):
        start = int(data.offsets[i])
        ids[row, :n] = data.ids[start:start + n]
        mask[row, :n] = 1
    return ids, mask, data.labels[index]


class LengthBatches:
    """Index batches over `lengths`. shuffle=True: a new seeded order each epoch (`set_epoch`),
    similar lengths together; shuffle=False: sorted by length, every example exactly once.
    With world > 1 this process (rank) gets every world-th batch; when shuffling, the batch
    count is cut to a multiple of world so that all processes take the same number of steps."""

    def __init__(self, lengths: torch.Tensor, batch_size: int, shuffle: bool, seed: int = 0, pool: int = 50,
                 rank: int = 0, world: int = 1):
        if batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, not {batch_size}")
        self.lengths = torch.as_tensor(lengths)
        self.batch_size, self.shuffle, self.seed, self.pool = batch_size, shuffle, seed, pool
        self.rank, self.world = rank, world
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def _all_batches(self) -> list[list[int]]:
        n, bs = len(self.lengths), self.batch_size
        if not self.shuffle:
            order = torch.argsort(self.lengths, descending=True, stable=True).tolist()
            return [order[i:i + bs] for i in range(0, n, bs)]
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + self.epoch)
        perm = torch.randperm(n, generator=g)
        batches = []
        for start in range(0, n, bs * self.pool):
            chunk = perm[start:start + bs * self.pool]
            chunk = chunk[torch.argsort(self.lengths[chunk], descending=True, stable=True)].tolist()
            batches += [chunk[i:i + bs] for i in range(0, len(chunk), bs)]
        order = torch.randperm(len(batches), generator=g).tolist()
        batches = [batches[i] for i in order]
        if self.world > 1:
            batches = batches[:len(batches) - len(batches) % self.world]
        return batches

    def __iter__(self):
        return iter(self._all_batches()[self.rank::self.world])

    def __len__(self) -> int:
        return len(self._all_batches()[self.rank::self.world])
