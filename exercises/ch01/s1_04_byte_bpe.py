# Exercise s1_04_byte_bpe (§1.4): replace each `raise NotImplementedError` with your code.
"""§1.4 Byte-level BPE with GPT-2's merge ranks (figure 1.25).

GPT-2 runs BPE on the UTF-8 bytes of a text, so any string can be encoded: the 256 single
bytes hold ids 0-255 (in GPT-2's own order, not by byte value), and each of its 50,000 merges
added one more token. A token's id is its rank: lower ranks were learned earlier and are
merged first. With the special token <|endoftext|> (id 50256) that makes 50,257 tokens;
"Building" is token 25954.

Encoding has three steps: cut the text into pieces with GPT2_PATTERN (words with their leading
space, numbers, punctuation, whitespace), turn each piece into bytes, and merge each piece's
bytes by rank. Decoding joins the tokens' bytes and decodes them as UTF-8.

The ranks file (gpt2.tiktoken, fetched by setup.sh into .kata/assets/) has one token a line:
the token's bytes in base64, a space, and its rank. tiktoken itself is off limits here.
"""
import base64

import regex  # the `regex` package (installed with tiktoken): `re` does not know \p{L} and \p{N}

# GPT-2's pre-tokenization pattern: English contractions, letters with an optional leading
# space, digits with an optional leading space, other symbols with an optional leading space,
# and whitespace (a run of spaces gives its last space to the word that follows it).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
ENDOFTEXT = "<|endoftext|>"


def load_ranks(path: str) -> dict[bytes, int]:
    """Given: read a .tiktoken ranks file into {token bytes: rank}."""
    with open(path, "rb") as f:
        fields = f.read().split()  # token, rank, token, rank, ...: one token a line, in base64
    return {base64.b64decode(token): int(rank) for token, rank in zip(fields[0::2], fields[1::2])}


def bpe_merge(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """The token ids of one piece: start from its single bytes and, while some adjacent pair of parts
    joins into a known token, join the pair whose joined bytes have the lowest rank (the leftmost
    such pair on a tie). Returns the ranks of the final parts, left to right.

    b"Building" -> [25954] (one token); b"lowest" -> [9319, 395] (b"low", b"est").
    """
    raise NotImplementedError('s1_04_byte_bpe: single bytes first; repeatedly join the adjacent pair with the lowest rank (in bpe_merge)')


class GPT2Tokenizer:
    """GPT-2's byte-level BPE tokenizer built from a ranks table {token bytes: id}.

    The special token ENDOFTEXT gets the next free id, len(ranks): 50256 with GPT-2's table.
    """

    def __init__(self, ranks: dict[bytes, int]):
        self.ranks = ranks

    def vocab_size(self) -> int:
        """All token ids: the ranked tokens plus ENDOFTEXT (50,257 for GPT-2)."""
        raise NotImplementedError('s1_04_byte_bpe: the ranked tokens and the special token (in GPT2Tokenizer.vocab_size)')

    def num_merges(self) -> int:
        """How many merges built the table: the tokens longer than one byte (50,000 for GPT-2)."""
        raise NotImplementedError('s1_04_byte_bpe: count the tokens of two or more bytes (in GPT2Tokenizer.num_merges)')

    def merge_bytes(self, byte_values: list[int]) -> list[int]:
        """Given: bpe_merge on bytes(byte_values) with this table (used by the checks)."""
        return bpe_merge(bytes(byte_values), self.ranks)

    def encode(self, text: str) -> list[int]:
        """Token ids of `text`. Every ENDOFTEXT in the text becomes the special id len(self.ranks);
        the text between them is cut with GPT2_PATTERN, each piece UTF-8 encoded and merged.

        encode("Building") == [25954]; encode("<|endoftext|>") == [50256] with GPT-2's table.
        """
        raise NotImplementedError('s1_04_byte_bpe: split on ENDOFTEXT; pre-tokenize each part with regex.findall; bpe_merge each piece (in GPT2Tokenizer.encode)')

    def decode(self, ids: list[int]) -> str:
        """The text of token ids: join the tokens' bytes (ENDOFTEXT's text for the special id) and
        decode them as UTF-8 with errors="replace" (a token may hold part of a character).

        decode(encode(text)) == text for every string.
        """
        raise NotImplementedError('s1_04_byte_bpe: invert the table, join the bytes, decode as UTF-8 with errors="replace" (in GPT2Tokenizer.decode)')


def from_file(path: str) -> GPT2Tokenizer:
    """Given: a tokenizer with the ranks of a .tiktoken file, e.g. from_file(".kata/assets/gpt2.tiktoken")."""
    return GPT2Tokenizer(load_ranks(path))


def from_rows(rows: list[list]) -> GPT2Tokenizer:
    """Given: a tokenizer from [[token byte values], rank] rows, e.g. a small table made by the checks."""
    return GPT2Tokenizer({bytes(token): int(rank) for token, rank in rows})
