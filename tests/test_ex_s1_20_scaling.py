"""Graded submissions of s1_20_scaling: plausible wrong answers lose points with a named mistake."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_20_scaling"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
MAX = 8


def _replace(source, old, new):
    assert old in source, old
    return source.replace(old, new)


def _failed(report):
    return {c["name"]: c["message"] for c in checks_of(report, EX) if c["status"] != "passed"}


def test_float_sqrt_and_half_flops(submission):
    wrong = _replace(
        SOURCE,
        "return math.isqrt(memory_bytes // (batch * heads * bytes_per_element))",
        "return int(math.sqrt(memory_bytes / (batch * heads * bytes_per_element)))",
    )
    wrong = _replace(
        wrong,
        "return 4 * batch * heads * seq_len * seq_len * head_dim",
        "return 2 * batch * heads * seq_len * seq_len * head_dim",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_attention_flops", "test_max_seq_len", "test_max_seq_len_exact"}, failed
    assert "two products" in failed["test_attention_flops"]
    assert "math.isqrt" in failed["test_max_seq_len"] and "math.isqrt" in failed["test_max_seq_len_exact"]
    assert score_of(r, EX) == MAX - 4


def test_receptive_field_off_by_one(submission):
    wrong = _replace(
        SOURCE, "return max(1, -(-(seq_len - 1) // (kernel_size - 1)))", "return -(-seq_len // kernel_size)"
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_sequential_steps", "test_cnn_layers"}
    assert "adds 2 tokens of receptive field, not 3" in failed["test_sequential_steps"]
    assert "not k" in failed["test_cnn_layers"]


def test_other_correct_answer_scores_full_marks(submission):
    other = _replace(
        SOURCE,
        "return max(1, -(-(seq_len - 1) // (kernel_size - 1)))",
        "layers, seen = 1, kernel_size\n    while seen < seq_len:\n"
        "        layers, seen = layers + 1, seen + kernel_size - 1\n    return layers",
    )
    other = _replace(
        other,
        "return 4 * batch * heads * seq_len * seq_len * head_dim",
        "macs = batch * heads * seq_len * head_dim * seq_len\n    return 2 * macs + 2 * macs",
    )
    other = _replace(
        other,
        "return math.isqrt(memory_bytes // (batch * heads * bytes_per_element))",
        "lo, hi = 0, 1\n    per = batch * heads * bytes_per_element\n"
        "    while per * hi * hi <= memory_bytes:\n        hi *= 2\n"
        "    while hi - lo > 1:\n        mid = (lo + hi) // 2\n"
        "        lo, hi = (mid, hi) if per * mid * mid <= memory_bytes else (lo, mid)\n    return lo",
    )
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)
