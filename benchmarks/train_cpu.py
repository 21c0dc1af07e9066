"""Training speed and quality of the §1.23 capstone on this machine's CPU, in one run.

1. Speed: the same model (listing 1.36 with heads=4), the same optimizer (AdamW, lr 3e-4),
   fp32, trained for --steps steps (after 2 warm-up steps) two ways:
     book  listings 1.26-1.29 and 1.38 as written: encode() in the Dataset's __getitem__
           (GPT-2 BPE every epoch), every sequence padded to 256, DataLoader batch 16,
           the model's own attention;
     ours  kata train's pipeline: token ids computed once (cached), batches of 32 drawn from
           pools of similar length and padded to their own longest row, the attention fast path.
   Measured: real (non-padding) tokens per second, and the ratio. Target: ours >= 3x.
2. Quality (--minutes M, 0 to skip; compare_pretrain.py): on the same data, the same split and
   the same test set, TF-IDF + logistic regression (C chosen on the validation split), our BERT
   from scratch, and our BERT pre-trained as a masked language model then fine-tuned
   (kata train --pretrain-mlm), each BERT given M minutes of CPU training-step time (default 20;
   the pre-trained one spends --pretrain-share of it, default 0.5, pre-training): accuracy and
   macro F1 of the best validation checkpoint, in one table.

    python benchmarks/train_cpu.py                      # offline corpus, 30 timed steps, 20 minutes per BERT
    python benchmarks/train_cpu.py --data imdb --minutes 0
    python benchmarks/train_cpu.py --data synthetic:400 --steps 3 --minutes 0.5 --tiny   # checks the script
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from torch.utils.data import DataLoader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from book_pipeline import BOOK, BookIMDBDataset, timed_steps  # noqa: E402
from compare_pretrain import compare  # noqa: E402
from grader.capstone.data import load_source  # noqa: E402
from grader.capstone.training.batches import LengthBatches, collate  # noqa: E402
from grader.capstone.training.loop import encode_split  # noqa: E402
from grader.capstone.training.model import build_model, enable_fast_attention, load_classifier_module, probe_batch  # noqa: E402
from grader.capstone.training.tokenizer import load_tokenizer  # noqa: E402

TINY = dict(dim=32, max_len=64, layers=1, heads=2, ff_dim=64)  # --tiny: a model that checks the script in seconds


def speed(args, corpus, module, tok, shape) -> dict:
    texts, labels = corpus.train.texts, corpus.train.labels
    torch.manual_seed(0)
    book_model = build_model(module, vocab_size=tok.vocab_size, **shape)
    book_loader = DataLoader(
        BookIMDBDataset(texts, labels, tok), batch_size=16, shuffle=True, generator=torch.Generator().manual_seed(0)
    )
    b_sec, b_real, b_pad = timed_steps(book_model, book_loader, args.steps)

    start = time.perf_counter()
    data, _ = encode_split(corpus["train"], tok)
    encode_s = time.perf_counter() - start
    torch.manual_seed(0)
    our_model = build_model(module, vocab_size=tok.vocab_size, **shape)
    fast, why = enable_fast_attention(our_model, probe_batch(tok.vocab_size, shape["max_len"], tok.pad_id, tok.cls_id))
    batches = (
        collate(data, index, tok.pad_id, shape["max_len"])
        for index in LengthBatches(data.lengths, 32, shuffle=True, seed=0)
    )
    o_sec, o_real, o_pad = timed_steps(our_model, batches, args.steps)
    book_tps, our_tps = b_real / b_sec, o_real / o_sec
    print(f"\nspeed on {corpus.source} ({args.steps} steps each, {torch.get_num_threads()} threads):")
    print(
        f"  book: {book_tps:10,.0f} real tokens/s  ({b_real:,} real of {b_pad:,} computed: {100 * b_real / b_pad:.1f}%)"
    )
    print(
        f"  ours: {our_tps:10,.0f} real tokens/s  ({o_real:,} real of {o_pad:,} computed: "
        f"{100 * o_real / o_pad:.1f}%; fast attention on {fast} modules{'' if fast else ': ' + why}; "
        f"ids computed once in {encode_s:.1f} s or read from the cache)"
    )
    print(f"  ours / book: {our_tps / book_tps:.1f}x (target >= 3x)")
    return {"book_tokens_per_s": book_tps, "ours_tokens_per_s": our_tps, "ratio": our_tps / book_tps}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="offline")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument(
        "--minutes",
        type=float,
        default=20,
        help="CPU training-step time per BERT in the quality comparison (default 20; 0 skips it)",
    )
    p.add_argument(
        "--pretrain-share",
        type=float,
        default=0.5,
        help="the share of the pre-trained BERT's minutes spent pre-training (default 0.5)",
    )
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument(
        "--tiny", action="store_true", help="a tiny model (dim 32, 1 layer): checks the script, measures nothing"
    )
    p.add_argument("--json", help="also write the figures here")
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--val-fraction", type=float, default=0.1)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    corpus = load_source(args.data)
    shape = TINY if args.tiny else BOOK
    tok = load_tokenizer(
        ROOT / "solutions", shape["max_len"]
    )  # kata train's tokenizer: the exercise's, here the reference solution's
    module = load_classifier_module(ROOT / "solutions")
    figures = {"speed": speed(args, corpus, module, tok, shape)}
    if args.minutes:
        figures["quality"] = compare(
            corpus,
            args.data,
            module,
            tok,
            shape,
            minutes=args.minutes,
            share=args.pretrain_share,
            batch_size=args.batch_size,
            lr=args.lr,
            seed=args.seed,
            val_fraction=args.val_fraction,
            device="cpu",
        )
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
