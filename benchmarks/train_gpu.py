"""Time-to-accuracy and tokens/s of the §1.23 capstone on a GPU, in one command.

The book's model (listing 1.36 with heads=4: dim 256, 4 layers, ff 1024, max_len 256, the
50,260-id vocabulary) on IMDb when a local copy is given (--data PATH: an aclImdb folder, CSV
or parquet; or "imdb" where the hub is reachable), on the offline corpus otherwise.

1. Throughput, the same model and optimizer, --steps timed steps each:
     book      listings 1.26-1.29 as written: encode() in __getitem__, pad to 256, batch 16, fp32,
               the model's own attention
     fp32      our pipeline (cached ids, per-batch padding, batch --batch-size), fp32, own attention
     ours      our pipeline + bf16 autocast + the SDPA fast path (+ torch.compile with --compile)
2. Time to accuracy: `kata train`'s loop (ours) for --epochs epochs with validation every
   --eval-every steps: the wall time at which validation accuracy first reaches --target, the best
   validation accuracy, and the test accuracy of the best checkpoint.
3. What pre-training buys (--compare-minutes M, default 5; 0 skips it; compare_pretrain.py): on
   the same split, TF-IDF + logistic regression, our BERT from scratch, and our BERT pre-trained
   as a masked language model then fine-tuned (kata train --pretrain-mlm), each BERT given M
   minutes of training-step time on this device (the pre-trained one spends --pretrain-share of
   it, default 0.5, pre-training), in one table (the whole --data corpus: --limit does not apply).

    python benchmarks/train_gpu.py                          # offline corpus
    python benchmarks/train_gpu.py --data /data/aclImdb --target 0.85
    python benchmarks/train_gpu.py --data /data/aclImdb --compare-minutes 10
    python benchmarks/train_gpu.py --device cpu --smoke     # a seconds-long check that the script works
Figures are printed and written as JSON (--json FILE).
"""
from __future__ import annotations

import argparse
import json
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
from compare_pretrain import compare  # noqa: E402
from grader.capstone.data import load_source  # noqa: E402
from grader.capstone.training.batches import LengthBatches, collate  # noqa: E402
from grader.capstone.training.loop import TrainConfig, encode_split, train  # noqa: E402
from grader.capstone.training.model import build_model, enable_fast_attention, load_classifier_module, probe_batch  # noqa: E402
from grader.capstone.training.tokenizer import load_tokenizer  # noqa: E402

SMOKE = dict(dim=32, max_len=64, layers=1, heads=2, ff_dim=64)


def throughput(args, corpus, module, tok, shape) -> list[dict]:
    device = torch.device(args.device)
    bf16 = torch.autocast("cuda", dtype=torch.bfloat16) if device.type == "cuda" else None
    data, _ = encode_split(corpus["train"], tok)

    def ours_batches(batch_size):
        while True:
            for index in LengthBatches(data.lengths, batch_size, shuffle=True, seed=0):
                yield collate(data, index, tok.pad_id, shape["max_len"])

    def fresh(fast: bool, compiled: bool):
        torch.manual_seed(0)
        model = build_model(module, vocab_size=tok.vocab_size, **shape)
        if fast:
            enable_fast_attention(model, probe_batch(tok.vocab_size, shape["max_len"], tok.pad_id, tok.cls_id))
        model = model.to(device)
        return torch.compile(model, dynamic=True) if compiled else model

    runs = [("book", fresh(False, False), DataLoader(BookIMDBDataset(corpus.train.texts, corpus.train.labels, tok),
                                                     batch_size=16, shuffle=True), None),
            ("fp32", fresh(False, False), ours_batches(args.batch_size), None),
            ("ours", fresh(True, args.compile), ours_batches(args.batch_size), bf16)]
    rows = []
    for name, model, batches, amp in runs:
        warmup = 10 if (name == "ours" and args.compile) else 2
        seconds, real, padded = timed_steps(model, batches, args.steps, warmup=warmup, device=device, amp=amp)
        rows.append({"pipeline": name, "tokens_per_s": real / seconds, "real_fraction": real / padded,
                     "seconds": seconds, "steps": args.steps})
        del model
        if device.type == "cuda":
            torch.cuda.empty_cache()
    base = rows[0]["tokens_per_s"]
    print(f"\nthroughput on {device} ({torch.cuda.get_device_name(device) if device.type == 'cuda' else 'CPU'}), "
          f"{args.steps} steps each:")
    for r in rows:
        print(f"  {r['pipeline']:5s} {r['tokens_per_s']:12,.0f} real tokens/s  ({100 * r['real_fraction']:.0f}% "
              f"of computed tokens are real)  {r['tokens_per_s'] / base:6.1f}x the book")
    return rows


