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
import math
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
from .batches import Batcher, Encoded, LengthBatches, collate, parse_buckets
from .config import AUTO_BF16_BATCH, AUTO_CUDA_BATCH, AUTO_SYNC_EVERY_CUDA, TrainConfig, apply_preset
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
        raise TrainError(
            t(
                "train_ids_outside",
                path=tok.path,
                top=tok.vocab_size - 1,
                low=int(found.ids.min()),
                high=int(found.ids.max()),
            )
        )
    return found


def load_data(cfg: TrainConfig, dist: Dist, tok) -> Data:
    """The corpus cfg.data, tokenized (datasets.map, cached), its train split cut (cfg.limit) and
    split again into train and validation (stratified, cfg.seed)."""
    from ..data import DataError, holdout, load_source, tokenize

    try:
        corpus = load_source(cfg.data)
        train_split = corpus["train"]
        if cfg.limit and len(train_split) > cfg.limit:
            keep = torch.randperm(len(train_split), generator=torch.Generator().manual_seed(cfg.seed))[: cfg.limit]
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
        raise TrainError(
            t("train_empty_split", data=cfg.data, train=len(train_ids), val=len(val_ids), test=len(parts["test"]))
        )
    return Data(
        _encoded(train_ids, tok),
        _encoded(val_ids, tok),
        _encoded(parts["test"], tok),
        tok,
        corpus.source,
        list(corpus.notes),
        cached,
        corpus.source_msg,
    )


