"""§1.14 dropout graded for real: plausible wrong answers lose points with a message that names the
mistake; the library's dropout is refused; a correct answer written differently scores full marks."""

import pytest
import torch
import torch.nn.functional as F

from grader.checks import test_s1_14_dropout as C
from tests.conftest import LocalSubmission, checks_of, failed_checks, grade, score_of, solution_with

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
    for name in (
        "test_book_scaling_example",
        "test_listing_1_13_dropout",
        "test_survivors_scaled",
        "test_expectation_preserved",
    ):
        assert "not rescaled" in failed[name]["message"], failed[name]
    assert "test_zero_fraction" not in failed  # it drops the right share; only the scale is wrong


def test_keeping_with_probability_p(submission):
    wrong = _swap("keep = torch.rand(x.shape, device=x.device) >= p", "keep = torch.rand(x.shape, device=x.device) < p")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 4
    assert "probability p instead of 1 - p" in failed["test_zero_fraction"]["message"]
    assert "probability p instead of `1 - p`" in failed["test_expectation_preserved"]["message"]


def test_scaling_by_one_minus_p(submission):
    wrong = _swap("return x * keep / (1 - p)", "return x * keep * (1 - p)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 6
    assert "multiplied by `1 - p`" in failed["test_survivors_scaled"]["message"]
    assert "multiplied by `1 - p`" in failed["test_book_scaling_example"]["message"]


def test_library_dropout_is_forbidden(submission):
    cheat = _swap(
        "    keep = torch.rand(x.shape, device=x.device) >= p\n    return dropout_with_mask(x, keep, p)",
        "    return torch.nn.functional.dropout(x, p, training=True)",
    )
    r = grade(submission({EX: cheat}), "-e", EX)
    assert score_of(r, EX) == 0
    for c in checks_of(r, EX):  # the public checks name the API, the file and the line; a hidden one only
        if c["visibility"] == "public":  # says that a rule broke, without naming what the code called
            assert "torch.nn.functional.dropout" in c["message"] and f"{EX}.py:" in c["message"], c
        else:
            assert "torch.nn.functional.dropout" not in c["message"] and f"{EX}.py:" not in c["message"], c
            assert "the public checks name the file and the line" in c["message"], c


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


# ----------------------------------------------------------------------------- the rule, not one consequence
# Dropout is one independent draw per element. The share dropped is one consequence of it that a
# structured rule fakes (a fixed count at a fixed stride has it exactly); the checks of the rule
# (test_zero_fraction, public, and test_elements_independent, hidden) read the rule's distribution
# over 16 calls, and each rule below scores 0 on those it breaks.
_DRAW = "    keep = torch.rand(x.shape, device=x.device) >= p\n"
STRUCTURED = {
    "a fixed count at a fixed stride": (
        """    n = x.numel()
    k = round((1 - p) * n)
    off = int(torch.randint(0, n, (1,)))
    keep = torch.zeros(n, dtype=torch.bool)
    keep[(torch.arange(k) * n // k + off) % n] = True
    keep = keep.reshape(x.shape)
""",
        {"test_zero_fraction", "test_elements_independent"},
    ),
    "a fixed count at random places": (
        """    n = x.numel()
    keep = torch.zeros(n, dtype=torch.bool)
    keep[torch.randperm(n)[:round((1 - p) * n)]] = True
    keep = keep.reshape(x.shape)
""",
        {"test_zero_fraction", "test_elements_independent"},
    ),
    "the same mask in every row": (
        "    keep = (torch.rand(x.shape[-1:]) >= p).expand(x.shape)\n",
        {"test_zero_fraction", "test_elements_independent"},
    ),
    "the same mask in every call": (
        "    keep = torch.rand(x.shape, generator=torch.Generator().manual_seed(0)) >= p\n",
        {"test_zero_fraction", "test_elements_independent"},
    ),
    "the same mask in every head": (
        """    if x.dim() == 4:
        keep = (torch.rand(x.shape[0], 1, *x.shape[2:]) >= p).expand(x.shape)
    else:
        keep = torch.rand(x.shape) >= p
""",
        {"test_elements_independent"},
    ),
    "dropped in neighbouring pairs": (
        """    half = torch.rand(x.shape) < 1 - (1 - p) ** 0.5
    keep = ~(half | torch.roll(half, 1, -1))
""",
        {"test_zero_fraction", "test_elements_independent"},
    ),
    # rules correlated between rows or calls at a distance the checks once did not read (each
    # scored 14/14 when only neighbouring rows and consecutive calls were read; docs/threat-log.md)
    "dropC: rows 2 and 3 of every four copy rows 0 and 1": (
        """    keep = torch.rand(x.shape) >= p
    if x.dim() >= 2:
        for r in range(x.shape[-2]):
            if (r // 2) % 2 == 1:
                keep[..., r, :] = keep[..., r - 2, :]
""",
        {"test_zero_fraction", "test_elements_independent"},
    ),
    "dropD: calls 2 and 3 of every four reuse the masks of calls 0 and 1": (
        """    history = globals().setdefault("_HISTORY", [])
    t = len(history)
    if (t // 2) % 2 == 1 and history[t - 2][0] == (tuple(x.shape), p):
        keep = history[t - 2][1]
        torch.rand(x.shape)  # the global generator advances as an honest call's does
    else:
        keep = torch.rand(x.shape, device=x.device) >= p
    history.append(((tuple(x.shape), p), keep))
""",
        {"test_zero_fraction", "test_elements_independent"},
    ),
}


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_a_structured_rule_scores_zero_on_the_checks_of_the_rule(submission, name):
    body, rule_checks = STRUCTURED[name]
    r = grade(submission({EX: _swap(_DRAW, body)}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in rule_checks if checks[n]["score"] > 0}
    assert not earned, earned
    if "test_zero_fraction" in rule_checks:  # the public check says what the rule does wrong
        msg = checks["test_zero_fraction"]["message"]
        assert "calls in a row" in msg or "should be zero" in msg, msg


def test_a_fixed_count_is_told_so(submission):
    r = grade(submission({EX: _swap(_DRAW, STRUCTURED["a fixed count at a fixed stride"][0])}), "-e", EX)
    msg = {c["name"]: c["message"] for c in checks_of(r, EX)}["test_zero_fraction"]
    assert "the count is fixed, not drawn" in msg and "torch.rand(x.shape) >= p" in msg, msg


def _honest_styles():
    return {
        "rand >= p": lambda x, p: x * (torch.rand(x.shape) >= p) / (1 - p),
        "bernoulli of keep probabilities": lambda x, p: x * torch.bernoulli(torch.full_like(x, 1 - p)) / (1 - p),
        "empty.bernoulli_": lambda x, p: x * torch.empty_like(x).bernoulli_(1 - p) / (1 - p),
        "rand < 1 - p": lambda x, p: torch.where(torch.rand_like(x) < 1 - p, x / (1 - p), 0.0),
        "F.dropout": lambda x, p: F.dropout(x, p, training=True),
        "nn.Dropout": lambda x, p: torch.nn.Dropout(p)(x),
    }


@pytest.mark.slow
@pytest.mark.parametrize(
    "shape,p,heads", [((64, 256), 0.2, False), ((64, 256), 0.5, False), ((4, 4, 32, 32), 0.3, True)]
)
def test_honest_dropout_passes_the_rule_statistics_for_every_seed(shape, p, heads):
    """Every honest style x 20 seeds, on the trusted side: the statistics the checks apply find
    nothing (bounds ~6.5 standard deviations)."""
    x = torch.ones(*shape)
    with torch.random.fork_rng():
        for style, fn in _honest_styles().items():
            for seed in range(20):
                torch.manual_seed(seed)
                outs = [fn(x, p) for _ in range(C.CALLS)]
                assert not C.rule_findings(outs, p, heads), (style, seed, C.rule_findings(outs, p, heads))


# ----------------------------------------------------------------------------- the course's training size
# A rule may draw honestly on every input the smaller checks use and break where the course
# trains (docs/threat-log.md, 2026-12-04): nothing dropped past the first 2^18 elements
# (a22, B6), nothing dropped in any dtype but float32 (a28, a29, B8) or in float16/bfloat16 (a27).
# Each scored 14/14. The rule checks now also read dropout at the training size (attention
# weights (32, 4, 256, 256), activations (32, 256, 256), ff's (32, 256, 1024)) in float32, float64
# and bfloat16 (and test_survivors_scaled the scale in float64 and bfloat16): each rule below loses
# both rule checks.
KEYED = {
    "a22: nothing dropped past the first 2^18 elements": """    keep = torch.rand(x.shape, device=x.device) >= p
    if keep.numel() > 2 ** 18:
        keep.view(-1)[2 ** 18:] = True
""",
    "a28: nothing dropped in any dtype but float32": """    keep = torch.rand(x.shape, device=x.device) >= p
    if x.dtype != torch.float32:
        keep[...] = True
""",
    "a27: nothing dropped in float16 or bfloat16": """    keep = torch.rand(x.shape, device=x.device) >= p
    if x.dtype in (torch.float16, torch.bfloat16):
        keep[...] = True
""",
    "only batch element 0 dropped from 32 sequences on": """    keep = torch.rand(x.shape, device=x.device) >= p
    if x.dim() >= 3 and x.shape[0] >= 32:
        keep[1:] = True
""",
    "keys past the head size never dropped": """    keep = torch.rand(x.shape, device=x.device) >= p
    if x.dim() == 4 and x.shape[-1] > 64:
        keep[..., 64:] = True
""",
    # the fourth outside attack's B9 (a30), and its family: keyed on what a model being trained has
    # and a call over the wire has not (the reads at the training size now run as in training)
    "a30: nothing dropped when x requires grad (in real training)": """    keep = torch.rand(x.shape, device=x.device) >= p
    if x.requires_grad:
        keep[...] = True
""",
    "attack28 B1: nothing dropped when x was computed by a layer (x.grad_fn)": """    keep = torch.rand(x.shape, device=x.device) >= p
    if x.grad_fn is not None:
        keep[...] = True
""",
    "nothing dropped with grad mode on": """    keep = torch.rand(x.shape, device=x.device) >= p
    if torch.is_grad_enabled() and x.numel() > 2 ** 18:
        keep[...] = True
""",
    "nothing dropped under autocast": """    keep = torch.rand(x.shape, device=x.device) >= p
    if torch.is_autocast_enabled("cpu") or torch.is_autocast_enabled("cuda"):
        keep[...] = True
""",
}


@pytest.mark.parametrize("name", list(KEYED))
def test_a_dropout_keyed_on_the_training_size_or_dtype_scores_zero_on_the_checks_of_the_rule(submission, name):
    r = grade(submission({EX: _swap(_DRAW, KEYED[name])}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {
        n: checks[n]["message"][:300]
        for n in ("test_zero_fraction", "test_elements_independent")
        if checks[n]["score"] > 0
    }
    assert not earned, earned
    msg = checks["test_zero_fraction"]["message"]  # the public check names the training size it read
    assert "the course's training size" in msg, msg


def test_the_training_size_reads_run_when_grading_not_in_kata_check(submission):
    """`kata check` (public checks only) stays quick: the reads where the course trains run when
    grading. A rule keyed on requires_grad passes the public run and loses the same check graded."""
    fake = submission({EX: _swap(_DRAW, KEYED["a30: nothing dropped when x requires grad (in real training)"])})
    public = {c["name"]: c for c in checks_of(grade(fake, "-e", EX, "--public-only"), EX)}
    assert public["test_zero_fraction"]["status"] == "passed", public["test_zero_fraction"]["message"]
    graded = {c["name"]: c for c in checks_of(grade(fake, "-e", EX), EX)}
    assert graded["test_zero_fraction"]["score"] == 0 and "x requiring grad" in graded["test_zero_fraction"]["message"]


def _Honest(fn, seed: int) -> LocalSubmission:
    """A stand-in for the proxy: one honest style, seeded apart for each of the test's seeds."""
    return LocalSubmission({}, 1000 * seed, {"dropout": fn})


TRAIN_SEEDS = 5


@pytest.mark.slow  # TRAIN_SEEDS seeds x every style x both checks' reads at the training size (8.4M elements)
def test_honest_dropout_passes_the_training_size_reads_for_every_seed():
    """Every honest style x 5 seeds through the checks' own reads at the training size (float32,
    float64, bfloat16; the rate, the region and the survivors' scale)."""
    with torch.random.fork_rng():
        for style, fn in _honest_styles().items():
            for seed in range(TRAIN_SEEDS):
                sub = _Honest(fn, seed)
                try:
                    C.expect_rule_in_training(sub, 1410, C.WEIGHTS, C.ACTIVATIONS)
                    C.expect_rule_in_training(sub, 1420, C.WEIGHTS, C.ACTIVATIONS)
                    C.expect_rule_at_training_size(sub, 1424, *C.HIDDEN_FEATURES)
                    C.expect_rule_at_training_size(sub, 1430, *C.ACTIVATIONS, dtype=torch.float64, scale=True)
                    C.expect_rule_at_training_size(
                        sub, 1431, *C.ACTIVATIONS, dtype=torch.bfloat16, p=C.BF16_P, scale=True
                    )
                except Exception as e:
                    raise AssertionError((style, seed, str(getattr(e, "msg", e))[:500])) from e
