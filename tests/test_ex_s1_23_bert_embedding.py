"""Real submissions of §1.23's BERTEmbedding (listing 1.30): plausible wrong answers lose points
with a message naming the mistake; a correct answer written differently scores full marks."""

import importlib.util

import pytest
import torch

from grader.checking import draws
from grader.checks import bert_reference as R
from grader.checks import test_s1_23_bert_embedding as C
from tests.conftest import SOLUTIONS, LocalSubmission as _Local, checks_of, grade, score_of

ATTACKS = __import__("pathlib").Path(__file__).parent / "hostile" / "keyed_on_size_or_dtype" / "s1_23_bert_embedding"

EX = "s1_23_bert_embedding"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 11
SUM = "embeddings = self.token(x) + self.position(pos) + self.segment(seg)"


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_missing_position_embeddings_are_named(submission):
    wrong = _replace(SUM, "embeddings = self.token(x) + self.segment(seg)")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    # The layout checks compare the output too: the right layout around a wrong forward earns nothing;
    # the dropout check reads its drops through the eval output, which it compares first.
    assert set(failed) == {
        "test_listing_1_30_given_weights",
        "test_listing_1_30_book_sizes",
        "test_parameter_names_and_padding_row",
        "test_dropout_after_the_norm_in_training",
        "test_max_len_plus_one_is_refused",
    }, set(failed)
    for c in failed.values():
        assert "the position embeddings are missing" in c["message"], c["message"]


def test_positions_looked_up_by_token_id_are_named(submission):
    wrong = _replace(SUM, "embeddings = self.token(x) + self.position(x) + self.segment(seg)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "indexed with the token ids instead of the positions" in failed["test_listing_1_30_given_weights"]["message"]
    assert "test_fresh_weights_and_lengths" in failed
    assert score_of(r, EX) <= MAX - 5


def test_dropout_before_the_norm_and_no_length_check_lose_points(submission):
    wrong = _replace(
        """        if T > self.position.num_embeddings:
            raise ValueError(f"sequence of {T} tokens is longer than max_len={self.position.num_embeddings}")
""",
        "",
    ).replace("return self.dropout(self.norm(embeddings))", "return self.norm(self.dropout(embeddings))")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {
        "test_too_long_is_refused",
        "test_max_len_plus_one_is_refused",
        "test_dropout_only_in_training",
        "test_dropout_after_the_norm_in_training",
    }, set(failed)
    assert "must raise ValueError" in failed["test_too_long_is_refused"]["message"]
    # issue 28: the public check names it too, so kata check shows it before the grade counts it
    assert "must raise ValueError" in failed["test_max_len_plus_one_is_refused"]["message"]
    for name in ("test_dropout_only_in_training", "test_dropout_after_the_norm_in_training"):
        assert "dropout comes last, after the LayerNorm" in failed[name]["message"], failed[name]["message"]


ALTERNATIVE = """import torch
from torch import nn

PAD_ID = 50257
CLS_ID = 50258
SEP_ID = 50259
VOCAB_SIZE = 50260
MAX_LEN = 256


class BERTEmbedding(nn.Module):
    def __init__(self, vocab_size, embed_dim, max_len, dropout=0.1):
        super().__init__()
        self.max_len = max_len
        self.token = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.position = nn.Embedding(max_len, embed_dim)
        self.segment = nn.Embedding(2, embed_dim)
        self.norm = nn.LayerNorm(embed_dim)
        self.dropout = nn.Dropout(p=dropout)

    def forward(self, x):
        seq_len = x.size(1)
        if seq_len > self.max_len:
            raise ValueError("too long for the position table")
        h = self.token(x)
        h = h + self.position.weight[:seq_len]   # (T, D) broadcasts over the batch
        h = h + self.segment.weight[0]           # every token is in segment A
        return self.dropout(self.norm(h))
"""


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: ALTERNATIVE}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_reference_equals_the_solution():
    spec = importlib.util.spec_from_file_location(EX, SOLUTIONS / "ch01" / f"{EX}.py")
    sol = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sol)
    sd = R.random_state(R.embedding_shapes(50260, 8, 16), seed=1)
    m = sol.BERTEmbedding(50260, 8, 16).eval()
    m.load_state_dict(sd)
    ids = torch.randint(0, 50260, (3, 16), generator=torch.Generator().manual_seed(2))
    with torch.no_grad():
        assert torch.allclose(m(ids), R.embedding(ids, sd), atol=1e-6)
    assert repr(m) == repr(R.mirror_embedding(50260, 8, 16, 50257))


