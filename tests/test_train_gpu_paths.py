"""The GPU code paths of `kata train` (issue 27), run on the CPU: they are device-agnostic, so the
same code that runs on CUDA is checked here; tests/test_train.py's GPU tests run them on a GPU."""

from __future__ import annotations

import contextlib
import json

import pytest
import torch

from grader.capstone import gpt2
from grader.capstone.training import batches as B
from grader.capstone.training import loop as L
from grader.capstone.training import model as M
from grader.capstone.training.config import PRESETS, TrainConfig, apply_preset

from conftest import ROOT, kata

needs_ranks = pytest.mark.skipif(not gpt2.have_asset(), reason="gpt2.tiktoken is missing (kata assets fetch)")
PAD, CLS = 50257, 50258


def _encoded(lengths):
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.long)
    offsets[1:] = torch.cumsum(torch.tensor(lengths), 0)
    ids = (torch.arange(int(offsets[-1])) * 7 % 997).to(torch.int32)
    return B.Encoded(ids, offsets, torch.tensor([i % 2 for i in range(len(lengths))]))


def test_padded_lengths_are_the_buckets():
    assert B.parse_buckets("off", 256) is None and B.parse_buckets("auto", 256) == (32, 64, 128, 256)
    assert B.parse_buckets("auto", 100) == (32, 64, 100)  # max_len is always the last length
    assert B.parse_buckets("64,16", 64) == (16, 64)
    assert [B.padded_length(n, 256, (32, 64, 256)) for n in (1, 32, 33, 65, 256)] == [32, 32, 64, 256, 256]
    assert [B.padded_length(n, 256) for n in (1, 9, 250)] == [8, 16, 256]  # no buckets: rounded to 8, as before
    with pytest.raises(ValueError):
        B.parse_buckets("0,32", 64)


@pytest.mark.parametrize("buckets", [None, (16, 32, 64)])
def test_ids_gathered_on_the_device_equal_the_host_padding(buckets):
    """The resident path (ids copied to the device once, batches gathered there) gives the same
    tensors as padding on the host; buckets only add padding columns."""
    g = torch.Generator().manual_seed(0)
    data = _encoded(torch.randint(1, 60, (200,), generator=g).tolist())
    host = B.Batcher(data, "cpu", PAD, 64, buckets=buckets)
    resident = B.Batcher(data, "cpu", PAD, 64, buckets=buckets, resident=True)
    for index in B.LengthBatches(data.lengths, 24, shuffle=True, seed=1):
        a, b = host.batch(index), resident.batch(index)
        for x, y in zip(a[:3], b[:3]):
            assert torch.equal(x, y)
        assert a[3:] == b[3:] == (sum(data.lengths[index].tolist()), len(index) * a[0].shape[1])
        ids, mask, labels = B.collate(data, index, PAD, 64)
        T = ids.shape[1]
        assert torch.equal(b[0][:, :T], ids) and torch.equal(b[1][:, :T], mask) and torch.equal(b[2], labels)
        assert bool((b[0][:, T:] == PAD).all()) and not bool(b[1][:, T:].any())
        if buckets:
            assert b[0].shape[1] in buckets


def test_short_batches_are_filled_with_rows_the_loss_leaves_out():
    data = _encoded([5, 9, 3])
    ids, mask, labels, real, padded = B.Batcher(
        data, "cpu", PAD, 32, buckets=(16, 32), resident=True, fill_id=CLS
    ).batch([0, 1, 2], rows=8)
    assert ids.shape == (8, 16) and real == 17 and padded == 8 * 16
    assert torch.equal(labels[3:], torch.full((5,), -100)) and bool((ids[3:, 0] == CLS).all())
    assert torch.equal(mask[3:].sum(1), torch.ones(5, dtype=torch.long))  # one real token: no all-masked row
    logits = torch.randn(8, 2)
    torch.testing.assert_close(
        torch.nn.functional.cross_entropy(logits, labels, ignore_index=-100),
        torch.nn.functional.cross_entropy(logits[:3], labels[:3]),
    )


def test_evaluation_with_fixed_shapes_gives_the_same_figures():
    model = _model().eval()
    g = torch.Generator().manual_seed(2)
    data = _encoded(torch.randint(2, 30, (70,), generator=g).tolist())
    plain = L.evaluate(
        model, data, 16, PAD, 32, torch.device("cpu"), contextlib.nullcontext(), L.Dist(), want_predictions=True
    )
    fixed = L.evaluate(
        model,
        data,
        16,
        PAD,
        32,
        torch.device("cpu"),
        contextlib.nullcontext(),
        L.Dist(),
        want_predictions=True,
        batcher=B.Batcher(data, "cpu", PAD, 32, buckets=(16, 32), resident=True, fill_id=CLS),
        fixed_rows=True,
    )
    assert plain[2] == fixed[2] and len(plain[2]) == 70 and [r[0] for r in plain[2]] == list(range(70))
    assert abs(plain[0] - fixed[0]) < 1e-5 and plain[1] == fixed[1]


