"""Real submissions of §1.23's BERTForClassification and listing 1.36: plausible wrong answers
lose points with a message naming the mistake; a correct answer written differently scores full
marks. Also the facts behind ERRATA E-1.23-h..mc about listing 1.36's print."""

import pytest
import torch

from grader.checks import bert_reference as R
from grader.listings import REGISTRY
from grader.listings import s1_23_classifier  # noqa: F401  (registers listings 1.35-1.36)
from grader.capstone.training.model import import_file
from tests.conftest import ROOT, SOLUTIONS, checks_of, grade, score_of, solution_with

EX = "s1_23_classifier"
SOURCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_text()
MAX = 17
POOL = "return self.classifier(out[:, 0])"


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def _solution():
    sol = import_file(SOLUTIONS / "ch01" / f"{EX}.py", "kata_test_solution")  # with the solutions it imports
    return sol


def test_mean_pooling_is_named(submission):
    wrong = _replace(POOL, "return self.classifier(out.mean(dim=1))")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert {"test_listing_1_35_given_weights", "test_cls_pooling", "test_padding_invariance"} <= set(failed), set(
        failed
    )
    assert "the mean over all positions was pooled" in failed["test_listing_1_35_given_weights"]["message"]
    assert score_of(r, EX) <= MAX - 9


def test_last_token_pooling_is_named(submission):
    wrong = _replace(POOL, "return self.classifier(out[:, -1])")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    assert "the last position was pooled" in _failed(r)["test_listing_1_35_given_weights"]["message"]


def test_the_printed_six_layers_are_refused(submission):
    wrong = _replace("layers=4, heads=4, ff_dim=1024)", "layers=6, heads=4, ff_dim=1024)")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert set(failed) == {"test_listing_1_36_book_model"}, set(failed)
    assert "(0-3): 4 x TransformerBlock" in failed["test_listing_1_36_book_model"]["message"]


def test_the_books_six_heads_fail_with_a_clear_error(submission):
    wrong = _replace("layers=4, heads=4, ff_dim=1024)", "layers=4, heads=6, ff_dim=1024)")
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    message = _failed(r)["test_listing_1_36_book_model"]["message"]
    assert "ValueError" in message and "not divisible by heads=6" in message


def _alternative() -> str:
    start = SOURCE.index("class BERTForClassification")
    return (
        SOURCE[:start]
        + """class BERTForClassification(nn.Module):
    def __init__(self, vocab_size, dim, max_len, layers, heads, ff_dim):
        super().__init__()
        self.bert = BERTEncoder(vocab_size, dim, max_len, layers, heads, ff_dim)
        self.classifier = nn.Sequential()
        self.classifier.append(nn.Dropout(p=0.1))
        self.classifier.append(nn.Linear(dim, 2))

    def forward(self, x, mask):
        cls_vector = self.bert(x, mask).select(1, 0)   # (B, dim): the [CLS] position
        return self.classifier(cls_vector)


def book_model():
    config = dict(vocab_size=VOCAB_SIZE, dim=256, max_len=MAX_LEN, layers=4, heads=256 // 64, ff_dim=4 * 256)
    return BERTForClassification(**config)
"""
    )


def test_correct_alternative_scores_full_marks(submission):
    r = grade(submission({EX: _alternative()}), "-e", EX)
    assert score_of(r, EX) == MAX, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


def test_reference_equals_the_solution():
    sol = _solution()
    sd = R.random_state(R.classifier_shapes(50260, 8, 12, 2, 16), seed=1)
    m = sol.BERTForClassification(50260, 8, 12, 2, 2, 16).eval()
    m.load_state_dict(sd)
    ids, mask = R.padded_batch([6, 3, 2], 6, 50260, 50257, 50258, 50259, seed=2)
    with torch.no_grad():
        assert torch.allclose(m(ids, mask), R.classify(ids, mask, sd, 2), atol=1e-5)


