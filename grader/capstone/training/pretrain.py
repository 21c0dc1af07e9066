"""Masked-language-model pre-training of the §1.23 BERT encoder, before it is fine-tuned for
sentiment (beyond the book: the exercise s1_23_mlm).

    mlm = load_mlm_module(code_dir)                      # <code_dir>/ch01/s1_23_mlm.py
    losses = pretrain_mlm(model, texts, encode, steps=500, batch_size=32, lr=5e-4, seed=0,
                          device=torch.device("cpu"), log=print, mlm=mlm)

`model` is listing 1.35's BERTForClassification (its encoder is `model.bert`) or a BERTEncoder
itself; `texts` are plain strings (unlabelled: no label is read); `encode(text)` gives a text's
unpadded ids, [CLS] first and [SEP] last (the s1_23_tokenizer's `encode(text, pad=False)`). Each
step draws `batch_size` texts, pads them to the longest, hides tokens with the exercise's own
`mask_tokens`, and trains the encoder and the exercise's `MLMHead` (tied to the encoder's token
embedding) on `mlm_loss` of the hidden tokens only. The model is changed in place: its encoder is
trained, and its token embedding gains a row for [MASK] when it has none (`grow_token_embedding`:
BERTForClassification(vocab_size=50260) becomes one of 50,261 rows, the kata's MLM_VOCAB_SIZE,
ERRATA.md K-1.23-a), and its embedding tables are first scaled to BERT's spread of 0.02
(`scale_embeddings`: the encoder's outputs stay the same, the tied head starts near a uniform
guess). The head is dropped at the end; fine-tuning builds its optimizer afterwards,
over the grown model.

Like `kata train`, this runs the code it is given in this process: a tool for one's own machine,
not a grading path. Its progress lines (handed to `log` as plain strings) and its errors are in the
reader's language (grader/course/messages.py).
"""

from __future__ import annotations

import contextlib
import math
import types
from pathlib import Path

import torch
import torch.nn as nn

from ...course.messages import t
from .model import _line_in, earlier_exercise, import_file

MLM_FILE = "ch01/s1_23_mlm.py"
ROUND_TO = 8  # pad each batch to a multiple of 8 ids, as kata train's batches do
LOG_EVERY = 50  # steps between two progress lines
EMBEDDING_STD = 0.02  # BERT's initializer_range: the token table's spread when pre-training starts


class PretrainError(RuntimeError):
    """Pre-training cannot run: the message names the file or setting and what to do."""


def load_mlm_module(code_dir: str | Path) -> types.ModuleType:
    """Import `<code_dir>/ch01/s1_23_mlm.py` (the reference's solutions/ or a student's exercises/)
    under a private name; PretrainError naming the file and line when it cannot be used."""
    path = Path(code_dir) / MLM_FILE
    if not path.is_file():
        raise PretrainError(t("pretrain_missing", path=path))
    try:
        module = import_file(path, "kata_pretrain_mlm")
    except Exception as e:
        raise PretrainError(
            t("train_import_failed", where=f"{path}{_line_in(e, path)}", error=f"{type(e).__name__}: {e}")
        ) from e
    missing = [
        name
        for name in ("mask_tokens", "MLMHead", "mlm_loss", "MASK_ID", "PAD_ID", "CLS_ID", "SEP_ID", "BASE_VOCAB_SIZE")
        if not hasattr(module, name)
    ]
    if missing:
        raise PretrainError(t("pretrain_missing_names", path=path, names=", ".join(missing)))
    return module


def encoder_of(model: nn.Module) -> nn.Module:
    """The BERT encoder of `model`: `model.bert` for listing 1.35's classifier, else the model."""
    encoder = getattr(model, "bert", model)
    token = getattr(getattr(encoder, "embed", None), "token", None)
    if not isinstance(token, nn.Embedding):
        raise PretrainError(t("pretrain_no_embedding"))
    return encoder


