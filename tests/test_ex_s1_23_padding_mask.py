"""Graded submissions of s1_23_padding_mask: plausible wrong answers lose points with a named
mistake, and a differently written correct answer scores full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_padding_mask"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
MAX = 10


def _swap(source: str, begin: str, body: str) -> str:
    """Replace the solution block whose BEGIN line starts with `begin` by `body` (indented like the block)."""
    start = source.index(f"# BEGIN SOLUTION {begin}")
    line_start = source.rindex("\n", 0, start) + 1
    indent = source[line_start:start]
    end = source.index("# END SOLUTION", start) + len("# END SOLUTION")
    code = "\n".join(indent + line if line else line for line in body.strip("\n").splitlines())
    return source[:line_start] + code + source[end:]


def _failed(report):
    return {c["name"]: c["message"] for c in checks_of(report, EX) if c["status"] != "passed"}


def test_bool_mask_and_query_rows_masked(submission):
    wrong = _swap(SOURCE, "compare with pad_id", "return input_ids != pad_id")
    wrong = _swap(wrong, "two new axes", "return mask.bool()[:, None, :, None]")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= 1, failed  # a row of padding only is uniform either way
    assert "compared with `0`" not in failed["test_pad_id_argument"]
    assert "dtype" in failed["test_listing_1_27_mask"] and "long" in failed["test_listing_1_27_mask"]
    assert "masks the query rows" in failed["test_key_mask"]
    assert "padded query rows were masked instead of the padded keys" in failed["test_masked_weights"]


def test_inf_fill_and_zero_as_padding(submission):
    wrong = _swap(SOURCE, "compare with pad_id", "return (input_ids != 0).long()")
    wrong = _swap(
        wrong,
        "fill the padded keys",
        """
scores = scores.masked_fill(~key_mask(mask), float("-inf"))
return torch.softmax(scores, dim=-1)
""",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {
        "test_listing_1_27_mask",
        "test_pad_id_argument",
        "test_all_padding_row",
        "test_masked_weights",
    }, failed
    assert "compared with `0`: padding is pad_id" in failed["test_listing_1_27_mask"]
    assert "NaN" in failed["test_all_padding_row"] and "-1e9" in failed["test_all_padding_row"]
    # issue 36: the public check has a sequence of padding only too, and names the -inf fill
    assert "padded keys were filled with -inf" in failed["test_masked_weights"]


def test_additive_mask(submission):
    wrong = _swap(SOURCE, "fill the padded keys", "return torch.softmax(scores + mask[:, None, None, :], dim=-1)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 5
    assert "0/1 mask was added to the scores" in failed["test_masked_weights"]


def test_other_correct_answer_scores_full_marks(submission):
    other = _swap(SOURCE, "compare with pad_id", "return input_ids.ne(pad_id).to(torch.int64)")
    other = _swap(other, "two new axes", "return mask.unsqueeze(1).unsqueeze(2) == 1")
    other = _swap(
        other,
        "fill the padded keys",
        """
low = torch.finfo(scores.dtype).min
weights = torch.where(key_mask(mask), scores, torch.full_like(scores, low)).softmax(dim=-1)
return weights
""",
    )
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)
