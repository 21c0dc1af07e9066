"""§1.14 dropout graded for real: plausible wrong answers lose points with a message that names the
mistake; the library's dropout is refused; a correct answer written differently scores full marks."""
from tests.conftest import checks_of, failed_checks, grade, score_of, solution_with

EX = "s1_14_dropout"
MAX = 14


def _swap(old: str, new: str) -> str:
    return solution_with(EX, old, new)


def _failed(report):
    return failed_checks(report, EX)


def test_no_rescaling(submission):
    wrong = _swap("return x * keep / (1 - p)", "return x * keep")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 6
    for name in ("test_book_scaling_example", "test_listing_1_13_dropout", "test_survivors_scaled",
                 "test_expectation_preserved"):
        assert "not rescaled" in failed[name]["message"], failed[name]
    assert "test_zero_fraction" not in failed  # it drops the right share; only the scale is wrong


def test_keeping_with_probability_p(submission):
    wrong = _swap("keep = torch.rand(x.shape, device=x.device) >= p", "keep = torch.rand(x.shape, device=x.device) < p")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 4
    assert "probability p instead of 1 - p" in failed["test_zero_fraction"]["message"]
    assert "probability p instead of 1 - p" in failed["test_expectation_preserved"]["message"]


def test_scaling_by_one_minus_p(submission):
    wrong = _swap("return x * keep / (1 - p)", "return x * keep * (1 - p)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 6
    assert "multiplied by (1 - p)" in failed["test_survivors_scaled"]["message"]
    assert "multiplied by (1 - p)" in failed["test_book_scaling_example"]["message"]


def test_library_dropout_is_forbidden(submission):
    cheat = _swap("    keep = torch.rand(x.shape, device=x.device) >= p\n    return dropout_with_mask(x, keep, p)",
                  "    return torch.nn.functional.dropout(x, p, training=True)")
    r = grade(submission({EX: cheat}), "-e", EX)
    assert score_of(r, EX) == 0
    for c in checks_of(r, EX):  # every check names the API; the public ones also the file and line
        assert "torch.nn.functional.dropout" in c["message"], c
        assert (f"{EX}.py:" in c["message"]) == (c["visibility"] == "public"), c


CORRECT_DIFFERENT = '''"""A correct answer written another way: a Bernoulli mask of keep probabilities, in-place scaling."""
import torch
import torch.nn as nn


def dropout_with_mask(x, keep, p):
    out = torch.where(keep, x, torch.zeros_like(x))
    out.mul_(1.0 / (1.0 - p))
    return out


def dropout(x, p=0.5, training=True):
    if not training or p <= 0.0:
        return x.clone()
    if p >= 1.0:
        return x * 0
    keep = torch.bernoulli(torch.full_like(x, 1.0 - p)).bool()
    return dropout_with_mask(x, keep, p)


class Dropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.rate = float(p)

    def forward(self, x):
        return dropout(x, p=self.rate, training=self.training)
'''


def test_correct_but_different_scores_full_marks(submission):
    r = grade(submission({EX: CORRECT_DIFFERENT}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]
