"""§1.23 The attention mask for padding (listing 1.27).

A batch is a rectangle: shorter sequences are filled up with [PAD] (id PAD_ID = 50257 with
GPT-2's tokenizer). The attention mask says which positions hold real tokens (1) and which
hold padding (0). Attention uses it on the keys: no token may draw information from a [PAD]
position, so its score is replaced by a very negative number before the softmax and its weight
becomes 0. A sequence's real tokens then get exactly the weights they would get without any
padding, however much padding the batch adds.

Shapes: input_ids and mask (batch, seq_len); attention scores (batch, heads, seq_len, seq_len),
whose last axis runs over the keys.
"""
import torch

PAD_ID = 50257  # GPT-2's 50,257 tokens, then [PAD] (listing 1.25)
NEG_INF = -1e9  # the book's fill value: exp(-1e9 - max) is exactly 0 in float32, and never NaN


def create_attention_mask(input_ids: torch.Tensor, pad_id: int = PAD_ID) -> torch.Tensor:
    """Listing 1.27: 1 where input_ids holds a real token, 0 where it holds pad_id.
    Same shape as input_ids, dtype torch.long (int64)."""
    # BEGIN SOLUTION compare with pad_id, as long integers
    return (input_ids != pad_id).long()
    # END SOLUTION


def key_mask(mask: torch.Tensor) -> torch.Tensor:
    """The (batch, seq_len) mask reshaped to (batch, 1, 1, seq_len), dtype torch.bool (True = a real
    token), so that it broadcasts over the heads and the query rows of (batch, heads, seq_len,
    seq_len) scores and masks the keys (the last axis)."""
    # BEGIN SOLUTION two new axes, for the heads and the query rows
    return mask.bool()[:, None, None, :]
    # END SOLUTION


def masked_attention_weights(scores: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Softmax over the keys of (batch, heads, seq_len, seq_len) scores, in which padded keys
    (mask 0) get weight 0: fill their scores with NEG_INF first, as the book does (-inf would
    give NaN for a sequence of padding only; NEG_INF gives it uniform weights). Every row sums to 1."""
    # BEGIN SOLUTION fill the padded keys' scores with NEG_INF, then softmax over the last axis
    scores = scores.masked_fill(~key_mask(mask), NEG_INF)
    return torch.softmax(scores, dim=-1)
    # END SOLUTION
