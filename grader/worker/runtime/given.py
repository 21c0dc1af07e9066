"""Given objects the checks build from the runtime's own code, not from the submission's file.

A helper marked "Given (not part of the exercise)" lives in the student's file, which the
student can rewrite; where a check judges the student's code through such an object (an
encoder that counts its calls, a next-token table, whether there is a GPU), it asks the worker
for this copy instead (op "given").
Nothing here is the answer of any exercise.
"""
from __future__ import annotations

import torch


class WordEncoder:
    """s1_23_dataset's given WordEncoder: lower-cased words stripped of .,!?;:"' become their index
    in `vocab` plus 4 (unknown words: unk_id), framed as [cls_id] ... [sep_id], cut to max_len ids.
    `calls` counts the texts it has encoded."""

    def __init__(self, vocab: list[str], max_len: int = 32, pad_id: int = 0, cls_id: int = 1, sep_id: int = 2,
                 unk_id: int = 3):
        self.index = {word: i + 4 for i, word in enumerate(vocab)}
        self.max_len, self.pad_id, self.cls_id, self.sep_id, self.unk_id = max_len, pad_id, cls_id, sep_id, unk_id
        self.calls = 0

    def __call__(self, text: str) -> list[int]:
        self.calls += 1
        words = [w.strip(".,!?;:\"'") for w in text.lower().split()]
        ids = [self.index.get(w, self.unk_id) for w in words if w][:self.max_len - 2]
        return [self.cls_id] + ids + [self.sep_id]


class LogitsTable:
    """s1_01_next_token's given LogitsTable: logits of the next token from a fixed (V, V) table, row = the
    previous token."""

    def __init__(self, table):
        self.table = torch.as_tensor(table, dtype=torch.float32)

    def __call__(self, ids: list[int]) -> torch.Tensor:
        return self.table[ids[-1]]


def cuda_available() -> bool:
    """s1_23_tokenizer's given cuda_available: whether torch sees a CUDA GPU in the worker."""
    return bool(torch.cuda.is_available())


GIVEN = {"WordEncoder": WordEncoder, "LogitsTable": LogitsTable, "cuda_available": cuda_available}
