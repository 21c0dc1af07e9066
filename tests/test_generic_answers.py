"""A point is earned only by solving: every generic answer scores 0 on every exercise.

Each variant of tests/generic_answers.py (any exception, the input echoed, None, zeros, ones, a
constant or random values of the reference's own shape and type, a module answering every name)
is built mechanically from the committed stubs for every exercise of course.toml, and graded as
one whole submission with the real `kata grade --json`. A new exercise is covered with no new test.
"""

from __future__ import annotations

import pytest

from tests import generic_answers
from tests.conftest import ROOT, checks_of, grade
from grader.course import manifest as course

EXERCISES = [ex.id for ex in course.load(ROOT, check_files=False).exercises]


def test_every_stub_of_the_course_is_answered_by_every_variant(tmp_path):
    """Each variant writes a file for every exercise of course.toml, and none of them is left
    with a stub's NotImplementedError (a form the derivation misses would leave one)."""
    for variant in generic_answers.VARIANTS:
        chapter = generic_answers.build(variant, tmp_path) / "ch01"
        for ex in EXERCISES:
            text = (chapter / f"{ex}.py").read_text()
            assert "NotImplementedError" not in text, f"{variant}: {ex} still raises NotImplementedError"
            compile(text, f"{variant}/{ex}.py", "exec")


@pytest.mark.slow
@pytest.mark.parametrize("variant", generic_answers.VARIANTS)
def test_generic_answer_scores_zero_everywhere(variant, tmp_path):
    report = grade(generic_answers.build(variant, tmp_path))
    earned = []
    for ex in EXERCISES:
        checks = checks_of(report, ex)
        assert checks, f"{variant}: {ex} is missing from the report"
        earned += [
            f"{ex}::{c['name']} ({c['score']}/{c['max_score']}): {c['message'][:200]}" for c in checks if c["score"] > 0
        ]
    assert not earned, f"the generic answer {variant!r} earned points:\n" + "\n".join(earned)


# The §1.23 training attack of issue 12: `train` trains nothing and returns falling losses, and
# `predict_labels` ignores the model: it counts, per label, the words of the training tensors it
# was handed and labels each held-out row by the words it holds.
COUNTING_TRAIN = """

_SEEN = {}


def train(model, loader, optimizer, loss_fn, epochs):
    counts = _SEEN.setdefault("counts", [torch.zeros(2000), torch.zeros(2000)])
    for ids, mask, labels in loader:
        for row, label in zip(ids, labels):
            counts[int(label)] += torch.bincount(row, minlength=2000).float()
    return [1.0 / (epoch + 1) for epoch in range(epochs)]


def predict_labels(model, ids, mask, batch_size=256):
    neg, pos = _SEEN["counts"]
    score = (pos + 1).log() - (neg + 1).log()
    return [int(score[row].sum() > 0) for row in ids]
"""


@pytest.mark.slow
def test_training_checks_measure_the_trained_model(submission):
    source = (ROOT / "solutions" / "ch01" / "s1_23_training.py").read_text() + COUNTING_TRAIN
    report = grade(submission({"s1_23_training": source}), "-e", "s1_23_training")
    checks = {c["name"]: c for c in checks_of(report, "s1_23_training")}
    for name in ("test_learns_synthetic_task", "test_learns_another_task"):
        assert checks[name]["score"] == 0, f"{name}: a loop that trains nothing scored: {checks[name]['message']}"
        assert "parameters" in checks[name]["message"], checks[name]["message"]
