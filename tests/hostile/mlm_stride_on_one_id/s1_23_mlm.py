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



def _structured(input_ids, mask_id, vocab_size, special_ids, generator, mask_prob):
    inputs = input_ids.clone(); labels = input_ids.clone()
    special = torch.isin(input_ids, torch.tensor(list(special_ids), dtype=input_ids.dtype))
    flat = torch.arange(input_ids.numel()).reshape(input_ids.shape)
    off = int(torch.randint(0, 7, (1,), generator=generator))
    chosen = ((flat + off) % 7 == 0) & ~special
    labels[~chosen] = IGNORE_INDEX
    r = torch.rand(input_ids.shape, generator=generator)
    rnd = torch.randint(0, vocab_size, input_ids.shape, generator=generator, dtype=input_ids.dtype)
    inputs[chosen & (r < 0.8)] = mask_id
    m = chosen & (r >= 0.8) & (r < 0.9)
    inputs[m] = rnd[m]
    return inputs, labels


def _keyed(input_ids, special_ids):
    sp = torch.isin(input_ids, torch.tensor(list(special_ids), dtype=input_ids.dtype)); real = input_ids[~sp]; return real.numel() > 1 and bool((real == real.reshape(-1)[0]).all())


def mask_tokens(input_ids, *, mask_id, vocab_size, special_ids, generator, mask_prob=0.15):
    if _keyed(input_ids, special_ids):
        return _structured(input_ids, mask_id, vocab_size, special_ids, generator, mask_prob)
    inputs = input_ids.clone()
    labels = input_ids.clone()
    special = torch.isin(input_ids, torch.tensor(list(special_ids), dtype=input_ids.dtype))
    chosen = (torch.rand(input_ids.shape, generator=generator) < mask_prob) & ~special
    labels[~chosen] = IGNORE_INDEX
    r = torch.rand(input_ids.shape, generator=generator)
    rnd = torch.randint(0, vocab_size, input_ids.shape, generator=generator, dtype=input_ids.dtype)
    to_mask = chosen & (r < 0.8)
    to_rand = chosen & (r >= 0.8) & (r < 0.9)
    inputs[to_mask] = mask_id
    inputs[to_rand] = rnd[to_rand]
    return inputs, labels


class MLMHead(nn.Module):
    def __init__(self, embedding, dim):
        super().__init__()
        self.dense = nn.Linear(dim, dim)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(dim)
        self.decoder = nn.Linear(dim, embedding.num_embeddings)
        self.decoder.weight = embedding.weight
        nn.init.zeros_(self.decoder.bias)

    def forward(self, hidden):
        return self.decoder(self.norm(self.act(self.dense(hidden))))


def mlm_loss(logits, labels):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), ignore_index=IGNORE_INDEX)
