"""Real submissions of §1.18 GELU and the feed-forward network: plausible wrong answers lose
points with a message naming the mistake; a correct answer written differently scores full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_18_feed_forward"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 10


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_relu_between_the_layers_is_named(submission):
    wrong = _replace("return self.fc2(gelu(self.fc1(x)))", "return self.fc2(torch.relu(self.fc1(x)))")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert set(failed) == {"test_feed_forward_768"}, set(failed)
    assert "ReLU between the layers instead of GELU" in failed["test_feed_forward_768"]["message"]


def test_tanh_form_for_the_exact_gelu_is_named(submission):
    wrong = _replace(
        "return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))",
        "return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert (
        "the tanh approximation where the exact (erf) form was asked"
        in failed["test_gelu_exact_and_its_negative_region"]["message"]
    )
    assert "the tanh GELU instead of the exact one" in failed["test_feed_forward_768"]["message"]
    assert "test_gelu_tanh" not in failed


def test_gelu_without_the_sqrt2_is_named(submission):
    wrong = _replace("return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))", "return 0.5 * x * (1.0 + torch.erf(x))")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "`erf(x)` instead of `erf(x / sqrt(2))`" in _failed(r)["test_gelu_exact_and_its_negative_region"]["message"]


def test_relu_for_gelu_is_named(submission):
    wrong = _replace("return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))", "return x.clamp(min=0)")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "this is ReLU" in _failed(r)["test_gelu_exact_and_its_negative_region"]["message"]


ALTERNATIVE = """import math

import torch
import torch.nn as nn


def gelu(x):
    return x * torch.special.ndtr(x)


def gelu_tanh(x):
    inner = math.sqrt(2 / math.pi) * x * (1 + 0.044715 * x * x)
    return x * torch.sigmoid(2 * inner)   # 0.5 * (1 + tanh(u)) == sigmoid(2u)


class FeedForward(nn.Module):
    def __init__(self, emb_dim=768, hidden_dim=None):
        super().__init__()
        self.fc1 = nn.Linear(emb_dim, hidden_dim or 4 * emb_dim)
        self.fc2 = nn.Linear(hidden_dim or 4 * emb_dim, emb_dim)

    def forward(self, x):
        h = self.fc1(x)
        return self.fc2(gelu(h))
"""


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: ALTERNATIVE}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_torch_gelu_is_forbidden(submission):
    cheat = _replace("return 0.5 * x * (1.0 + torch.erf(x / math.sqrt(2.0)))", "return nn.GELU()(x)")
    r = grade(submission({EX: cheat}), "-e", EX, "--public-only")
    assert score_of(r, EX) == 0
    assert all("torch.nn.GELU" in c["message"] for c in checks_of(r, EX))