# ------------------------------------------------------------------ ERRATA E-1.23-h, mb, mc
def test_listing_1_36_as_printed_cannot_run():
    """E-1.23-h: the book's heads=6 cannot split dim=256 (the book's assert; the kata's ValueError)."""
    assert 256 % 6 == 4
    with pytest.raises(ValueError, match="not divisible by heads=6"):
        _solution().BERTForClassification(vocab_size=50260, dim=256, max_len=256, layers=4, heads=6, ff_dim=1024)


def test_the_printed_model_has_six_blocks_and_old_layer_norms():
    """E-1.23-i and mc: the book's print is torch's print of a 6-layer model, except that torch 2.13
    adds ', bias=True' to each LayerNorm line; layers=4 prints '(0-3): 4 x'."""
    printed = REGISTRY["1.36"].book
    sol = _solution()
    six = repr(sol.BERTForClassification(50260, 256, 256, 6, 4, 1024))
    four = repr(sol.book_model())
    assert "LayerNorm((256,), eps=1e-05, elementwise_affine=True, bias=True)" in six  # torch >= 2.1
    assert six.replace("elementwise_affine=True, bias=True)", "elementwise_affine=True)") == printed
    assert "(0-5): 6 x TransformerBlock(" in printed and "(0-3): 4 x TransformerBlock(" in four
    assert sum(p.numel() for p in sol.book_model().parameters()) == 16_092_674


# ------------------------------------------------------------------ the student's own earlier exercises
def test_an_unfinished_encoder_is_named_instead_of_its_traceback(submission):
    """The classifier imports the student's BERTEncoder from s1_23_encoder.py: while that is a stub,
    every public check of the classifier says to finish s1_23_encoder first; a hidden one says only
    that it is not implemented yet (a file named in the worker's traceback is the code's choice)."""
    stub = (ROOT / "exercises/ch01/s1_23_encoder.py").read_text()
    line = next(n for n, text in enumerate(stub.splitlines(), 1) if "raise NotImplementedError(" in text)
    r = grade(submission({"s1_23_encoder": stub}), "-e", EX)
    checks = checks_of(r, EX)
    assert score_of(r, EX) == 0 and all(c["status"] == "failed" for c in checks)
    public = [c["message"] for c in checks if c["visibility"] == "public"]
    hidden = [c["message"] for c in checks if c["visibility"] == "hidden"]
    assert public and hidden
    said = "s1_23_classifier uses your code from ch01/s1_23_encoder.py, which is not finished yet"
    assert all(m.startswith(said) and m.endswith(": finish s1_23_encoder first") for m in public), public
    assert all(f"(ch01/s1_23_encoder.py:{line} raises NotImplementedError)" in m for m in public), public
    assert all(m.startswith("not implemented yet: ") and "s1_23_encoder" not in m for m in hidden), hidden


def test_an_encoder_that_raises_is_named_and_hidden_checks_show_none_of_its_text(submission):
    marker = "MARKER-from-the-encoder"
    broken = solution_with(
        "s1_23_encoder",
        "        x = self.embed(x)\n",
        f"        x = self.embed(x)\n        raise KeyError({marker!r} + str(x.shape))\n",
    )
    r = grade(submission({"s1_23_encoder": broken}), "-e", EX)
    failed = [c for c in checks_of(r, EX) if c["status"] == "failed"]
    public = [c["message"] for c in failed if c["visibility"] == "public"]
    hidden = [c["message"] for c in failed if c["visibility"] == "hidden"]
    assert public and hidden
    named = "your code of exercise s1_23_encoder, which s1_23_classifier imports"
    assert all(
        "raised KeyError in ch01/s1_23_encoder.py:" in m
        and named in m
        and marker in m
        and "kata check s1_23_encoder" in m
        for m in public
    ), public
    assert all("raised an exception on this hidden input" in m for m in hidden), hidden
    assert not any(marker in m or "torch.Size" in m or "KeyError" in m or "s1_23_encoder" in m for m in hidden), hidden
