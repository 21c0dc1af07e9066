"""Real submissions of §1.23's BERTEmbedding (listing 1.30): plausible wrong answers lose points
with a message naming the mistake; a correct answer written differently scores full marks."""
import importlib.util

import torch

from grader.checks import bert_reference as R
from tests.conftest import SOLUTIONS, checks_of, grade, score_of

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
    # The layout checks compare the output too: the right layout around a wrong forward earns nothing.
    assert set(failed) == {"test_listing_1_30_given_weights", "test_listing_1_30_book_sizes",
                           "test_parameter_names_and_padding_row"}, set(failed)
    for c in failed.values():
        assert "the position embeddings are missing" in c["message"], c["message"]


def test_positions_looked_up_by_token_id_are_named(submission):
    wrong = _replace(SUM, "embeddings = self.token(x) + self.position(x) + self.segment(seg)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "indexed with the token ids instead of the positions" in \
        failed["test_listing_1_30_given_weights"]["message"]
    assert "test_fresh_weights_and_lengths" in failed
    assert score_of(r, EX) <= MAX - 5


def test_dropout_before_the_norm_and_no_length_check_lose_hidden_points(submission):
    wrong = _replace("""        if T > self.position.num_embeddings:
            raise ValueError(f"sequence of {T} tokens is longer than max_len={self.position.num_embeddings}")
""", "").replace("return self.dropout(self.norm(embeddings))", "return self.norm(self.dropout(embeddings))")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_too_long_is_refused", "test_dropout_only_in_training"}, set(failed)
    assert "must raise ValueError, not IndexError" in failed["test_too_long_is_refused"]["message"]
    assert "scaled by 1 / (1 - p)" in failed["test_dropout_only_in_training"]["message"] or \
        "about half of the values must be 0" in failed["test_dropout_only_in_training"]["message"]


ALTERNATIVE = '''import torch
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
'''


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


BOOK_LISTING_1_30 = '''import torch
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
'''


def test_the_books_listing_loses_only_the_length_check(submission):
    """Listing 1.30 as printed passes every check except the ValueError for T > max_len
    (nn.Embedding raises IndexError there)."""
    r = grade(submission({EX: BOOK_LISTING_1_30}), "-e", EX)
    assert set(_failed(r)) == {"test_too_long_is_refused"}
    assert score_of(r, EX) == MAX - 1
