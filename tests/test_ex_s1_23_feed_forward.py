"""Real submissions of §1.23's FeedForward (listing 1.32): plausible wrong answers lose points
with a message naming the mistake; a correct answer written differently scores full marks."""

import importlib.util

import pytest
import torch

from grader.checking import draws
from grader.checks import bert_reference as R
from grader.checks import test_s1_23_feed_forward as C
from tests.conftest import SOLUTIONS, LocalSubmission as _Local, checks_of, grade, score_of

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
    # The dropout check reads its drops through the eval output, which it compares first.
    assert set(failed) == {
        "test_listing_1_32_structure",
        "test_listing_1_32_given_weights",
        "test_both_dropouts_in_training",
    }, set(failed)
    assert "ReLU instead of GELU" in failed["test_listing_1_32_given_weights"]["message"]
    assert "ReLU instead of GELU" in failed["test_both_dropouts_in_training"]["message"]
    assert "GELU(approximate='none')" in failed["test_listing_1_32_structure"]["message"]


def test_missing_last_dropout_loses_the_dropout_check(submission):
    wrong = _replace(
        """            nn.Linear(hidden, dim),
            nn.Dropout(dropout),
""",
        """            nn.Linear(hidden, dim),
""",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {
        "test_listing_1_32_structure",
        "test_dropout_only_in_training",
        "test_both_dropouts_in_training",
    }, set(failed)
    assert "the last Dropout comes after the second Linear" in failed["test_both_dropouts_in_training"]["message"]


ALTERNATIVE = """import torch.nn as nn


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
"""


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


# ----------------------------------------------------------------------------- dropout: the rule
# Issue 24, part 4: the two Dropouts were checked by "outputs change" and the share of zeros.
# test_both_dropouts_in_training (public) and test_dropout_only_in_training (hidden) read each
# output of 12 train-mode calls (given weights make output i hidden feature i plus 1) as dropped
# by the last Dropout, its hidden feature dropped by the first, or kept, and hold both to
# draws.bernoulli_findings; each rule below scores 0 on both.
_FORWARD = "        return self.net(x)\n"
FIRST = (
    "        h = fake(self.net[1](self.net[0](x)), self.net[2].p, self.training)\n"
    "        return self.net[4](self.net[3](h))\n"
)
LAST = (
    "        h = self.net[2](self.net[1](self.net[0](x)))\n"
    "        return fake(self.net[3](h), self.net[4].p, self.training)\n"
)


def _with_fake(where: str, keep: str, scale: str = " / (1 - p)") -> str:
    return _replace(_FORWARD, where) + (
        "\n\ndef fake(h, p, training):\n    if not training or p == 0:\n        return h\n"
        + "".join("    " + line + "\n" for line in keep.split("\n"))
        + f"    return h * keep{scale}\n"
    )


RULES = {
    "left out": ("keep = torch.ones_like(h)", ""),
    "a fixed count at a fixed stride": (
        "n = h.numel()\nk = round((1 - p) * n)\noff = int(torch.randint(0, n, (1,)))\n"
        "keep = torch.zeros(n, dtype=torch.bool)\n"
        "keep[(torch.arange(k) * n // k + off) % n] = True\nkeep = keep.reshape(h.shape)",
        " / (1 - p)",
    ),
    "the same mask in every row": ("keep = (torch.rand(h.shape[-1:]) >= p).expand(h.shape)", " / (1 - p)"),
    "the same mask in every call": (
        "keep = torch.rand(h.shape, generator=torch.Generator().manual_seed(0)) >= p",
        " / (1 - p)",
    ),
    "the same mask for every sequence": ("keep = (torch.rand(h.shape[1:]) >= p).expand(h.shape)", " / (1 - p)"),
    "no rescaling": ("keep = torch.rand(h.shape) >= p", ""),
}
STRUCTURED = {
    f"{rule}, {which} Dropout": _with_fake(where, *RULES[rule])
    for rule in RULES
    for which, where in (("first", FIRST), ("last", LAST))
}
RULE_CHECKS = {"test_both_dropouts_in_training", "test_dropout_only_in_training"}


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_a_structured_dropout_scores_zero_on_the_checks_of_dropout(submission, name):
    r = grade(submission({EX: STRUCTURED[name]}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in RULE_CHECKS if checks[n]["score"] > 0}
    assert not earned, earned
    assert score_of(r, EX) == MAX - sum(checks[n]["max_score"] for n in RULE_CHECKS), [
        c["name"] for c in checks.values() if c["status"] != "passed"
    ]
    msg = checks["test_both_dropouts_in_training"]["message"]  # the public check names what it read
    assert "FeedForward(16, 16, dropout=0.3) in train mode" in msg, msg


@pytest.mark.parametrize(
    "name,says",
    [
        ("left out, first Dropout", ["no hidden feature was dropped", "the Dropout after GELU is left out"]),
        ("no rescaling, first Dropout", ["the first Dropout (after GELU)", "not rescaled by `1 / (1 - p)`"]),
        ("no rescaling, last Dropout", ["the last Dropout (after the second Linear)", "not rescaled by `1 / (1 - p)`"]),
        (
            "the same mask in every call, first Dropout",
            ["the hidden features (first Dropout)", "draw a new mask on every call"],
        ),
        ("a fixed count at a fixed stride, last Dropout", ["the outputs (last Dropout)", "hardly varies"]),
    ],
)
def test_a_wrong_dropout_is_told_what_is_wrong(submission, name, says):
    r = grade(submission({EX: STRUCTURED[name]}), "-e", EX, "--public-only")
    msg = {c["name"]: c["message"] for c in checks_of(r, EX)}["test_both_dropouts_in_training"]
    assert all(s in msg for s in says), msg


def test_dropout_before_gelu_is_named(submission):
    wrong = _replace(_FORWARD, "        return self.net[4](self.net[3](self.net[1](self.net[2](self.net[0](x)))))\n")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    msg = {c["name"]: c["message"] for c in checks_of(r, EX)}["test_both_dropouts_in_training"]
    assert "the first Dropout acts on GELU's output" in msg, msg


HONEST = {
    "nn.Dropout (the solution)": SOURCE,
    "F.dropout": _replace(
        _FORWARD,
        "        F = torch.nn.functional\n"
        "        h = F.dropout(self.net[1](self.net[0](x)), self.net[2].p, self.training)\n"
        "        return F.dropout(self.net[3](h), self.net[4].p, self.training)\n",
    ).replace("import torch.nn as nn\n", "import torch\nimport torch.nn as nn\n", 1),
    "rand >= p by hand": _with_fake(FIRST, "keep = torch.rand(h.shape) >= p").replace(
        "        return self.net[4](self.net[3](h))\n",
        "        return fake(self.net[3](h), self.net[4].p, self.training)\n",
    ),
    "bernoulli by hand": _with_fake(LAST, "keep = torch.bernoulli(torch.full_like(h, 1 - p))")
    .replace("        h = self.net[2](", "        h = fake(")
    .replace("self.net[0](x)))\n", "self.net[0](x)), self.net[2].p, self.training)\n"),
}


@pytest.mark.slow  # 20 seeds x every style, each seed's statistics in full: minutes on two shared cores
def test_honest_dropout_passes_the_statistics_for_every_seed():
    """Every honest style x 20 seeds, on the trusted side, with the checks' own weights and inputs:
    every output reads, and the statistics of both Dropouts find nothing (the batch read apart too)."""
    small, big = C.transparent_state(), C.transparent_state(C.BD, C.BH)
    with torch.random.fork_rng(), torch.no_grad():
        for style, source in HONEST.items():
            space: dict = {}
            exec(compile(source, f"<{style}>", "exec"), space)
            for x, sd, hidden, calls in (
                (C.transparent_input(2357), small, C.TD, C.DROPOUT_CALLS),
                (C.transparent_input(2358), small, C.TD, C.DROPOUT_CALLS),
                (C.transparent_input(2359, C.BB, C.BT, C.BD), big, C.BH, C.BIG_CALLS),
                (C.transparent_input(2360, C.BB, C.BT, C.BD), big, C.BH, C.BIG_CALLS),
            ):
                g = torch.nn.functional.gelu(torch.nn.functional.linear(x, sd["net.0.weight"], sd["net.0.bias"]))
                for seed in range(20 if hidden == C.TD else 5):  # the book's size: 5 seeds (it costs ~50x)
                    torch.manual_seed(seed)
                    m = space["FeedForward"](x.shape[-1], hidden, dropout=C.DROP_P)
                    m.load_state_dict(sd)
                    scales, reads = C.read_dropout([m(x) for _ in range(calls)], g, C.DROP_P)
                    assert scales == (1 / (1 - C.DROP_P),) * 2, (style, seed, scales)
                    for part in ([(h, e) for h, e, _ in reads], [(o, torch.ones_like(o)) for _, _, o in reads]):
                        found = draws.bernoulli_findings(part, C.DROP_P)
                        if hidden == C.TD:  # the checks read the batch apart at the small size
                            found += draws.bernoulli_findings(
                                [(c.permute(1, 2, 0), e.permute(1, 2, 0)) for c, e in part], C.DROP_P
                            )
                        assert not found, (style, seed, found)


STRIDE_AT = (
    "\n\nclass StrideDropout(nn.Dropout):  # honest below T features, a fixed stride from T on\n"
    "    def forward(self, x):\n"
    "        if not self.training or self.p == 0:\n"
    "            return x\n"
    "        keep = torch.rand(x.shape) >= self.p\n"
    "        if x.shape[-1] >= {t}:\n"
    "            keep = (torch.arange(x.shape[-1]) % 10 != 0).expand(x.shape)\n"
    "        return x * keep / (1 - self.p)\n"
)


@pytest.mark.parametrize("t", [32, 64, 128, 256])
def test_a_dropout_keyed_on_the_books_sizes_scores_zero_on_the_checks_of_dropout(submission, t):
    """Honest on the small shapes, a deterministic stride once the last dimension reaches T: the
    rule checks also read FeedForward(256, 1024) on 128 tokens (listing 1.36's sizes)."""
    fake = SOURCE.replace("            nn.Dropout(dropout),", "            StrideDropout(dropout),").replace(
        "import torch.nn as nn\n", "import torch\nimport torch.nn as nn\n", 1
    ) + STRIDE_AT.format(t=t)
    assert fake.count("StrideDropout(dropout)") == 2
    r = grade(submission({EX: fake}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in RULE_CHECKS if checks[n]["score"] > 0}
    assert not earned, earned
    msg = checks["test_both_dropouts_in_training"]["message"]
    assert "FeedForward(256, 1024, dropout=0.3) in train mode on a (2, 128, 256) batch" in msg, msg


# ----------------------------------------------------------------------------- dropout where the course trains


@pytest.mark.slow  # the course's training size, 3 dtypes: ~10 s a seed
@pytest.mark.parametrize("style", ["nn.Dropout (the solution)", "F.dropout", "rand >= p by hand"])
def test_honest_dropout_passes_where_the_course_trains_for_every_seed(style):
    """Issue 24 (fourth attack): both rule checks also read FeedForward(256, 1024) on (32, 256, 256)
    in float32, float64 and bf16 (C.expect_rule_where_the_course_trains); honest styles x 5 seeds pass."""
    space: dict = {}
    exec(compile(HONEST[style], f"<{style}>", "exec"), space)
    with torch.random.fork_rng():
        for seed in range(5):
            C.expect_rule_where_the_course_trains(_Local({"FeedForward": space["FeedForward"]}, 1000 * seed), 2361)


# The fourth outside attack (attack26 a11, a29): honest on every shape the checks read before, wrong where
# the course trains. Each now scores 0 on both rule checks.
KEYED = {
    "tokens from 128 never dropped (a11)": (
        "\n\nclass Dropout(nn.Dropout):\n    def forward(self, x):\n        y = super().forward(x)\n"
        "        if x.dim() == 3 and x.shape[1] > 128:\n            return torch.cat([y[:, :128], x[:, 128:]], 1)\n"
        "        return y\n"
    ),
    "no dropout outside float32 (a29)": (
        "\n\nclass Dropout(nn.Dropout):\n    def forward(self, x):\n"
        "        return super().forward(x) if x.dtype == torch.float32 else x\n"
    ),
    # the family of the fourth attack's B9 (a30): keyed on what `kata train` has and a plain call does not (the read
    # in bf16 runs float32 weights under autocast, every read with x requiring grad)
    "no dropout under autocast": (
        "\n\nclass Dropout(nn.Dropout):\n    def forward(self, x):\n"
        "        return x if torch.is_autocast_enabled('cpu') or torch.is_autocast_enabled('cuda') "
        "else super().forward(x)\n"
    ),
}


@pytest.mark.parametrize("name", list(KEYED))
def test_a_dropout_keyed_on_where_the_course_trains_scores_zero(submission, name):
    fake = (
        SOURCE.replace("            nn.Dropout(dropout),", "            Dropout(dropout),").replace(
            "import torch.nn as nn\n", "import torch\nimport torch.nn as nn\n", 1
        )
        + KEYED[name]
    )
    assert fake.count("            Dropout(dropout),") == 2
    r = grade(submission({EX: fake}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in RULE_CHECKS if checks[n]["score"] > 0}
    assert not earned, earned
    assert "(32, 256, 256)" in checks["test_both_dropouts_in_training"]["message"]