def _model():
    module = M.load_classifier_module(ROOT / "solutions")
    torch.manual_seed(0)
    return M.build_model(module, vocab_size=50260, dim=16, max_len=32, layers=1, heads=2, ff_dim=32)


def test_settings_per_device():
    cpu = L.choose_settings(TrainConfig(), torch.device("cpu"))
    assert (cpu.batch_size, cpu.amp, cpu.compile, cpu.buckets, cpu.resident, cpu.sync_every) == (
        32,
        "off",
        "off",
        None,
        False,
        1,
    )  # the CPU as before
    cuda = L.choose_settings(TrainConfig(), torch.device("cuda"))
    assert (cuda.batch_size, cuda.amp, cuda.compile, cuda.buckets, cuda.resident, cuda.sync_every) == (
        64,
        "off",
        "cudagraphs",
        (32, 64, 128, 256),
        True,
        50,
    )  # fp32 + TF32 at batch 64 (issue 27)
    assert L.choose_settings(TrainConfig(batch_size=256), torch.device("cuda")).amp == "bf16"
    assert L.choose_settings(TrainConfig(), torch.device("cuda"), batch_size=512).amp == "bf16"
    assert L.choose_settings(TrainConfig(), torch.device("cuda"), world=2).compile == "on"  # no CUDA graphs under DDP
    assert L.choose_settings(TrainConfig(compile=True), torch.device("cpu")).compile == "on"  # older callers' bool
    assert L.choose_settings(TrainConfig(compile="off", buckets="off"), torch.device("cuda")).buckets is None
    with pytest.raises(L.TrainError, match="--buckets"):
        L.choose_settings(TrainConfig(buckets="big"), torch.device("cpu"))


def test_losses_are_read_in_windows_and_the_first_bad_one_named():
    window = L.LossWindow(3)
    assert window.add(1, torch.tensor(0.5)) is None and window.add(2, torch.tensor(0.25)) is None
    assert window.add(3, torch.tensor(0.125)) == [(1, 0.5), (2, 0.25), (3, 0.125)]
    window.add(4, torch.tensor(1.0))
    window.add(5, torch.tensor(float("nan")))
    with pytest.raises(L.NonFinite) as bad:
        window.read()
    assert (bad.value.step, str(bad.value.value)) == (5, "nan")


def test_the_step_reads_nothing_back():
    """train_step leaves the loss on the device: nothing in it calls .item() or bool() on a tensor."""
    model = _model()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: 1.0)
    data = _encoded([5, 9, 3, 12])
    ids, mask, labels, _, _ = B.Batcher(data, "cpu", PAD, 32, buckets=(16, 32), resident=True, fill_id=CLS).batch(
        [0, 1, 2, 3], rows=6
    )
    reads = []
    original = torch.Tensor.item
    torch.Tensor.item = lambda self: reads.append(self) or original(self)
    try:
        loss = L.train_step(
            model, list(model.parameters()), optimizer, scheduler, 1.0, contextlib.nullcontext(), ids, mask, labels
        )
    finally:
        torch.Tensor.item = original
    steps = {id(state["step"]) for state in optimizer.state.values()}  # AdamW's CPU step counters (fused on CUDA)
    assert not [x for x in reads if id(x) not in steps] and loss.ndim == 0 and torch.isfinite(loss)


def test_preset_fills_what_was_not_given():
    cfg = apply_preset(TrainConfig(preset="gpu", lr=3e-4))
    assert cfg.lr == 3e-4  # given: kept
    assert cfg.pretrain_mlm == PRESETS["gpu"]["pretrain_mlm"] and cfg.pretrain_batch_size == 256
    assert apply_preset(TrainConfig(preset="gpu", epochs=9), given={"lr"}).epochs == PRESETS["gpu"]["epochs"]
    with pytest.raises(ValueError, match="preset"):
        apply_preset(TrainConfig(preset="tpu"))