def grow_token_embedding(model: nn.Module, rows: int, seed: int = 0) -> nn.Embedding:
    """Give the encoder's token embedding `rows` rows (at least), keeping the existing ones and
    padding_idx; the new rows are drawn like nn.Embedding's own, N(0, 1), from `seed`. Returns the
    embedding in use afterwards. Build any optimizer after calling it: the parameter is new."""
    embed = encoder_of(model).embed
    old = embed.token
    if old.num_embeddings >= rows:
        return old
    new = nn.Embedding(
        rows, old.embedding_dim, padding_idx=old.padding_idx, device=old.weight.device, dtype=old.weight.dtype
    )
    with torch.no_grad():
        new.weight[: old.num_embeddings] = old.weight
        extra = torch.randn(rows - old.num_embeddings, old.embedding_dim, generator=torch.Generator().manual_seed(seed))
        new.weight[old.num_embeddings :] = extra.to(new.weight)
    new.train(old.training)
    embed.token = new
    return new


def scale_embeddings(model: nn.Module, std: float = EMBEDDING_STD) -> float:
    """Scale every nn.Embedding table of the encoder's embedding layer (listing 1.30: token,
    position, segment) by one factor, so that the token table's standard deviation becomes `std`;
    returns the factor (1.0 when it is already at most `std`: nothing is scaled up).

    Why: nn.Embedding draws its rows from N(0, 1), and the MLM head scores the hidden states
    against those same rows (the tied decoder). With dim 256 its first logits then have a spread
    of about 16 and the first masked-token loss is 25-36 nats, not ln(50,261) = 10.8: the first
    hundreds of steps only undo the scale. BERT draws its embeddings from N(0, 0.02). Scaling all
    the summed tables by the same factor leaves what the encoder computes as it was, since the
    embedding layer normalises their sum (up to LayerNorm's eps); only the head's logits shrink."""
    embed = encoder_of(model).embed
    tables = [m for m in embed.children() if isinstance(m, nn.Embedding)]
    keep = torch.ones(embed.token.num_embeddings, dtype=torch.bool)
    if embed.token.padding_idx is not None:
        keep[embed.token.padding_idx] = False  # the [PAD] row is zeros
    now = float(embed.token.weight.detach()[keep.to(embed.token.weight.device)].float().std())
    if not now > std:
        return 1.0
    factor = std / now
    with torch.no_grad():
        for table in tables:
            table.weight.mul_(factor)
    return factor


