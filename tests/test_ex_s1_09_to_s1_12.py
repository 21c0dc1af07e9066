"""§1.9–1.12 graded for real: plausible wrong answers lose points with a message naming the
mistake; correct answers written differently score full marks. To keep the suite fast, one
submission carries one mistake in each of several exercises and is graded once."""

import pytest

from tests.conftest import SOLUTIONS, checks_of, grade, score_of
from tests.mistakes import expect_named_publicly, variant


def source(ex: str, old: str, new: str) -> str:
    text = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    assert old in text, (ex, old)
    return text.replace(old, new)


def messages(report, ex) -> str:
    return "\n".join(c["message"] for c in checks_of(report, ex) if c["status"] == "failed")


def max_of(report, ex) -> float:
    return sum(c["max_score"] for c in checks_of(report, ex))


ROUND_A = {
    # positions forgotten
    "s1_09_input_embeddings": (
        "    return token_table[token_ids] + position_table[:seq_len]",
        "    return token_table[token_ids]",
    ),
    # the three matrices drawn in another order
    "s1_10_qkv": (
        "    W_query = torch.randn(d_in, d_out)\n    W_key = torch.randn(d_in, d_out)\n",
        "    W_key = torch.randn(d_in, d_out)\n    W_query = torch.randn(d_in, d_out)\n",
    ),
    # keys times queries: rows and columns swapped
    "s1_11_attention_scores": (
        "    return queries @ keys.transpose(-2, -1)",
        "    return keys @ queries.transpose(-2, -1)",
    ),
    # the weights transposed before mixing the values
    "s1_12_context": (
        "    return attn_weights @ values",
        "    return attn_weights.transpose(-2, -1) @ values if attn_weights.dim() > 1 else attn_weights @ values",
    ),
    # no scaling by sqrt(d_k)
    "s1_12_self_attention": ("torch.softmax(scores / keys.shape[-1] ** 0.5, dim=-1)", "torch.softmax(scores, dim=-1)"),
    # the library's matmul where the exercise asks for dot products
    "s1_11_matmul": ("            out[i, j] = (A[i, :] * B[:, j]).sum()", "            out[i, j] = A[i, :] @ B[:, j]"),
}

ROUND_B = {
    # positions looked up by token id
    "s1_09_input_embeddings": (
        "    return token_table[token_ids] + position_table[:seq_len]",
        "    return token_table[token_ids] + position_table[token_ids % position_table.shape[0]]",
    ),
    # copy-paste: keys projected with W_query
    "s1_10_qkv": (
        "    return inputs @ W_query, inputs @ W_key, inputs @ W_value",
        "    return inputs @ W_query, inputs @ W_query, inputs @ W_value",
    ),
    # keys.T only works on matrices: batches break
    "s1_11_attention_scores": ("    return queries @ keys.transpose(-2, -1)", "    return queries @ keys.T"),
    # softmax over the first dimension, whatever dim says
    "s1_11_softmax": (
        "    shifted = x - x.amax(dim=dim, keepdim=True)\n    e = torch.exp(shifted)\n    return e / e.sum(dim=dim, keepdim=True)",
        "    shifted = x - x.amax(dim=0, keepdim=True)\n    e = torch.exp(shifted)\n    return e / e.sum(dim=0, keepdim=True)",
    ),
    # row times row
    "s1_11_matmul": (
        "            out[i, j] = (A[i, :] * B[:, j]).sum()",
        "            out[i, j] = (A[i, :] * B[j, :]).sum()",
    ),
    # softmax over the queries instead of the keys
    "s1_12_scaled_attention": (
        "    return torch.softmax(scale_scores(scores, d_k), dim=-1)",
        "    return torch.softmax(scale_scores(scores, d_k), dim=0)",
    ),
    # the weighted sum divided again by the number of tokens (an average of an average)
    "s1_12_context": ("    return attn_weights @ values", "    return (attn_weights @ values) / values.shape[-2]"),
    # the parameters created in another order
    "s1_12_self_attention": (
        "        self.W_query = nn.Parameter(torch.randn(d_in, d_out))\n        self.W_key = nn.Parameter(torch.randn(d_in, d_out))\n",
        "        self.W_key = nn.Parameter(torch.randn(d_in, d_out))\n        self.W_query = nn.Parameter(torch.randn(d_in, d_out))\n",
    ),
}


@pytest.fixture(scope="module")
def round_a(tmp_path_factory):
    from tests.conftest import make_submission

    sub = make_submission(tmp_path_factory.mktemp("a"), {ex: source(ex, *swap) for ex, swap in ROUND_A.items()})
    return grade(sub, *[a for ex in ROUND_A for a in ("-e", ex)])


@pytest.fixture(scope="module")
def round_b(tmp_path_factory):
    from tests.conftest import make_submission

    sub = make_submission(tmp_path_factory.mktemp("b"), {ex: source(ex, *swap) for ex, swap in ROUND_B.items()})
    return grade(sub, *[a for ex in ROUND_B for a in ("-e", ex)])


