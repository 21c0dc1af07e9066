"""Real submissions of §1.23's MultiHeadSelfAttention (listing 1.31): plausible wrong answers lose
points with a message naming the mistake; a correct answer written differently scores full marks."""

import importlib.util

import pytest
import torch

from grader.checking import draws
from grader.checks import bert_reference as R
from grader.checks import test_s1_23_self_attention as C
from tests.conftest import SOLUTIONS, LocalSubmission as _Local, checks_of, grade, score_of

EX = "s1_23_self_attention"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 14
KEYS = "padding_keys = (mask == 0)[:, None, None, :]"


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_mask_on_queries_is_named(submission):
    wrong = _replace(KEYS, "padding_keys = (mask == 0)[:, None, :, None]")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert {"test_listing_1_31_given_weights", "test_fresh_sizes", "test_padding_is_hidden"} <= set(failed), set(failed)
    assert (
        "applied to the queries (rows) instead of the keys (columns)"
        in failed["test_listing_1_31_given_weights"]["message"]
    )
    assert score_of(r, EX) <= MAX - 10


def test_inverted_mask_is_named(submission):
    wrong = _replace(KEYS, "padding_keys = (mask == 1)[:, None, None, :]")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    # The layout check compares the output too: the right layout around a wrong forward earns nothing;
    # the dropout check reads its weights through the eval output, which it compares first.
    assert set(failed) == {
        "test_listing_1_31_given_weights",
        "test_listing_1_31_structure",
        "test_attention_dropout_in_training",
    }, set(failed)
    for c in failed.values():
        assert "the mask is inverted" in c["message"], c["message"]


def test_scaling_by_the_full_width_is_named(submission):
    wrong = _replace("/ math.sqrt(self.d)", "/ math.sqrt(C)")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "scaled by sqrt(dim) instead of sqrt(d)" in _failed(r)["test_listing_1_31_given_weights"]["message"]


def test_head_count_that_does_not_divide_is_refused(submission):
    wrong = _replace(
        """        if heads <= 0 or dim % heads != 0:
            raise ValueError(f"dim={dim} is not divisible by heads={heads}")
""",
        "",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert (
        "MultiHeadSelfAttention(256, 6) must raise ValueError" in _failed(r)["test_listing_1_31_structure"]["message"]
    )


ALTERNATIVE = """import math

import torch
import torch.nn as nn


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout=0.1):
        super().__init__()
        assert dim % heads == 0          # as in the book
        self.heads, self.d = heads, dim // heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        B, T, C = x.shape
        qkv = self.qkv(x).reshape(B, T, 3, self.heads, self.d)
        q, k, v = qkv[:, :, 0], qkv[:, :, 1], qkv[:, :, 2]          # (B, T, h, d) each
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / self.d ** 0.5
        scores = scores + (1.0 - mask.float())[:, None, None, :] * -1e9  # additive mask on keys
        weights = self.attn_dropout(scores.softmax(dim=-1))
        ctx = torch.einsum("bhqk,bkhd->bqhd", weights, v).reshape(B, T, C)
        return self.out_dropout(self.out(ctx))
"""


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: ALTERNATIVE}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_scaled_dot_product_attention_is_forbidden(submission):
    cheat = _replace(
        """        attn = self.attn_dropout(torch.softmax(scores, dim=-1))
        out = (attn @ v).transpose(1, 2).reshape(B, T, C)""",
        """        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=~padding_keys)
        out = out.transpose(1, 2).reshape(B, T, C)""",
    )
    r = grade(submission({EX: cheat}), "-e", EX, "--public-only")
    assert score_of(r, EX) == 0
    assert all("scaled_dot_product_attention" in c["message"] for c in checks_of(r, EX))