def pretrain(
    cfg: TrainConfig,
    code_dir: Path,
    model: nn.Module,
    tok,
    dist: Dist,
    device: torch.device,
    log,
    settings: Settings | None = None,
) -> dict:
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
        keep = torch.randperm(len(texts), generator=torch.Generator().manual_seed(cfg.seed))[: cfg.limit]
        texts = texts.select(sorted(keep.tolist()))
    for turn in (0, 1):  # the main process fills the token-id cache first, the others then read it
        if (turn == 0) == dist.main:
            ids, _ = tokenize(texts, tok.encode_batch, tok.key)
        _barrier(dist)
    rows = ids.with_format("arrow")["input_ids"].to_pylist()
    log(t("train_pretrain_data", data=described))
    data_seconds = time.perf_counter() - started
    settings = settings or choose_settings(cfg, device, dist.world, batch_size=cfg.pretrain_batch_size or None)
    amp_ctx, _ = _autocast(device, settings.amp)
    losses = pretrain_mlm(
        model,
        list(range(len(rows))),
        rows.__getitem__,
        cfg.pretrain_mlm,
        settings.batch_size,
        cfg.pretrain_lr or cfg.lr,
        cfg.seed,
        device,
        log,
        mlm=mlm,
        special_ids=(tok.pad_id, tok.cls_id, tok.sep_id),
        mask_id=tok.vocab_size,
        base_vocab_size=min(tok.pad_id, tok.cls_id, tok.sep_id),
        warmup=cfg.pretrain_warmup,
        clip=cfg.clip,
        amp=amp_ctx,
        sync_every=settings.sync_every,
    )
    window = max(1, min(10, len(losses) // 4))
    return {
        "steps": len(losses),
        "texts": len(rows),
        "settings": {
            **settings.describe(),
            "compile": "off",
            "lr": cfg.pretrain_lr or cfg.lr,
            "warmup": cfg.pretrain_warmup,
        },
        "data": described.render("en"),
        "code": str(mlm.__file__),
        "mask_id": tok.vocab_size,
        "vocab_size": encoder_of(model).embed.token.num_embeddings,
        "first_loss": losses[0],
        "last_loss": losses[-1],
        "first_mean": sum(losses[:window]) / window,
        "last_mean": sum(losses[-window:]) / window,
        "losses": losses,
        "seconds": time.perf_counter() - started - data_seconds,
        "data_seconds": data_seconds,
    }


# ---------------------------------------------------------------- settings per device


@dataclass
class Settings:
    """What `kata train` does on its device, the "auto" settings resolved (issue 27's measurements
    on one H200 for CUDA; the CPU keeps its earlier behaviour)."""

    batch_size: int
    amp: str  # "bf16" or "off"
    compile: str  # "off", "on" (torch.compile) or "cudagraphs" (mode reduce-overhead)
    buckets: tuple[int, ...] | None  # fixed padded lengths, or None: each batch to its longest row
    resident: bool  # token ids on the device, batches gathered there
    sync_every: int  # steps between two reads of the loss

    def describe(self) -> dict:
        return {
            "batch_size": self.batch_size,
            "dtype": "bfloat16" if self.amp == "bf16" else "float32",
            "compile": self.compile,
            "buckets": list(self.buckets) if self.buckets else None,
            "resident_ids": self.resident,
            "sync_every": self.sync_every,
        }


def choose_settings(cfg: TrainConfig, device: torch.device, world: int = 1, batch_size: int | None = None) -> Settings:
    """cfg's "auto" settings resolved for `device` (`batch_size`: another phase's, e.g. pre-training's).

    CUDA: batch 64; fp32 with TF32 below batch AUTO_BF16_BATCH, bf16 autocast from there (at batch 64
    bf16 made each step slower, at 256 x 256 faster); padded lengths AUTO_BUCKETS, ids resident on the
    GPU, the loss read every AUTO_SYNC_EVERY_CUDA steps, and the model compiled with CUDA graphs
    (torch.compile mode reduce-overhead: 7.7 ms -> 2.2 ms a step at batch 64 x 64), plain torch.compile
    under DDP. Elsewhere as before: batch 32, fp32, no compile, each batch padded to its own longest
    row, the loss read every step."""
    cuda = device.type == "cuda"
    batch = batch_size or cfg.batch_size or (AUTO_CUDA_BATCH if cuda else 32)
    if cfg.amp not in ("auto", "bf16", "off"):
        raise TrainError(t("train_bad_amp", amp=cfg.amp))
    amp = cfg.amp if cfg.amp != "auto" else ("bf16" if cuda and batch >= AUTO_BF16_BATCH else "off")
    try:
        buckets = parse_buckets(("auto" if cuda else "off") if cfg.buckets == "auto" else cfg.buckets, cfg.max_len)
    except ValueError:
        raise TrainError(t("train_bad_buckets", buckets=cfg.buckets)) from None
    mode = {True: "on", False: "off"}.get(cfg.compile, cfg.compile)  # a bool from older callers
    if mode == "auto":
        mode = ("cudagraphs" if world == 1 and buckets else "on") if cuda else "off"
    if mode not in ("off", "on", "cudagraphs"):
        raise TrainError(t("train_bad_compile", mode=mode))
    return Settings(
        batch, amp, mode, buckets, resident=cuda, sync_every=cfg.sync_every or (AUTO_SYNC_EVERY_CUDA if cuda else 1)
    )


def compile_model(model: nn.Module, settings: Settings) -> nn.Module:
    """The model torch.compile'd as `settings` says: shapes fixed when the batches have fixed lengths."""
    if settings.compile == "off":
        return model
    import torch._dynamo

    for name in ("recompile_limit", "cache_size_limit"):  # one graph per padded length, training and evaluation
        if hasattr(torch._dynamo.config, name):
            setattr(torch._dynamo.config, name, max(64, getattr(torch._dynamo.config, name)))
    mode = "reduce-overhead" if settings.compile == "cudagraphs" else None
    return torch.compile(model, mode=mode, dynamic=settings.buckets is None)


class LossWindow:
    """The training losses, kept on the device and read every `every` steps: reading a loss waits for
    the device, so the loop reads them in one copy per window. `read()` gives [(step, loss)] and raises
    NonFinite at the first loss that is NaN or infinite."""

    def __init__(self, every: int):
        self.every = max(1, every)
        self.pending: list[tuple[int, torch.Tensor]] = []

    def add(self, step: int, loss: torch.Tensor) -> list[tuple[int, float]] | None:
        self.pending.append((step, loss.detach()))
        return self.read() if len(self.pending) >= self.every else None

    def read(self) -> list[tuple[int, float]]:
        if not self.pending:
            return []
        steps = [s for s, _ in self.pending]
        values = torch.stack([v.float() for _, v in self.pending]).cpu().tolist()  # the one wait
        self.pending = []
        for step, value in zip(steps, values):
            if not math.isfinite(value):
                raise NonFinite(step, value)
        return list(zip(steps, values))


class NonFinite(Exception):
    def __init__(self, step: int, value: float):
        super().__init__(step, value)
        self.step, self.value = step, value


def build_optimizer(model: nn.Module, lr: float, weight_decay: float, device: torch.device):
    """kata train's AdamW: no decay on biases and norms; fused (one kernel per group) on CUDA."""
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim < 2 or "norm" in name else decay).append(p)
    return torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        fused=device.type == "cuda",
    )


