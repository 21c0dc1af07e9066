"""What pre-training buys, measured honestly (issue 16, item 4): on the same split of one corpus,
TF-IDF + logistic regression, our BERT trained from scratch, and our BERT pre-trained as a masked
language model (`kata train --pretrain-mlm`) then fine-tuned, each BERT given the same training
time. benchmarks/train_cpu.py (CPU) and benchmarks/train_gpu.py (CUDA) print it.

The budget rule. Each BERT gets `minutes` of training-step time:
  - from scratch: all of it fine-tuning;
  - pre-trained:  `share` of it (default 0.5) pre-training, the rest fine-tuning.
Steps are fixed before the runs from the measured time of one step of each kind on this machine
(`step_seconds`: fine-tuning steps as kata train takes them, masked-language-model steps as
pretrain_mlm takes them, each timed as the difference of two runs so that start-up costs cancel),
so both runs follow their own full warmup-and-decay schedule; the table then shows the training
seconds each run really took. Not counted for either: loading and tokenizing the text,
validation, the test. The split (kata train's stratified validation split, seeded) and the test
set are the same for all three; TF-IDF's C is chosen on the same validation split.
"""

from __future__ import annotations

import contextlib
import math
import tempfile
import time
from pathlib import Path

import torch

from book_pipeline import timed_steps
from grader.capstone.data import Split, holdout, tokenize, unlabelled_texts
from grader.capstone.training.batches import LengthBatches, collate
from grader.capstone.training.loop import TrainConfig, encode_split, train
from grader.capstone.training.model import build_model, enable_fast_attention, probe_batch
from grader.capstone.training.pretrain import load_mlm_module, pretrain_mlm

ROOT = Path(__file__).resolve().parents[1]
EPOCHS = 1_000_000  # the step count, not the epochs, ends each run


def tfidf(corpus, val_fraction: float, seed: int) -> dict:
    """TF-IDF (uni- and bigrams) + logistic regression, C chosen on kata train's validation split,
    scored once on the test split."""
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.metrics import accuracy_score, f1_score

    train_split, val_split = map(Split.of, holdout(corpus["train"], val_fraction, seed))  # kata train's split
    start = time.perf_counter()
    vec = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True)
    x_train = vec.fit_transform(train_split.texts)
    best = None
    for c in (0.5, 1, 2, 4, 8, 16, 32):
        clf = LogisticRegression(C=c, max_iter=2000).fit(x_train, train_split.labels)
        acc = accuracy_score(val_split.labels, clf.predict(vec.transform(val_split.texts)))
        if best is None or acc > best[0]:
            best = (acc, c, clf)
    test = corpus.test
    preds = best[2].predict(vec.transform(test.texts))
    return {
        "accuracy": accuracy_score(test.labels, preds),
        "macro_f1": f1_score(test.labels, preds, average="macro"),
        "C": best[1],
        "seconds": time.perf_counter() - start,
        "train": len(train_split),
        "val": len(val_split),
        "test": len(test),
    }


def _fresh(module, tok, shape, device):
    torch.manual_seed(0)
    model = build_model(module, vocab_size=tok.vocab_size, **shape)
    enable_fast_attention(model, probe_batch(tok.vocab_size, shape["max_len"], tok.pad_id, tok.cls_id))
    return model.to(device)


