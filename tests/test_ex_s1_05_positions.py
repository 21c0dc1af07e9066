"""§1.5 position encodings graded for real: the classic sinusoidal slips (sin/cos swapped, i for 2i,
base 1000) and a reversed bit order are named; float32 code written another way scores full marks."""

import pytest

from tests.conftest import SOLUTIONS, checks_of, grade, score_of
from tests.mistakes import expect_named_publicly, variant

EX = "s1_05_positions"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()


def _replace(src: str, old: str, new: str) -> str:
    assert old in src, old
    return src.replace(old, new)


def _failed(report):
    return {c["name"]: c for c in checks_of(report, EX) if c["status"] == "failed"}


def test_sin_cos_swapped_and_bits_reversed(submission):
    wrong = _replace(
        SOURCE,
        "    pe[:, 0::2] = torch.sin(angles)\n    pe[:, 1::2] = torch.cos(angles)",
        "    pe[:, 0::2] = torch.cos(angles)\n    pe[:, 1::2] = torch.sin(angles)",
    )
    wrong = _replace(wrong, "torch.arange(n_bits - 1, -1, -1)", "torch.arange(n_bits)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "sin and cos are swapped" in failed["test_book_sinusoidal_768_1024"]["message"]
    assert "sin and cos are swapped" in failed["test_sinusoidal_fresh_sizes"]["message"]  # hidden, still named
    assert "bits are in reverse order" in failed["test_book_binary_64_to_75"]["message"]
    assert "test_book_integer_position_300" not in failed and "test_wavelengths_of_figure_pairs" not in failed


def test_exponent_i_instead_of_2i(submission):
    wrong = _replace(
        SOURCE,
        "    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)",
        "    two_i = torch.arange(d_model // 2, dtype=torch.float64)",
    )
    wrong = _replace(wrong, "10000 ** (2 * i / d_model)", "10000 ** (i / d_model)")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "exponent uses i instead of `2i`" in failed["test_book_sinusoidal_768_1024"]["message"]
    assert "exponent uses i instead of 2i" in failed["test_wavelengths_of_figure_pairs"]["message"]


def test_base_1000_and_positions_from_one(submission):
    wrong = _replace(SOURCE, "angles = pos / 10000 ** (two_i / d_model)", "angles = pos / 1000 ** (two_i / d_model)")
    wrong = _replace(
        wrong, "torch.arange(seq_len, dtype=torch.float32)", "torch.arange(1, seq_len + 1, dtype=torch.float32)"
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "base is `1000` instead of `10000`" in failed["test_book_sinusoidal_768_1024"]["message"]
    assert "positions count from `0`" in failed["test_book_integer_position_300"]["message"]
    assert score_of(r, EX) < 18


def test_float32_tutorial_style_scores_full_marks(submission):
    alt = """
import math

import torch


def integer_position_encoding(seq_len, d_model):
    return torch.arange(seq_len).float().repeat(d_model, 1).T.contiguous()


def binary_position_encoding(positions, n_bits):
    flat = positions.reshape(-1).tolist()
    rows = []
    for p in flat:
        if not 0 <= p < 2 ** n_bits:
            raise ValueError(f"{p} does not fit in {n_bits} bits")
        rows.append([float(b) for b in format(p, f"0{n_bits}b")])
    return torch.tensor(rows, dtype=torch.float32).reshape(*positions.shape, n_bits)


def sinusoidal_position_encoding(seq_len, d_model):
    position = torch.arange(seq_len).float().unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
    pe = torch.zeros(seq_len, d_model)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe


def wavelength(i, d_model):
    return float(2 * torch.pi * torch.tensor(10000.0, dtype=torch.float64) ** (2 * i / d_model))


def add_position_encoding(token_embeddings, pe):
    n = token_embeddings.size(-2)
    return token_embeddings + pe.narrow(0, 0, n)
"""
    r = grade(submission({EX: alt}), "-e", EX)
    assert score_of(r, EX) == 18, [c["message"] for c in checks_of(r, EX) if c["status"] != "passed"]


@pytest.mark.parametrize(
    "name, says",
    [
        ("positions counted from 1", "positions count from `0`: row p holds p, not `p + 1`"),
        ("bits in reverse order", "the bits are in reverse order: the most significant bit"),
    ],
)
def test_the_hidden_checks_name_a_mistake_as_the_public_ones_do(submission, name, says):
    """Issue 28: the hidden checks named these in other words ('positions count from 0', 'most
    significant bit first') than kata check had shown; one name now, shown by a public check."""
    r = grade(submission({EX: variant(EX, name).source()}), "-e", EX)
    expect_named_publicly(r, EX, says)
