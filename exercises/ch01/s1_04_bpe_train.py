# Exercise s1_04_bpe_train (§1.4): replace each `raise NotImplementedError` with your code.
"""§1.4 Byte pair encoding: learning merges from word counts.

BPE starts from single characters and repeatedly fuses the most frequent adjacent pair into
a new symbol. A word-frequency table keeps the corpus small: each word is stored once as its
symbols separated by spaces, ending with the end-of-word marker, together with its count,
e.g. {"o l d </w>": 7, "f i n e s t </w>": 9}. A pair's count is the sum of the counts of the
words it occurs in, once per occurrence.

Tie-break (the chapter names none): when several pairs share the highest count, the smallest
pair in Python's tuple order wins, e.g. ("e", "s") < ("s", "t") < ("t", "</w>"); strings compare
by code point, so "</w>" sorts before letters. The result then depends only on the counts, not
on the order in which the words are listed.
"""
from collections import Counter

END_OF_WORD = "</w>"


def word_table(word_counts: dict[str, int]) -> dict[str, int]:
    """Steps 1-2 of §1.4 (figures 1.21-1.22): mark the end of each word and split it into characters.

    {"old": 7} -> {"o l d </w>": 7}. Symbols are separated by single spaces; counts are kept.
    """
    raise NotImplementedError('s1_04_bpe_train: the characters of each word, then END_OF_WORD, joined by spaces (in word_table)')


def count_pairs(table: dict[str, int]) -> dict[tuple[str, str], int]:
    """Step 3 of §1.4 (figure 1.23): the count of every adjacent symbol pair, weighted by word counts.

    {"o l d </w>": 7, "o l d e r </w>": 3} -> {("o", "l"): 10, ("l", "d"): 10, ("d", "</w>"): 7, ...}.
    A pair that occurs twice in one word counts twice.
    """
    raise NotImplementedError("s1_04_bpe_train: split each entry into symbols; add the word's count for each adjacent pair (in count_pairs)")


def pair_counts(table: dict[str, int]) -> list[tuple[str, str, int]]:
    """Given (not part of the exercise): count_pairs as (a, b, count) rows, which the grader can read."""
    return [(a, b, n) for (a, b), n in count_pairs(table).items()]


def most_frequent_pair(table: dict[str, int]) -> tuple[str, str] | None:
    """The pair with the highest count; ties go to the smallest pair (tuple order). None when no word
    has two symbols left."""
    raise NotImplementedError('s1_04_bpe_train: the highest count first, then the smallest pair (in most_frequent_pair)')


def merge_pair(table: dict[str, int], pair: tuple[str, str]) -> dict[str, int]:
    """A new table in which every adjacent occurrence of `pair` is fused into one symbol.

    Only whole symbols merge: merging ("e", "s") turns "f i n e s t </w>" into "f i n es t </w>",
    but leaves "f i ne s t </w>" alone (its symbols are "ne" and "s"). Counts are kept.
    """
    raise NotImplementedError('s1_04_bpe_train: walk the symbols left to right, fusing each occurrence of the pair (in merge_pair)')


def train_bpe(word_counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """Learn up to `num_merges` merges from word counts (§1.4, steps 1-4), in the order they are made.

    Each round merges most_frequent_pair; training stops early when every word is a single symbol.
    On the chapter's corpus the first two merges are ("e", "s") and ("es", "t").
    """
    raise NotImplementedError('s1_04_bpe_train: build the table, then repeat: pick the best pair, record it, merge it (in train_bpe)')


def tokenize_word(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """Split a word, seen in training or not, with learned merges: start from its characters and
    END_OF_WORD, then apply the merges in the order they were learned.

    With the chapter's first three merges, "newest" -> ["n", "e", "w", "est</w>"]: an unseen word
    falls back to smaller pieces and single characters.
    """
    raise NotImplementedError('s1_04_bpe_train: start from the characters and the marker; apply each merge in order (in tokenize_word)')
