"""`kata train` says when its test accuracy is only the test split's class balance: a model that
answers one class for everything, or scores within a point of the majority class's share."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys

import pytest

from grader.capstone import gpt2
from grader.capstone.training import baseline
from tests.conftest import ROOT

POS, NEG = 1, 0


def facts(labels, preds):
    acc = sum(y == p for y, p in zip(labels, preds)) / len(labels)
    return baseline.majority(labels, preds, acc)


def test_a_model_predicting_only_the_majority_class_is_named():
    labels = [POS] * 699 + [NEG] * 301
    found = facts(labels, [POS] * 1000)
    assert found["class"] == "positive" and found["share"] == pytest.approx(0.699)
    assert baseline.note(found, lang="en") == (
        "test accuracy 69.9% — the majority class alone is 69.9%: the model predicts only 'positive'"
    )
    assert baseline.note(found, lang="zh") == "测试准确率 69.9% —— 仅多数类就占 69.9%：模型对所有样本都预测 'positive'"


def test_a_model_predicting_only_the_minority_class_is_named_too():
    found = facts([POS] * 7 + [NEG] * 3, [NEG] * 10)
    assert baseline.note(found, lang="en") == (
        "test accuracy 30.0% — the model predicts only 'negative', for every "
        "review (the majority class, 'positive', alone is 70.0%)"
    )


def test_an_accuracy_within_a_point_of_the_majority_share_is_flagged():
    labels = [POS] * 700 + [NEG] * 300
    preds = [POS] * 690 + [NEG] * 10 + [NEG] * 295 + [POS] * 5  # 98.5% right on positives, both classes predicted
    near = facts(labels, [POS] * 695 + [NEG] * 5 + [POS] * 300)  # 69.5%: a hair from always "positive"
    assert baseline.note(near, lang="en") == (
        "test accuracy 69.5% — the majority class, 'positive', alone is 70.0%: "
        "the model does little more than guess (it answered 'positive' for 995 "
        "of 1000 reviews)"
    )
    assert baseline.note(facts(labels, preds), lang="en") == ""  # 98.5%: learning, nothing to add
    assert baseline.note(facts([POS, NEG] * 50, [POS, NEG] * 40 + [NEG, POS] * 10), lang="en") == ""  # 80% of 50/50


def test_the_note_names_the_class_the_model_answered_not_the_majority_class():
    """The issue's case: negative is the majority, the model answered 'positive' 498 times of 500, and
    the accuracy lands within a point of the majority share; the note once said it answered
    'negative' for every review. Both directions, in both languages."""
    for majority_name, other, said, minority in (
        (NEG, POS, "positive", "negative"),
        (POS, NEG, "negative", "positive"),
    ):
        lab = [majority_name] * 251 + [other] * 249
        preds = [other] * 498 + [majority_name] * 2
        found = facts(lab, preds)
        assert found["most_predicted"] == said and found["most_predicted_count"] == 498
        en = baseline.note(found, lang="en")
        assert f"it answered '{said}' for 498 of 500 reviews" in en and f"'{minority}', alone is 50.2%" in en, en
        zh = baseline.note(found, lang="zh")
        assert f"500 条评论中有 498 条回答 '{said}'" in zh and f"多数类 '{minority}' 就占 50.2%" in zh, zh


needs_ranks = pytest.mark.skipif(not gpt2.have_asset(), reason="gpt2.tiktoken is missing (kata assets fetch)")


@needs_ranks
def test_kata_train_reports_the_majority_share_of_a_model_that_learned_one_class(tmp_path):
    """A tiny real run: every training review is positive, so the model learns to answer
    "positive"; the test split is 70% positive, so it scores exactly the majority share."""
    words = ["good", "bad", "film", "plot", "actor", "scene", "boring", "great", "slow", "funny"]
    rows = [
        (f"review {i}: " + " ".join(words[(i * k) % len(words)] for k in range(1, 8)), POS, "train") for i in range(64)
    ]
    rows += [
        (f"test {i}: " + " ".join(words[(i + k) % len(words)] for k in range(6)), POS if i < 14 else NEG, "test")
        for i in range(20)
    ]
    data = tmp_path / "one-sided.csv"
    with data.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["text", "label", "split"])
        w.writerows(rows)
    out = tmp_path / "run"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "train",
            "--code",
            "reference",
            "--data",
            str(data),
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
            "32",
            "--epochs",
            "2",
            "--batch-size",
            "16",
            "--lr",
            "3e-3",
            "--device",
            "cpu",
            "--quiet",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            **os.environ,
            "KATA_LANG": "en",
            "KATA_OFFLINE": "1",
            "KATA_CACHE_DIR": str(tmp_path / "cache"),
            "PYTHONPATH": str(ROOT),
        },
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    said = "test accuracy 70.0% — the majority class alone is 70.0%: the model predicts only 'positive'"
    assert said in proc.stdout
    majority = json.loads((out / "metrics.json").read_text())["test"]["majority"]
    assert majority["note"] == said and majority["predicted_classes"] == ["positive"]
    assert majority["share"] == pytest.approx(0.7) and majority["accuracy"] == pytest.approx(0.7)
