"""`kata train`: train listing 1.35's classifier on a sentiment corpus, properly and fast.

What it adds to the book's loop (listings 1.37-1.40):
- device: CUDA, then Apple's MPS, then the CPU; bf16 autocast on CUDA; optional torch.compile;
- the attention fast path (grader.capstone.training.model), checked equal to the model's own attention;
- the s1_23_tokenizer exercise's own tokenizer, from the same code as the model (tokenizer.py);
- token ids computed once (datasets.map, cached under .kata/cache/datasets), batches padded to
  their own longest row (batches.py);
- AdamW with linear warmup then linear decay, gradient clipping;
- a validation split carved from the training set, evaluated every epoch (or every N steps),
  the best weights kept on disk; the test set is evaluated once, with the best weights;
- a progress bar, metrics.json, curves.png and scikit-learn's classification report;
- with --pretrain-mlm STEPS, masked-language-model pre-training first (beyond the book: the
  s1_23_mlm exercise, pretrain.py) on the source's unlabelled text, then fine-tuning as above;
- Ctrl-C stops cleanly and keeps the best checkpoint;
- unchanged under `torchrun --nproc_per_node N` (DistributedDataParallel; NCCL on GPUs, gloo on CPUs).

What it prints and its errors are in the reader's language (`kata --lang`, KATA_LANG, the locale:
grader/course/messages.py), and so are its figures where matplotlib has a CJK font
(grader/course/figure_text.py); metrics.json and best.json stay in English, the same in every run.
"""
from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import torch
import torch.nn as nn

from ...course import atomic
from ...course.messages import Msg, code, t
from . import baseline, outputs
from .batches import Encoded, LengthBatches, collate
from .config import TrainConfig
from .model import ModelError, build_model, check_forward, fast_attention, load_classifier_module, probe_batch
from .pretrain import PretrainError, encoder_of, load_mlm_module, pretrain_mlm
from .tokenizer import TokenizerError, load_tokenizer


class TrainError(RuntimeError):
    """A run that cannot start: the message says why and what to do."""


# ---------------------------------------------------------------- devices and processes

@dataclass
class Dist:
    rank: int = 0
    world: int = 1
    local_rank: int = 0

    @property
    def main(self) -> bool:
        return self.rank == 0


def choose_device(name: str, dist: Dist) -> torch.device:
    if name == "auto":
        if torch.cuda.is_available():
            name = "cuda"
        elif getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
            name = "mps"
        else:
            name = "cpu"
    if name == "cuda":
        if not torch.cuda.is_available():
            raise TrainError(t("train_no_cuda"))
        return torch.device("cuda", dist.local_rank % torch.cuda.device_count())
    if name == "mps" and not (getattr(torch.backends, "mps", None) and torch.backends.mps.is_available()):
        raise TrainError(t("train_no_mps"))
    if name not in ("cpu", "mps"):
        raise TrainError(t("train_bad_device", name=name))
    return torch.device(name)


