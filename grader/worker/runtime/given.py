"""Given objects the checks build from the runtime's own code, not from the submission's file.

A helper marked "Given (not part of the exercise)" lives in the student's file, which the
student can rewrite; where a check judges the student's code through such an object (an
encoder that counts its calls), it asks the worker for this copy instead (op "given").
Nothing here is the answer of any exercise.
"""
from __future__ import annotations


class WordEncoder:
    """s1_23_dataset's given WordEncoder: lower-cased words stripped of .,!?;:"' become their index
    in `vocab` plus 4 (unknown words: unk_id), framed as [cls_id] ... [sep_id], cut to max_len ids.
    `calls` counts the texts it has encoded (read by the checks through the op "given_calls")."""

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


GIVEN = {"WordEncoder": WordEncoder}
