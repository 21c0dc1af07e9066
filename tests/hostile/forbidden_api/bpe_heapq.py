import base64
import heapq

import regex

GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
ENDOFTEXT = "<|endoftext|>"


def load_ranks(path: str) -> dict[bytes, int]:
    """Given: read a .tiktoken ranks file into {token bytes: rank}."""
    ranks = {}
    with open(path, "rb") as f:
        for line in f:
            if line.strip():
                token, rank = line.split()
                ranks[base64.b64decode(token)] = int(rank)
    return ranks


def bpe_merge(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    parts = [bytes([b]) for b in piece]
    while len(parts) > 1:
        cands = [(ranks[parts[i] + parts[i + 1]], i) for i in range(len(parts) - 1) if parts[i] + parts[i + 1] in ranks]
        if not cands:
            break
        best, best_i = heapq.nsmallest(1, cands)[0]
        parts = parts[:best_i] + [parts[best_i] + parts[best_i + 1]] + parts[best_i + 2:]
    return [ranks[p] for p in parts]
    while False:
        best = None
        best_i = -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best is None or r < best):
                best, best_i = r, i
        if best is None:
            break
        parts = parts[:best_i] + [parts[best_i] + parts[best_i + 1]] + parts[best_i + 2:]
    return [ranks[p] for p in parts]


class GPT2Tokenizer:
    def __init__(self, ranks: dict[bytes, int]):
        self.ranks = ranks
        self._inv = None

    def vocab_size(self) -> int:
        return len(self.ranks) + 1

    def num_merges(self) -> int:
        return sum(1 for t in self.ranks if len(t) > 1)

    def merge_bytes(self, byte_values: list[int]) -> list[int]:
        return bpe_merge(bytes(byte_values), self.ranks)

    def encode(self, text: str) -> list[int]:
        out = []
        chunks = text.split(ENDOFTEXT)
        for k, chunk in enumerate(chunks):
            if k:
                out.append(len(self.ranks))
            for piece in regex.findall(GPT2_PATTERN, chunk):
                out.extend(bpe_merge(piece.encode("utf-8"), self.ranks))
        return out

    def decode(self, ids: list[int]) -> str:
        if self._inv is None:
            self._inv = {v: k for k, v in self.ranks.items()}
        special = len(self.ranks)
        data = b"".join(ENDOFTEXT.encode("utf-8") if i == special else self._inv[i] for i in ids)
        return data.decode("utf-8", errors="replace")


def from_file(path: str) -> GPT2Tokenizer:
    return GPT2Tokenizer(load_ranks(path))


def from_rows(rows: list[list]) -> GPT2Tokenizer:
    return GPT2Tokenizer({bytes(token): int(rank) for token, rank in rows})
