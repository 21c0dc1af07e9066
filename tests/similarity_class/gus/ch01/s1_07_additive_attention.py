# Exercise s1_07_additive_attention (§1.7): replace each `raise NotImplementedError` with your code.
"""§1.7-1.8 Bahdanau (additive) attention, and cross- vs self-attention.

An encoder reads the source sentence and leaves one hidden state h_j per token. Instead of
squeezing them into one final state, the decoder looks at all of them at every step: it
scores each h_j against its own state s,

    e_j = v^T tanh(W_s s + W_h h_j),

turns the scores into weights with a softmax over j (they sum to 1), and uses the weighted
sum of the h_j as its context vector. Stacking the weights of every decoder step gives a
matrix with one row per target word and one column per source word (cross-attention). In
self-attention queries and keys come from the same sentence, so that matrix is square.
"""
import torch


def attention_matrix_shape(query_tokens: list, key_tokens: list | None = None) -> tuple[int, int]:
    """Shape of the attention weight matrix (§1.8, figures 1.39-1.41).

    query_tokens: the tokens that ask (one row each), e.g. the target sentence being written.
    key_tokens: the tokens looked at (one column each), e.g. the source sentence; None means
    self-attention, where the sentence attends to itself.
    Returns (rows, columns) as a tuple of two ints.
    """
    n = len(query_tokens)
    if key_tokens is not None:
        return (n, len(key_tokens))
    return (n, n)


def additive_attention(decoder_state: torch.Tensor, encoder_states: torch.Tensor, W_s: torch.Tensor,
                       W_h: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One decoder step of Bahdanau attention (§1.7, figure 1.37): (context, weights).

    Same arguments as additive_scores. weights: softmax of the scores over the T encoder
    states, (T,) or (batch, T), summing to 1. context: sum over j of weights_j * h_j,
    (d_h,) or (batch, d_h).
    """
    e = additive_scores(decoder_state, encoder_states, W_s, W_h, v)
    ex = torch.exp(e - e.max(dim=-1, keepdim=True).values)   # stable
    a = ex / ex.sum(dim=-1, keepdim=True)
    return (a.unsqueeze(dim=-1) * encoder_states).sum(dim=-2), a


def additive_scores(decoder_state: torch.Tensor, encoder_states: torch.Tensor, W_s: torch.Tensor,
                    W_h: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """Bahdanau alignment scores e_j = v^T tanh(W_s s + W_h h_j) for one decoder step (§1.7).

    decoder_state s: (d_s,), or (batch, d_s) for a batch of sentences.
    encoder_states H: (T, d_h), one row h_j per source token, or (batch, T, d_h).
    W_s: (d_a, d_s); W_h: (d_a, d_h); v: (d_a,).
    Returns the T scores: (T,), or (batch, T).
    """
    # project the decoder state
    s_term = torch.matmul(decoder_state, W_s.transpose(0, 1)).unsqueeze(dim=-2)
    h_term = torch.matmul(encoder_states, W_h.transpose(0, 1))  # every encoder state
    return torch.matmul(torch.tanh(h_term + s_term), v)
