# Exercise s1_05_positions (§1.5): replace each `raise NotImplementedError` with your code.
"""§1.5 Position embeddings: integer, binary and sinusoidal.

Self-attention sees its input as a set, so each token embedding gets a vector that encodes
its position, added element-wise. Three encodings, in the order the section builds them:

- integer: every entry of position p's vector is p. Simple, but the values grow with the
  position and drown the small token values.
- binary: the bits of p, most significant first. Bounded to {0, 1}, but bit i (i = 1 for the
  least significant bit) flips every 2**(i - 1) positions, in jumps.
- sinusoidal ("Attention Is All You Need"): pair i of dimensions (2i, 2i + 1) holds
  sin(p / 10000**(2i / d_model)) and cos(p / 10000**(2i / d_model)). Smooth, bounded in
  [-1, 1], and each pair oscillates with its own wavelength, 2*pi*10000**(2i / d_model).
"""
import math

import torch


def integer_position_encoding(seq_len: int, d_model: int) -> torch.Tensor:
    """Integer position encoding (§1.5, figure 1.29). float32, shape (seq_len, d_model).

    Positions count from 0: row p is filled with the value p (row 300 of an 8-dimensional
    encoding is [300.0] * 8).
    """
    raise NotImplementedError('s1_05_positions: a column of positions 0 .. seq_len - 1, repeated over d_model columns (in integer_position_encoding)')


def binary_position_encoding(positions: torch.Tensor, n_bits: int) -> torch.Tensor:
    """Binary position encoding (§1.5, figures 1.30-1.31), most significant bit first.

    positions: an integer tensor of any shape. Returns float32 (*positions.shape, n_bits);
    the last entry is the least significant bit (the book's i = 1), the first entry the most
    significant one (i = n_bits): position 64 on 8 bits is [0, 1, 0, 0, 0, 0, 0, 0].
    Raises ValueError when a position is negative or needs more than n_bits bits.
    """
    raise NotImplementedError('s1_05_positions: check the range, then shift each position right by n_bits - 1, ..., 1, 0 and keep the last bit (in binary_position_encoding)')


def sinusoidal_position_encoding(seq_len: int, d_model: int) -> torch.Tensor:
    """Sinusoidal position encoding (§1.5, figures 1.32-1.33). float32, (seq_len, d_model).

    d_model is even. For position p and pair index i = 0 .. d_model/2 - 1:
        PE[p, 2i]     = sin(p / 10000**(2i / d_model))
        PE[p, 2i + 1] = cos(p / 10000**(2i / d_model))
    Both columns of a pair use the same angle; the sines sit in the even columns.
    """
    raise NotImplementedError('s1_05_positions: one angle per (position, pair): positions divided by 10000**(2i / d_model); sin in even, cos in odd columns (in sinusoidal_position_encoding)')


def wavelength(i: int, d_model: int) -> float:
    """How many positions pair i of the sinusoidal encoding takes for one full cycle (§1.5).

    The angle of pair i grows by 1 / 10000**(2i / d_model) per position, so one cycle (2*pi)
    takes 2*pi * 10000**(2i / d_model) positions: about 6.28 for i = 0. Returns a float.
    """
    raise NotImplementedError('s1_05_positions: 2*pi times the denominator of pair i (in wavelength)')


def add_position_encoding(token_embeddings: torch.Tensor, pe: torch.Tensor) -> torch.Tensor:
    """Token embeddings plus their position encodings (§1.5, figure 1.28).

    token_embeddings: (seq_len, d_model) or (batch, seq_len, d_model).
    pe: (max_len, d_model) with max_len >= seq_len, row p for position p.
    Returns the same shape as token_embeddings: token t gets row t of pe added.
    """
    raise NotImplementedError('s1_05_positions: take the first seq_len rows of pe and add them (they broadcast over the batch) (in add_position_encoding)')
