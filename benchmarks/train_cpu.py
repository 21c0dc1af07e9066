"""Training speed and quality of the §1.23 capstone on this machine's CPU, in one run.

1. Speed: the same model (listing 1.36 with heads=4), the same optimizer (AdamW, lr 3e-4),
   fp32, trained for --steps steps (after 2 warm-up steps) two ways:
     book  listings 1.26-1.29 and 1.38 as written: encode() in the Dataset's __getitem__
           (GPT-2 BPE every epoch), every sequence padded to 256, DataLoader batch 16,
           the model's own attention;
     ours  kata train's pipeline: token ids computed once (cached), batches of 32 drawn from
           pools of similar length and padded to their own longest row, the attention fast path.
   Measured: real (non-padding) tokens per second, and the ratio. Target: ours >= 3x.
2. Quality (--epochs N, 0 to skip): on the same data, same split, our from-scratch BERT
   (kata train, best validation checkpoint) against TF-IDF + logistic regression (C chosen on the
   same validation split), both scored on the same test set: accuracy and macro F1.

    python benchmarks/train_cpu.py                      # offline corpus, 30 timed steps, 3 epochs
    python benchmarks/train_cpu.py --data imdb --epochs 0
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.utils.data import DataLoader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from book_pipeline import BOOK, BookIMDBDataset, timed_steps  # noqa: E402
from grader.capstone.data import holdout, load_source  # noqa: E402
from grader.capstone.training.batches import LengthBatches, collate  # noqa: E402
from grader.capstone.training.loop import TrainConfig, encode_split, train  # noqa: E402
from grader.capstone.training.model import build_model, enable_fast_attention, load_classifier_module, probe_batch  # noqa: E402
from grader.capstone.training.tokenizer import load_tokenizer  # noqa: E402

def speed(args, corpus, module, tok) -> dict:
    texts, labels = corpus.train.texts, corpus.train.labels
    torch.manual_seed(0)
    book_model = build_model(module, vocab_size=tok.vocab_size, **BOOK)
    book_loader = DataLoader(BookIMDBDataset(texts, labels, tok), batch_size=16, shuffle=True,
                             generator=torch.Generator().manual_seed(0))
    b_sec, b_real, b_pad = timed_steps(book_model, book_loader, args.steps)

    start = time.perf_counter()
    data, _ = encode_split(corpus.train, tok)
    encode_s = time.perf_counter() - start
    torch.manual_seed(0)
    our_model = build_model(module, vocab_size=tok.vocab_size, **BOOK)
    fast, why = enable_fast_attention(our_model, probe_batch(tok.vocab_size, BOOK["max_len"], tok.pad_id, tok.cls_id))
    batches = (collate(data, index, tok.pad_id, BOOK["max_len"])
               for index in LengthBatches(data.lengths, 32, shuffle=True, seed=0))
    o_sec, o_real, o_pad = timed_steps(our_model, batches, args.steps)
    book_tps, our_tps = b_real / b_sec, o_real / o_sec
    print(f"\nspeed on {corpus.source} ({args.steps} steps each, {torch.get_num_threads()} threads):")
    print(f"  book: {book_tps:10,.0f} real tokens/s  ({b_real:,} real of {b_pad:,} computed: "
          f"{100 * b_real / b_pad:.1f}%)")
    print(f"  ours: {our_tps:10,.0f} real tokens/s  ({o_real:,} real of {o_pad:,} computed: "
          f"{100 * o_real / o_pad:.1f}%; fast attention on {fast} modules{'' if fast else ': ' + why}; "
          f"ids computed once in {encode_s:.1f} s or read from the cache)")
    print(f"  ours / book: {our_tps / book_tps:.1f}x (target >= 3x)")
    return {"book_tokens_per_s": book_tps, "ours_tokens_per_s": our_tps, "ratio": our_tps / book_tps}


def quality(args, corpus) -> dict:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score

    train_split, val_split = holdout(corpus.train, args.val_fraction, args.seed)  # what kata train uses
    start = time.perf_counter()
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    x_train = vec.fit_transform(train_split.texts)
    best = None
    for c in (0.5, 1, 2, 4, 8, 16, 32):
        clf = LogisticRegression(C=c, max_iter=2000).fit(x_train, train_split.labels)
        acc = accuracy_score(val_split.labels, clf.predict(vec.transform(val_split.texts)))
        if best is None or acc > best[0]:
            best = (acc, c, clf)
    preds = best[2].predict(vec.transform(corpus.test.texts))
    base_s = time.perf_counter() - start
    base = {"accuracy": accuracy_score(corpus.test.labels, preds),
            "macro_f1": f1_score(corpus.test.labels, preds, average="macro"), "C": best[1], "seconds": base_s}

    with tempfile.TemporaryDirectory(prefix="kata-bench-") as out:
        cfg = TrainConfig(code="reference", data=args.data, out=out, epochs=args.epochs, batch_size=32, lr=args.lr,
                          val_fraction=args.val_fraction, seed=args.seed, device="cpu", quiet=True, **BOOK)
        m = train(cfg, ROOT)
    ours = {"accuracy": m["test"]["accuracy"], "macro_f1": m["test"]["report"]["macro avg"]["f1-score"],
            "seconds": m["seconds"], "best_step": m["best"]["step"], "steps": m["steps_total"]}
    majority = max(sum(corpus.test.labels), len(corpus.test) - sum(corpus.test.labels)) / len(corpus.test)
    print(f"\nquality on {corpus.source}: train {len(train_split):,}, validation {len(val_split):,}, "
          f"test {len(corpus.test):,} (majority class {100 * majority:.1f}%)")
    print(f"  TF-IDF + logistic regression (C={base['C']}): accuracy {100 * base['accuracy']:.2f}%, "
          f"macro F1 {base['macro_f1']:.4f}  ({base_s:.0f} s)")
    print(f"  our BERT ({args.epochs} epochs, best step {ours['best_step']}/{ours['steps']}): "
          f"accuracy {100 * ours['accuracy']:.2f}%, macro F1 {ours['macro_f1']:.4f}  ({ours['seconds']:.0f} s)")
    return {"baseline": base, "bert": ours}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="offline")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--val-fraction", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    corpus = load_source(args.data)
    tok = load_tokenizer(ROOT / "solutions", BOOK["max_len"])  # kata train's tokenizer: the exercise's, here the reference solution's
    module = load_classifier_module(ROOT / "solutions")
    speed(args, corpus, module, tok)
    if args.epochs:
        quality(args, corpus)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
