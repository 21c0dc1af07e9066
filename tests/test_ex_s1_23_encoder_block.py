"""Real submissions of §1.23's TransformerBlock (listing 1.33): plausible wrong answers lose points
with a message naming the mistake; a correct answer written differently scores full marks."""

import torch

from grader.checks import bert_reference as R
from grader.capstone.training.model import import_file
from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_encoder_block"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 10
BODY = """        x = x + self.attn(self.norm1(x), mask)
        x = x + self.ff(self.norm2(x))
        return x
"""


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_post_ln_is_named(submission):
    wrong = _replace(BODY, """        x = self.norm1(x + self.attn(x, mask))
        x = self.norm2(x + self.ff(x))
        return x
""")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert {"test_listing_1_33_given_weights", "test_fresh_sizes"} <= set(failed), set(failed)
    assert "this is post-LN" in failed["test_listing_1_33_given_weights"]["message"]
    assert score_of(r, EX) <= MAX - 6


def test_missing_residuals_are_named(submission):
    wrong = _replace(BODY, """        x = self.attn(self.norm1(x), mask)
        x = self.ff(self.norm2(x))
        return x
""")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "the residual (shortcut) connections are missing" in \
        _failed(r)["test_listing_1_33_given_weights"]["message"]


def test_normalised_shortcut_is_named(submission):
    wrong = _replace(BODY, """        x = self.norm1(x)
        x = x + self.attn(x, mask)
        x = self.norm2(x)
        return x + self.ff(x)
""")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "x was replaced by norm(x) before the shortcut" in \
        _failed(r)["test_listing_1_33_given_weights"]["message"]


def test_dropout_not_passed_on_loses_the_dropout_check(submission):
    wrong = _replace("""        self.attn = MultiHeadSelfAttention(dim, heads, dropout)
        self.ff = FeedForward(dim, ff_dim, dropout)
        self.norm1""", """        self.attn = MultiHeadSelfAttention(dim, heads)
        self.ff = FeedForward(dim, ff_dim)
        self.norm1""")
    r = grade(submission({EX: wrong}), "-e", EX)
    assert set(_failed(r)) == {"test_dropout_only_in_training"}


def _alternative() -> str:
    start = SOURCE.index("class TransformerBlock")
    return SOURCE[:start] + '''class TransformerBlock(nn.Module):
    def __init__(self, dim, heads, ff_dim, dropout=0.1):
        super().__init__()
        self.attn = MultiHeadSelfAttention(dim, heads, dropout=dropout)
        self.ff = FeedForward(dim, hidden=ff_dim, dropout=dropout)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)

    def forward(self, x, mask):
        h = self.attn(self.norm1(x), mask) + x
        return self.ff(self.norm2(h)).add(h)
'''


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: _alternative()}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_reference_equals_the_solution():
    sol = import_file(SOLUTIONS / "ch01" / f"{EX}.py", "kata_test_solution")  # with the solutions it imports
    sd = R.random_state(R.block_shapes(8, 16), seed=1)
    m = sol.TransformerBlock(8, 2, 16).eval()
    m.load_state_dict(sd)
    x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(2))
    mask = torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    with torch.no_grad():
        assert torch.allclose(m(x, mask), R.block(x, mask, sd, 2), atol=1e-6)
    assert repr(m) == repr(R.mirror_block(8, 16))