BOOK_LISTING_1_30 = """import torch
import torch.nn as nn

PAD_ID = 50257


class BERTEmbedding(nn.Module):
    def __init__(self, vocab_size, embed_dim, max_len, dropout=0.1):
        super().__init__()
        self.token = nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)
        self.position = nn.Embedding(max_len, embed_dim)
        self.segment = nn.Embedding(2, embed_dim)
        self.norm = nn.LayerNorm(embed_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        B, T = x.size()
        pos = torch.arange(T).unsqueeze(0).to(x.device)
        seg = torch.zeros_like(x)
        embeddings = (
            self.token(x) +
            self.position(pos) +
            self.segment(seg)
        )
        embeddings = self.norm(embeddings)
        embeddings = self.dropout(embeddings)
        return embeddings
"""


def test_the_books_listing_loses_only_the_length_check(submission):
    """Listing 1.30 as printed passes every check except the ValueError for T > max_len
    (nn.Embedding raises IndexError there), read by a public check and a hidden one."""
    r = grade(submission({EX: BOOK_LISTING_1_30}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_too_long_is_refused", "test_max_len_plus_one_is_refused"}
    assert "must raise ValueError, not IndexError" in failed["test_max_len_plus_one_is_refused"]["message"]
    assert score_of(r, EX) == MAX - 2


# ----------------------------------------------------------------------------- dropout: the rule
# Issue 24, part 4: the dropout was checked by its share (about half the values 0) and the scale
# of the survivors. test_dropout_after_the_norm_in_training (public) and
# test_dropout_only_in_training (hidden) read each output of 12 train-mode calls as dropped or
# kept (given weights make every LayerNorm output positive) and hold the drops to
# draws.bernoulli_findings; each rule below scores 0 on those it breaks.
_DROP = "return self.dropout(self.norm(embeddings))"
_FAKE = "return fake(self.norm(embeddings), self.dropout.p, self.training)"


def _with_fake(keep: str, scale: str = " / (1 - p)") -> str:
    return _replace(_DROP, _FAKE) + (
        "\n\ndef fake(h, p, training):\n    if not training or p == 0:\n        return h\n"
        + "".join("    " + line + "\n" for line in keep.split("\n"))
        + f"    return h * keep{scale}\n"
    )


BOTH = {"test_dropout_after_the_norm_in_training", "test_dropout_only_in_training"}
STRUCTURED = {
    "dropout left out": (_with_fake("keep = torch.ones_like(h)", scale=""), BOTH),
    "a fixed count at a fixed stride": (
        _with_fake(
            "n = h.numel()\nk = round((1 - p) * n)\n"
            "off = int(torch.randint(0, n, (1,)))\n"
            "keep = torch.zeros(n, dtype=torch.bool)\n"
            "keep[(torch.arange(k) * n // k + off) % n] = True\n"
            "keep = keep.reshape(h.shape)"
        ),
        BOTH,
    ),
    "the same mask in every row": (_with_fake("keep = (torch.rand(h.shape[-1:]) >= p).expand(h.shape)"), BOTH),
    "the same mask in every call": (
        _with_fake("keep = torch.rand(h.shape, generator=torch.Generator().manual_seed(0)) >= p"),
        BOTH,
    ),
    "the same mask for every sequence": (_with_fake("keep = (torch.rand(h.shape[1:]) >= p).expand(h.shape)"), BOTH),
    "dropped in neighbouring pairs": (
        _with_fake("half = torch.rand(h.shape) < 1 - (1 - p) ** 0.5\nkeep = ~(half | torch.roll(half, 1, -1))"),
        BOTH,
    ),
    "no rescaling": (_with_fake("keep = torch.rand(h.shape) >= p", scale=""), BOTH),
}


@pytest.mark.parametrize("name", list(STRUCTURED))
def test_a_structured_dropout_scores_zero_on_the_checks_of_dropout(submission, name):
    body, rule_checks = STRUCTURED[name]
    r = grade(submission({EX: body}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in rule_checks if checks[n]["score"] > 0}
    assert not earned, earned
    assert score_of(r, EX) == MAX - sum(checks[n]["max_score"] for n in rule_checks), [
        c["name"] for c in checks.values() if c["status"] != "passed"
    ]
    if "test_dropout_after_the_norm_in_training" in rule_checks:  # the public check names what it read
        msg = checks["test_dropout_after_the_norm_in_training"]["message"]
        assert "BERTEmbedding(50260, 16, 48, dropout=0.3) in train mode" in msg, msg


@pytest.mark.parametrize(
    "name,says",
    [
        ("dropout left out", ["no output was dropped", "self.dropout(self.norm("]),
        ("no rescaling", ["not rescaled by `1 / (1 - p)`"]),
        ("the same mask in every call", ["draw a new mask on every call"]),
        ("a fixed count at a fixed stride", ["hardly varies"]),
    ],
)
def test_a_wrong_dropout_is_told_what_is_wrong(submission, name, says):
    r = grade(submission({EX: STRUCTURED[name][0]}), "-e", EX, "--public-only")
    msg = {c["name"]: c["message"] for c in checks_of(r, EX)}["test_dropout_after_the_norm_in_training"]
    assert all(s in msg for s in says), msg


HONEST = {
    "nn.Dropout (the solution)": SOURCE,
    "F.dropout": _replace(
        _DROP, "return torch.nn.functional.dropout(self.norm(embeddings), self.dropout.p, self.training)"
    ),
    "rand >= p by hand": _with_fake("keep = torch.rand(h.shape) >= p"),
    "bernoulli by hand": _with_fake("keep = torch.bernoulli(torch.full_like(h, 1 - p))"),
}


@pytest.mark.slow  # 20 seeds x every style, each seed's statistics in full: minutes on two shared cores
def test_honest_dropout_passes_the_statistics_for_every_seed():
    """Every honest style x 20 seeds, on the trusted side, with the checks' own weights and ids:
    every output reads as dropped or kept, and the statistics find nothing (the batch read apart too)."""
    cases = [(C.transparent_state(2336), C.transparent_ids(2337)), (C.transparent_state(2338), C.transparent_ids(2339))]
    with torch.random.fork_rng(), torch.no_grad():
        for style, source in HONEST.items():
            space: dict = {}
            exec(compile(source, f"<{style}>", "exec"), space)
            for sd, ids in cases:
                want = R.embedding(ids, sd)
                for seed in range(20):
                    torch.manual_seed(seed)
                    m = space["BERTEmbedding"](C.V, C.D, C.L, dropout=C.DROP_P)
                    m.load_state_dict(sd)
                    how, dropped = C.read_dropout([m(ids) for _ in range(C.DROPOUT_CALLS)], want, C.DROP_P)
                    assert how is None, (style, seed, how)
                    ones = [torch.ones_like(d) for d in dropped]
                    found = draws.bernoulli_findings(list(zip(dropped, ones)), C.DROP_P)
                    found += draws.bernoulli_findings(
                        [(d.permute(1, 2, 0), e.permute(1, 2, 0)) for d, e in zip(dropped, ones)], C.DROP_P
                    )
                    assert not found, (style, seed, found)


@pytest.mark.slow  # 5 seeds x every style at the book's sizes
def test_honest_dropout_passes_the_statistics_at_the_books_size_for_every_seed():
    """The same at BERTEmbedding(VOCAB_SIZE, 256, 256) on (2, 128) and (1, 256) ids, the module's
    own weights: every output reads, and the statistics find nothing."""
    with torch.random.fork_rng(), torch.no_grad():
        for style, source in HONEST.items():
            space: dict = {}
            exec(compile(source, f"<{style}>", "exec"), space)
            torch.manual_seed(0)
            m = space["BERTEmbedding"](C.V, C.BIG_D, C.MAX_LEN, dropout=C.DROP_P)
            for b, t, seed_in in ((2, 128, 2340), (1, C.MAX_LEN, 2341)):
                ids = torch.randint(0, C.V, (b, t), generator=torch.Generator().manual_seed(seed_in))
                m.eval()
                want = m(ids)
                readable = want.abs() > C.READABLE
                m.train()
                for seed in range(5):  # the book's size costs 10-100 times the small one (20 seeds)
                    torch.manual_seed(seed)
                    how, dropped = C.read_dropout([m(ids) for _ in range(C.BIG_CALLS)], want, C.DROP_P)
                    assert how is None, (style, seed, how)
                    found = draws.bernoulli_findings([(d & readable, readable) for d in dropped], C.DROP_P)
                    assert not found, (style, seed, found)


@pytest.mark.parametrize("t", [32, 64, 128, 256])
def test_a_dropout_keyed_on_the_books_sizes_scores_zero_on_the_checks_of_dropout(submission, t):
    """Honest on the small shapes, a deterministic stride once the last dimension reaches T: the
    rule checks also read BERTEmbedding(VOCAB_SIZE, 256, 256) on (2, 128) and (1, 256) ids."""
    fake = _with_fake(
        f"keep = torch.rand(h.shape) >= p\nif h.shape[-1] >= {t}:\n"
        "    keep = (torch.arange(h.shape[-1]) % 10 != 0).expand(h.shape)"
    )
    r = grade(submission({EX: fake}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    earned = {n: checks[n]["message"][:300] for n in BOTH if checks[n]["score"] > 0}
    assert not earned, earned
    msg = checks["test_dropout_after_the_norm_in_training"]["message"]
    assert "BERTEmbedding(50260, 256, 256, dropout=0.3) in train mode on a (2, 128) batch (the book's sizes)" in msg, (
        msg
    )


# ----------------------------------------------------------------------------- dropout where the course trains


@pytest.mark.slow  # the course's training size, 3 dtypes
@pytest.mark.parametrize("style", ["nn.Dropout (the solution)", "F.dropout", "rand >= p by hand"])
def test_honest_dropout_passes_where_the_course_trains_for_every_seed(style):
    """Issue 24 (fourth attack): both rule checks also read BERTEmbedding(V, 256, 256) on (32, 256) ids
    in float32, float64 and bf16 (C.expect_rule_where_the_course_trains); honest styles x 5 seeds pass."""
    space: dict = {}
    exec(compile(HONEST[style], f"<{style}>", "exec"), space)
    with torch.random.fork_rng():
        for seed in range(5):
            C.expect_rule_where_the_course_trains(_Local({"BERTEmbedding": space["BERTEmbedding"]}, 1000 * seed), 2342)


DTYPE_KEYED = "no dropout outside float32 (attack26 a29)"
BATCH_KEYED = "more than 2 sequences of 64+ tokens: only sequences 0-1 dropped (attack26 a13)"


@pytest.mark.parametrize("name,path", [(BATCH_KEYED, "a13_emb_batch_and_len"), (DTYPE_KEYED, "a29_dtype_keyed_all")])
def test_a_dropout_keyed_on_where_the_course_trains_scores_zero(submission, name, path):
    """The fourth outside attack's files, kept here: each scores 0 on both rule checks."""
    fake = (ATTACKS / f"{path}.py").read_text()
    r = grade(submission({EX: fake}), "-e", EX)
    checks = {c["name"]: c for c in checks_of(r, EX)}
    rule = {"test_dropout_after_the_norm_in_training", "test_dropout_only_in_training"}
    earned = {n: checks[n]["message"][:300] for n in rule if checks[n]["score"] > 0}
    assert not earned, (name, earned)