def init_distributed() -> Dist:
    """Join the process group torchrun describes (WORLD_SIZE > 1); a single process otherwise."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return Dist()
    import torch.distributed as td

    backend = "nccl" if torch.cuda.is_available() else "gloo"
    if not td.is_initialized():
        td.init_process_group(backend=backend)
    return Dist(td.get_rank(), td.get_world_size(), int(os.environ.get("LOCAL_RANK", "0")))


def _barrier(dist: Dist) -> None:
    if dist.world > 1:
        import torch.distributed as td
        td.barrier()


def _all_sum(values: list[float], dist: Dist, device: torch.device) -> list[float]:
    if dist.world == 1:
        return values
    import torch.distributed as td
    t = torch.tensor(values, dtype=torch.float64, device=device)
    td.all_reduce(t)
    return t.tolist()


def _gather(items: list, dist: Dist) -> list:
    if dist.world == 1:
        return items
    import torch.distributed as td
    parts = [None] * dist.world
    td.all_gather_object(parts, items)
    return [x for p in parts for x in p]


# ---------------------------------------------------------------- data

@dataclass
class Data:
    train: Encoded
    val: Encoded
    test: Encoded
    tokenizer: object
    source: str  # in English (metrics.json, the figures)
    notes: list[str] = field(default_factory=list)
    cached: bool = False
    source_msg: Msg | None = None  # the source in both languages, for the progress line


def encode_split(split, tok) -> tuple[Encoded, bool]:
    """The unpadded ids of a split (a datasets.Dataset with text and label; from the cache after the
    first time) and whether they were cached. `tok`: a training tokenizer
    (grader.capstone.training.tokenizer.Tokenizer)."""
    from ..data import tokenize

    ids, cached = tokenize(split, tok.encode_batch, tok.key)
    return _encoded(ids, tok), cached


def _encoded(ids, tok) -> Encoded:
    """Encoded (flat tensors) of a tokenized split, every id checked to be in the vocabulary."""
    found = Encoded.from_dataset(ids)
    if found.ids.numel() and (int(found.ids.min()) < 0 or int(found.ids.max()) >= tok.vocab_size):
        raise TrainError(t("train_ids_outside", path=tok.path, top=tok.vocab_size - 1, low=int(found.ids.min()),
                           high=int(found.ids.max())))
    return found


def load_data(cfg: TrainConfig, dist: Dist, tok) -> Data:
    """The corpus cfg.data, tokenized (datasets.map, cached), its train split cut (cfg.limit) and
    split again into train and validation (stratified, cfg.seed)."""
    from ..data import DataError, holdout, load_source, tokenize

    try:
        corpus = load_source(cfg.data)
        train_split = corpus["train"]
        if cfg.limit and len(train_split) > cfg.limit:
            keep = torch.randperm(len(train_split), generator=torch.Generator().manual_seed(cfg.seed))[:cfg.limit]
            train_split = train_split.select(sorted(keep.tolist()))
    except DataError as e:
        raise TrainError(t("train_data_error", error=e)) from None
    parts = {}
    cached = True
    for turn in (0, 1):  # the main process fills the cache first (ids, split indices), the others then read it
        if (turn == 0) == dist.main:
            for name, split in (("train", train_split), ("test", corpus["test"])):
                parts[name], hit = tokenize(split, tok.encode_batch, tok.key)
                cached = cached and hit
            try:
                train_ids, val_ids = holdout(parts["train"], cfg.val_fraction, cfg.seed)
            except DataError as e:
                raise TrainError(t("train_data_source_error", data=cfg.data, error=e)) from None
        _barrier(dist)
    if min(len(train_ids), len(val_ids), len(parts["test"])) == 0:
        raise TrainError(t("train_empty_split", data=cfg.data, train=len(train_ids), val=len(val_ids),
                           test=len(parts["test"])))
    return Data(_encoded(train_ids, tok), _encoded(val_ids, tok), _encoded(parts["test"], tok), tok, corpus.source,
                list(corpus.notes), cached, corpus.source_msg)


def pretrain(cfg: TrainConfig, code_dir: Path, model: nn.Module, tok, dist: Dist, device: torch.device,
             log) -> dict:
    """Masked-language-model pre-training of `model`'s encoder for cfg.pretrain_mlm steps on the
    unlabelled text of cfg.data (grader.capstone.data.unlabelled_texts: the source's unlabelled
    texts, then its train split's texts without labels, never the test split's), at most
    cfg.limit of them (a draw with cfg.seed) when --limit is given. Every process runs it with
    the same seed before DDP wraps the model. The token embedding grows by a row for [MASK]
    (pretrain.py). Returns what metrics.json records of the phase ("seconds": the training steps;
    "data_seconds": reading and tokenizing the text before them; "data": what the text is, in English)."""
    from ..data import DataError, tokenize, unlabelled_texts_described

    started = time.perf_counter()
    mlm = load_mlm_module(code_dir)
    try:
        texts, described = unlabelled_texts_described(cfg.data)
    except DataError as e:
        raise TrainError(t("train_data_error", error=e)) from None
    if cfg.limit and len(texts) > cfg.limit:
        described = Msg.key("train_pretrain_limited", data=described, count=f"{cfg.limit:,}")
        keep = torch.randperm(len(texts), generator=torch.Generator().manual_seed(cfg.seed))[:cfg.limit]
        texts = texts.select(sorted(keep.tolist()))
    for turn in (0, 1):  # the main process fills the token-id cache first, the others then read it
        if (turn == 0) == dist.main:
            ids, _ = tokenize(texts, tok.encode_batch, tok.key)
        _barrier(dist)
    rows = ids.with_format("arrow")["input_ids"].to_pylist()
    log(t("train_pretrain_data", data=described))
    data_seconds = time.perf_counter() - started
    losses = pretrain_mlm(model, list(range(len(rows))), rows.__getitem__, cfg.pretrain_mlm, cfg.batch_size,
                          cfg.lr, cfg.seed, device, log, mlm=mlm, special_ids=(tok.pad_id, tok.cls_id, tok.sep_id),
                          mask_id=tok.vocab_size, base_vocab_size=min(tok.pad_id, tok.cls_id, tok.sep_id))
    window = max(1, min(10, len(losses) // 4))
    return {"steps": len(losses), "texts": len(rows), "data": described.render("en"), "code": str(mlm.__file__),
            "mask_id": tok.vocab_size, "vocab_size": encoder_of(model).embed.token.num_embeddings,
            "first_loss": losses[0], "last_loss": losses[-1],
            "first_mean": sum(losses[:window]) / window, "last_mean": sum(losses[-window:]) / window,
            "losses": losses, "seconds": time.perf_counter() - started - data_seconds, "data_seconds": data_seconds}


# ---------------------------------------------------------------- the run

def _schedule(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def _autocast(device: torch.device, amp: str):
    if amp == "off" or (amp == "auto" and device.type != "cuda"):
        return contextlib.nullcontext(), torch.float32
    if amp not in ("auto", "bf16"):
        raise TrainError(t("train_bad_amp", amp=amp))
    return torch.autocast(device.type, dtype=torch.bfloat16), torch.bfloat16


def evaluate(model, data: Encoded, batch_size: int, pad_id: int, max_len: int, device, amp_ctx, dist: Dist,
             want_predictions: bool = False):
    """(mean loss, accuracy, [(index, label, prediction)]) over `data`, sharded across processes."""
    loss_fn = nn.CrossEntropyLoss(reduction="sum")
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    rows = []
    with torch.no_grad():
        for index in LengthBatches(data.lengths, batch_size, shuffle=False, rank=dist.rank, world=dist.world):
            ids, mask, labels = collate(data, index, pad_id, max_len)
            ids, mask, labels = ids.to(device), mask.to(device), labels.to(device)
            with amp_ctx:
                logits = model(ids, mask)
            logits = logits.float()
            total_loss += loss_fn(logits, labels).item()
            preds = logits.argmax(dim=1)
            correct += int((preds == labels).sum())
            count += len(index)
            if want_predictions:
                rows += list(zip(index, labels.tolist(), preds.tolist()))
    total_loss, correct, count = _all_sum([total_loss, correct, count], dist, device)
    if want_predictions:
        rows = sorted(_gather(rows, dist))
    return total_loss / count, correct / count, rows


class _Progress:
    """A rich progress bar on the main process (nothing on the others, or when quiet)."""

    def __init__(self, enabled: bool, total: int, log):
        self.bar = None
        self.fallback = log
        if enabled:
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                                       TimeRemainingColumn)
            self.bar = Progress(TextColumn(f"[bold]{t('train_bar')}[/]"), BarColumn(), MofNCompleteColumn(),
                                TextColumn("{task.fields[info]}"), TimeElapsedColumn(), TimeRemainingColumn(),
                                transient=False)
            self.task = self.bar.add_task("train", total=total, info="")
            self.bar.start()

    def update(self, info: str) -> None:
        if self.bar is not None:
            self.bar.update(self.task, advance=1, info=info)

    def log(self, line: str) -> None:
        if self.bar is not None:
            self.bar.console.print(line, highlight=False, soft_wrap=True, markup=False)
        else:
            self.fallback(line)

    def stop(self) -> None:
        if self.bar is not None:
            self.bar.stop()


def resolve_code(code: str, root: Path) -> Path:
    if code == "reference":
        return root / "solutions"
    if code == "student":
        return root / "exercises"
    return Path(code)


def train(cfg: TrainConfig, root: Path, log=print) -> dict:
    """Run `cfg`; returns the metrics document (also written to <out>/metrics.json).
    Raises TrainError (nothing trained) or KeyboardInterrupt after writing what it has."""
    dist = init_distributed()
    if not dist.main:
        log = lambda *a, **k: None  # noqa: E731
    try:
        return _train(cfg, root, dist, log)
    finally:
        if dist.world > 1:
            import torch.distributed as td
            if td.is_initialized():
                td.destroy_process_group()


def _train(cfg: TrainConfig, root: Path, dist: Dist, log) -> dict:
    from ... import __version__

    started = time.perf_counter()
    torch.manual_seed(cfg.seed)
    device = choose_device(cfg.device, dist)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    amp_ctx, amp_dtype = _autocast(device, cfg.amp)
    out = Path(cfg.out) if cfg.out else root / ".kata" / "runs" / time.strftime("%Y%m%d-%H%M%S")
    code_dir = resolve_code(cfg.code, root)
    if cfg.code == "reference" and not code_dir.is_dir():
        raise TrainError(t("train_no_reference", path=code_dir))
    hint = t("train_tokenizer_hint_reference") if cfg.code != "reference" and (root / "solutions").is_dir() else ""
    tok = load_tokenizer(code_dir, cfg.max_len, cfg.truncation, hint=hint)
    module = load_classifier_module(code_dir)
    model = build_model(module, vocab_size=tok.vocab_size, dim=cfg.dim, max_len=cfg.max_len, layers=cfg.layers,
                        heads=cfg.heads, ff_dim=cfg.ff_dim)
    check_forward(model, probe_batch(tok.vocab_size, cfg.max_len, tok.pad_id, tok.cls_id), module.__file__)
    data = load_data(cfg, dist, tok)
    log(t("train_data_line", source=data.source_msg or data.source, train=len(data.train), val=len(data.val),
          test=len(data.test), ids=Msg.key("train_ids_cached") if data.cached else Msg.key("train_ids_computed"),
          tokenizer=tok.path))
    n_params = sum(p.numel() for p in model.parameters())
    fast, why_not = 0, Msg.key("train_fast_disabled")
    if cfg.fast_attention:
        fast, why_not = fast_attention(model, probe_batch(tok.vocab_size, cfg.max_len, tok.pad_id, tok.cls_id))
    log(t("train_model_line", file=module.__file__, params=n_params, dim=cfg.dim, layers=cfg.layers, heads=cfg.heads,
          ff=cfg.ff_dim, device=device, world=f" x{dist.world}" if dist.world > 1 else "",
          dtype=Msg.key("train_bf16") if amp_dtype == torch.bfloat16 else code("fp32"),
          fast=Msg.key("train_fast_on", count=fast) if fast else Msg.key("train_fast_off", why=why_not)))
    pretrained = None
    if cfg.pretrain_mlm:  # before the optimizer, torch.compile and DDP: the token embedding may be replaced
        torch.manual_seed(cfg.seed)
        pretrained = pretrain(cfg, code_dir, model, tok, dist, device, log)
        n_params = sum(p.numel() for p in model.parameters())
    vocab_size = encoder_of(model).embed.token.num_embeddings if cfg.pretrain_mlm else tok.vocab_size
    raw = model.to(device)
    runner = raw
    if cfg.compile:
        runner = torch.compile(runner, dynamic=True)
    if dist.world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP
        runner = DDP(runner, device_ids=[device.index] if device.type == "cuda" else None)

    batches = LengthBatches(data.train.lengths, cfg.batch_size, shuffle=True, seed=cfg.seed, rank=dist.rank,
                            world=dist.world)
    per_epoch = len(batches)
    total = per_epoch * cfg.epochs
    if cfg.max_steps:
        total = min(total, cfg.max_steps)
    if total == 0:
        raise TrainError(t("train_no_step"))
    warmup = max(1, round(cfg.warmup * total))
    decay, no_decay = [], []
    for name, p in raw.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in name else decay).append(p)
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=cfg.lr,
                                  fused=device.type == "cuda")
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _schedule(s, total, warmup))
    loss_fn = nn.CrossEntropyLoss()
    eval_every = cfg.eval_every or per_epoch

    metrics = {
        "schema": outputs.METRICS_SCHEMA, "kata_version": __version__, "torch": torch.__version__,
        "device": str(device), "world_size": dist.world, "dtype": str(amp_dtype).replace("torch.", ""),
        "compile": cfg.compile, "fast_attention": {"modules": fast, "reason": why_not.render("en") if why_not else ""},
        "code": str(module.__file__), "tokenizer": str(tok.path), "parameters": n_params, "config": asdict(cfg),
        "data": {"source": data.source, "notes": data.notes, "train": len(data.train), "val": len(data.val),
                 "test": len(data.test)},
        "steps_total": total, "history": [], "best": None, "test": None, "interrupted": False, "seconds": None,
    }
    if pretrained is not None:
        metrics["pretrain"] = pretrained
    if dist.main:
        out.mkdir(parents=True, exist_ok=True)
    log(t("train_output", path=out))
    best_acc = -1.0
    step, epoch = 0, 0
    window_loss, window_n, tokens, padded = 0.0, 0, 0, 0
    window_start = time.perf_counter()
    progress = _Progress(dist.main and not cfg.quiet, total, log)

    def validate():
        nonlocal best_acc, window_loss, window_n, tokens, padded, window_start
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - window_start
        train_tokens = _all_sum([tokens, padded], dist, device)
        val_loss, val_acc, _ = evaluate(runner, data.val, cfg.batch_size * 2, tok.pad_id, cfg.max_len, device,
                                        amp_ctx, dist)
        entry = {"epoch": epoch + 1, "step": step, "train_loss": window_loss / max(1, window_n),
                 "val_loss": val_loss, "val_accuracy": val_acc, "lr": scheduler.get_last_lr()[0],
                 "seconds": seconds, "tokens": int(train_tokens[0]), "padded_tokens": int(train_tokens[1]),
                 "tokens_per_s": train_tokens[0] / seconds if seconds else 0.0}
        improved = val_acc > best_acc
        if improved:
            best_acc = val_acc
            if dist.main:
                info = {"config": dict(vocab_size=vocab_size, dim=cfg.dim, max_len=cfg.max_len, layers=cfg.layers,
                                       heads=cfg.heads, ff_dim=cfg.ff_dim),
                        "tokenizer": {"code": str(tok.path), "encoding": tok.name, "pad_id": tok.pad_id, "cls_id": tok.cls_id,
                                      "sep_id": tok.sep_id, "max_len": tok.max_len, "truncation": tok.truncation,
                                      "head_len": tok.head_len},
                        "code": str(module.__file__), "epoch": epoch + 1, "step": step, "val_accuracy": val_acc}
                outputs.save_checkpoint(out, raw.state_dict(), info)
            metrics["best"] = {"epoch": epoch + 1, "step": step, "val_accuracy": val_acc,
                               "path": str(out / "best.safetensors")}
        entry["best"] = improved
        metrics["history"].append(entry)
        if dist.main:
            atomic.write_json(out / "metrics.json", metrics)
        progress.log(t("train_eval_line", step=step, total=total, epoch=epoch + 1, train_loss=entry["train_loss"],
                       val_loss=val_loss, acc=100 * val_acc, speed=entry["tokens_per_s"],
                       best=Msg.key("train_best_saved") if improved else ""))
        runner.train()
        window_loss, window_n, tokens, padded = 0.0, 0, 0, 0
        window_start = time.perf_counter()

    try:
        runner.train()
        while step < total:
            batches.set_epoch(epoch)
            for index in batches:
                ids, mask, labels = collate(data.train, index, tok.pad_id, cfg.max_len)
                tokens += int(mask.sum())
                padded += mask.numel()
                ids = ids.to(device, non_blocking=True)
                mask = mask.to(device, non_blocking=True)
                labels = labels.to(device, non_blocking=True)
                optimizer.zero_grad(set_to_none=True)
                with amp_ctx:
                    logits = runner(ids, mask)
                loss = loss_fn(logits.float(), labels)
                if not torch.isfinite(loss):
                    raise TrainError(t("train_loss_nonfinite", loss=loss.item(), step=step + 1, lr=cfg.lr))
                loss.backward()
                if cfg.clip:
                    torch.nn.utils.clip_grad_norm_(raw.parameters(), cfg.clip)
                optimizer.step()
                scheduler.step()
                step += 1
                window_loss += loss.item()
                window_n += 1
                progress.update(t("train_bar_loss", loss=window_loss / window_n))
                if step % eval_every == 0 or step == total:
                    validate()
                if step >= total:
                    break
            epoch += 1
    except KeyboardInterrupt:
        progress.stop()
        metrics["interrupted"] = True
        metrics["seconds"] = time.perf_counter() - started
        if dist.main:
            atomic.write_json(out / "metrics.json", metrics)
            if metrics["history"]:
                outputs.plot_curves(out / "curves.png", metrics["history"], _title(cfg, data))
        best = metrics["best"]
        log(t("train_interrupted", step=step, total=total,
              kept=Msg.key("train_interrupted_kept", step=best["step"], acc=100 * best["val_accuracy"], out=out)
              if best else Msg.key("train_interrupted_nothing")))
        raise
    progress.stop()

    # the test set, once, with the best weights
    _, state = outputs.load_checkpoint(out) if dist.main else (None, None)
    if dist.world > 1:
        state = _broadcast_state(state, dist)
    raw.load_state_dict(state)
    test_loss, test_acc, rows = evaluate(runner, data.test, cfg.batch_size * 2, tok.pad_id, cfg.max_len, device,
                                         amp_ctx, dist, want_predictions=True)
    labels = [r[1] for r in rows]
    preds = [r[2] for r in rows]
    from sklearn.metrics import classification_report, confusion_matrix

    names = ["negative", "positive"]
    report_text = classification_report(labels, preds, labels=[0, 1], target_names=names, digits=4,
                                        zero_division=0)
    metrics["test"] = {"loss": test_loss, "accuracy": test_acc,
                       "report": classification_report(labels, preds, labels=[0, 1], target_names=names,
                                                       output_dict=True, zero_division=0),
                       "confusion": confusion_matrix(labels, preds, labels=[0, 1]).tolist()}
    majority = baseline.majority(labels, preds, test_acc, names)
    metrics["test"]["majority"] = {**majority, "note": baseline.note(majority, lang="en") or None}
    metrics["seconds"] = time.perf_counter() - started
    if dist.main:
        atomic.write_json(out / "metrics.json", metrics)
        outputs.plot_curves(out / "curves.png", metrics["history"], _title(cfg, data))
        _plot_attention(out / "cls_attention.png", raw, data.test, tok, dict((r[0], r[2]) for r in rows), device)
    log(t("train_test_line", step=metrics["best"]["step"], acc=100 * test_acc, loss=test_loss))
    if metrics["test"]["majority"]["note"]:
        log(baseline.note(majority))  # in the reader's language; metrics.json keeps the English
    log(report_text.rstrip())
    log(t("train_wrote", metrics=out / "metrics.json", curves=out / "curves.png",
          attention=out / "cls_attention.png", weights=out / "best.safetensors"))
    return metrics


def _plot_attention(path: Path, model, test: Encoded, tok, predicted: dict, device) -> None:
    """The [CLS] attention rows of one short test review (the first of 8 to 40 tokens)."""
    from .attention_map import attention_title, cls_attention, plot_cls_attention

    lengths = test.lengths.tolist()
    pick = next((i for i, n in enumerate(lengths) if 8 <= n <= 40), min(range(len(lengths)), key=lengths.__getitem__))
    ids, mask, labels = collate(test, [pick], tok.pad_id)
    n = lengths[pick]
    weights = cls_attention(model, ids.to(device), mask.to(device))[:, :, :n]
    tokens = [tok.token_text(i) for i in ids[0, :n].tolist()]
    plot_cls_attention(path, weights, tokens, attention_title(pick, int(labels[0]), predicted.get(pick, 0)))


def _broadcast_state(state, dist: Dist):
    import torch.distributed as td
    box = [state]
    td.broadcast_object_list(box, src=0)
    return box[0]


def _title(cfg: TrainConfig, data: Data) -> str:
    return outputs.curves_title(cfg.dim, cfg.layers, cfg.heads, data.source_msg or data.source)


def main_cli(args, root: Path) -> int:
    """`kata train` after argument parsing: errors to stderr, exit 130 on Ctrl-C."""
    cfg = TrainConfig(**{k: v for k, v in vars(args).items() if k in TrainConfig.__dataclass_fields__})
    try:
        train(cfg, root)
    except (TrainError, ModelError, TokenizerError, PretrainError) as e:
        print(f"kata train: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return 0


