# Exercise s1_23_dataset (§1.23): replace each `raise NotImplementedError` with your code.
"""§1.23 The IMDb dataset and its loaders (listings 1.23, 1.28–1.29).

Listing 1.23 loads IMDb's reviews and 0/1 labels (1 = positive); the kata's grader.capstone.data loads
them from the hub, a local copy, or an offline corpus. Listing 1.28 wraps texts and labels in
a torch Dataset and listing 1.29 batches it with DataLoaders: the training loader shuffles,
the test loader keeps the order.

What listing 1.23 hands you: `load_dataset("imdb")["train"]` is a Hugging Face `datasets.Dataset`,
and `split["text"]`, `split["label"]` are its columns. Since datasets 4 a column is a
`datasets.Column`, not a list: a lazy sequence over the Arrow table, with len(), iteration and
indexing, but no list methods, and `isinstance(column, list)` is False. IMDBDataset takes such
columns as well as plain lists (`IMDBDataset(split["text"], split["label"], encode)`). Read each
column once (`list(column)`): every `column[i]` reads the table again, and `torch.tensor(column)`
reads it row by row. The label column is a ClassLabel (0 = neg, 1 = pos); IMDb's `unsupervised`
split labels every review -1, which IMDBDataset refuses like any label that is not 0 or 1.

Two changes to the book's version, both for speed:
- The book encodes a review in __getitem__, so every epoch tokenizes all 25,000 reviews again.
  Here __init__ encodes each text once and keeps the token ids; __getitem__ only looks them up.
- The book pads every review to 256 ids. Here the ids are not padded: `collate` pads each
  batch only to its own longest sequence, and makes the attention mask there
  (1 = real token, 0 = padding, as listing 1.27). A batch of short reviews stays short.

Given (not part of the exercise): `WordEncoder`, a small stand-in for listing 1.26's encoder
(no GPT-2 table needed here), and `item`, `size`, `batches`, small helpers for your own
experiments (the checks index, measure and iterate your dataset and loaders themselves).
"""
import functools
from collections.abc import Sequence

import torch
from torch.utils.data import DataLoader, Dataset

PAD_ID = 50257  # [PAD] after GPT-2's 50,257 tokens (listing 1.25)


class IMDBDataset(Dataset):
    """Listing 1.28: texts with labels 0 or 1; `encode(text) -> list[int]` (e.g. listing 1.26's
    encoder with pad=False) is called once per text, in __init__. texts and labels are lists,
    or the columns of a datasets split (split["text"], split["label"]): any sequence.

    ds[i] is (ids, label): ids a 1-D torch.long tensor of text i's token ids, label a 0-D
    torch.long tensor. A ValueError is raised, before anything is encoded, when texts and
    labels differ in length or a label is not 0 or 1.
    """

    def __init__(self, texts: Sequence[str], labels: Sequence[int], encode):
        raise NotImplementedError('s1_23_dataset: check lengths and labels; encode every text once; keep ids and labels as long tensors (in IMDBDataset.__init__)')

    def __len__(self) -> int:
        raise NotImplementedError('s1_23_dataset: the number of texts (in IMDBDataset.__len__)')

    def __getitem__(self, idx: int):
        raise NotImplementedError('s1_23_dataset: look up the stored ids and label (in IMDBDataset.__getitem__)')


def collate(batch: list, pad_id: int = PAD_ID):
    """Stack a list of (ids, label) items into (ids, mask, labels):
    ids (batch, longest) torch.long, each row filled up with pad_id after its tokens, where
    longest is the longest sequence of this batch; mask (batch, longest) torch.long, 1 on real
    tokens and 0 on padding; labels (batch,) torch.long."""
    raise NotImplementedError("s1_23_dataset: a pad_id-filled (batch, longest) tensor, each row's ids copied in; the mask; the labels (in collate)")


def make_loaders(train_ds: Dataset, test_ds: Dataset, batch_size: int = 16, pad_id: int = PAD_ID,
                 seed: int | None = None):
    """Listing 1.29: (train_loader, test_loader), both batching with `collate` and this pad_id.
    The training loader reshuffles at every pass; with a seed, its order comes from
    torch.Generator().manual_seed(seed). The test loader keeps the dataset's order. No batch is
    dropped: the last one may be smaller."""
    raise NotImplementedError('s1_23_dataset: two DataLoaders with a collate_fn that pads with pad_id; shuffle only the training one (in make_loaders)')


class WordEncoder:
    """Given: a stand-in for listing 1.26's encoder. Lower-cased words, stripped of .,!?;:"' ,
    become their index in `vocab` plus 4 (unknown words: unk_id), framed as [cls_id] ... [sep_id]
    and cut to at most max_len ids; no padding. `calls` counts the texts it has encoded."""

    def __init__(self, vocab: list[str], max_len: int = 32, pad_id: int = 0, cls_id: int = 1, sep_id: int = 2,
                 unk_id: int = 3):
        self.index = {word: i + 4 for i, word in enumerate(vocab)}
        self.max_len, self.pad_id, self.cls_id, self.sep_id, self.unk_id = max_len, pad_id, cls_id, sep_id, unk_id
        self.calls = 0

    def __call__(self, text: str) -> list[int]:
        self.calls += 1
        words = [w.strip(".,!?;:\"'") for w in text.lower().split()]
        ids = [self.index.get(w, self.unk_id) for w in words if w][:self.max_len - 2]
        return [self.cls_id] + ids + [self.sep_id]


def item(ds: Dataset, idx: int):
    """Given: ds[idx], for your own experiments."""
    return ds[idx]


def size(ds: Dataset) -> int:
    """Given: len(ds)."""
    return len(ds)


def batches(loader) -> list:
    """Given: one pass over a loader, each batch as a tuple."""
    return [tuple(batch) for batch in loader]
