# Exercise s1_10_qkv (§1.10): replace each `raise NotImplementedError` with your code.
"""§1.10 From embeddings to queries, keys and values (listings 1.2–1.4).

Three trainable matrices W_query, W_key, W_value of shape (d_in, d_out) project every input
embedding into a query, a key and a value vector: Q = X @ W_query, K = X @ W_key, V = X @ W_value.
"""
import torch


def init_qkv_weights(d_in: int, d_out: int, seed: int = 123):
    """Seeded random projection matrices, as in listing 1.3.

    Seed torch's generator with `seed`, then draw W_query, W_key and W_value in that order,
    each with torch.randn(d_in, d_out). Returns the tuple (W_query, W_key, W_value),
    three float32 tensors of shape (d_in, d_out).
    """
    gen_state = torch.manual_seed(seed)
    matrices = []
    for which in range(3):
        drawn = torch.randn(d_in, d_out)
        matrices.append(drawn)
    query_w = matrices[0]
    key_w = matrices[1]
    value_w = matrices[2]
    return query_w, key_w, value_w


def project_qkv(inputs: torch.Tensor, W_query: torch.Tensor, W_key: torch.Tensor, W_value: torch.Tensor):
    """Project embeddings to queries, keys and values (listings 1.2 and 1.4).

    inputs: (..., d_in): one token (d_in,), a sentence (seq_len, d_in) or a batch
    (batch, seq_len, d_in). Each W: (d_in, d_out).
    Returns (queries, keys, values), each of shape (..., d_out).
    """
    outputs = []
    for weight in (W_query, W_key, W_value):
        projected = torch.matmul(inputs, weight)
        outputs.append(projected)
    q_out = outputs[0]
    k_out = outputs[1]
    v_out = outputs[2]
    return q_out, k_out, v_out
