# Exercise s1_23_mlm (§1.23): replace each `raise NotImplementedError` with your code.
"""Beyond the book, after §1.23: BERT's masked-language-model pre-training.

The chapter trains its BERT for classification from random weights. The model that gave BERT
its name (Devlin et al., 2019) first learns from unlabelled text: some tokens of each sequence
are hidden and the model predicts them from the words on both sides. Fine-tuning for sentiment
then starts from an encoder that already knows how words go together.

The [MASK] token needs an id, and the book has none. Its vocabulary (listing 1.25) is GPT-2's
50,257 ids, then [PAD] = 50257, [CLS] = 50258 and [SEP] = 50259: VOCAB_SIZE = 50,260. The kata
puts [MASK] right after them, MASK_ID = 50260, and grows the token embedding by one row for
pre-training: MLM_VOCAB_SIZE = 50,261. This is a decision of the kata, not of the book
(ERRATA.md, K-1.23-a).

BERT's masking rule, drawn as Hugging Face's DataCollatorForLanguageModeling draws it:
1. each real token (not [PAD], [CLS] or [SEP]) is chosen on its own with probability
   mask_prob = 0.15: on average 15% of the real tokens; one sequence may get more, fewer or none;
2. each chosen token becomes [MASK] with probability 0.8, a random ordinary token (any of the ids
   0..vocab_size - 1, all equally likely) with probability 0.1, and stays as it is with 0.1;
3. the labels hold the original id at the chosen positions and -100 everywhere else, so that the
   loss (cross-entropy with ignore_index=-100) counts only the chosen positions.
The random and the unchanged tokens keep the model from learning that only [MASK] needs a
prediction: fine-tuning never shows it a [MASK].
"""
import torch
import torch.nn as nn
import torch.nn.functional as F

PAD_ID = 50257
CLS_ID = 50258
SEP_ID = 50259
VOCAB_SIZE = 50260  # listing 1.25
MASK_ID = 50260  # the kata's choice: the next free id
MLM_VOCAB_SIZE = 50261  # VOCAB_SIZE + 1: the token embedding's rows while pre-training
BASE_VOCAB_SIZE = 50257  # GPT-2's ordinary tokens: where random replacements come from
IGNORE_INDEX = -100  # the label of a position the loss skips (F.cross_entropy's default ignore_index)


def mask_tokens(input_ids: torch.Tensor, *, mask_id: int, vocab_size: int, special_ids, generator,
                mask_prob: float = 0.15) -> tuple[torch.Tensor, torch.Tensor]:
    """BERT's masking rule (see the module's docstring). Returns (inputs, labels).

    input_ids:   int64 token ids of any shape, usually (batch, seq_len); never changed (work on
                 a copy).
    mask_id:     the id of [MASK].
    vocab_size:  the number of ordinary tokens, ids 0..vocab_size - 1: random replacements are
                 drawn uniformly from them (BASE_VOCAB_SIZE, GPT-2's 50,257, so never a special id).
    special_ids: the ids that are never chosen: (PAD_ID, CLS_ID, SEP_ID).
    generator:   the torch.Generator every random draw uses (torch.rand(..., generator=generator),
                 torch.randint(..., generator=generator)): the same generator state gives the same
                 result, whatever else uses torch's global generator. None: the global generator.
    mask_prob:   the probability that a real token is chosen (a Bernoulli draw per token).

    inputs: input_ids with the chosen tokens replaced by the 80/10/10 rule; labels: the
    original id at the chosen positions, IGNORE_INDEX (-100) elsewhere. Both have input_ids'
    shape and dtype. Any order of drawing is right: the checks look at rates, not at the
    positions one seed picks.
    """
    raise NotImplementedError('s1_23_mlm: choose real tokens with probability mask_prob; labels: original id there, -100 elsewhere; 80% [MASK], 10% random ordinary id, 10% unchanged, on a copy (in mask_tokens)')


class MLMHead(nn.Module):
    """The masked-language-model head, its output layer tied to the token embedding.

    Sub-modules (names are part of the exercise; create them in this order):
      dense:   nn.Linear(dim, dim)
      act:     nn.GELU()
      norm:    nn.LayerNorm(dim)
      decoder: nn.Linear(dim, vocab_size) whose weight IS embedding.weight, the same
               nn.Parameter and not a copy (self.decoder.weight = embedding.weight), and whose
               bias starts at zeros; vocab_size = embedding.num_embeddings.
    Tying the weights: a token's input vector is also the vector its output logit is scored
    with, so the head adds only a bias per token instead of another (vocab_size, dim) matrix,
    and every gradient of the decoder's weight trains the embedding.

    forward(hidden): hidden (..., dim), the encoder's outputs. Returns logits (..., vocab_size):
      norm(act(dense(hidden))) @ embedding.weight.T + decoder.bias.
    """

    def __init__(self, embedding: nn.Embedding, dim: int):
        super().__init__()
        raise NotImplementedError("s1_23_mlm: create dense, act, norm, then decoder with the embedding's own weight and a zero bias (in MLMHead.__init__)")

    def forward(self, hidden: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError('s1_23_mlm: dense, GELU, LayerNorm, then the tied decoder (in MLMHead.forward)')


def mlm_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of (..., vocab_size) logits against (...) labels, averaged over the
    positions whose label is not IGNORE_INDEX (-100): the chosen tokens only. A scalar tensor.
    F.cross_entropy wants (N, vocab_size) and (N,): flatten both first."""
    raise NotImplementedError('s1_23_mlm: flatten to (N, vocab_size) and (N,), then cross-entropy that ignores -100 (in mlm_loss)')
