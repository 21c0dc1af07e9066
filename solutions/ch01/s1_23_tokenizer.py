"""§1.23 Set-up, and GPT-2's tokenizer with BERT's special tokens (listings 1.20–1.22, 1.24–1.26).

Listings 1.20–1.21 install and import what the capstone needs (torch and tiktoken here; the
data loading, progress bars and scikit-learn's report come in later steps); listing 1.22 picks
the device. Listing 1.24 takes GPT-2's byte-level BPE, 50,257 tokens. Listing 1.25 appends
three ids right after them for BERT's special tokens, [PAD], [CLS] and [SEP]: 50,260 ids in all.
Listing 1.26 turns a text into a fixed-length sequence:

    [CLS] t1 t2 ... tn [SEP] [PAD] ... [PAD]        (max_len ids; n <= max_len - 2)

A text longer than max_len - 2 tokens is cut. The book keeps its first tokens ("head"); a
review's verdict often sits at its end, so "head_tail" keeps the first head_len tokens and the
last max_len - 2 - head_len (Sun et al., 2019, kept the first 128 and the last 382 of BERT's 510).

Given (not part of the exercise): `load_gpt2`, `from_file` and `from_rows` build the base
tokenizer, a tiktoken Encoding, from GPT-2's ranks file (.kata/assets/gpt2.tiktoken, fetched by
setup.sh) or from a small table. Its `n_vocab`, `encode_ordinary(text)` and `decode(ids)` are
all you need. Text is always encoded as ordinary text: a review that contains "<|endoftext|>"
or "[CLS]" gets the ids of those characters, never a special id (tiktoken's `encode` would
raise a ValueError on "<|endoftext|>").
"""
import base64

import tiktoken
import torch

# GPT-2's pre-tokenization pattern (tiktoken's spelling of it) and its one special token.
GPT2_PATTERN = r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
ENDOFTEXT = "<|endoftext|>"
MAX_LEN = 256
TRUNCATIONS = ("head", "head_tail")


def choose_device() -> str:
    """Listing 1.22: "cuda" when torch sees a CUDA GPU, else "cpu" (torch.device(choose_device()))."""
    # BEGIN SOLUTION ask torch whether CUDA is available
    return "cuda" if torch.cuda.is_available() else "cpu"
    # END SOLUTION


def cuda_available() -> bool:
    """Given: whether torch sees a CUDA GPU here (the checks ask torch themselves)."""
    return torch.cuda.is_available()


class BertTokenizer:
    """GPT-2's BPE plus BERT's three special tokens (listings 1.24–1.26).

    Attributes set in __init__ (the checks read them):
      base_vocab_size  the base tokenizer's vocabulary size, base.n_vocab (50,257 for GPT-2)
      pad_id, cls_id, sep_id   the next three ids, in that order (50257, 50258, 50259 for GPT-2)
      vocab_size       all ids, base and special (50,260 for GPT-2)
      max_len, truncation, head_len   as given ("head" or "head_tail"; head_len defaults to
                       (max_len - 2) // 4, the share of the kept tokens taken from the start)
    """

    def __init__(self, base: tiktoken.Encoding, max_len: int = MAX_LEN, truncation: str = "head",
                 head_len: int | None = None):
        if not isinstance(max_len, int) or max_len < 2:
            raise ValueError(f"max_len must be an int >= 2 (room for [CLS] and [SEP]), not {max_len!r}")
        if truncation not in TRUNCATIONS:
            raise ValueError(f"truncation must be one of {TRUNCATIONS}, not {truncation!r}")
        if head_len is None:
            head_len = (max_len - 2) // 4
        if not isinstance(head_len, int) or not 0 <= head_len <= max_len - 2:
            raise ValueError(f"head_len must be an int between 0 and max_len - 2 = {max_len - 2}, not {head_len!r}")
        self.base = base
        self.max_len = max_len
        self.truncation = truncation
        self.head_len = head_len
        # BEGIN SOLUTION base_vocab_size from the base tokenizer; pad_id, cls_id, sep_id right after it; vocab_size
        self.base_vocab_size = base.n_vocab
        self.pad_id = self.base_vocab_size
        self.cls_id = self.base_vocab_size + 1
        self.sep_id = self.base_vocab_size + 2
        self.vocab_size = self.base_vocab_size + 3
        # END SOLUTION

    def text_ids(self, text: str) -> list[int]:
        """The base tokenizer's ids of `text`, every character as ordinary text (no special ids)."""
        # BEGIN SOLUTION encode as ordinary text
        return self.base.encode_ordinary(text)
        # END SOLUTION

    def truncate(self, ids: list[int]) -> list[int]:
        """At most max_len - 2 ids: unchanged when they fit; else "head" keeps the first max_len - 2,
        "head_tail" the first head_len followed by the last max_len - 2 - head_len."""
        # BEGIN SOLUTION keep everything that fits; else the head, or the head and the tail
        budget = self.max_len - 2
        if len(ids) <= budget:
            return list(ids)
        if self.truncation == "head":
            return list(ids[:budget])
        tail = budget - self.head_len
        return list(ids[:self.head_len]) + list(ids[len(ids) - tail:])
        # END SOLUTION

    def encode(self, text: str, pad: bool = True) -> list[int]:
        """Listing 1.26: [cls_id] + the truncated text ids + [sep_id], then pad_id up to max_len.
        With pad=False no padding is added (the length is then between 2 and max_len).

        An empty text gives [cls_id, sep_id] and max_len - 2 pads.
        """
        # BEGIN SOLUTION frame the truncated ids with [CLS] and [SEP], then pad to max_len
        ids = [self.cls_id] + self.truncate(self.text_ids(text)) + [self.sep_id]
        if pad:
            ids += [self.pad_id] * (self.max_len - len(ids))
        return ids
        # END SOLUTION

    def decode(self, ids: list[int]) -> str:
        """The text of `ids` with the three special ids left out: decode(encode(t)) == t when t fits."""
        # BEGIN SOLUTION drop pad, cls and sep ids; the base tokenizer decodes the rest
        special = {self.pad_id, self.cls_id, self.sep_id}
        return self.base.decode([i for i in ids if i not in special])
        # END SOLUTION


def load_ranks(path: str) -> dict[bytes, int]:
    """Given: a .tiktoken ranks file (one token a line: its bytes in base64, a space, its rank)."""
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    return ranks


def load_gpt2(ranks: dict[bytes, int], name: str = "gpt2") -> tiktoken.Encoding:
    """Given: tiktoken's Encoding for a ranks table, with GPT-2's pattern and <|endoftext|> as the
    next id, len(ranks). With GPT-2's table this is tiktoken.get_encoding("gpt2"), built offline."""
    return tiktoken.Encoding(name, pat_str=GPT2_PATTERN, mergeable_ranks=ranks,
                             special_tokens={ENDOFTEXT: len(ranks)})


def from_file(path: str, **settings) -> BertTokenizer:
    """Given: BertTokenizer(load_gpt2(load_ranks(path)), **settings), e.g. from_file(".kata/assets/gpt2.tiktoken")."""
    return BertTokenizer(load_gpt2(load_ranks(path)), **settings)


def from_rows(rows: list[list], **settings) -> BertTokenizer:
    """Given: a BertTokenizer on a small table of [[token byte values], rank] rows (made by the checks)."""
    ranks = {bytes(token): int(rank) for token, rank in rows}
    return BertTokenizer(load_gpt2(ranks, name="small"), **settings)