def step_seconds(
    corpus, data_name: str, module, tok, shape, batch_size: int, lr: float, device, amp, short: int = 3, long: int = 13
) -> tuple[float, float]:
    """(seconds per fine-tuning step, seconds per masked-language-model step) on `device`: the
    time of `long` steps less that of `short` steps, over the difference."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    data, _ = encode_split(corpus["train"], tok)

    def batches():
        while True:
            for index in LengthBatches(data.lengths, batch_size, shuffle=True, seed=0):
                yield collate(data, index, tok.pad_id, shape["max_len"])

    fine = [
        timed_steps(_fresh(module, tok, shape, device), batches(), n, warmup=2, device=str(device), amp=amp)[0]
        for n in (short, long)
    ]
    mlm = load_mlm_module(ROOT / "solutions")
    rows = tokenize(unlabelled_texts(data_name), tok.encode_batch, tok.key)[0]
    rows = rows.with_format("arrow")["input_ids"].to_pylist()
    pre = []
    for n in (short, long):
        model = _fresh(module, tok, shape, device)
        sync()
        start = time.perf_counter()
        pretrain_mlm(
            model,
            list(range(len(rows))),
            rows.__getitem__,
            n,
            batch_size,
            lr,
            0,
            device,
            log=lambda *a: None,
            mlm=mlm,
            special_ids=(tok.pad_id, tok.cls_id, tok.sep_id),
            mask_id=tok.vocab_size,
            base_vocab_size=min(tok.pad_id, tok.cls_id, tok.sep_id),
        )
        sync()
        pre.append(time.perf_counter() - start)
    per = lambda t: max(1e-6, (t[1] - t[0]) / (long - short))  # noqa: E731
    return per(fine), per(pre)


def _bert(cfg: TrainConfig) -> dict:
    with tempfile.TemporaryDirectory(prefix="kata-compare-") as out:
        cfg.out = out
        m = train(cfg, ROOT, log=lambda *a, **k: None)
    pre = m.get("pretrain") or {}
    fine_s = sum(h["seconds"] for h in m["history"])
    return {
        "accuracy": m["test"]["accuracy"],
        "macro_f1": m["test"]["report"]["macro avg"]["f1-score"],
        "pretrain_steps": pre.get("steps", 0),
        "fine_steps": m["steps_total"],
        "best_step": m["best"]["step"],
        "pretrain_seconds": pre.get("seconds", 0.0),
        "fine_seconds": fine_s,
        "train_seconds": pre.get("seconds", 0.0) + fine_s,
        "wall_seconds": m["seconds"],
        "pretrain_loss": [pre["first_mean"], pre["last_mean"]] if pre else None,
        "pretrain_texts": pre.get("texts", 0),
    }


def compare(
    corpus,
    data_name: str,
    module,
    tok,
    shape: dict,
    *,
    minutes: float,
    share: float = 0.5,
    batch_size: int = 32,
    lr: float = 5e-4,
    seed: int = 0,
    val_fraction: float = 0.1,
    device: str = "cpu",
    compile: bool = False,
) -> dict:
    """The three models on `corpus` (named `data_name` for kata train) under the budget rule of
    the module's docstring; prints the table and returns the figures."""
    if not 0 <= share < 1:
        raise ValueError(f"share must be in [0, 1), not {share}")
    dev = torch.device(device)
    amp = torch.autocast("cuda", dtype=torch.bfloat16) if dev.type == "cuda" else contextlib.nullcontext()
    budget = 60 * minutes
    base = tfidf(corpus, val_fraction, seed)
    fine_s, mlm_s = step_seconds(corpus, data_name, module, tok, shape, batch_size, lr, dev, amp)
    scratch_steps = max(1, math.floor(budget / fine_s))
    pre_steps = max(1, math.floor(share * budget / mlm_s))
    after_steps = max(1, math.floor((1 - share) * budget / fine_s))
    common = dict(
        code="reference",
        data=data_name,
        epochs=EPOCHS,
        batch_size=batch_size,
        lr=lr,
        seed=seed,
        val_fraction=val_fraction,
        device=device,
        compile=compile,
        quiet=True,
        **shape,
    )
    scratch = _bert(TrainConfig(max_steps=scratch_steps, **common))
    pretrained = _bert(TrainConfig(max_steps=after_steps, pretrain_mlm=pre_steps, **common))
    result = {
        "budget_minutes": minutes,
        "pretrain_share": share,
        "device": str(dev),
        "step_seconds": {"fine_tune": fine_s, "mlm": mlm_s},
        "tfidf": base,
        "scratch": scratch,
        "pretrained": pretrained,
        "source": corpus.source,
    }
    print_table(result)
    return result


def print_table(r: dict) -> None:
    base, scratch, pre = r["tfidf"], r["scratch"], r["pretrained"]
    print(
        f"\nwhat pre-training buys, on {r['source'][:80]} ({r['device']}): train {base['train']:,}, "
        f"validation {base['val']:,}, test {base['test']:,}"
    )
    print(
        f"budget: {r['budget_minutes']:g} min of training steps per BERT; pre-trained: "
        f"{100 * r['pretrain_share']:.0f}% pre-training, the rest fine-tuning (one step: fine-tuning "
        f"{r['step_seconds']['fine_tune']:.3f} s, masked-language model {r['step_seconds']['mlm']:.3f} s)"
    )
    print(f"  {'model':<44} {'steps (pre + fine)':>19} {'train s':>8} {'test acc':>9} {'macro F1':>9}")
    print(
        f"  {'TF-IDF + logistic regression (C=' + str(base['C']) + ')':<44} {'-':>19} {base['seconds']:8.0f} "
        f"{100 * base['accuracy']:8.2f}% {base['macro_f1']:9.4f}"
    )
    for name, row in (("BERT from scratch", scratch), ("BERT pre-trained (MLM), then fine-tuned", pre)):
        steps = f"{row['pretrain_steps']} + {row['fine_steps']}"
        print(
            f"  {name:<44} {steps:>19} {row['train_seconds']:8.0f} {100 * row['accuracy']:8.2f}% {row['macro_f1']:9.4f}"
        )
    if pre["pretrain_loss"]:
        print(
            f"  pre-training: {pre['pretrain_texts']:,} unlabelled texts, masked-token loss "
            f"{pre['pretrain_loss'][0]:.2f} -> {pre['pretrain_loss'][1]:.2f} ({pre['pretrain_seconds']:.0f} s)"
        )
