# Exercise s1_20_scaling (§1.20): replace each `raise NotImplementedError` with your code.
"""§1.20 Why transformers scale, and §1.22 the price: attention is quadratic in the sequence length.

An RNN must walk through a sequence one token at a time; a self-attention layer relates every
pair of tokens in one parallel step, and a stack of convolutions needs many layers before
distant tokens meet. The price of the all-pairs step is a (seq_len x seq_len) score matrix per
head: its memory and the FLOPs of Q K^T and A V grow with the square of the sequence length.
"""
import math


def rnn_sequential_steps(seq_len: int) -> int:
    """Sequential steps one RNN layer needs for a sequence of seq_len tokens (§1.20).

    Hidden state t depends on hidden state t - 1, so the steps cannot run in parallel.
    """
    raise NotImplementedError('s1_20_scaling: one step per token (in rnn_sequential_steps)')


def attention_sequential_steps(seq_len: int) -> int:
    """Sequential steps one self-attention layer needs for seq_len tokens (§1.20).

    All positions are computed at once, with matrix products over the whole sequence.
    """
    raise NotImplementedError('s1_20_scaling: the whole sequence in a single parallel step (in attention_sequential_steps)')


def cnn_layers_to_span(seq_len: int, kernel_size: int) -> int:
    """Fewest stacked 1-D convolutions (stride 1, no dilation) whose receptive field covers seq_len tokens.

    One layer with kernel size k sees k tokens; every further layer adds k - 1, so L layers see
    1 + L * (k - 1) tokens. Return the smallest L >= 1 with 1 + L * (k - 1) >= seq_len, so that
    the first and the last token can influence the same output (seq_len >= 2, kernel_size >= 2).
    """
    raise NotImplementedError('s1_20_scaling: smallest L with 1 + L * (k - 1) >= seq_len, computed with integers (in cnn_layers_to_span)')


def attention_flops(batch: int, heads: int, seq_len: int, head_dim: int) -> int:
    """FLOPs of the two attention products, Q K^T and A V, for all heads of a batch (§1.22).

    Per head, Q (n, d) @ K^T (d, n) and A (n, n) @ V (n, d) each take n * n * d multiply-adds;
    a multiply-add counts as 2 FLOPs. Total: 2 products * 2 * batch * heads * n^2 * d
    = 4 * batch * heads * seq_len^2 * head_dim. Projections, scaling and softmax are not counted.
    """
    raise NotImplementedError('s1_20_scaling: 2 products x 2 FLOPs per multiply-add x batch x heads x seq_len^2 x head_dim (in attention_flops)')


def score_matrix_bytes(batch: int, heads: int, seq_len: int, bytes_per_element: int = 4) -> int:
    """Memory of the attention scores of a batch: batch * heads * seq_len^2 * bytes_per_element (§1.22).

    One (seq_len, seq_len) matrix per head and example; 4 bytes per float32 entry.
    """
    raise NotImplementedError('s1_20_scaling: one seq_len x seq_len matrix per example and head (in score_matrix_bytes)')


def max_seq_len(memory_bytes: int, batch: int, heads: int, bytes_per_element: int = 4) -> int:
    """Longest sequence whose score matrices fit in memory_bytes (§1.22).

    The largest integer n >= 0 with score_matrix_bytes(batch, heads, n, bytes_per_element)
    <= memory_bytes. Work with integers (math.isqrt): a float square root is wrong for large
    budgets.
    """
    raise NotImplementedError('s1_20_scaling: integer square root of the number of entries that fit (in max_seq_len)')