def _batch(rows: list[list[int]], pad_id: int, max_len: int) -> torch.Tensor:
    """(len(rows), T) int64 ids padded with pad_id; T the longest row rounded up to ROUND_TO, at most max_len."""
    longest = max(len(r) for r in rows)
    T = min(max_len, -(-longest // ROUND_TO) * ROUND_TO)
    ids = torch.full((len(rows), T), pad_id, dtype=torch.long)
    for i, r in enumerate(rows):
        ids[i, : len(r)] = torch.tensor(r, dtype=torch.long)
    return ids


def _fit(ids: list[int], max_len: int) -> list[int]:
    """A row of at most max_len ids, its last id ([SEP]) kept."""
    return ids if len(ids) <= max_len else ids[: max_len - 1] + ids[-1:]


def _schedule(step: int, total: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    return max(0.0, (total - step) / max(1, total - warmup))


def _student_call(mlm: types.ModuleType, what: str, fn, *args, **kwargs):
    """fn(*args, **kwargs); an exception from the exercise's file (or one it imports) becomes a
    PretrainError naming the file and line."""
    try:
        return fn(*args, **kwargs)
    except Exception as e:
        path = Path(mlm.__file__)
        earlier = earlier_exercise(e, path)
        where = f"{path}{_line_in(e, path)}"
        if earlier:
            raise PretrainError(t("pretrain_call_earlier", call=what, earlier=earlier)) from e
        if isinstance(e, NotImplementedError):
            raise PretrainError(t("pretrain_call_stub", where=where, call=what, error=e)) from e
        raise PretrainError(t("pretrain_call_failed", where=where, call=what, error=f"{type(e).__name__}: {e}")) from e


def pretrain_mlm(
    model: nn.Module,
    texts: list[str],
    encode,
    steps: int,
    batch_size: int,
    lr: float,
    seed: int,
    device: torch.device | str,
    log=print,
    *,
    mlm: types.ModuleType,
    mask_prob: float = 0.15,
    weight_decay: float = 0.01,
    warmup: float = 0.06,
    clip: float = 1.0,
    special_ids: tuple[int, int, int] | None = None,
    mask_id: int | None = None,
    base_vocab_size: int | None = None,
    embedding_std: float = EMBEDDING_STD,
    amp=None,
    sync_every: int = 1,
) -> list[float]:
    """Pre-train `model`'s encoder for `steps` steps of masked-language modelling on `texts`
    (see the module's docstring) and return the loss of every step. AdamW (no decay on biases
    and norms), linear warmup over `warmup` of the steps then linear decay, gradient clipping
    at `clip` (0: none). Before the first step the embedding tables are scaled so that the
    token table's spread is `embedding_std` (scale_embeddings; 0: left as they are). The ids
    default to the exercise module's constants: special_ids
    (PAD_ID, CLS_ID, SEP_ID), mask_id MASK_ID, random replacements from 0..BASE_VOCAB_SIZE - 1.
    `amp`: a context the forward runs in (bf16 autocast on a GPU; default none). `sync_every`: steps
    between two reads of the losses, which wait for the device (1: every step, as on the CPU); a
    non-finite loss is named with its step when read, and the steps up to that read have run."""
    if steps < 1 or batch_size < 1:
        raise PretrainError(t("pretrain_bad_sizes", steps=steps, batch_size=batch_size))
    device = torch.device(device)
    special = tuple(special_ids) if special_ids is not None else (mlm.PAD_ID, mlm.CLS_ID, mlm.SEP_ID)
    mask_id = mlm.MASK_ID if mask_id is None else mask_id
    base = mlm.BASE_VOCAB_SIZE if base_vocab_size is None else base_vocab_size
    pad_id = special[0]
    encoder = encoder_of(model)
    max_len = encoder.embed.position.num_embeddings
    rows = [_fit(list(encode(t)), max_len) for t in texts]
    rows = [r for r in rows if any(i not in special for i in r)]
    if not rows:
        raise PretrainError(t("pretrain_no_tokens", count=len(texts)))
    rows_before = encoder.embed.token.num_embeddings
    token = grow_token_embedding(model, mask_id + 1, seed)
    if token.num_embeddings != rows_before:
        log(t("pretrain_grows", before=rows_before, after=token.num_embeddings, mask_id=mask_id))
    if embedding_std:
        factor = scale_embeddings(model, embedding_std)
        if factor != 1.0:
            log(
                t(
                    "pretrain_scaled",
                    factor=factor,
                    std=embedding_std,
                    rows=token.num_embeddings,
                    ln=math.log(token.num_embeddings),
                )
            )
    head = _student_call(mlm, "MLMHead(embedding, dim)", mlm.MLMHead, token, token.embedding_dim)
    was_training = model.training
    model.to(device)
    head.to(device)
    model.train()
    head.train()
    params = {id(p): (name, p) for name, p in [*encoder.named_parameters(), *head.named_parameters()]}  # tied: once
    decay = [p for name, p in params.values() if p.requires_grad and p.ndim >= 2 and "norm" not in name]
    no_decay = [p for name, p in params.values() if p.requires_grad and not (p.ndim >= 2 and "norm" not in name)]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}],
        lr=lr,
        fused=device.type == "cuda",
    )
    warm = max(1, round(warmup * steps))
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: _schedule(s, steps, warm))
    g = torch.Generator().manual_seed(seed)
    order, at = torch.randperm(len(rows), generator=g).tolist(), 0
    losses: list[float] = []
    pending: list[torch.Tensor] = []  # losses on the device, not yet read
    amp = amp if amp is not None else contextlib.nullcontext()

    def read() -> None:
        if not pending:
            return
        values = torch.stack(pending).float().cpu().tolist()  # one wait for the device
        pending.clear()
        for value in values:
            losses.append(value)
            if not math.isfinite(value):
                raise PretrainError(t("pretrain_loss_nonfinite", loss=value, step=len(losses), lr=lr))
            if len(losses) % LOG_EVERY == 0 or len(losses) == steps:
                recent = losses[-LOG_EVERY:]
                log(
                    t(
                        "pretrain_step",
                        step=len(losses),
                        steps=steps,
                        loss=sum(recent) / len(recent),
                        rows=token.num_embeddings,
                        uniform=math.log(token.num_embeddings),
                    )
                )

    done = 0
    log(
        t(
            "pretrain_start",
            file=mlm.__file__,
            steps=steps,
            batch_size=batch_size,
            texts=len(rows),
            mask_prob=mask_prob,
            lr=lr,
            device=device,
        )
    )
    try:
        while done < steps:
            if at + batch_size > len(order):  # a new pass over the texts, in a new order
                order, at = order[at:] + torch.randperm(len(rows), generator=g).tolist(), 0
            ids = _batch([rows[i] for i in order[at : at + batch_size]], pad_id, max_len)
            at += batch_size
            inputs, labels = _student_call(
                mlm,
                "mask_tokens(...)",
                mlm.mask_tokens,
                ids,
                mask_id=mask_id,
                vocab_size=base,
                special_ids=special,
                generator=g,
                mask_prob=mask_prob,
            )
            if not done:
                _check_masking(mlm, ids, inputs, labels)
            chosen = labels != -100
            if not bool(chosen.any()):
                continue  # nothing to predict in this batch (possible with few short texts): draw another
            attention = (ids != pad_id).long().to(device, non_blocking=True)
            where = chosen.nonzero(as_tuple=True)  # found on the host, before the copy: no wait for the device
            inputs, labels = inputs.to(device, non_blocking=True), labels[where].to(device, non_blocking=True)
            where = tuple(w.to(device, non_blocking=True) for w in where)
            optimizer.zero_grad(set_to_none=True)
            with amp:
                hidden = encoder(inputs, attention)
                logits = _student_call(mlm, "MLMHead.forward", head, hidden[where])  # only the hidden tokens
            loss = _student_call(mlm, "mlm_loss(logits, labels)", mlm.mlm_loss, logits.float(), labels)
            if sync_every <= 1 and not torch.isfinite(loss):
                raise PretrainError(t("pretrain_loss_nonfinite", loss=loss.item(), step=done + 1, lr=lr))
            loss.backward()
            if clip:
                torch.nn.utils.clip_grad_norm_([p for _, p in params.values()], clip, foreach=True)
            optimizer.step()
            scheduler.step()
            done += 1
            pending.append(loss.detach())
            if len(pending) >= max(1, sync_every) or done == steps:
                read()
    finally:
        model.train(was_training)
    return losses


def _check_masking(mlm: types.ModuleType, ids, inputs, labels) -> None:
    """The first batch's (inputs, labels) keep the rule's relations, so that a wrong mask_tokens is
    named before it trains anything."""
    ok = (
        isinstance(inputs, torch.Tensor)
        and isinstance(labels, torch.Tensor)
        and inputs.shape == ids.shape
        and labels.shape == ids.shape
        and bool(((labels == -100) | (labels == ids)).all())
        and bool((inputs[labels == -100] == ids[labels == -100]).all())
    )
    if not ok:
        raise PretrainError(t("pretrain_bad_masking", file=mlm.__file__))