def test_reference_equals_the_solution():
    spec = importlib.util.spec_from_file_location(EX, SOLUTIONS / "ch01" / f"{EX}.py")
    sol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sol)
    sd = R.random_state(R.attention_shapes(12), seed=1)
    m = sol.MultiHeadSelfAttention(12, 3).eval()
    m.load_state_dict(sd)
    x = torch.randn(3, 5, 12, generator=torch.Generator().manual_seed(2))
    mask = torch.tensor([[1] * 5, [1] * 3 + [0] * 2, [1] + [0] * 4])
    with torch.no_grad():
        assert torch.allclose(m(x, mask), R.attention(x, mask, sd, 3), atol=1e-6)
        # -1e9 (the book) and -inf (the solution) give the same weights when a real key exists
        assert torch.equal(R.attention(x, mask, sd, 3), R.attention(x, mask, sd, 3, fill=float("-inf")))


BOOK_LISTING_1_31 = """import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class MultiHeadSelfAttention(nn.Module):
    def __init__(self, dim, heads, dropout=0.1):
        super().__init__()
        assert dim % heads == 0
        self.heads = heads
        self.d = dim // heads
        self.qkv = nn.Linear(dim, dim * 3)
        self.out = nn.Linear(dim, dim)
        self.attn_dropout = nn.Dropout(dropout)
        self.out_dropout = nn.Dropout(dropout)

    def forward(self, x, mask):
        B, T, C = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(B, T, self.heads, self.d).transpose(1, 2)
        k = k.view(B, T, self.heads, self.d).transpose(1, 2)
        v = v.view(B, T, self.heads, self.d).transpose(1, 2)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)
        mask = mask.unsqueeze(1).unsqueeze(2)
        scores = scores.masked_fill(mask == 0, -1e9)
        attn = F.softmax(scores, dim=-1)
        attn = self.attn_dropout(attn)
        out = attn @ v
        out = out.transpose(1, 2).reshape(B, T, C)
        out = self.out(out)
        out = self.out_dropout(out)
        return out
"""