@pytest.mark.parametrize(
    "ex, words",
    [
        ("s1_09_input_embeddings", "the positions were not added"),
        ("s1_10_qkv", "drawn in another order"),
        ("s1_11_attention_scores", "rows must be queries, columns keys"),
        ("s1_12_context", "the weights were transposed"),
        ("s1_12_self_attention", "not scaled by sqrt(d_k)"),
        ("s1_11_matmul", "the @ operator"),
    ],
)
def test_first_round_of_mistakes(round_a, ex, words):
    assert score_of(round_a, ex) < max_of(round_a, ex)
    assert words in messages(round_a, ex)


@pytest.mark.parametrize(
    "ex, words",
    [
        ("s1_09_input_embeddings", "positions looked up by token id"),
        ("s1_10_qkv", "keys"),
        ("s1_11_attention_scores", "at ch01/s1_11_attention_scores.py"),  # keys.T breaks on batches: the file is named
        ("s1_11_softmax", "softmax over another dimension than the one dim names"),
        ("s1_11_matmul", "matmul"),
        ("s1_12_self_attention", "W_query after torch.manual_seed(123)"),
        ("s1_12_scaled_attention", "softmax over the wrong dimension"),
        ("s1_12_context", "context vectors of listing 1.7"),
    ],
)
def test_second_round_of_mistakes(round_b, ex, words):
    assert score_of(round_b, ex) < max_of(round_b, ex)
    assert words in messages(round_b, ex)


VARIANTS = {
    "s1_09_input_embeddings": (
        "    return token_table[token_ids] + position_table[:seq_len]",
        "    positions = torch.arange(seq_len)\n"
        "    return torch.nn.functional.embedding(token_ids, token_table) + torch.nn.functional.embedding(positions, position_table)",
    ),
    "s1_10_qkv": (
        "    return inputs @ W_query, inputs @ W_key, inputs @ W_value",
        "    return tuple(torch.matmul(inputs, w) for w in (W_query, W_key, W_value))",
    ),
    "s1_11_matmul": (
        "            out[i, j] = (A[i, :] * B[:, j]).sum()",
        "            out[i, j] = sum(A[i, k] * B[k, j] for k in range(A.shape[1]))",
    ),
    "s1_11_attention_scores": (
        "    return queries @ keys.transpose(-2, -1)",
        "    if queries.dim() == 1:\n        return torch.einsum('d,kd->k', queries, keys)\n"
        "    return torch.einsum('...qd,...kd->...qk', queries, keys)",
    ),
    "s1_12_scaled_attention": (
        "    return torch.softmax(scale_scores(scores, d_k), dim=-1)",
        "    z = scores / math.sqrt(d_k)\n    return torch.exp(z - torch.logsumexp(z, dim=-1, keepdim=True))",
    ),
    "s1_12_context": ("    return attn_weights @ values", "    return torch.matmul(attn_weights, values)"),
    "s1_12_self_attention": (
        "        queries = x @ self.W_query\n",
        "        queries = torch.einsum('...ni,io->...no', x, self.W_query)\n",
    ),
}


def test_correct_but_different_answers_score_full_marks(submission):
    files = {ex: source(ex, *swap) for ex, swap in VARIANTS.items()}
    files["s1_12_scaled_attention"] = "import math\n" + files["s1_12_scaled_attention"]
    r = grade(submission(files), *[a for ex in VARIANTS for a in ("-e", ex)])
    for ex in VARIANTS:
        assert score_of(r, ex) == max_of(r, ex), (ex, messages(r, ex))


def test_matmul_without_its_shape_check_fails_a_public_check(submission):
    """Issue 28: matmul returning something for (2, 3) @ (2, 3) instead of raising ValueError lost
    a hidden point only; test_shape_mismatch_raises is public now."""
    source = (SOLUTIONS / "ch01" / "s1_11_matmul.py").read_text()
    old = '        raise ValueError(f"cannot multiply'
    assert old in source
    wrong = source.replace(old, "        return None\n" + old)
    r = grade(submission({"s1_11_matmul": wrong}), "-e", "s1_11_matmul", "--public-only")
    failed = {c["name"]: c["message"] for c in checks_of(r, "s1_11_matmul") if c["status"] == "failed"}
    assert set(failed) == {"test_shape_mismatch_raises"}, failed
    assert "must raise ValueError: the inner dimensions 3 and 2 differ" in failed["test_shape_mismatch_raises"]


@pytest.mark.parametrize(
    "ex, name, says",
    [
        (
            "s1_09_input_embeddings",
            "positions looked up by token id",
            "positions looked up by token id instead of by position",
        ),
        (
            "s1_11_softmax",
            "softmax over dim 0 whatever dim says",
            "softmax over another dimension than the one dim names: use the dim argument",
        ),
    ],
)
def test_the_hidden_checks_name_a_mistake_as_the_public_ones_do(submission, ex, name, says):
    """Issue 28: the hidden checks named these in other words than kata check had shown ('...: the
    two 2s must get different position vectors', '...: use the dim argument'); one name now."""
    r = grade(submission({ex: variant(ex, name).source()}), "-e", ex)
    expect_named_publicly(r, ex, says)
