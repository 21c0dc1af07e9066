"""Graded submissions of s1_23_evaluation: plausible wrong answers lose points with a named mistake."""

import torch
import torch.nn as nn

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_evaluation"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
MAX = 14


def _replace(source, old, new):
    assert old in source, old
    return source.replace(old, new)


def _failed(report):
    return {c["name"]: c["message"] for c in checks_of(report, EX) if c["status"] != "passed"}


def test_batch_mean_accuracy_no_eval_mode_and_no_names(submission):
    wrong = _replace(
        SOURCE,
        """    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for ids, mask, labels in loader:
            preds = model(ids, mask).argmax(dim=1)
            correct += (preds == labels).sum().item()
            total += labels.size(0)
    return correct / total""",
        """    model.eval()
    accuracies = []
    with torch.no_grad():
        for ids, mask, labels in loader:
            accuracies.append((model(ids, mask).argmax(dim=1) == labels).float().mean().item())
    return sum(accuracies) / len(accuracies)""",
    )
    wrong = _replace(
        wrong, "    model.eval()\n    all_labels, all_preds = [], []", "    all_labels, all_preds = [], []"
    )
    wrong = _replace(wrong, "target_names=CLASS_NAMES, ", "")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "mean of the per-batch accuracies" in failed["test_listing_1_39_accuracy"]
    assert "evaluation mode" in failed["test_evaluation_mode"]
    assert "named Negative and Positive" in failed["test_listing_1_40_report"]
    assert score_of(r, EX) <= MAX - 8


def test_swapped_report_and_transposed_matrix(submission):
    wrong = _replace(
        SOURCE,
        "classification_report(labels, preds, labels=[0, 1]",
        "classification_report(preds, labels, labels=[0, 1]",
    )
    wrong = _replace(
        wrong, "confusion_matrix(labels, preds, labels=[0, 1])", "confusion_matrix(preds, labels, labels=[0, 1])"
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "the arguments are swapped" in failed["test_listing_1_40_report"]
    assert "the arguments are swapped" in failed["test_report_from_student_predictions"]
    assert "transposed" in failed["test_confusion_matrix"]
    assert "the arguments are swapped" in failed["test_book_report"]  # the supports become 12,415 and 12,585
    assert set(failed) == {
        "test_listing_1_40_report",
        "test_report_from_student_predictions",
        "test_book_report",
        "test_report_with_one_class",
        "test_confusion_matrix",
    }


def test_report_without_both_labels(submission):
    wrong = _replace(
        SOURCE,
        "classification_report(labels, preds, labels=[0, 1], target_names=CLASS_NAMES, zero_division=0)",
        "classification_report(labels, preds, target_names=CLASS_NAMES, zero_division=0)",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    # fine while both classes occur; the public report check has a case with one class (issue 36)
    assert sorted(failed) == ["test_listing_1_40_report", "test_report_with_one_class"]
    assert all("labels=[0, 1]" in message for message in failed.values())
    assert score_of(r, EX) == MAX - 3


def test_other_correct_answer_scores_full_marks(submission):
    other = _replace(
        SOURCE,
        """    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for ids, mask, labels in loader:
            preds = model(ids, mask).argmax(dim=1)
            correct += (preds == labels).sum().item()
            total += labels.size(0)
    return correct / total""",
        """    labels, preds = collect_predictions(model, loader)
    return sum(a == b for a, b in zip(labels, preds)) / len(labels)""",
    )
    other = _replace(
        other,
        """    model.eval()
    all_labels, all_preds = [], []
    with torch.no_grad():
        for ids, mask, labels in loader:
            all_preds += model(ids, mask).argmax(dim=1).tolist()
            all_labels += labels.tolist()
    return all_labels, all_preds""",
        """    model.train(False)
    with torch.inference_mode():
        batches = [(labels, model(ids, mask).max(dim=-1).indices) for ids, mask, labels in loader]
    return torch.cat([b[0] for b in batches]).tolist(), torch.cat([b[1] for b in batches]).tolist()""",
    )
    other = _replace(
        other,
        "    return confusion_matrix(labels, preds, labels=[0, 1]).tolist()",
        "    counts = [[0, 0], [0, 0]]\n    for t, p in zip(labels, preds):\n        counts[t][p] += 1\n"
        "    return counts",
    )
    other = _replace(
        other,
        "labels=[0, 1], target_names=CLASS_NAMES, zero_division=0)",
        "labels=[0, 1], target_names=CLASS_NAMES, digits=2, zero_division=0.0)",
    )
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)


def test_layer_norm_has_no_running_statistics():
    """ERRATA E-1.23-t: LayerNorm keeps no running statistics and does the same in train and eval mode."""
    norm = nn.LayerNorm(8)
    assert list(norm.buffers()) == []
    x = torch.randn(4, 5, 8, generator=torch.Generator().manual_seed(0)) * 3 + 1
    train_out = norm.train()(x)
    assert torch.equal(train_out, norm.eval()(x))
    # it normalises each token over its own features, so a batch of one gives that token's same result
    assert torch.allclose(norm(x[:1, :1]), train_out[:1, :1])
    batch_norm = nn.BatchNorm1d(8)  # what the book describes: batch statistics in training, running ones in eval
    assert [name for name, _ in batch_norm.named_buffers()] == ["running_mean", "running_var", "num_batches_tracked"]
