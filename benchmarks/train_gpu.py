"""Time-to-accuracy and tokens/s of the §1.23 capstone on a GPU, in one command (issue 27).

The book's model (listing 1.36 with heads=4: dim 256, 4 layers, ff 1024, max_len 256, the
50,260-id vocabulary) on IMDb when a local copy is given (--data PATH: an aclImdb folder, CSV
or parquet; or "imdb" where the hub is reachable), on the offline corpus otherwise.

1. Throughput, the same model, --steps timed steps each (default 300) after a warm-up that is
   timed and reported on its own (torch.compile and CUDA-graph capture included: one step of every
   padded length first, then --warmup more):
     book      listings 1.26-1.29 and 1.38 as written: encode() in __getitem__, pad to 256, batch 16,
               fp32 (TF32 off, PyTorch's default), the model's own attention, the loss read every step
     fp32      our pipeline as it was before issue 27 (cached ids, per-batch padding on the host, batch
               --batch-size), fp32 with TF32, own attention, eager, the loss read every step
     ours      kata train's step on this device, "auto" settings (grader.capstone.training.loop.
               choose_settings: on CUDA fixed lengths, ids gathered on the GPU, CUDA graphs, fused AdamW,
               the loss read every 50 steps, fp32 + TF32 below batch 256), the SDPA fast path
   For each: the median step time (CUDA events around every step, read once at the end), real and
   padded tokens/s over the timed steps' wall time, and MFU: the model's FLOPs per step (matrix
   products of the encoder, attention scores and mixing, the classifier: 6 x forward multiply-adds
   x 2 over the padded tokens) over the device's dense peak for the precision used (PEAK_TFLOPS).
2. Time to accuracy: `kata train` with its defaults (validation every --eval-every steps): the
   training seconds (compilation included) at which validation accuracy first reaches --target,
   the best validation accuracy, the test accuracy of the best checkpoint, tokens/s over the run.
3. BERT against the baseline (--preset-run): TF-IDF + logistic regression (C chosen on kata
   train's validation split) and `kata train --preset gpu` (masked-LM pre-training, then
   fine-tuning; every choice on the validation split), on the same split and test set.
4. What pre-training buys for the same time (--compare-minutes M, default 0: skipped;
   compare_pretrain.py): TF-IDF, BERT from scratch, BERT pre-trained then fine-tuned, M minutes each.

    python benchmarks/train_gpu.py --json figures.json --preset-run   # what benchmarks/gpu_check.sh runs
    python benchmarks/train_gpu.py --data /data/aclImdb --target 0.85
    python benchmarks/train_gpu.py --device cpu --smoke     # a seconds-long check that the script works
Figures are printed and written as JSON (--json FILE).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn as nn
from torch.utils.data import DataLoader

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from book_pipeline import BOOK, BookIMDBDataset  # noqa: E402
from compare_pretrain import compare, tfidf  # noqa: E402
from grader.capstone.data import load_source  # noqa: E402
from grader.capstone.training import loop  # noqa: E402
from grader.capstone.training.batches import Batcher, LengthBatches  # noqa: E402
from grader.capstone.training.loop import TrainConfig, encode_split, train  # noqa: E402
from grader.capstone.training.model import build_model, enable_fast_attention, load_classifier_module, probe_batch  # noqa: E402
from grader.capstone.training.tokenizer import load_tokenizer  # noqa: E402

SMOKE = dict(dim=32, max_len=64, layers=1, heads=2, ff_dim=64)

# Dense peak TFLOPS by device name (the vendor's data sheets, no sparsity): (bf16, tf32, fp32).
# The first key found in torch.cuda.get_device_name() wins, so the longer names come first.
PEAK_TFLOPS = {
    "H100 PCIe": (756, 378, 51),
    "H100 NVL": (835, 418, 60),
    "H200": (989, 494, 67),
    "H100": (989, 494, 67),
    "GH200": (989, 494, 67),
    "B200": (2250, 1100, 75),
    "A100": (312, 156, 19.5),
    "L40S": (362, 183, 91.6),
    "L4": (121, 60, 30),
    "A10G": (70, 35, 31.2),
    "A10": (125, 62.5, 31.2),
    "RTX 4090": (165, 82.6, 82.6),
    "V100": (125, 125, 15.7),
    "T4": (65, 65, 8.1),
}


def peak_tflops(device_name: str, precision: str) -> float | None:
    """The device's dense peak for 'bf16', 'tf32' or 'fp32'; None for a device not in the table."""
    for key, peaks in PEAK_TFLOPS.items():
        if key.lower() in device_name.lower():
            return peaks[("bf16", "tf32", "fp32").index(precision)]
    return None


