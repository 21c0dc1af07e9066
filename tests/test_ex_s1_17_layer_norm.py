"""Real submissions of §1.17 layer normalisation: plausible wrong answers lose points with a
message naming the mistake; a correct answer written differently scores full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_17_layer_norm"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 13


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_unbiased_variance_is_named(submission):
    wrong = _replace("var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)", "var = x.var(dim=-1, keepdim=True)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 7
    assert "unbiased variance (dividing by 5)" in failed["test_book_six_values"]["message"]
    for name in ("test_layer_norm_matches_torch", "test_invariants"):
        assert "the unbiased variance" in failed[name]["message"], failed[name]["message"]


def test_eps_outside_the_square_root_is_named(submission):
    wrong = _replace("return (x - mean) / torch.sqrt(var + eps)", "return (x - mean) / (torch.sqrt(var) + eps)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    # Invisible at ordinary variances; caught where var is near eps, by a public check first.
    assert set(failed) == {"test_eps_inside_the_square_root", "test_small_variance_and_eps", "test_invariants"}, set(
        failed
    )
    assert "eps added outside the square root" in failed["test_eps_inside_the_square_root"]["message"]
    assert "var / (var + eps)" in failed["test_invariants"]["message"]
    assert "eps added outside the square root" in failed["test_small_variance_and_eps"]["message"]


def test_normalising_over_the_wrong_dimension_is_named(submission):
    wrong = _replace(
        "mean = x.mean(dim=-1, keepdim=True)\n    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)",
        "mean = x.mean(dim=0, keepdim=True)\n    var = ((x - mean) ** 2).mean(dim=0, keepdim=True)",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert "test_book_six_values" not in failed  # one vector: dim 0 is its last dimension
    assert "normalised over dim `0` instead of the last dimension" in failed["test_layer_norm_matches_torch"]["message"]


ALTERNATIVE = """import torch
import torch.nn as nn


def mean_and_variance(x):
    var, mean = torch.var_mean(x, dim=-1, keepdim=True, correction=0)
    return mean, var


def normalize(x, eps=1e-5):
    centred = x - x.mean(-1, keepdim=True)
    return centred * torch.rsqrt(centred.pow(2).mean(-1, keepdim=True) + eps)


class LayerNorm(nn.Module):
    def __init__(self, emb_dim, eps=1e-5):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(emb_dim))
        self.bias = nn.Parameter(torch.zeros(emb_dim))

    def forward(self, x):
        return torch.addcmul(self.bias, normalize(x, self.eps), self.weight)
"""


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: ALTERNATIVE}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_torch_layer_norm_is_forbidden(submission):
    cheat = _replace(
        "return self.weight * normalize(x, self.eps) + self.bias",
        "return nn.functional.layer_norm(x, x.shape[-1:], self.weight, self.bias, self.eps)",
    )
    r = grade(submission({EX: cheat}), "-e", EX, "--public-only")
    assert score_of(r, EX) == 0
    assert all("torch.nn.functional.layer_norm" in c["message"] for c in checks_of(r, EX))


def test_forward_ignoring_self_eps_fails_a_public_check(submission):
    """Issue 28: LayerNorm.forward calling normalize(x) without self.eps was caught by a hidden check
    only, unnamed. A public check builds LayerNorm(6, eps=0.1) and names it."""
    wrong = _replace("normalize(x, self.eps)", "normalize(x)")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert set(failed) == {"test_eps_inside_the_square_root"}, set(failed)
    assert "LayerNorm.forward ignored self.eps" in failed["test_eps_inside_the_square_root"]["message"]