def test_the_books_listing_scores_full_marks(submission):
    """Listing 1.31 as printed (assert, -1e9) is a correct answer."""
    r = grade(submission({EX: BOOK_LISTING_1_31}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


# ----------------------------------------------------------------------------- attention dropout: the rule
# Issue 28: with attn_dropout left out, the module scored 14/14. test_attention_dropout_in_training
# (public) and test_dropout_only_in_training (hidden) read each attention weight through the output
# (transparent weights: value j = token j's one-hot, out = identity + 1) over 12 train-mode calls
# and hold the dropped ones to draws.bernoulli_findings; each rule below scores 0 on those it breaks.
_ATTN = "        attn = self.attn_dropout(torch.softmax(scores, dim=-1))\n"


def _by_hand(keep: str, scale: str = " / (1 - p)") -> str:
    return (
        "        attn = torch.softmax(scores, dim=-1)\n        p = self.attn_dropout.p\n"
        "        if self.training and p > 0:\n"
        + "".join("            " + line + "\n" for line in keep.split("\n"))
        + f"            attn = attn * keep{scale}\n"
    )


BOTH = {"test_attention_dropout_in_training", "test_dropout_only_in_training"}
STRUCTURED = {
    "attention dropout left out": ("        attn = torch.softmax(scores, dim=-1)\n", BOTH),
    "a fixed count at a fixed stride": (
        _by_hand(
            "n = attn.numel()\nk = round((1 - p) * n)\n"
            "off = int(torch.randint(0, n, (1,)))\n"
            "keep = torch.zeros(n, dtype=torch.bool)\n"
            "keep[(torch.arange(k) * n // k + off) % n] = True\n"
            "keep = keep.reshape(attn.shape)"
        ),
        BOTH,
    ),
    "the same mask in every row": (_by_hand("keep = (torch.rand(attn.shape[-1:]) >= p).expand(attn.shape)"), BOTH),
    "the same mask in every call": (
        _by_hand("keep = torch.rand(attn.shape, generator=torch.Generator().manual_seed(0)) >= p"),
        BOTH,
    ),
    "the same mask in every head": (
        _by_hand("keep = (torch.rand(attn.shape[0], 1, *attn.shape[2:]) >= p).expand(attn.shape)"),
        BOTH,
    ),  # the next head is a row offset
    "dropped in neighbouring pairs": (
        _by_hand("half = torch.rand(attn.shape) < 1 - (1 - p) ** 0.5\nkeep = ~(half | torch.roll(half, 1, -1))"),
        BOTH,
    ),
    "no rescaling": (_by_hand("keep = torch.rand(attn.shape) >= p", scale=""), BOTH),
    # honest where the small transparent shapes look, structured at the book's sizes (issue 24)
    "a stride from 32 keys on": (
        _by_hand(
            "if attn.shape[-1] < 32:\n    keep = torch.rand(attn.shape) >= p\nelse:\n"
            "    keep = torch.ones(attn.shape, dtype=torch.bool)\n"
            "    keep[..., ::10] = False\n    keep[..., 3::10] = False\n"
            "    keep[..., 7::10] = False"
        ),
        BOTH,
    ),
    "a shared mask from 64 features on": (
        _by_hand(
            "if self.qkv.in_features < 64:\n    keep = torch.rand(attn.shape) >= p\n"
            "else:\n    keep = (torch.rand(attn.shape[-1:]) >= p).expand(attn.shape)"
        ),
        BOTH,
    ),
}


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_a_structured_attention_dropout_scores_zero_on_the_checks_of_dropout(submission, name):
    body, rule_checks = STRUCTURED[name]
    r = grade(submission({EX: _replace(_ATTN, body)}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in rule_checks if checks[n]["score"] > 0}
    assert not earned, earned
    assert score_of(r, EX) == MAX - sum(checks[n]["max_score"] for n in rule_checks), [
        c["name"] for c in checks.values() if c["status"] != "passed"
    ]
    if "test_attention_dropout_in_training" in rule_checks:  # the public check says what the rule does wrong
        msg = checks["test_attention_dropout_in_training"]["message"]
        assert "MultiHeadSelfAttention(" in msg and "dropout=0.3) in train mode on (" in msg, msg


@pytest.mark.parametrize(
    "name,says",
    [
        ("attention dropout left out", ["no attention weight was dropped", "self.attn_dropout(torch.softmax("]),
        ("no rescaling", ["not rescaled by `1 / (1 - p)`"]),
        ("the same mask in every call", ["draw a new mask on every call"]),
    ],
)
def test_a_wrong_attention_dropout_is_told_what_is_wrong(submission, name, says):
    r = grade(submission({EX: _replace(_ATTN, STRUCTURED[name][0])}), "-e", EX, "--public-only")
    msg = {c["name"]: c["message"] for c in checks_of(r, EX)}["test_attention_dropout_in_training"]
    assert all(s in msg for s in says), msg


HONEST = {
    "nn.Dropout (the solution)": _ATTN,
    "F.dropout": "        attn = F.dropout(torch.softmax(scores, dim=-1), self.attn_dropout.p, self.training)\n",
    "rand >= p by hand": _by_hand("keep = torch.rand(attn.shape) >= p"),
    "bernoulli by hand": _by_hand("keep = torch.bernoulli(torch.full_like(attn, 1 - p))"),
}


BOOK_STYLES = ("nn.Dropout (the solution)", "rand >= p by hand")  # at the book's sizes: two styles, 5 seeds


@pytest.mark.slow  # 20 seeds x every style at the small size, 5 x two at the book's: minutes on two shared cores
def test_honest_attention_dropout_passes_the_statistics_for_every_seed():
    """Every honest style x 20 seeds, on the trusted side, with the checks' own weights and inputs:
    every output reads as dropped or kept, and the statistics find nothing."""
    small = (C.TH, C.TT, C.TB)
    cases = [
        (C.transparent_state(2350 + 10 * k, h, t), C.transparent_input(2351 + 10 * k, b, h, t))
        for k, (h, t, b) in enumerate((small, C.BOOK))
    ]
    cases += [
        (C.transparent_state(2352 + 10 * k, h, t), C.transparent_input(2353 + 10 * k, b, h, t))
        for k, (h, t, b) in enumerate((small, C.BOOK_HIDDEN, C.LONG))
    ]
    with torch.random.fork_rng(), torch.no_grad():
        for style, line in HONEST.items():
            space: dict = {}
            exec(
                compile(
                    _replace(_ATTN, line).replace(
                        "import torch.nn as nn\n", "import torch.nn as nn\nimport torch.nn.functional as F\n"
                    ),
                    f"<{style}>",
                    "exec",
                ),
                space,
            )
            for sd, x in cases:
                weights = C.transparent_weights(x, sd)
                mask = torch.ones(x.shape[:2], dtype=torch.int64)
                if x.shape[-1] != C.TD and style not in BOOK_STYLES:
                    continue
                # 20 seeds of the solution's style at the small size; 5 of every other case (the statistics
                # do not depend on the style that drew: 1,355 s for 20 of each on two loaded cores)
                for seed in range(20 if x.shape[-1] == C.TD and style == "nn.Dropout (the solution)" else 5):
                    torch.manual_seed(seed)
                    m = space["MultiHeadSelfAttention"](x.shape[-1], C._heads(x), dropout=C.DROP_P)
                    m.load_state_dict(sd)
                    ys = [m(x, mask) for _ in range(C.DROPOUT_CALLS)]
                    how, reads = C.read_dropout(ys, weights, C.DROP_P)
                    assert how is None, (style, seed, how)
                    found = draws.heads_findings([(d, e) for d, e, _ in reads], C.DROP_P)
                    outputs = [o.transpose(1, 2).flatten(2) for _, _, o in reads]  # as the check reads them
                    found += draws.bernoulli_findings([(o, torch.ones_like(o)) for o in outputs], C.DROP_P)
                    assert not found, (style, seed, found)


# ----------------------------------------------------------------------------- dropout where the course trains


@pytest.mark.slow  # the course's training size, 3 dtypes
@pytest.mark.parametrize("style", ["nn.Dropout (the solution)", "F.dropout", "rand >= p by hand"])
def test_honest_dropout_passes_where_the_course_trains_for_every_seed(style):
    """Issue 24 (fourth attack): both rule checks also read MultiHeadSelfAttention(256, 4) on (32, 256, 256)
    with one-hot attention (query i on key pi_h(i)) in float32, float64 and bf16; honest styles x 5 seeds pass."""
    space: dict = {}
    exec(
        compile(
            _replace(_ATTN, HONEST[style]).replace(
                "import torch.nn as nn\n", "import torch.nn as nn\nimport torch.nn.functional as F\n", 1
            ),
            f"<{style}>",
            "exec",
        ),
        space,
    )
    with torch.random.fork_rng():
        for seed in range(5):
            C.expect_rule_where_the_course_trains(
                _Local({"MultiHeadSelfAttention": space["MultiHeadSelfAttention"]}, 1000 * seed), 2390
            )


def test_the_training_size_weights_are_one_hot():
    """The read rests on it: every query's weight on key pi_h(i) is above 1 - 1e-6 (float64), for
    the checks' seeds, and pi_h spreads each head's keys over every query."""
    for seed in (2390, 2391):
        sd, pi = C.sharp_state(seed)
        assert C._sharp_weights_ok(sd, pi)
        assert all(sorted(row.tolist()) == list(range(C.TRAIN_T)) for row in pi)


KEYED = {
    "keys past the head size never dropped (attack26 a6)": "        attn = torch.softmax(scores, dim=-1)\n"
    "        T = attn.shape[-1]\n"
    "        attn = torch.where((torch.arange(T) < self.d).reshape(1, 1, 1, T), self.attn_dropout(attn),\n"
    "                           attn / (1 - self.attn_dropout.p) if self.training else attn)\n",
    "no attention dropout outside float32 (attack26 a29)": "        attn = torch.softmax(scores, dim=-1)\n"
    "        attn = self.attn_dropout(attn) if attn.dtype == torch.float32 else attn\n",
}


@pytest.mark.parametrize("name", list(KEYED))
def test_a_dropout_keyed_on_where_the_course_trains_scores_zero(submission, name):
    r = grade(submission({EX: _replace(_ATTN, KEYED[name])}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in BOTH if checks[n]["score"] > 0}
    assert not earned, earned
    assert "(32, 256, 256)" in checks["test_attention_dropout_in_training"]["message"]
