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
            return cls(
                torch.zeros(0, dtype=torch.int32), torch.zeros(1, dtype=torch.long), torch.zeros(0, dtype=torch.long)
            )
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
        parts = [self.ids[int(self.offsets[i]) : int(self.offsets[i + 1])] for i in index.tolist()]
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
        ids[row, :n] = data.ids[start : start + n]
        mask[row, :n] = 1
    return ids, mask, data.labels[index]


class LengthBatches:
    """Index batches over `lengths`. shuffle=True: a new seeded order each epoch (`set_epoch`),
    similar lengths together; shuffle=False: sorted by length, every example exactly once.
    With world > 1 this process (rank) gets every world-th batch; when shuffling, the batch
    count is cut to a multiple of world so that all processes take the same number of steps."""

    def __init__(
        self,
        lengths: torch.Tensor,
        batch_size: int,
        shuffle: bool,
        seed: int = 0,
        pool: int = 50,
        rank: int = 0,
        world: int = 1,
    ):
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
            return [order[i : i + bs] for i in range(0, n, bs)]
        g = torch.Generator().manual_seed(self.seed * 1_000_003 + self.epoch)
        perm = torch.randperm(n, generator=g)
        batches = []
        for start in range(0, n, bs * self.pool):
            chunk = perm[start : start + bs * self.pool]
            chunk = chunk[torch.argsort(self.lengths[chunk], descending=True, stable=True)].tolist()
            batches += [chunk[i : i + bs] for i in range(0, len(chunk), bs)]
        order = torch.randperm(len(batches), generator=g).tolist()
        batches = [batches[i] for i in order]
        if self.world > 1:
            batches = batches[: len(batches) - len(batches) % self.world]
        return batches

    def __iter__(self):
        return iter(self._all_batches()[self.rank :: self.world])

    def __len__(self) -> int:
        return len(self._all_batches()[self.rank :: self.world])


# ---------------------------------------------------------------- fixed lengths, ids on the device

AUTO_BUCKETS = (32, 64, 128, 256)  # --buckets auto on CUDA: four shapes per batch size (and max_len)


def parse_buckets(spec: str | None, max_len: int) -> tuple[int, ...] | None:
    """The padded lengths of `--buckets`: None for "off" (each batch padded to its longest row,
    rounded to ROUND_TO, as on the CPU); for "auto" AUTO_BUCKETS; else the comma-separated
    lengths. Lengths over max_len are dropped and max_len is always the last one."""
    if spec in (None, "", "off"):
        return None
    values = AUTO_BUCKETS if spec == "auto" else tuple(int(v) for v in str(spec).split(",") if v.strip())
    if any(v < 1 for v in values):
        raise ValueError(f"bucket lengths must be >= 1, not {spec}")
    return tuple(sorted({v for v in values if v < max_len} | {max_len}))


def padded_length(longest: int, max_len: int | None, buckets: tuple[int, ...] | None = None) -> int:
    """The length a batch whose longest row has `longest` ids is padded to: the first bucket that
    holds it, or (no buckets) `longest` rounded up to ROUND_TO, at most max_len."""
    if buckets:
        for b in buckets:
            if b >= longest:
                return b
        return -(-longest // ROUND_TO) * ROUND_TO  # longer than every bucket: rows are cut to max_len before
    T = -(-longest // ROUND_TO) * ROUND_TO
    if max_len is not None:
        T = min(T, max(max_len, longest))
    return T


class Batcher:
    """The padded batches of one split, on `device`, for the training loop and evaluation.

    resident=True: the split's ids, offsets and labels are copied to the device once, and each
    batch is gathered there from its row numbers (one small copy of the index per batch, no
    per-row work on the host); resident=False: `collate` on the host, then one copy of each
    tensor, as on the CPU before. The two give the same tensors. `buckets` (parse_buckets) pads
    to a few fixed lengths, so that a compiled step (and its CUDA graphs) is reused; `rows`
    fills a short batch up to that many rows with [CLS]-only rows (`fill_id`) labelled -100,
    which the loss (ignore_index) and the accuracy leave out, so that its shape is a known one too.

    `batch(index)` -> (ids, mask, labels) on the device, with the real and padded token counts
    computed on the host (reading them from the mask would wait for the device)."""

    def __init__(
        self,
        data: Encoded,
        device,
        pad_id: int,
        max_len: int | None,
        *,
        buckets=None,
        resident: bool = False,
        fill_id: int | None = None,
    ):
        self.data, self.device, self.pad_id, self.max_len = data, torch.device(device), pad_id, max_len
        self.buckets, self.resident, self.fill_id = buckets, resident, pad_id if fill_id is None else fill_id
        self.lengths = data.lengths.tolist()
        if resident:
            self.ids = data.ids.to(self.device)
            self.offsets = data.offsets.to(self.device)
            self.labels = data.labels.to(self.device)
            self.positions = torch.arange(
                max(1, max_len or max(self.lengths, default=1), *(buckets or ())), device=self.device
            )

    def batch(self, index: list[int], rows: int | None = None):
        lengths = [self.lengths[i] for i in index]
        T = padded_length(max(lengths), self.max_len, self.buckets)
        if self.resident:
            ids, mask, labels = self._gather(index, T)
        else:
            ids, mask, labels = collate(self.data, index, self.pad_id, self.max_len)
            if ids.shape[1] < T:
                ids = torch.cat([ids, ids.new_full((len(index), T - ids.shape[1]), self.pad_id)], 1)
                mask = torch.cat([mask, mask.new_zeros((len(index), T - mask.shape[1]))], 1)
            ids, mask, labels = (x.to(self.device, non_blocking=True) for x in (ids, mask, labels))
        if rows is not None and len(index) < rows:
            extra = rows - len(index)
            fill = ids.new_full((extra, T), self.pad_id)
            fill[:, 0] = self.fill_id
            ids = torch.cat([ids, fill])
            mask = torch.cat([mask, (fill != self.pad_id).to(mask.dtype)])
            labels = torch.cat([labels, labels.new_full((extra,), -100)])
        return ids, mask, labels, sum(lengths), ids.shape[0] * T

    def _gather(self, index: list[int], T: int):
        rows = torch.tensor(index, dtype=torch.long)
        if self.device.type == "cuda":
            rows = rows.pin_memory()
        rows = rows.to(self.device, non_blocking=True)
        start = self.offsets[rows]
        length = self.offsets[rows + 1] - start
        pos = self.positions[:T]
        valid = pos[None, :] < length[:, None]
        at = (start[:, None] + pos[None, :]).clamp_(max=max(0, self.ids.numel() - 1))
        ids = (
            torch.where(valid, self.ids[at].long(), self.pad_id)
            if self.ids.numel()
            else torch.full((len(index), T), self.pad_id, dtype=torch.long, device=self.device)
        )
        return ids, valid.long(), self.labels[rows]
