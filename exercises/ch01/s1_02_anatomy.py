# Exercise s1_02_anatomy (§1.2): replace each `raise NotImplementedError` with your code.
"""§1.2 Anatomy of a decoder-only transformer: input, processing, output (figures 1.10–1.11).

Input stage: token ids become token embeddings, and a position embedding per position is added.
Processing stage: n_layers transformer blocks, each keeping the shape (batch, seq_len, d_model).
Output stage: a linear layer maps every position to vocab_size logits; the logits of the last
position, through softmax, are the distribution of the next token.
"""
import torch


def stage_shapes(batch: int, seq_len: int, vocab_size: int, d_model: int, n_layers: int) -> dict[str, tuple[int, ...]]:
    """The shape of the data at each stage of a decoder-only model (§1.2, figure 1.11).

    Returns a dict, in pipeline order, from stage name to shape (a tuple of ints):
      "token_ids"            (batch, seq_len)
      "token_embeddings"     (batch, seq_len, d_model)
      "position_embeddings"  (seq_len, d_model): one vector per position, shared by the batch
      "block_input"          (batch, seq_len, d_model): token + position embeddings
      "block_1" ... "block_<n_layers>"   the output of each transformer block, in order
      "logits"               (batch, seq_len, vocab_size)
      "next_token_probs"     (batch, vocab_size): softmax of the last position's logits
    """
    raise NotImplementedError('s1_02_anatomy: build the dict in this order; one "block_<i>" entry per layer, i = 1 .. n_layers (in stage_shapes)')


def next_token_probs(hidden: torch.Tensor, W_out: torch.Tensor, b_out: torch.Tensor | None = None) -> torch.Tensor:
    """The output stage (§1.2, figure 1.11): from the last block's output to next-token probabilities.

    hidden: (batch, seq_len, d_model); W_out: (d_model, vocab_size); b_out: (vocab_size,) or None.
    Computes the logits of the last position, hidden[:, -1] @ W_out (+ b_out), and returns their
    softmax over the vocabulary: (batch, vocab_size), each row summing to 1.
    """
    raise NotImplementedError('s1_02_anatomy: take the last position, apply the linear layer, softmax over the vocabulary (in next_token_probs)')
