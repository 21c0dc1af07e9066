# Exercise s1_01_next_token (§1.1): replace each `raise NotImplementedError` with your code.
"""§1.1 Next-token prediction with a tiny local language model.

A language model maps the tokens seen so far to one score (logit) per vocabulary entry for the
token that comes next. Softmax turns the logits into a probability table; the top-k rows of that
table are the most likely continuations (figure 1.4). Generation repeats one step: predict,
append the chosen token, predict again (figure 1.2). Greedy decoding always appends the most
likely token; sampling draws from softmax(logits / temperature), where a temperature below 1
sharpens the distribution, above 1 flattens it, and 0 means greedy.

The book asks a hosted model; here the model is a count-based bigram model built from a small
corpus, so everything runs offline. A "model" is any callable `model(ids) -> logits`, where ids
is the list of token ids so far and logits is a float tensor of shape (vocab_size,).
"""
import torch


class BigramModel:
    """Count-based bigram model over a whitespace-separated corpus (§1.1).

    BigramModel(text, alpha) builds, from the lower-cased words of `text` (text.lower().split()):
      vocab:  list of the distinct words, sorted; the id of a word is its index in vocab.
      stoi:   dict word -> id.
      counts: int64 tensor (V, V); counts[a, b] = how often word b directly follows word a
              in the corpus (rows: previous word, columns: next word).
    model(ids) returns the logits of the word after ids[-1]: log(counts[ids[-1]] + alpha),
    float32, shape (V,). alpha > 0 ("add-alpha smoothing") gives every word some probability.
    """

    def __init__(self, text: str, alpha: float = 0.01):
        self.alpha = alpha
        raise NotImplementedError('s1_01_next_token: build vocab (sorted distinct words), stoi and the (V, V) int64 counts of adjacent pairs (in BigramModel.__init__)')

    def encode(self, text: str) -> list[int]:
        return [self.stoi[w] for w in text.lower().split()]

    def decode(self, ids: list[int]) -> str:
        return " ".join(self.vocab[i] for i in ids)

    def __call__(self, ids: list[int]) -> torch.Tensor:
        """Logits (V,) float32 of the next word given the ids so far: log(counts[ids[-1]] + alpha)."""
        raise NotImplementedError('s1_01_next_token: look up the row of the last id and take log(count + alpha) as float32 (in BigramModel.__call__)')


class LogitsTable:
    """Given (not part of the exercise): a next-token function from a fixed (V, V) table of
    logits, row = the previous token. Used to try the decoding loops on any distribution."""

    def __init__(self, table: torch.Tensor):
        self.table = torch.as_tensor(table, dtype=torch.float32)

    def __call__(self, ids: list[int]) -> torch.Tensor:
        return self.table[ids[-1]]


def probability_table(logits: torch.Tensor, temperature: float = 1.0) -> torch.Tensor:
    """softmax(logits / temperature) over the last dimension (§1.1, figure 1.4).

    logits: (..., V) float; temperature > 0. Returns probabilities of the same shape and dtype,
    each row summing to 1.
    """
    raise NotImplementedError('s1_01_next_token: divide by the temperature, then softmax over the last dimension (in probability_table)')


def top_k(logits: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k most likely next tokens (§1.1, figure 1.4: the top 10 with their probabilities).

    logits: (V,). Returns (probs, ids): probs (k,) the probabilities softmax(logits) of those
    tokens, from the largest down; ids (k,) int64 their token ids. Tokens of equal probability
    may come in any order.
    """
    raise NotImplementedError('s1_01_next_token: softmax the logits, sort from the largest probability down, keep the first k (in top_k)')


def greedy_generate(model, ids: list[int], n_new: int) -> list[int]:
    """Greedy autoregressive generation (§1.1, figure 1.2).

    n_new times: call model(all ids so far), append the id of the largest logit (the first one
    on a tie, as torch.argmax does). Returns the prompt ids followed by the n_new new ids, as a
    list of ints.
    """
    raise NotImplementedError('s1_01_next_token: loop n_new times: argmax of model(ids), append it to a copy of the ids (in greedy_generate)')


def sample_next(logits: torch.Tensor, temperature: float = 1.0, num_samples: int = 1,
                generator: torch.Generator | None = None) -> torch.Tensor:
    """Draw num_samples independent next-token ids from softmax(logits / temperature) (§1.1).

    logits: (V,). temperature 0 means greedy: every sample is argmax(logits). A negative
    temperature raises ValueError. Random numbers come from `generator` (torch's global
    generator when None). Returns an int64 tensor of shape (num_samples,).
    """
    raise NotImplementedError('s1_01_next_token: temperature 0: repeat the argmax; otherwise torch.multinomial(probabilities, num_samples, replacement=True, generator=generator) (in sample_next)')


def sample_generate(model, ids: list[int], n_new: int, temperature: float = 1.0,
                    seed: int | None = None) -> list[int]:
    """Autoregressive generation by sampling (§1.1): like greedy_generate, but each new id is
    drawn with sample_next at the given temperature.

    With a seed, all random numbers come from one torch.Generator seeded with it, so the same
    seed always gives the same tokens, whatever else used torch's global generator. Returns the
    prompt ids followed by the n_new new ids, as a list of ints.
    """
    raise NotImplementedError('s1_01_next_token: make one generator from the seed (or None), then loop like greedy_generate with sample_next (in sample_generate)')
