"""Masked-language-model pre-training of the §1.23 encoder (grader/capstone/training/pretrain.py):
a few hundred tiny steps on a synthetic corpus clearly lower the masked-token loss, the token
embedding gains its [MASK] row, the classifier still classifies after, and an unfinished
exercise is named before anything trains."""

from __future__ import annotations

import math
import random

import pytest
import torch

from grader.capstone.training.model import build_model, load_classifier_module
from grader.capstone.training.pretrain import PretrainError, grow_token_embedding, load_mlm_module, pretrain_mlm
from tests.conftest import ROOT

CLS, SEP = 50258, 50259
NEUTRAL = (
    "the movie film story plot acting was is and but with a an of to it this that scene actor cast "
    "director music ending script camera"
).split()
POSITIVE = "great brilliant excellent wonderful superb moving".split()
NEGATIVE = "bad awful boring dull terrible weak".split()


def corpus(n: int, seed: int) -> list[str]:
    """Reviews of 8 to 20 words: neutral filler, then 'really' before one to three sentiment words
    of one polarity: the words after 'really' can be told from both sides."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        cues = POSITIVE if rng.random() < 0.5 else NEGATIVE
        words = [rng.choice(NEUTRAL) for _ in range(rng.randint(6, 16))]
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(words))
            words[at:at] = ["really", rng.choice(cues)]
        texts.append(" ".join(words))
    return texts


def word_encoder(texts: list[str]):
    """A word-level encode for the test: each word its own ordinary id, [CLS] ... [SEP] around."""
    vocab = {w: i for i, w in enumerate(sorted({w for t in texts for w in t.split()}))}
    return lambda text: [CLS] + [vocab[w] for w in text.split()] + [SEP]


@pytest.fixture(autouse=True)
def one_thread():
    """The models are tiny: one thread is faster than two fighting over a busy machine's cores."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def tiny_classifier(seed: int = 0):
    torch.manual_seed(seed)
    module = load_classifier_module(ROOT / "solutions")
    return build_model(module, vocab_size=50260, dim=32, max_len=64, layers=2, heads=2, ff_dim=64)


def test_pretraining_lowers_the_masked_token_loss():
    texts = corpus(400, seed=1)
    model = tiny_classifier()
    logs: list[str] = []
    losses = pretrain_mlm(
        model,
        texts,
        word_encoder(texts),
        steps=200,
        batch_size=8,
        lr=1e-2,
        seed=0,
        device="cpu",
        log=logs.append,
        mlm=load_mlm_module(ROOT / "solutions"),
    )
    assert len(losses) == 200 and all(math.isfinite(x) for x in losses)
    first, last = sum(losses[:10]) / 10, sum(losses[-30:]) / 30
    words = {w for t in texts for w in t.split()}
    assert first > math.log(50261) - 1, first  # a fresh head spreads its guesses over the whole vocabulary
    # The reference reaches about 3.5 from about 10.3 (the embeddings start scaled to BERT's 0.02, so
    # the first guesses are near uniform: ln 50,261 = 10.8; the corpus's unigram entropy is 3.48 nats).
    assert first < math.log(50261) + 1, first
    assert last < first / 2.5 and last < math.log(len(words)) + 1, (first, last)
    assert model.bert.embed.token.num_embeddings == 50261  # the row for [MASK] = 50260
    assert any("grows from 50,260 to 50,261 rows for [MASK] = 50260" in line for line in logs), logs
    assert any(line.startswith("pre-training step 200/200: masked-token loss") for line in logs), logs
    ids = torch.tensor([[CLS, 3, 4, 5, SEP]])
    assert model(ids, torch.ones_like(ids)).shape == (1, 2)  # fine-tuning starts from the same model


def test_same_seed_same_losses():
    texts = corpus(60, seed=2)
    runs = []
    for _ in range(2):
        model = tiny_classifier(seed=3)
        runs.append(
            pretrain_mlm(
                model,
                texts,
                word_encoder(texts),
                steps=5,
                batch_size=8,
                lr=1e-3,
                seed=4,
                device="cpu",
                log=lambda *a: None,
                mlm=load_mlm_module(ROOT / "solutions"),
            )
        )
    assert runs[0] == runs[1]


def test_grow_keeps_the_rows_and_the_padding_row():
    model = tiny_classifier()
    before = model.bert.embed.token.weight.detach().clone()
    token = grow_token_embedding(model, 50261)
    assert token is model.bert.embed.token and token.num_embeddings == 50261 and token.padding_idx == 50257
    assert torch.equal(token.weight[:50260], before)
    assert grow_token_embedding(model, 50261) is token  # already large enough: unchanged


def test_an_unfinished_exercise_is_named(tmp_path):
    texts = corpus(20, seed=5)
    with pytest.raises(PretrainError, match=r"s1_23_mlm\.py:\d+: MLMHead\(embedding, dim\) is not implemented yet"):
        pretrain_mlm(
            tiny_classifier(),
            texts,
            word_encoder(texts),
            steps=2,
            batch_size=4,
            lr=1e-3,
            seed=0,
            device="cpu",
            log=lambda *a: None,
            mlm=load_mlm_module(ROOT / "exercises"),
        )
    with pytest.raises(PretrainError, match="no such file"):
        load_mlm_module(tmp_path)