def time_to_accuracy(args, shape) -> dict:
    with tempfile.TemporaryDirectory(prefix="kata-gpu-bench-") as out:
        cfg = TrainConfig(code="reference", data=args.data, out=out, epochs=args.epochs, batch_size=args.batch_size,
                          lr=args.lr, eval_every=args.eval_every, device=args.device, compile=args.compile,
                          quiet=True, limit=args.limit, **shape)
        start = time.perf_counter()
        m = train(cfg, ROOT, log=lambda *a, **k: None)
        wall = time.perf_counter() - start
    elapsed, reached = 0.0, None
    for h in m["history"]:
        elapsed += h["seconds"]
        if reached is None and h["val_accuracy"] >= args.target:
            reached = {"step": h["step"], "train_seconds": elapsed}
    best = max(h["val_accuracy"] for h in m["history"])
    tps = sum(h["tokens"] for h in m["history"]) / max(1e-9, sum(h["seconds"] for h in m["history"]))
    print(f"\ntime to accuracy ({m['device']}, {m['dtype']}, compile={m['compile']}, {m['steps_total']} steps, "
          f"data {m['data']['source'][:70]}):")
    print(f"  validation accuracy >= {100 * args.target:.1f}%: " + (
        f"step {reached['step']}, after {reached['train_seconds']:.1f} s of training" if reached else "not reached"))
    print(f"  best validation accuracy {100 * best:.2f}%, test accuracy of the best checkpoint "
          f"{100 * m['test']['accuracy']:.2f}%; {tps:,.0f} real tokens/s over the run; wall {wall:.1f} s "
          f"(with data loading and evaluation)")
    return {"target": args.target, "reached": reached, "best_val_accuracy": best,
            "test_accuracy": m["test"]["accuracy"], "tokens_per_s": tps, "wall_seconds": wall,
            "history": m["history"], "device": m["device"], "dtype": m["dtype"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="offline", help="offline (default), imdb, or a local IMDb copy")
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=50)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--target", type=float, default=0.85)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--compile", action="store_true")
    p.add_argument("--compare-minutes", type=float, default=5,
                   help="training-step time per BERT in the pre-training comparison (default 5; 0 skips it)")
    p.add_argument("--pretrain-share", type=float, default=0.5,
                   help="the share of the pre-trained BERT's minutes spent pre-training (default 0.5)")
    p.add_argument("--smoke", action="store_true", help="a tiny model and few steps: checks the script, not the GPU")
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("train_gpu: no CUDA device here (use --device cpu --smoke to try the script)", file=sys.stderr)
        return 2
    shape = dict(BOOK)
    if args.smoke:
        shape = SMOKE
        args.steps, args.epochs, args.eval_every, args.batch_size = 3, 1, 20, 16
        args.compare_minutes = min(args.compare_minutes, 0.05)
        args.data = args.data if args.data != "offline" else "synthetic:400"
    if args.device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = True
    corpus = load_source(args.data)
    tok = load_tokenizer(ROOT / "solutions", shape["max_len"])  # kata train's tokenizer: the exercise's, here the reference solution's
    module = load_classifier_module(ROOT / "solutions")
    figures = {"throughput": throughput(args, corpus, module, tok, shape),
               "time_to_accuracy": time_to_accuracy(args, shape)}
    if args.compare_minutes:
        figures["comparison"] = compare(corpus, args.data, module, tok, shape, minutes=args.compare_minutes,
                                        share=args.pretrain_share, batch_size=args.batch_size, lr=args.lr,
                                        device=args.device, compile=args.compile)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