def step_flops(shape: dict, rows: int, length: int) -> float:
    """FLOPs of one training step of the classifier on a (rows, length) batch: forward multiply-adds
    of the encoder's matrix products (qkv, out, the two feed-forward layers), attention's scores
    and mixing (2 x length x dim per token and layer) and the classifier, x 2 FLOPs each, x 3 for
    forward and backward. Embedding lookups and element-wise work are not counted."""
    d, ff, layers = shape["dim"], shape["ff_dim"], shape["layers"]
    per_token = layers * (4 * d * d + 2 * d * ff + 2 * length * d)
    forward = 2 * (rows * length * per_token + rows * 2 * d)
    return 3.0 * forward


class Clock:
    """Per-step times: CUDA events around every step on a GPU (read once, at the end: no wait in
    between), wall-clock times on the CPU (where each step ends before the next begins)."""

    def __init__(self, device: torch.device):
        self.cuda = device.type == "cuda"
        self.marks: list = []

    def mark(self) -> None:
        if self.cuda:
            e = torch.cuda.Event(enable_timing=True)
            e.record()
            self.marks.append(e)
        else:
            self.marks.append(time.perf_counter())

    def step_seconds(self) -> list[float]:
        if self.cuda:
            torch.cuda.synchronize()
            return [a.elapsed_time(b) / 1000 for a, b in zip(self.marks, self.marks[1:])]
        return [b - a for a, b in zip(self.marks, self.marks[1:])]


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def warm_n(step, n: int):
    """A warm-up of n steps; returns n."""

    def run():
        for _ in range(n):
            step()
        return n

    return run


def measure(name: str, step, warm, steps: int, device: torch.device, shape: dict, precision: str, note: str) -> dict:
    """`warm()` (the warm-up, timed on its own), then `steps` calls of `step()` -> (rows, length,
    real tokens), timed; the figures of one pipeline."""
    _sync(device)
    start = time.perf_counter()
    warm_steps = warm()
    _sync(device)
    warm_s = time.perf_counter() - start
    clock = Clock(device)
    real = padded = 0
    flops = 0.0
    _sync(device)
    start = time.perf_counter()
    for _ in range(steps):
        clock.mark()
        rows, length, n = step()
        real, padded, flops = real + n, padded + rows * length, flops + step_flops(shape, rows, length)
    clock.mark()
    _sync(device)
    wall = time.perf_counter() - start
    times = clock.step_seconds()
    device_name = torch.cuda.get_device_name(device) if device.type == "cuda" else "CPU"
    peak = peak_tflops(device_name, precision)
    row = {
        "pipeline": name,
        "precision": precision,
        "note": note,
        "warmup_steps": warm_steps,
        "warmup_seconds": warm_s,
        "steps": steps,
        "seconds": wall,
        "median_step_ms": 1000 * statistics.median(times),
        "p90_step_ms": 1000 * sorted(times)[int(0.9 * (len(times) - 1))],
        "tokens_per_s": real / wall,
        "padded_tokens_per_s": padded / wall,
        "real_fraction": real / padded,
        "tflops": flops / wall / 1e12,
        "peak_tflops": peak,
        "mfu": flops / wall / (peak * 1e12) if peak else None,
    }
    return row


