"""Token ids of a corpus, computed once: `datasets.Dataset.map(batched=True)` and datasets' own cache.

    ids, from_cache = tokenize(corpus["train"], encode_batch, key)  # encode_batch(texts) -> id lists
    ids.with_format("torch")                                         # what loaders read

The result has the dataset's columns with `text` replaced by `input_ids` (int32 lists). map
writes it to tokens_dir()/tokens-<fingerprint>.arrow (.kata/cache/datasets/tokens), and a later
call whose fingerprint matches reads that file instead of calling `encode_batch`. The
fingerprint is made from the dataset's own (datasets computes it from the rows, or from the
files they were read from, and every transform since: the same rows give the same
fingerprint in every run) and `key`, the caller's name for everything that decides the ids
(kata train's: the tokenizer file's text, GPT-2's ranks, the settings and tiktoken's version).
datasets cannot hash a tokenizer that lives in a student's module itself, so the key stands
for it. A damaged cache file is computed again.
"""

from __future__ import annotations

import hashlib
from typing import Callable

from ...course.messages import Msg, code, joined
from .corpus import datasets
from .errors import DataError
from .library import hf_datasets
from .paths import tokens_dir

TOKENS_VERSION = "kata-tokens-1"  # change it when the layout of the files changes
IDS = datasets.List(datasets.Value("int32"))
SHARD = "_{rank:05d}_of_{num_proc:05d}"  # map's suffix for each process's file (its default)


class _Encode:
    """The function map calls: a batch of texts -> {"input_ids": their ids}, one row per text."""

    def __init__(self, encode_batch: Callable[[list[str]], list[list[int]]]):
        self.encode_batch = encode_batch

    def __call__(self, texts: list[str]) -> dict:
        rows = self.encode_batch(list(texts))
        if len(rows) != len(texts):
            raise ValueError(f"encode_batch gave {len(rows)} rows for {len(texts)} texts")
        return {"input_ids": rows}


def fingerprint(dataset: "datasets.Dataset", key: str) -> str:
    """The fingerprint of `dataset` tokenized with `key`: the name of its cache file."""
    own = dataset._fingerprint  # datasets' fingerprint of these rows (see the module's docstring)
    return hashlib.sha256(f"{TOKENS_VERSION}\0{own}\0{key}".encode()).hexdigest()[:32]


def cache_files(dataset: "datasets.Dataset", key: str, num_proc: int | None = None) -> list:
    """The file(s) `tokenize(dataset, ..., key, num_proc=num_proc)` writes or reads: map's
    cache_file_name, or with several processes one file per process."""
    path = tokens_dir() / f"tokens-{fingerprint(dataset, key)}.arrow"
    procs = min(num_proc or 1, max(1, len(dataset)))  # map uses no more processes than rows
    if procs == 1:
        return [path]
    return [path.with_name(path.stem + SHARD.format(rank=r, num_proc=procs) + path.suffix) for r in range(procs)]


def tokenize(
    dataset: "datasets.Dataset",
    encode_batch: Callable[[list[str]], list[list[int]]],
    key: str,
    num_proc: int | None = None,
    batch_size: int = 1000,
) -> tuple["datasets.Dataset", bool]:
    """(`dataset` with `text` replaced by `input_ids`, whether it was read from the cache).
    `encode_batch(texts)` gives the ids of each text; with `num_proc` > 1 datasets runs it in
    that many processes (it must then be picklable)."""
    hf_datasets()
    if "text" not in dataset.column_names:
        names = dataset.column_names
        raise DataError(
            Msg.key(
                "data_tokenize_no_text", columns=joined(map(code, names), ", ", "、") if names else Msg.key("data_none")
            )
        )
    new_fingerprint = fingerprint(dataset, key)
    files = cache_files(dataset, key, num_proc)
    features = dataset.features.copy()
    del features["text"]
    features["input_ids"] = IDS
    tokens_dir().mkdir(parents=True, exist_ok=True)

    def run(from_cache: bool):
        return dataset.map(
            _Encode(encode_batch),
            batched=True,
            batch_size=batch_size,
            input_columns="text",
            remove_columns=["text"],
            features=features,
            num_proc=num_proc,
            new_fingerprint=new_fingerprint,
            load_from_cache_file=from_cache,
            desc="tokenizing",
            cache_file_name=str(tokens_dir() / f"tokens-{new_fingerprint}.arrow"),
        )

    if not all(f.is_file() for f in files):
        return run(False), False
    try:
        return run(True), True
    except Exception:  # a damaged file (a disk that filled up, a copy cut short): compute it again
        for f in files:
            f.unlink(missing_ok=True)
        return run(False), False
