"""The reference of the s1_23_tokenizer exercise (listings 1.24–1.26), for its checks only.

Trusted helper, not a check module: the expected ids of the tokenizer checks come from here.
It is the exercise's solution written out, so `kata release` does not ship it: the bundle's
public checks answer their calls to it from values recorded on the reference solutions
(grader/checking/replay.py), and `kata train` tokenizes with the exercise's own file
(grader/capstone/training/tokenizer.py).
"""

from __future__ import annotations

from typing import Sequence

from grader.capstone import gpt2

MAX_LEN = 256
TRUNCATIONS = ("head", "head_tail")


class BertTokenizer:
    """GPT-2's BPE (a tiktoken Encoding) with BERT's special tokens after its vocabulary:
    pad_id = n_vocab, cls_id = n_vocab + 1, sep_id = n_vocab + 2, vocab_size = n_vocab + 3
    (50257, 50258, 50259 and 50,260 for GPT-2). The reference of the s1_23_tokenizer exercise.

    encode(text) = [CLS] + ids + [SEP], then [PAD] up to max_len (pad=False: no padding). Text is
    encoded as ordinary text: strings such as "<|endoftext|>" or "[CLS]" never become special ids.
    Truncation keeps max_len - 2 text tokens: "head" the first ones (the book); "head_tail" the
    first head_len and the last max_len - 2 - head_len (head_len defaults to a quarter of the budget).
    """

    def __init__(self, base, max_len: int = MAX_LEN, truncation: str = "head", head_len: int | None = None):
        if not isinstance(max_len, int) or max_len < 2:
            raise ValueError(f"max_len must be an int >= 2 (room for [CLS] and [SEP]), not {max_len!r}")
        if truncation not in TRUNCATIONS:
            raise ValueError(f"truncation must be one of {TRUNCATIONS}, not {truncation!r}")
        budget = max_len - 2
        if head_len is None:
            head_len = budget // 4
        if not isinstance(head_len, int) or not 0 <= head_len <= budget:
            raise ValueError(f"head_len must be an int between 0 and max_len - 2 = {budget}, not {head_len!r}")
        self.base = base
        self.max_len, self.truncation, self.head_len = max_len, truncation, head_len
        self.base_vocab_size = base.n_vocab
        self.pad_id = self.base_vocab_size
        self.cls_id = self.base_vocab_size + 1
        self.sep_id = self.base_vocab_size + 2
        self.vocab_size = self.base_vocab_size + 3

    def truncate(self, ids: Sequence[int]) -> list[int]:
        budget = self.max_len - 2
        ids = list(ids)
        if len(ids) <= budget:
            return ids
        if self.truncation == "head":
            return ids[:budget]
        tail = budget - self.head_len
        return ids[: self.head_len] + (ids[len(ids) - tail :] if tail else [])

    def frame(self, ids: Sequence[int], pad: bool = True) -> list[int]:
        out = [self.cls_id] + self.truncate(ids) + [self.sep_id]
        return out + [self.pad_id] * (self.max_len - len(out)) if pad else out

    def encode(self, text: str, pad: bool = True) -> list[int]:
        return self.frame(self.base.encode_ordinary(text), pad)

    def decode(self, ids: Sequence[int]) -> str:
        special = {self.pad_id, self.cls_id, self.sep_id}
        return self.base.decode([i for i in ids if i not in special])


def gpt2_tokenizer(max_len: int = MAX_LEN, truncation: str = "head", head_len: int | None = None) -> BertTokenizer:
    """BertTokenizer on tiktoken's GPT-2 encoding (the hub's, or offline the same ranks: grader.capstone.gpt2)."""
    return BertTokenizer(gpt2.encoding(), max_len, truncation, head_len)