def throughput(args, corpus, module, tok, shape) -> list[dict]:
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    data, _ = encode_split(corpus["train"], tok)

    def fresh(fast: bool):
        torch.manual_seed(0)
        model = build_model(module, vocab_size=tok.vocab_size, **shape)
        if fast:
            enable_fast_attention(model, probe_batch(tok.vocab_size, shape["max_len"], tok.pad_id, tok.cls_id))
        return model.to(device).train()

    def endless(batch_size):
        epoch = 0
        while True:
            order = LengthBatches(data.lengths, batch_size, shuffle=True, seed=0)
            order.set_epoch(epoch)
            yield from order
            epoch += 1

    rows = []
    # book: listings 1.26-1.29, 1.38 as written
    torch.backends.cuda.matmul.allow_tf32 = False
    model = fresh(False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    loss_fn = nn.CrossEntropyLoss()
    loader = DataLoader(
        BookIMDBDataset(corpus.train.texts, corpus.train.labels, tok),
        batch_size=16,
        shuffle=True,
        generator=torch.Generator().manual_seed(0),
    )

    def book_batches():
        while True:
            yield from loader

    book_iter = book_batches()

    def book_step():
        ids, mask, labels = next(book_iter)
        ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = loss_fn(model(ids, mask), labels)  # noqa: F821 (model: the enclosing function's, bound again below)
        loss.backward()
        optimizer.step()
        loss.item()  # listing 1.38 sums loss.item() every step
        return ids.shape[0], ids.shape[1], int(mask.sum())

    rows.append(
        measure(
            "book",
            book_step,
            warm_n(book_step, args.warmup),
            args.steps,
            device,
            shape,
            "fp32",
            "listings 1.26-1.29, 1.38; batch 16, padded to 256",
        )
    )
    del model, optimizer
    # fp32: our pipeline before issue 27
    if cuda:
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.cuda.empty_cache()
    batch = args.batch_size or (loop.AUTO_CUDA_BATCH if cuda else 32)
    model = fresh(False)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    host = Batcher(data, device, tok.pad_id, shape["max_len"])
    fp32_iter = endless(batch)

    def fp32_step():
        index = next(fp32_iter)
        ids, mask, labels, real, _ = host.batch(index)
        optimizer.zero_grad()
        loss = loss_fn(model(ids, mask), labels)  # noqa: F821 (the enclosing function's model, bound again above)
        loss.backward()
        optimizer.step()
        loss.item()
        return ids.shape[0], ids.shape[1], real

    rows.append(
        measure(
            "fp32",
            fp32_step,
            warm_n(fp32_step, args.warmup),
            args.steps,
            device,
            shape,
            "tf32" if cuda else "fp32",
            f"cached ids, padded per batch on the host, batch {batch}, eager",
        )
    )
    del model, optimizer
    if cuda:
        torch.cuda.empty_cache()
    # ours: kata train's step with its settings for this device
    cfg = TrainConfig(
        batch_size=args.batch_size,
        compile="auto" if args.compile is None else args.compile,
        **{k: v for k, v in shape.items()},
    )
    settings = loop.choose_settings(cfg, device)
    amp_ctx, _ = loop._autocast(device, settings.amp)
    raw = fresh(True)
    runner = loop.compile_model(raw, settings)
    optimizer = loop.build_optimizer(raw, 3e-4, 0.01, device)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    params = list(raw.parameters())
    losses = loop.LossWindow(settings.sync_every)
    source = Batcher(
        data,
        device,
        tok.pad_id,
        shape["max_len"],
        buckets=settings.buckets,
        resident=settings.resident,
        fill_id=tok.cls_id,
    )
    fixed = settings.batch_size if settings.buckets else None
    ours_iter = endless(settings.batch_size)
    count = [0]

    def ours_step(index=None):
        index = index if index is not None else next(ours_iter)
        ids, mask, labels, real, _ = source.batch(index, rows=fixed)
        loss = loop.train_step(runner, params, optimizer, scheduler, 1.0, amp_ctx, ids, mask, labels)
        count[0] += 1
        losses.add(count[0], loss)
        return ids.shape[0], ids.shape[1], real

    def ours_warm():
        n = 0
        if settings.buckets:  # one step of every padded length: compilation and graph capture happen here
            lengths = data.lengths.tolist()
            for lo, hi in zip((0,) + settings.buckets, settings.buckets):
                pick = [i for i, n_ in enumerate(lengths) if lo < n_ <= hi][: settings.batch_size]
                if pick:
                    ours_step(pick)
                    n += 1
        for _ in range(args.warmup):
            ours_step()
        return n + args.warmup

    note = (
        f"kata train on {device.type}: batch {settings.batch_size}, compile {settings.compile}, lengths "
        f"{','.join(map(str, settings.buckets)) if settings.buckets else 'per batch'}, ids "
        f"{'on the device' if settings.resident else 'on the host'}, loss read every {settings.sync_every}"
    )
    precision = "bf16" if settings.amp == "bf16" else ("tf32" if cuda else "fp32")
    rows.append(measure("ours", ours_step, ours_warm, args.steps, device, shape, precision, note))
    losses.read()
    rows[-1]["settings"] = settings.describe()
    base = rows[0]["tokens_per_s"]
    name = torch.cuda.get_device_name(device) if cuda else "CPU"
    print(f"\nthroughput on {device} ({name}), {args.steps} timed steps each after a warm-up:")
    print(
        f"  {'pipeline':8} {'precision':9} {'warm-up':>13} {'median step':>12} {'real tok/s':>12} "
        f"{'padded tok/s':>13} {'MFU':>6} {'vs book':>8}"
    )
    for r in rows:
        mfu = f"{100 * r['mfu']:5.1f}%" if r["mfu"] is not None else "    -"
        print(
            f"  {r['pipeline']:8} {r['precision']:9} {r['warmup_steps']:4d} in {r['warmup_seconds']:5.1f} s "
            f"{r['median_step_ms']:9.2f} ms {r['tokens_per_s']:12,.0f} {r['padded_tokens_per_s']:13,.0f} {mfu:>6} "
            f"{r['tokens_per_s'] / base:7.1f}x"
        )
        print(f"           {r['note']}")
    return rows


def time_to_accuracy(args, shape) -> dict:
    """`kata train` with its defaults for this device (as a user runs it), validation every --eval-every steps."""
    with tempfile.TemporaryDirectory(prefix="kata-gpu-bench-") as out:
        cfg = TrainConfig(
            code="reference",
            data=args.data,
            out=out,
            epochs=args.epochs,
            batch_size=args.batch_size,
            lr=args.lr,
            eval_every=args.eval_every,
            device=args.device,
            compile="auto" if args.compile is None else args.compile,
            quiet=True,
            limit=args.limit,
            **shape,
        )
        start = time.perf_counter()
        m = train(cfg, ROOT, log=lambda *a, **k: None)
        wall = time.perf_counter() - start
    elapsed, reached = 0.0, None
    for h in m["history"]:
        elapsed += h["seconds"]
        if reached is None and h["val_accuracy"] >= args.target:
            reached = {"step": h["step"], "train_seconds": elapsed}
    best = max(h["val_accuracy"] for h in m["history"])
    train_s = sum(h["seconds"] for h in m["history"])
    tps = sum(h["tokens"] for h in m["history"]) / max(1e-9, train_s)
    print(
        f"\ntime to accuracy (kata train's defaults: {m['device']}, {m['settings']}, {m['steps_total']} steps, "
        f"data {m['data']['source'][:70]}):"
    )
    print(
        f"  validation accuracy >= {100 * args.target:.1f}%: "
        + (
            f"step {reached['step']}, after {reached['train_seconds']:.1f} s of training (compilation included)"
            if reached
            else "not reached"
        )
    )
    print(
        f"  best validation accuracy {100 * best:.2f}%, test accuracy of the best checkpoint "
        f"{100 * m['test']['accuracy']:.2f}%; {tps:,.0f} real tokens/s over {train_s:.1f} s of training; "
        f"wall {wall:.1f} s (with data loading and evaluation)"
    )
    return {
        "target": args.target,
        "reached": reached,
        "best_val_accuracy": best,
        "test_accuracy": m["test"]["accuracy"],
        "tokens_per_s": tps,
        "train_seconds": train_s,
        "wall_seconds": wall,
        "steps": m["steps_total"],
        "history": m["history"],
        "device": m["device"],
        "dtype": m["dtype"],
        "settings": m["settings"],
    }


def preset_run(args, corpus, shape) -> dict:
    """TF-IDF + logistic regression against `kata train --preset gpu` (pre-training, then
    fine-tuning) on the same split: every choice made on the validation split, the test split read once."""
    base = tfidf(corpus, 0.1, 0)
    overrides = dict(pretrain_mlm=args.preset_pretrain_steps) if args.preset_pretrain_steps else {}
    with tempfile.TemporaryDirectory(prefix="kata-gpu-preset-") as out:
        cfg = TrainConfig(
            code="reference",
            data=args.data,
            out=out,
            device=args.device,
            preset="gpu",
            quiet=True,
            **overrides,
            **shape,
        )
        start = time.perf_counter()
        m = train(cfg, ROOT, log=lambda *a, **k: None)
        wall = time.perf_counter() - start
    pre = m.get("pretrain") or {}
    fine_s = sum(h["seconds"] for h in m["history"])
    bert = {
        "test_accuracy": m["test"]["accuracy"],
        "macro_f1": m["test"]["report"]["macro avg"]["f1-score"],
        "best_val_accuracy": m["best"]["val_accuracy"],
        "best_step": m["best"]["step"],
        "pretrain_steps": pre.get("steps", 0),
        "pretrain_seconds": pre.get("seconds", 0.0),
        "pretrain_loss": [pre.get("first_mean"), pre.get("last_mean")],
        "pretrain_texts": pre.get("texts", 0),
        "pretrain_settings": pre.get("settings"),
        "fine_steps": m["steps_total"],
        "fine_seconds": fine_s,
        "train_seconds": pre.get("seconds", 0.0) + fine_s,
        "wall_seconds": wall,
        "config": m["config"],
        "settings": m["settings"],
    }
    print(
        f"\nBERT (kata train --preset gpu) against TF-IDF + logistic regression, the same split "
        f"(train {base['train']:,}, validation {base['val']:,}, test {base['test']:,}):"
    )
    print(
        f"  TF-IDF + LR (C={base['C']}, chosen on validation): test {100 * base['accuracy']:.2f}%, "
        f"macro F1 {base['macro_f1']:.4f}, {base['seconds']:.0f} s"
    )
    print(
        f"  BERT --preset gpu: {bert['pretrain_steps']} pre-training steps ({bert['pretrain_seconds']:.0f} s, "
        f"masked-token loss {bert['pretrain_loss'][0] or 0:.2f} -> {bert['pretrain_loss'][1] or 0:.2f}) + "
        f"{bert['fine_steps']} fine-tuning steps ({fine_s:.0f} s): best validation "
        f"{100 * bert['best_val_accuracy']:.2f}% (step {bert['best_step']}), test {100 * bert['test_accuracy']:.2f}%, "
        f"macro F1 {bert['macro_f1']:.4f}; training {bert['train_seconds']:.0f} s, wall {wall:.0f} s"
    )
    verdict = "beats" if bert["test_accuracy"] > base["accuracy"] else "does not beat"
    print(f"  BERT {verdict} TF-IDF on the test split ({100 * (bert['test_accuracy'] - base['accuracy']):+.2f} points)")
    return {"tfidf": base, "bert_preset_gpu": bert, "beats_tfidf": bert["test_accuracy"] > base["accuracy"]}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", default="offline", help="offline (default), imdb, or a local IMDb copy")
    p.add_argument("--device", default="cuda")
    p.add_argument("--steps", type=int, default=300, help="timed steps per pipeline (default 300)")
    p.add_argument("--warmup", type=int, default=20, help="warm-up steps per pipeline, timed apart (default 20)")
    p.add_argument("--batch-size", type=int, default=0, help="0 (default): kata train's for the device")
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--eval-every", type=int, default=100)
    p.add_argument("--lr", type=float, default=5e-4)
    p.add_argument("--target", type=float, default=0.85)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument(
        "--compile",
        nargs="?",
        const="on",
        default=None,
        choices=["auto", "off", "on", "cudagraphs"],
        help="kata train's --compile for 'ours' and time to accuracy (default: its auto)",
    )
    p.add_argument(
        "--skip", action="append", default=[], choices=["throughput", "accuracy"], help="leave a part out (repeatable)"
    )
    p.add_argument(
        "--preset-run", action="store_true", help="also TF-IDF + LR against kata train --preset gpu on the same split"
    )
    p.add_argument(
        "--preset-pretrain-steps",
        type=int,
        default=0,
        help="pre-training steps of the preset run (default 0: the preset's)",
    )
    p.add_argument(
        "--compare-minutes",
        type=float,
        default=0,
        help="training-step time per BERT in the equal-time pre-training comparison (default 0: skipped)",
    )
    p.add_argument(
        "--pretrain-share",
        type=float,
        default=0.5,
        help="the share of the pre-trained BERT's minutes spent pre-training (default 0.5)",
    )
    p.add_argument("--smoke", action="store_true", help="a tiny model and few steps: checks the script, not the GPU")
    p.add_argument("--json", help="also write the figures here")
    args = p.parse_args(argv)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("train_gpu: no CUDA device here (use --device cpu --smoke to try the script)", file=sys.stderr)
        return 2
    shape = dict(BOOK)
    if args.smoke:
        shape = SMOKE
        args.steps, args.warmup, args.epochs, args.eval_every, args.batch_size = 3, 1, 1, 20, 16
        args.compare_minutes = min(args.compare_minutes, 0.05)
        args.preset_pretrain_steps = args.preset_pretrain_steps or 3
        args.data = args.data if args.data != "offline" else "synthetic:400"
    corpus = load_source(args.data)
    tok = load_tokenizer(
        ROOT / "solutions", shape["max_len"]
    )  # kata train's tokenizer: the exercise's, here the reference solution's
    module = load_classifier_module(ROOT / "solutions")
    figures = {
        "device": torch.cuda.get_device_name() if args.device.startswith("cuda") else "CPU",
        "torch": torch.__version__,
        "data": corpus.source,
        "shape": shape,
    }

    def save():
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=2))

    if "throughput" not in args.skip:
        figures["throughput"] = throughput(args, corpus, module, tok, shape)
        save()
    if "accuracy" not in args.skip:
        figures["time_to_accuracy"] = time_to_accuracy(args, shape)
        save()
    if args.preset_run:
        figures["preset_gpu"] = preset_run(args, corpus, shape)
        save()
    if args.compare_minutes:
        figures["comparison"] = compare(
            corpus,
            args.data,
            module,
            tok,
            shape,
            minutes=args.compare_minutes,
            share=args.pretrain_share,
            batch_size=args.batch_size or 64,
            lr=args.lr,
            device=args.device,
            compile=args.compile not in (None, "off"),
        )
        save()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