def train_step(runner, params, optimizer, scheduler, clip: float, amp_ctx, ids, mask, labels) -> torch.Tensor:
    """One optimisation step; returns the loss on the device, unread (no host synchronisation:
    clipping and the fused AdamW stay on the device). Labels -100 (filler rows) are left out."""
    optimizer.zero_grad(set_to_none=True)
    with amp_ctx:
        logits = runner(ids, mask)
    loss = nn.functional.cross_entropy(logits.float(), labels, ignore_index=-100)
    loss.backward()
    if clip:
        torch.nn.utils.clip_grad_norm_(params, clip, foreach=True)
    optimizer.step()
    scheduler.step()
    return loss.detach()


# ---------------------------------------------------------------- the run


def _schedule(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def _autocast(device: torch.device, amp: str):
    """(context, dtype) of `amp` as choose_settings resolves it: "bf16" autocast or "off" (fp32)."""
    if amp == "off" or (amp == "auto" and device.type != "cuda"):
        return contextlib.nullcontext(), torch.float32
    if amp not in ("auto", "bf16"):
        raise TrainError(t("train_bad_amp", amp=amp))
    return torch.autocast(device.type, dtype=torch.bfloat16), torch.bfloat16


def evaluate(
    model,
    data: Encoded,
    batch_size: int,
    pad_id: int,
    max_len: int,
    device,
    amp_ctx,
    dist: Dist,
    want_predictions: bool = False,
    batcher: Batcher | None = None,
    fixed_rows: bool = False,
):
    """(mean loss, accuracy, [(index, label, prediction)]) over `data`, sharded across processes.
    Sums stay on the device until the end (one wait per evaluation, not per batch); `batcher`
    (default: padded on the host, as on the CPU) gives the batches, `fixed_rows` fills the last
    one to `batch_size` rows (a shape a compiled model has seen)."""
    batcher = batcher or Batcher(data, device, pad_id, max_len)
    model.eval()
    total_loss = torch.zeros((), dtype=torch.float64, device=device)
    correct = torch.zeros((), dtype=torch.long, device=device)
    count = 0
    order, predicted = [], []
    with torch.no_grad():
        for index in LengthBatches(data.lengths, batch_size, shuffle=False, rank=dist.rank, world=dist.world):
            ids, mask, labels, _, _ = batcher.batch(index, rows=batch_size if fixed_rows else None)
            with amp_ctx:
                logits = model(ids, mask)
            logits = logits.float()[: len(index)]
            labels = labels[: len(index)]
            total_loss += nn.functional.cross_entropy(logits, labels, reduction="sum").double()
            preds = logits.argmax(dim=1)
            correct += (preds == labels).sum()
            count += len(index)
            if want_predictions:
                order += index
                predicted.append(preds)
    total_loss, correct, count = _all_sum([total_loss.item(), correct.item(), count], dist, device)
    rows = []
    if want_predictions:
        preds = torch.cat(predicted).tolist() if predicted else []
        rows = list(zip(order, data.labels[order].tolist() if order else [], preds))
    if want_predictions:
        rows = sorted(_gather(rows, dist))
    return total_loss / count, correct / count, rows


class _Progress:
    """A rich progress bar on the main process (nothing on the others, or when quiet)."""

    def __init__(self, enabled: bool, total: int, log):
        self.bar = None
        self.fallback = log
        if enabled:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.bar = Progress(
                TextColumn(f"[bold]{t('train_bar')}[/]"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[info]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                transient=False,
            )
            self.task = self.bar.add_task("train", total=total, info="")
            self.bar.start()

    def update(self, info: str | None = None, advance: int = 1) -> None:
        if self.bar is not None:
            if info is None:
                self.bar.update(self.task, advance=advance)
            else:
                self.bar.update(self.task, advance=advance, info=info)

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
    """Set up, train with evaluation on the validation set, then test the best weights once."""
    started = time.perf_counter()
    device = _set_up(cfg, dist)
    settings = choose_settings(cfg, device, dist.world)
    amp_ctx, amp_dtype = _autocast(device, settings.amp)
    out = Path(cfg.out) if cfg.out else root / ".kata" / "runs" / time.strftime("%Y%m%d-%H%M%S")
    code_dir, tok, module, model = _load_model(cfg, root)
    data = load_data(cfg, dist, tok)
    fast, why_not = 0, Msg.key("train_fast_disabled")
    if cfg.fast_attention:
        fast, why_not = fast_attention(model, probe_batch(tok.vocab_size, cfg.max_len, tok.pad_id, tok.cls_id))
    _log_setup(log, cfg, dist, device, settings, amp_dtype, data, module, model, tok, fast, why_not)
    pretrained = None
    if cfg.pretrain_mlm:  # before the optimizer, torch.compile and DDP: the token embedding may be replaced
        torch.manual_seed(cfg.seed)
        pretrained = pretrain(
            cfg,
            code_dir,
            model,
            tok,
            dist,
            device,
            log,
            choose_settings(cfg, device, dist.world, batch_size=cfg.pretrain_batch_size or None),
        )
    raw = model.to(device)
    runner = compile_model(raw, settings)
    if dist.world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP

        runner = DDP(runner, device_ids=[device.index] if device.type == "cuda" else None)
    loop = _Loop(cfg, dist, device, settings, amp_ctx, data, tok, raw, runner, out)
    metrics = _initial_metrics(cfg, dist, device, settings, amp_dtype, module, tok, data, raw, fast, why_not)
    metrics["steps_total"] = loop.total
    if pretrained is not None:
        metrics["pretrain"] = pretrained
    loop.metrics = metrics
    loop.checkpoint_info = _checkpoint_info(cfg, model, tok, module)
    if dist.main:
        out.mkdir(parents=True, exist_ok=True)
    log(t("train_output", path=out))
    loop.progress = _Progress(dist.main and not cfg.quiet, loop.total, log)
    try:
        loop.run()
    except KeyboardInterrupt:
        loop.progress.stop()
        _keep_interrupted(metrics, cfg, dist, data, out, loop.step, loop.total, started, log)
        raise
    loop.progress.stop()
    rows, report_text, majority = _test_best(metrics, cfg, dist, device, settings, amp_ctx, data, tok, raw, runner, out)
    metrics["seconds"] = time.perf_counter() - started
    if dist.main:
        atomic.write_json(out / "metrics.json", metrics)
        outputs.plot_curves(out / "curves.png", metrics["history"], _title(cfg, data))
        _plot_attention(out / "cls_attention.png", raw, data.test, tok, dict((r[0], r[2]) for r in rows), device)
    _log_results(metrics, report_text, majority, out, log)
    return metrics


def _set_up(cfg: TrainConfig, dist: Dist) -> torch.device:
    """The preset applied, the seed set, and the device chosen (TF32 allowed on CUDA)."""
    try:
        apply_preset(cfg)
    except ValueError as e:
        raise TrainError(str(e)) from None
    torch.manual_seed(cfg.seed)
    device = choose_device(cfg.device, dist)
    if device.type == "cuda":
        torch.cuda.set_device(device)
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.backends.cudnn.allow_tf32 = True
    return device


def _load_model(cfg: TrainConfig, root: Path):
    """The code trained (the student's or the reference), its tokenizer and its classifier, built
    and checked by one forward pass: (code_dir, tokenizer, module, model)."""
    code_dir = resolve_code(cfg.code, root)
    if cfg.code == "reference" and not code_dir.is_dir():
        raise TrainError(t("train_no_reference", path=code_dir))
    hint = t("train_tokenizer_hint_reference") if cfg.code != "reference" and (root / "solutions").is_dir() else ""
    tok = load_tokenizer(code_dir, cfg.max_len, cfg.truncation, hint=hint)
    module = load_classifier_module(code_dir)
    model = build_model(
        module,
        vocab_size=tok.vocab_size,
        dim=cfg.dim,
        max_len=cfg.max_len,
        layers=cfg.layers,
        heads=cfg.heads,
        ff_dim=cfg.ff_dim,
    )
    check_forward(model, probe_batch(tok.vocab_size, cfg.max_len, tok.pad_id, tok.cls_id), module.__file__)
    return code_dir, tok, module, model


def _log_setup(log, cfg, dist, device, settings, amp_dtype, data, module, model, tok, fast, why_not) -> None:
    """The run's three opening lines: the data, the model, and the settings `auto` chose."""
    log(
        t(
            "train_data_line",
            source=data.source_msg or data.source,
            train=len(data.train),
            val=len(data.val),
            test=len(data.test),
            ids=Msg.key("train_ids_cached") if data.cached else Msg.key("train_ids_computed"),
            tokenizer=tok.path,
        )
    )
    log(
        t(
            "train_model_line",
            file=module.__file__,
            params=sum(p.numel() for p in model.parameters()),
            dim=cfg.dim,
            layers=cfg.layers,
            heads=cfg.heads,
            ff=cfg.ff_dim,
            device=device,
            world=f" x{dist.world}" if dist.world > 1 else "",
            dtype=Msg.key("train_bf16") if amp_dtype == torch.bfloat16 else code("fp32"),
            fast=Msg.key("train_fast_on", count=fast) if fast else Msg.key("train_fast_off", why=why_not),
        )
    )
    log(
        t(
            "train_settings_line",
            device=device.type,
            batch=settings.batch_size,
            dtype=Msg.key("train_bf16")
            if amp_dtype == torch.bfloat16
            else code("fp32 + TF32" if device.type == "cuda" else "fp32"),
            compile=code(
                {"off": "off", "on": "torch.compile", "cudagraphs": "torch.compile, CUDA graphs"}[settings.compile]
            ),
            buckets=code(",".join(map(str, settings.buckets))) if settings.buckets else Msg.key("train_buckets_off"),
            ids=Msg.key("train_ids_resident") if settings.resident else Msg.key("train_ids_host"),
            sync=settings.sync_every,
            why=Msg.key("train_settings_cuda") if device.type == "cuda" else Msg.key("train_settings_other"),
        )
    )


def _initial_metrics(cfg, dist, device, settings, amp_dtype, module, tok, data, model, fast, why_not) -> dict:
    """metrics.json before the first step: the run's settings, code and data; no history yet.
    `model`: after pre-training, which may have replaced the token embedding."""
    from ... import __version__

    return {
        "schema": outputs.METRICS_SCHEMA,
        "kata_version": __version__,
        "torch": torch.__version__,
        "device": str(device),
        "world_size": dist.world,
        "dtype": str(amp_dtype).replace("torch.", ""),
        "compile": settings.compile != "off",
        "settings": settings.describe(),
        "fast_attention": {"modules": fast, "reason": why_not.render("en") if why_not else ""},
        "code": str(module.__file__),
        "tokenizer": str(tok.path),
        "parameters": sum(p.numel() for p in model.parameters()),
        "config": asdict(cfg),
        "data": {
            "source": data.source,
            "notes": data.notes,
            "train": len(data.train),
            "val": len(data.val),
            "test": len(data.test),
        },
        "steps_total": None,
        "history": [],
        "best": None,
        "test": None,
        "interrupted": False,
        "seconds": None,
    }


def _checkpoint_info(cfg: TrainConfig, model, tok, module) -> dict:
    """What best.json says beside the weights (without the epoch, step and accuracy of the save):
    enough to build the model and its tokenizer again (`kata predict`)."""
    vocab_size = encoder_of(model).embed.token.num_embeddings if cfg.pretrain_mlm else tok.vocab_size
    return {
        "config": dict(
            vocab_size=vocab_size,
            dim=cfg.dim,
            max_len=cfg.max_len,
            layers=cfg.layers,
            heads=cfg.heads,
            ff_dim=cfg.ff_dim,
        ),
        "tokenizer": {
            "code": str(tok.path),
            "encoding": tok.name,
            "pad_id": tok.pad_id,
            "cls_id": tok.cls_id,
            "sep_id": tok.sep_id,
            "max_len": tok.max_len,
            "truncation": tok.truncation,
            "head_len": tok.head_len,
        },
        "code": str(module.__file__),
    }


def _batcher(split, cfg: TrainConfig, settings: Settings, device: torch.device, tok) -> Batcher:
    """Batches of `split` on `device` as the settings choose (fixed lengths, ids kept on the device)."""
    return Batcher(
        split,
        device,
        tok.pad_id,
        cfg.max_len,
        buckets=settings.buckets,
        resident=settings.resident,
        fill_id=tok.cls_id,
    )


class _Loop:
    """The training steps, with an evaluation on the validation set every `eval_every` steps and
    the best weights saved; `metrics` (set by the caller) gains one history entry per evaluation."""

    def __init__(self, cfg, dist, device, settings, amp_ctx, data, tok, raw, runner, out):
        self.cfg, self.dist, self.device, self.settings, self.amp_ctx = cfg, dist, device, settings, amp_ctx
        self.data, self.tok, self.raw, self.runner, self.out = data, tok, raw, runner, out
        self.metrics: dict = {}
        self.checkpoint_info: dict = {}
        self.batches = LengthBatches(
            data.train.lengths, settings.batch_size, shuffle=True, seed=cfg.seed, rank=dist.rank, world=dist.world
        )
        self.fixed = settings.buckets is not None  # fixed shapes: short batches are filled up to the batch size
        self.train_batches = self._batcher(data.train)
        self.val_batches = self._batcher(data.val)
        per_epoch = len(self.batches)
        total = per_epoch * cfg.epochs
        if cfg.max_steps:
            total = min(total, cfg.max_steps)
        if total == 0:
            raise TrainError(t("train_no_step"))
        self.total = total
        warmup = max(1, round(cfg.warmup * total))
        self.optimizer = build_optimizer(raw, cfg.lr, cfg.weight_decay, device)
        self.scheduler = torch.optim.lr_scheduler.LambdaLR(self.optimizer, lambda s: _schedule(s, total, warmup))
        self.params = list(raw.parameters())
        self.losses = LossWindow(settings.sync_every)
        self.eval_every = cfg.eval_every or per_epoch
        self.best_acc = -1.0
        self.step, self.epoch = 0, 0
        self.window_loss, self.window_n, self.tokens, self.padded = 0.0, 0, 0, 0
        self.window_start = time.perf_counter()
        self.progress: _Progress | None = None  # started by the caller, after it says where the run writes

    def _batcher(self, split) -> Batcher:
        return _batcher(split, self.cfg, self.settings, self.device, self.tok)

    def run(self) -> None:
        self.runner.train()
        while self.step < self.total:
            self.batches.set_epoch(self.epoch)
            for index in self.batches:
                ids, mask, labels, real, computed = self.train_batches.batch(
                    index, rows=self.settings.batch_size if self.fixed else None
                )
                self.tokens += real
                self.padded += computed
                loss = train_step(
                    self.runner,
                    self.params,
                    self.optimizer,
                    self.scheduler,
                    self.cfg.clip,
                    self.amp_ctx,
                    ids,
                    mask,
                    labels,
                )
                self.step += 1
                step = self.step
                self.read_losses(lambda: self.losses.add(step, loss))
                if self.step % self.eval_every == 0 or self.step == self.total:
                    self.validate()
                if self.step >= self.total:
                    break
            self.epoch += 1

    def read_losses(self, found) -> None:
        if callable(found):
            try:
                found = found()
            except NonFinite as bad:
                raise TrainError(t("train_loss_nonfinite", loss=bad.value, step=bad.step, lr=self.cfg.lr)) from None
        if found:
            self.window_loss += sum(v for _, v in found)
            self.window_n += len(found)
            self.progress.update(t("train_bar_loss", loss=self.window_loss / max(1, self.window_n)), advance=len(found))

    def validate(self) -> None:
        cfg, dist, device, metrics, out = self.cfg, self.dist, self.device, self.metrics, self.out
        self.read_losses(self.losses.read)
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - self.window_start
        train_tokens = _all_sum([self.tokens, self.padded], dist, device)
        val_loss, val_acc, _ = evaluate(
            self.runner,
            self.data.val,
            self.settings.batch_size * 2,
            self.tok.pad_id,
            cfg.max_len,
            device,
            self.amp_ctx,
            dist,
            batcher=self.val_batches,
            fixed_rows=self.fixed,
        )
        entry = {
            "epoch": self.epoch + 1,
            "step": self.step,
            "train_loss": self.window_loss / max(1, self.window_n),
            "val_loss": val_loss,
            "val_accuracy": val_acc,
            "lr": self.scheduler.get_last_lr()[0],
            "seconds": seconds,
            "tokens": int(train_tokens[0]),
            "padded_tokens": int(train_tokens[1]),
            "tokens_per_s": train_tokens[0] / seconds if seconds else 0.0,
        }
        improved = val_acc > self.best_acc
        if improved:
            self.best_acc = val_acc
            if dist.main:
                info = {**self.checkpoint_info, "epoch": self.epoch + 1, "step": self.step, "val_accuracy": val_acc}
                outputs.save_checkpoint(out, self.raw.state_dict(), info)
            metrics["best"] = {
                "epoch": self.epoch + 1,
                "step": self.step,
                "val_accuracy": val_acc,
                "path": str(out / "best.safetensors"),
            }
        entry["best"] = improved
        metrics["history"].append(entry)
        if dist.main:
            atomic.write_json(out / "metrics.json", metrics)
        self.progress.log(
            t(
                "train_eval_line",
                step=self.step,
                total=self.total,
                epoch=self.epoch + 1,
                train_loss=entry["train_loss"],
                val_loss=val_loss,
                acc=100 * val_acc,
                speed=entry["tokens_per_s"],
                best=Msg.key("train_best_saved") if improved else "",
            )
        )
        self.runner.train()
        self.window_loss, self.window_n, self.tokens, self.padded = 0.0, 0, 0, 0
        self.window_start = time.perf_counter()


def _keep_interrupted(metrics, cfg, dist, data, out, step, total, started, log) -> None:
    """Ctrl-C: metrics.json and the curves of what was trained, and where the best weights are."""
    metrics["interrupted"] = True
    metrics["seconds"] = time.perf_counter() - started
    if dist.main:
        atomic.write_json(out / "metrics.json", metrics)
        if metrics["history"]:
            outputs.plot_curves(out / "curves.png", metrics["history"], _title(cfg, data))
    best = metrics["best"]
    log(
        t(
            "train_interrupted",
            step=step,
            total=total,
            kept=Msg.key("train_interrupted_kept", step=best["step"], acc=100 * best["val_accuracy"], out=out)
            if best
            else Msg.key("train_interrupted_nothing"),
        )
    )


def _test_best(metrics, cfg, dist, device, settings, amp_ctx, data, tok, raw, runner, out):
    """The test set, once, with the best weights: metrics["test"] (the report, the confusion
    matrix, the majority baseline). Returns the test rows (id, label, prediction), sklearn's
    report as text, and the majority baseline."""
    _, state = outputs.load_checkpoint(out) if dist.main else (None, None)
    if dist.world > 1:
        state = _broadcast_state(state, dist)
    raw.load_state_dict(state)
    test_batches = _batcher(data.test, cfg, settings, device, tok)
    test_loss, test_acc, rows = evaluate(
        runner,
        data.test,
        settings.batch_size * 2,
        tok.pad_id,
        cfg.max_len,
        device,
        amp_ctx,
        dist,
        want_predictions=True,
        batcher=test_batches,
        fixed_rows=settings.buckets is not None,
    )
    labels = [r[1] for r in rows]
    preds = [r[2] for r in rows]
    from sklearn.metrics import classification_report, confusion_matrix

    names = ["negative", "positive"]
    metrics["test"] = {
        "loss": test_loss,
        "accuracy": test_acc,
        "report": classification_report(
            labels, preds, labels=[0, 1], target_names=names, output_dict=True, zero_division=0
        ),
        "confusion": confusion_matrix(labels, preds, labels=[0, 1]).tolist(),
    }
    majority = baseline.majority(labels, preds, test_acc, names)
    metrics["test"]["majority"] = {**majority, "note": baseline.note(majority, lang="en") or None}
    report_text = classification_report(labels, preds, labels=[0, 1], target_names=names, digits=4, zero_division=0)
    return rows, report_text, majority


def _log_results(metrics: dict, report_text: str, majority: dict, out: Path, log) -> None:
    """The test line, the baseline's note, sklearn's report, and the files written."""
    test = metrics["test"]
    log(t("train_test_line", step=metrics["best"]["step"], acc=100 * test["accuracy"], loss=test["loss"]))
    if test["majority"]["note"]:
        log(baseline.note(majority))  # in the reader's language; metrics.json keeps the English
    log(report_text.rstrip())
    log(
        t(
            "train_wrote",
            metrics=out / "metrics.json",
            curves=out / "curves.png",
            attention=out / "cls_attention.png",
            weights=out / "best.safetensors",
        )
    )


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
