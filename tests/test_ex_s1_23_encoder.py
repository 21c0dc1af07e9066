"""Real submissions of §1.23's BERTEncoder (listing 1.34): plausible wrong answers lose points
with a message naming the mistake; a correct answer written differently scores full marks."""

import torch

from grader.checks import bert_reference as R
from grader.capstone.training.model import import_file
from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_encoder"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 10
BODY = """        x = self.embed(x)
        for layer in self.layers:
            x = layer(x, mask)
        return x
        # END SOLUTION"""


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_blocks_that_do_not_chain_are_named(submission):
    wrong = _replace(
        BODY,
        """        emb = self.embed(x)
        for layer in self.layers:
            out = layer(emb, mask)
        return out
        # END SOLUTION""",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    # The layout check compares the output too: the right layout around a wrong forward earns nothing.
    assert set(failed) == {"test_listing_1_34_given_weights", "test_listing_1_34_structure"}, set(failed)
    for c in failed.values():
        assert "every block read the embeddings" in c["message"], c["message"]


def test_mask_not_passed_on_is_named(submission):
    wrong = _replace(
        BODY,
        """        x = self.embed(x)
        for layer in self.layers:
            x = layer(x, torch.ones_like(mask))
        return x
        # END SOLUTION""",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert {"test_listing_1_34_given_weights", "test_fresh_sizes", "test_padding_is_hidden"} <= set(failed), set(failed)
    assert "the padding mask did not reach the blocks" in failed["test_listing_1_34_given_weights"]["message"]


def test_plain_list_of_blocks_is_caught(submission):
    wrong = _replace(
        "self.layers = nn.ModuleList([TransformerBlock(dim, heads, ff_dim) for _ in range(layers)])",
        "self.layers = [TransformerBlock(dim, heads, ff_dim) for _ in range(layers)]",
    )
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert "test_listing_1_34_structure" in failed
    assert score_of(r, EX) == 0


def _alternative() -> str:
    start = SOURCE.index("class BERTEncoder")
    return (
        SOURCE[:start]
        + """class BERTEncoder(nn.Module):
    def __init__(self, vocab_size, dim, max_len, layers, heads, ff_dim):
        super().__init__()
        self.embed = BERTEmbedding(vocab_size, dim, max_len)
        self.layers = nn.ModuleList()
        for _ in range(layers):
            self.layers.append(TransformerBlock(dim, heads, ff_dim))

    def forward(self, x, mask):
        hidden = self.embed(x)
        for i in range(len(self.layers)):
            hidden = self.layers[i](hidden, mask=mask)
        return hidden
"""
    )


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: _alternative()}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_reference_equals_the_solution():
    sol = import_file(SOLUTIONS / "ch01" / f"{EX}.py", "kata_test_solution")  # with the solutions it imports
    sd = R.random_state(R.encoder_shapes(50260, 8, 12, 2, 16), seed=1)
    m = sol.BERTEncoder(50260, 8, 12, 2, 2, 16).eval()
    m.load_state_dict(sd)
    ids, mask = R.padded_batch([6, 3], 6, 50260, 50257, 50258, 50259, seed=2)
    with torch.no_grad():
        assert torch.allclose(m(ids, mask), R.encoder(ids, mask, sd, 2), atol=1e-5)
    assert repr(m) == repr(R.mirror_encoder(50260, 8, 12, 2, 16, 50257))
