"""The book's training pipeline as written (listings 1.26-1.29, 1.37-1.38), for the benchmarks.

Kept apart from grader/capstone/training (which is the fast pipeline) so that both benchmark scripts time
the same baseline.
"""

from __future__ import annotations

import time

import torch
import torch.nn as nn
from torch.utils.data import Dataset

BOOK = dict(dim=256, max_len=256, layers=4, heads=4, ff_dim=1024)  # listing 1.36, heads=4 (ERRATA.md)


class BookIMDBDataset(Dataset):
    """Listing 1.28: encode (listing 1.26: truncate, [CLS] ... [SEP], pad to MAX_LEN) on every access."""

    def __init__(self, texts, labels, tok):
        self.texts, self.labels, self.tok = texts, labels, tok

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        tok = self.tok
        token_ids = tok.base.encode(self.texts[idx])[: tok.max_len - 2]
        token_ids = [tok.cls_id] + token_ids + [tok.sep_id]
        token_ids += [tok.pad_id] * (tok.max_len - len(token_ids))
        ids = torch.tensor(token_ids)
        mask = (ids != tok.pad_id).long()  # listing 1.27
        return ids, mask, torch.tensor(self.labels[idx])


def timed_steps(model, batches, steps: int, warmup: int = 2, device: str = "cpu", amp=None) -> tuple[float, int, int]:
    """(seconds, real tokens, padded tokens) of `steps` training steps after `warmup` untimed ones;
    the time includes producing the batches (tokenizing, padding) and moving them to `device`."""
    import contextlib

    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    loss_fn = nn.CrossEntropyLoss()
    model.train()
    it = iter(batches)
    seconds, real, padded = 0.0, 0, 0
    sync = torch.cuda.synchronize if str(device).startswith("cuda") else (lambda: None)
    for i in range(warmup + steps):
        sync()
        start = time.perf_counter()
        ids, mask, labels = next(it)
        ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
        optimizer.zero_grad()
        with amp or contextlib.nullcontext():
            logits = model(ids, mask)
        loss = loss_fn(logits.float(), labels)
        loss.backward()
        optimizer.step()
        sync()
        if i >= warmup:
            seconds += time.perf_counter() - start
            real += int(mask.sum())
            padded += mask.numel()
    return seconds, real, padded
