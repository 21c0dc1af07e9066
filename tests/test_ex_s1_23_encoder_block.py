"""Real submissions of §1.23's TransformerBlock (listing 1.33): plausible wrong answers lose points
with a message naming the mistake; a correct answer written differently scores full marks."""

import shutil

import pytest
import torch

from grader.checking import draws
from grader.checks import bert_reference as R
from grader.checks import test_s1_23_encoder_block as C
from grader.capstone.training.model import import_file
from tests.conftest import SOLUTIONS, LocalSubmission as _Local, checks_of, grade, score_of
from tests.mistakes import variant

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
    wrong = _replace(
        BODY,
        """        x = self.norm1(x + self.attn(x, mask))
        x = self.norm2(x + self.ff(x))
        return x
""",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert {"test_listing_1_33_given_weights", "test_fresh_sizes"} <= set(failed), set(failed)
    assert "this is post-LN" in failed["test_listing_1_33_given_weights"]["message"]
    assert score_of(r, EX) <= MAX - 6


def test_missing_residuals_are_named(submission):
    wrong = _replace(
        BODY,
        """        x = self.attn(self.norm1(x), mask)
        x = self.ff(self.norm2(x))
        return x
""",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "the residual (shortcut) connections are missing" in _failed(r)["test_listing_1_33_given_weights"]["message"]


def test_normalised_shortcut_is_named(submission):
    wrong = _replace(
        BODY,
        """        x = self.norm1(x)
        x = x + self.attn(x, mask)
        x = self.norm2(x)
        return x + self.ff(x)
""",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "x was replaced by norm(x) before the shortcut" in _failed(r)["test_listing_1_33_given_weights"]["message"]


def test_dropout_not_passed_on_loses_the_dropout_check(submission):
    wrong = _replace(
        """        self.attn = MultiHeadSelfAttention(dim, heads, dropout)
        self.ff = FeedForward(dim, ff_dim, dropout)
        self.norm1""",
        """        self.attn = MultiHeadSelfAttention(dim, heads)
        self.ff = FeedForward(dim, ff_dim)
        self.norm1""",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == DROPOUT_CHECKS
    for name in DROPOUT_CHECKS:
        assert "attn and ff dropped as if built with dropout=" in failed[name]["message"]


# The dropout reads: the public one (the small size; the book's and the training size when grading)
# and the hidden one (eval mode, dropout=0.0, another draw of the small size).
DROPOUT_CHECKS = {"test_dropout_in_training", "test_dropout_only_in_training"}


@pytest.mark.parametrize(
    "name, says",
    [
        ("dropout not passed on to attn and ff", "dropout not passed on"),
        ("a dropout of the block's own on each branch (the original transformer's)", "dropout of the block's own"),
        ("torch.manual_seed in forward: the same dropout masks on every call", "the same mask in every call"),
    ],
)
def test_dropout_mistakes_are_named_by_a_public_check(submission, name, says):
    """Issue 28: the block's dropout was read by the hidden test_dropout_only_in_training only;
    the public test_dropout_in_training reads it at a small size in kata check (~0.2 s)."""
    r = grade(submission({EX: variant(EX, name).source()}), "-e", EX, "--public-only")
    check = _failed(r)["test_dropout_in_training"]
    assert check["mistake"] == says, check["message"][:300]
    assert "pass dropout on" in check["message"]  # and how to do it right (DROPOUT_HINT)


def _alternative() -> str:
    start = SOURCE.index("class TransformerBlock")
    return (
        SOURCE[:start]
        + """class TransformerBlock(nn.Module):
    def __init__(self, dim, heads, ff_dim, dropout=0.1):
        super().__init__()
        self.attn = MultiHeadSelfAttention(dim, heads, dropout=dropout)
        self.ff = FeedForward(dim, hidden=ff_dim, dropout=dropout)
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)

    def forward(self, x, mask):
        h = self.attn(self.norm1(x), mask) + x
        return self.ff(self.norm2(h)).add(h)
"""
    )


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


# ----------------------------------------------------------------------------- dropout: the rule
# Issue 24, part 4: test_dropout_only_in_training checked only that outputs change between calls
# (the residual hides the zeros). Now given weights make each branch add a constant, so output - x
# shows what attn's out_dropout and ff's two Dropouts dropped in 12 train-mode calls, held to
# draws.bernoulli_findings. A structured dropout in the FeedForward the block imports, or a
# dropout of the block's own, scores 0 there.
FF = "s1_23_feed_forward"
FF_SOURCE = (SOLUTIONS / "ch01" / f"{FF}.py").read_text()
FF_FORWARD = "        return self.net(x)\n"
FF_LAST = (
    "        h = self.net[2](self.net[1](self.net[0](x)))\n"
    "        return fake(self.net[3](h), self.net[4].p, self.training)\n"
)
FF_FIRST = (
    "        h = fake(self.net[1](self.net[0](x)), self.net[2].p, self.training)\n"
    "        return self.net[4](self.net[3](h))\n"
)


def _ff_with_fake(where: str, keep: str, scale: str = " / (1 - p)") -> str:
    assert FF_FORWARD in FF_SOURCE
    return FF_SOURCE.replace(FF_FORWARD, where) + (
        "\n\ndef fake(h, p, training):\n    if not training or p == 0:\n        return h\n"
        + "".join("    " + line + "\n" for line in keep.split("\n"))
        + f"    return h * keep{scale}\n"
    )


STRUCTURED = {
    "a fixed count at a fixed stride in ff's last Dropout": {
        FF: _ff_with_fake(
            FF_LAST,
            "n = h.numel()\nk = round((1 - p) * n)\noff = int(torch.randint(0, n, (1,)))\n"
            "keep = torch.zeros(n, dtype=torch.bool)\nkeep[(torch.arange(k) * n // k + off) % n] = True\n"
            "keep = keep.reshape(h.shape)",
        )
    },
    "the same mask in every row in ff's first Dropout": {
        FF: _ff_with_fake(FF_FIRST, "keep = (torch.rand(h.shape[-1:]) >= p).expand(h.shape)")
    },
    "the same mask in every call in ff's last Dropout": {
        FF: _ff_with_fake(FF_LAST, "keep = torch.rand(h.shape, generator=torch.Generator().manual_seed(0)) >= p")
    },
    # honest where dim 16 looks, the same mask in every row from 64 features on (the book's 256)
    "the same mask in every row of ff's last Dropout from 64 features on": {
        FF: _ff_with_fake(
            FF_LAST,
            "if h.shape[-1] < 64:\n    keep = torch.rand(h.shape) >= p\nelse:\n"
            "    keep = (torch.rand(h.shape[-1:]) >= p).expand(h.shape)",
        )
    },
    "ff's last Dropout left out": {FF: _ff_with_fake(FF_LAST, "keep = torch.ones_like(h)", scale="")},
    "a dropout of the block's own on each branch too (the original transformer's)": {
        EX: _replace(
            """        self.norm2 = nn.LayerNorm(dim)
""",
            """        self.norm2 = nn.LayerNorm(dim)
        self.p = dropout
""",
        ).replace(
            """        x = x + self.attn(self.norm1(x), mask)
        x = x + self.ff(self.norm2(x))
""",
            """        x = x + torch.nn.functional.dropout(self.attn(self.norm1(x), mask), self.p, self.training)
        x = x + torch.nn.functional.dropout(self.ff(self.norm2(x)), self.p, self.training)
""",
        )
    },
}


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_a_structured_dropout_scores_zero_on_the_check_of_dropout(submission, name):
    r = grade(submission(STRUCTURED[name]), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    rule = checks["test_dropout_in_training"]  # the public read (all sizes when grading)
    assert rule["score"] == 0, rule["message"][:300]
    lost = {n for n, c in checks.items() if c["status"] != "passed"}
    assert lost <= DROPOUT_CHECKS | {"test_listing_1_33_structure"}, lost  # (a module of the block's own shows)
    assert score_of(r, EX) == MAX - sum(checks[n]["max_score"] for n in lost)


HONEST_FF = {
    "nn.Dropout (the solution)": FF_SOURCE,
    "rand >= p by hand": _ff_with_fake(FF_FIRST, "keep = torch.rand(h.shape) >= p").replace(
        "        return self.net[4](self.net[3](h))\n",
        "        return fake(self.net[3](h), self.net[4].p, self.training)\n",
    ),
    "bernoulli by hand": _ff_with_fake(FF_FIRST, "keep = torch.bernoulli(torch.full_like(h, 1 - p))"),
}


@pytest.mark.slow  # 20 seeds x every style, each seed's statistics in full: minutes on two shared cores
def test_honest_dropout_passes_the_statistics_for_every_seed(tmp_path):
    """The block of the solution over honest FeedForward styles x 20 seeds, on the trusted side,
    with the check's own weights and input: output - x always reads, and the statistics of the
    three dropouts find nothing (the batch read apart too)."""
    cases = []
    for seed, (d, h, f, b, t) in ((2368, C.SMALL), (2374, C.SMALL), (2370, C.BOOK)):
        sd = C.transparent_state(seed, d, f)
        cases.append(
            (
                (d, h, f),
                sd,
                torch.randn(b, t, d, generator=torch.Generator().manual_seed(seed + 1)),
                torch.nn.functional.gelu(sd["ff.net.0.bias"][:d]),
            )
        )
    with torch.random.fork_rng(), torch.no_grad():
        for i, (style, ff_source) in enumerate(HONEST_FF.items()):
            folder = tmp_path / f"style{i}"
            shutil.copytree(SOLUTIONS / "ch01", folder)
            (folder / f"{FF}.py").write_text(ff_source)
            block = import_file(folder / f"{EX}.py", f"kata_test_block{i}").TransformerBlock
            for size, sd, x, gelu in cases:
                for seed in range(20 if size[0] == C.D else 5):  # the book's size: 5 seeds (each costs ~30x)
                    torch.manual_seed(seed)
                    m = block(*size, dropout=C.DROP_P)
                    m.load_state_dict(sd)
                    mask = torch.ones(x.shape[:2], dtype=torch.int64)
                    reads = C.read_dropout(
                        [m(x, mask).double() - x.double() for _ in range(C.DROPOUT_CALLS)], gelu, C.DROP_P, C.DROP_P
                    )
                    assert reads is not None, (style, seed)
                    for j in (0, 1, 3):
                        part = [(r[j], r[2] if j == 1 else torch.ones_like(r[j])) for r in reads]
                        found = draws.bernoulli_findings(part, C.DROP_P)
                        found += draws.bernoulli_findings(
                            [(c.permute(1, 2, 0), e.permute(1, 2, 0)) for c, e in part], C.DROP_P
                        )
                        assert not found, (style, seed, j, found)


# ----------------------------------------------------------------------------- dropout where the course trains


@pytest.mark.slow  # the course's training size, 3 dtypes
def test_honest_dropout_passes_where_the_course_trains_for_every_seed(tmp_path):
    """Issue 24 (fourth attack): the rule check also reads TransformerBlock(256, 4, 1024) on (32, 256, 256)
    in float32, float64 and bf16; the solution's block over honest FeedForward styles x 5 seeds passes."""
    with torch.random.fork_rng():
        for i, (style, ff_source) in enumerate(list(HONEST_FF.items())[:2]):
            folder = tmp_path / f"style{i}"
            shutil.copytree(SOLUTIONS / "ch01", folder)
            (folder / f"{FF}.py").write_text(ff_source)
            block = import_file(folder / f"{EX}.py", f"kata_test_train_block{i}").TransformerBlock
            for seed in range(5):
                C.expect_rule_where_the_course_trains(_Local({"TransformerBlock": block}, 1000 * seed), 2372)


KEYED = {"every dropout off for T > 128 (attack26 a19)": 128, "every dropout off outside float32 (attack26 a29)": None}


@pytest.mark.parametrize("name", list(KEYED))
def test_a_dropout_keyed_on_where_the_course_trains_scores_zero(submission, name):
    source = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
    cond = "x.shape[1] > 128" if KEYED[name] else "x.dtype != torch.float32"
    head = "    def forward(self, x"
    assert source.count(head) == 1
    at = source.index(head)
    end = source.index("\n", at) + 1  # the signature is one line
    fake = (
        source[:end] + f"        if {cond}:\n            for mod in self.modules():\n"
        "                if isinstance(mod, torch.nn.Dropout):\n                    mod.eval()\n" + source[end:]
    )
    if "import torch\n" not in fake:
        fake = "import torch\n" + fake
    r = grade(submission({EX: fake}), "-e", EX)
    rule = {c["name"]: c for c in checks_of(r, EX)}["test_dropout_in_training"]  # its reads when grading
    assert rule["score"] == 0, rule["message"][:300]
