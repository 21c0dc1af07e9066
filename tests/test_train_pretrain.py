"""`kata train --pretrain-mlm STEPS`: masked-language-model pre-training (beyond the book, the
s1_23_mlm exercise) on the source's unlabelled text, then fine-tuning, end to end as a user runs it."""

from __future__ import annotations

import contextlib
import json

import pytest
import torch

from grader.capstone import gpt2
from grader.capstone.training import model as M
from grader.capstone.training.outputs import load_checkpoint
from grader.capstone.training.tokenizer import load_tokenizer

from conftest import ROOT, TINY_TRAIN, kata

TINY = TINY_TRAIN  # a model small enough to train in seconds on a CPU
needs_ranks = pytest.mark.skipif(not gpt2.have_asset(), reason="gpt2.tiktoken is missing (kata assets fetch)")
MODEL_FILES = (
    "s1_23_bert_embedding.py",
    "s1_23_self_attention.py",
    "s1_23_feed_forward.py",
    "s1_23_encoder_block.py",
    "s1_23_encoder.py",
    "s1_23_classifier.py",
    "s1_23_tokenizer.py",
)


@needs_ranks
def test_pretrain_then_fine_tune_end_to_end(tmp_path):
    out = tmp_path / "run"
    r = kata(
        "train",
        "--data",
        "synthetic:300",
        "--limit",
        "200",
        "--pretrain-mlm",
        "40",
        "--epochs",
        "1",
        "--out",
        str(out),
        *TINY,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "pre-training step 40/40: masked-token loss" in r.stdout
    assert "grows from 50,260 to 50,261 rows for [MASK] = 50260" in r.stdout
    m = json.loads((out / "metrics.json").read_text())
    pre = m["pretrain"]
    assert pre["steps"] == 40 == len(pre["losses"]) and pre["mask_id"] == 50260 and pre["vocab_size"] == 50261
    assert pre["texts"] == 200  # --limit 200 of the 300 unlabelled + 300 train texts
    assert "the embedding tables are scaled by 0.0" in r.stdout
    assert 10.0 < pre["first_loss"] < 12.0, pre  # starts near a uniform guess, ln 50,261 = 10.8 (N(0, 1) rows: 25-70)
    assert pre["last_mean"] < 0.8 * pre["first_mean"], pre  # the masked-token loss falls
    assert pre["code"] == str(ROOT / "solutions/ch01/s1_23_mlm.py")
    assert m["test"] is not None and m["history"]  # fine-tuning ran after it

    # the checkpoint reloads with the grown vocabulary and gives the reported test accuracy
    info, state = load_checkpoint(out)
    assert info["config"]["vocab_size"] == 50261 and state["bert.embed.token.weight"].shape[0] == 50261
    model = M.build_model(M.load_classifier_module(ROOT / "solutions"), **info["config"])
    model.load_state_dict(state)
    assert m["parameters"] == sum(p.numel() for p in model.parameters())
    from grader.capstone.data import synthetic_corpus
    from grader.capstone.training.loop import Dist, encode_split, evaluate

    tok = load_tokenizer(ROOT / "solutions", 48)
    test, _ = encode_split(synthetic_corpus(300, 0)["test"], tok)
    _, acc, _ = evaluate(model, test, 32, tok.pad_id, 48, torch.device("cpu"), contextlib.nullcontext(), Dist())
    assert acc == pytest.approx(m["test"]["accuracy"])


def test_scaled_embeddings_leave_the_encoder_as_it_was_and_start_the_head_near_uniform():
    from grader.capstone.training.pretrain import grow_token_embedding, load_mlm_module, scale_embeddings

    torch.manual_seed(0)
    model = M.build_model(
        M.load_classifier_module(ROOT / "solutions"),
        vocab_size=50260,
        dim=64,
        max_len=32,
        layers=2,
        heads=2,
        ff_dim=128,
    )
    model.eval().requires_grad_(False)
    ids = torch.randint(0, 50257, (3, 20), generator=torch.Generator().manual_seed(1))
    mask = torch.ones_like(ids)
    before = model.bert(ids, mask)
    token = grow_token_embedding(model, 50261)
    factor = scale_embeddings(model, 0.02)
    assert factor == pytest.approx(0.02, rel=0.05)  # nn.Embedding's rows are N(0, 1)
    rows = torch.cat([token.weight[:50257], token.weight[50258:]]).detach()
    assert float(rows.std()) == pytest.approx(0.02, rel=1e-3) and not token.weight[50257].any()  # [PAD] stays zeros
    assert float(model.bert.embed.position.weight.detach().std()) == pytest.approx(0.02, rel=0.1)  # the same factor
    after = model.bert(ids, mask)
    assert torch.allclose(after, before, atol=0.02), (after - before).abs().max()  # LayerNorm's eps only
    assert scale_embeddings(model, 0.02) == pytest.approx(1.0)  # already there: nothing more
    mlm = load_mlm_module(ROOT / "solutions")
    head = mlm.MLMHead(token, 64).requires_grad_(False)
    labels = ids.clone()
    loss = float(mlm.mlm_loss(head(after), labels).detach())
    assert abs(loss - 10.82) < 0.5, loss  # ln 50,261 = 10.82


@needs_ranks
def test_unfinished_mlm_exercise_is_named(tmp_path):
    """A code folder whose s1_23_mlm.py is still the stub: the file and line, no traceback, nothing trained."""
    ch01 = tmp_path / "mine" / "ch01"
    ch01.mkdir(parents=True)
    for name in MODEL_FILES:
        (ch01 / name).write_text((ROOT / "solutions/ch01" / name).read_text())
    stub = ch01 / "s1_23_mlm.py"
    stub.write_text((ROOT / "exercises/ch01/s1_23_mlm.py").read_text())
    line = next(
        n
        for n, text in enumerate(stub.read_text().splitlines(), 1)
        if "raise NotImplementedError(" in text and "(in MLMHead.__init__)" in text
    )
    r = kata(
        "train",
        "--code",
        str(tmp_path / "mine"),
        "--data",
        "synthetic:100",
        "--pretrain-mlm",
        "5",
        "--out",
        str(tmp_path / "o"),
        *TINY,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{stub}:{line}: MLMHead(embedding, dim) is not implemented yet" in r.stderr, r.stderr
    assert "kata check s1_23_mlm" in r.stderr and "Traceback" not in r.stderr
    assert not (tmp_path / "o" / "best.safetensors").exists()

    stub.unlink()  # no file at all: named too
    r = kata(
        "train",
        "--code",
        str(tmp_path / "mine"),
        "--data",
        "synthetic:100",
        "--pretrain-mlm",
        "5",
        "--out",
        str(tmp_path / "o"),
        *TINY,
    )
    assert r.returncode == 2 and f"{stub}: no such file" in r.stderr, r.stderr


def test_pretrain_option_is_documented():
    r = kata("train", "--help")
    assert r.returncode == 0 and "--pretrain-mlm STEPS" in r.stdout
    text = (ROOT / "docs" / "training.md").read_text()  # the README's `kata train` section, now a docs page
    assert "--pretrain-mlm" in text and "K-1.23-a" in text
