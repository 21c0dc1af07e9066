"""Real submissions of §1.23's FeedForward (listing 1.32): plausible wrong answers lose points
with a message naming the mistake; a correct answer written differently scores full marks."""
import importlib.util

import torch

from grader.checks import bert_reference as R
from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_feed_forward"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 8


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_relu_is_named(submission):
    wrong = _replace("nn.GELU(),", "nn.ReLU(),")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert set(failed) == {"test_listing_1_32_structure", "test_listing_1_32_given_weights"}, set(failed)
    assert "ReLU instead of GELU" in failed["test_listing_1_32_given_weights"]["message"]
    assert "GELU(approximate='none')" in failed["test_listing_1_32_structure"]["message"]


def test_missing_last_dropout_loses_the_dropout_check(submission):
    wrong = _replace("""            nn.Linear(hidden, dim),
            nn.Dropout(dropout),
""", """            nn.Linear(hidden, dim),
""")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_listing_1_32_structure", "test_dropout_only_in_training"}, set(failed)
    assert "the last Dropout comes after the second Linear" in failed["test_dropout_only_in_training"]["message"]


ALTERNATIVE = '''import torch.nn as nn


class FeedForward(nn.Module):
    def __init__(self, dim, hidden, dropout=0.1):
        super().__init__()
        layers = [nn.Linear(dim, hidden), nn.GELU(approximate="none"), nn.Dropout(dropout)]
        layers += [nn.Linear(hidden, dim), nn.Dropout(dropout)]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        for layer in self.net:
            x = layer(x)
        return x
'''


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: ALTERNATIVE}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_reference_equals_the_solution():
    spec = importlib.util.spec_from_file_location(EX, SOLUTIONS / "ch01" / f"{EX}.py")
    sol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sol)
    sd = R.random_state(R.feed_forward_shapes(6, 10), seed=1)
    m = sol.FeedForward(6, 10).eval()
    m.load_state_dict(sd)
    x = torch.randn(2, 3, 6, generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert torch.allclose(m(x), R.feed_forward(x, sd), atol=1e-6)