@needs_ranks
def test_the_gpu_loop_on_the_cpu(tmp_path):
    """kata train with CUDA's loop (fixed lengths, filled batches, losses read every 7 steps, a
    pre-training batch of its own) on the CPU: it learns, says its settings and records them."""
    out = tmp_path / "run"
    r = kata(
        "train",
        "--data",
        "synthetic:600",
        "--epochs",
        "4",
        "--out",
        str(out),
        "--dim",
        "32",
        "--layers",
        "1",
        "--heads",
        "2",
        "--ff-dim",
        "64",
        "--max-len",
        "64",
        "--lr",
        "3e-3",
        "--quiet",
        "--buckets",
        "16,32",
        "--sync-every",
        "7",
        "--batch-size",
        "24",
        "--pretrain-mlm",
        "12",
        "--pretrain-batch-size",
        "40",
        "--pretrain-lr",
        "1e-3",
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "settings for cpu" in r.stdout and "padded lengths: 16,32,64" in r.stdout
    m = json.loads((out / "metrics.json").read_text())
    assert m["settings"] == {
        "batch_size": 24,
        "dtype": "float32",
        "compile": "off",
        "buckets": [16, 32, 64],
        "resident_ids": False,
        "sync_every": 7,
    }
    assert m["pretrain"]["steps"] == 12 and m["pretrain"]["settings"]["batch_size"] == 40
    assert m["pretrain"]["settings"]["lr"] == 1e-3
    assert all(h["padded_tokens"] % 24 == 0 for h in m["history"])  # every batch filled to 24 rows
    assert m["history"][-1]["train_loss"] > 0 and m["test"]["accuracy"] >= 0.75


def test_pretraining_reads_its_losses_in_windows():
    """pretrain_mlm with the losses read every 4 steps (CUDA's way) gives the losses of reading each step."""
    from grader.capstone.training.pretrain import load_mlm_module, pretrain_mlm

    mlm = load_mlm_module(ROOT / "solutions")
    g = torch.Generator().manual_seed(0)
    rows = [
        [CLS, *torch.randint(0, 1000, (int(n),), generator=g).tolist(), 50259]
        for n in torch.randint(3, 20, (40,), generator=g)
    ]
    got = []
    for every in (1, 4):
        torch.manual_seed(0)
        model = _model()
        got.append(
            pretrain_mlm(
                model,
                list(range(40)),
                rows.__getitem__,
                10,
                8,
                1e-3,
                0,
                "cpu",
                log=lambda *a: None,
                mlm=mlm,
                special_ids=(PAD, CLS, 50259),
                mask_id=50260,
                base_vocab_size=50257,
                sync_every=every,
            )
        )
    assert len(got[0]) == 10 and got[0] == pytest.approx(got[1], rel=1e-5)


@pytest.mark.slow
@needs_ranks
def test_gpu_check_script_smoke_on_the_cpu(tmp_path):
    """benchmarks/gpu_check.sh --smoke: the prepared GPU script's whole path (nothing to install here, the
    benchmark with a tiny model, the preset against TF-IDF), every figure in $OUT."""
    import os
    import subprocess

    r = subprocess.run(
        ["bash", "benchmarks/gpu_check.sh", "--smoke"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={
            **os.environ,
            "OUT": str(tmp_path),
            "PYTHON": str(ROOT / ".venv/bin/python") if (ROOT / ".venv/bin/python").exists() else "python3",
        },
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    summary = (tmp_path / "summary.txt").read_text()
    assert "bench: exit 0" in summary, summary
    figures = json.loads((tmp_path / "figures.json").read_text())
    assert [row["pipeline"] for row in figures["throughput"]] == ["book", "fp32", "ours"]
    preset = figures["preset_gpu"]
    assert preset["bert_preset_gpu"]["pretrain_steps"] >= 1 and preset["bert_preset_gpu"]["config"]["preset"] == "gpu"
    assert 0 <= preset["tfidf"]["accuracy"] <= 1 and isinstance(preset["beats_tfidf"], bool)


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_gpu_gathered_batches_equal_the_host_padding():
    g = torch.Generator().manual_seed(0)
    data = _encoded(torch.randint(1, 60, (300,), generator=g).tolist())
    host = B.Batcher(data, "cpu", PAD, 64, buckets=(32, 64), fill_id=CLS)
    cuda = B.Batcher(data, "cuda", PAD, 64, buckets=(32, 64), resident=True, fill_id=CLS)
    for index in B.LengthBatches(data.lengths, 32, shuffle=True, seed=1):
        a, b = host.batch(index, rows=32), cuda.batch(index, rows=32)
        for x, y in zip(a[:3], b[:3]):
            assert y.is_cuda and torch.equal(x, y.cpu())
