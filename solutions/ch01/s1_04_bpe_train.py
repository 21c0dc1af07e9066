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
    # BEGIN SOLUTION the characters of each word, then END_OF_WORD, joined by spaces
    return {" ".join([*word, END_OF_WORD]): count for word, count in word_counts.items()}
    # END SOLUTION


def count_pairs(table: dict[str, int]) -> dict[tuple[str, str], int]:
    """Step 3 of §1.4 (figure 1.23): the count of every adjacent symbol pair, weighted by word counts.

    {"o l d </w>": 7, "o l d e r </w>": 3} -> {("o", "l"): 10, ("l", "d"): 10, ("d", "</w>"): 7, ...}.
    A pair that occurs twice in one word counts twice.
    """
    # BEGIN SOLUTION split each entry into symbols; add the word's count for each adjacent pair
    pairs: Counter = Counter()
    for word, count in table.items():
        symbols = word.split(" ")
        for pair in zip(symbols, symbols[1:]):
            pairs[pair] += count
    return dict(pairs)
    # END SOLUTION


def pair_counts(table: dict[str, int]) -> list[tuple[str, str, int]]:
    """Given (not part of the exercise): count_pairs as (a, b, count) rows, which the grader can read."""
    return [(a, b, n) for (a, b), n in count_pairs(table).items()]


def most_frequent_pair(table: dict[str, int]) -> tuple[str, str] | None:
    """The pair with the highest count; ties go to the smallest pair (tuple order). None when no word
    has two symbols left."""
    # BEGIN SOLUTION the highest count first, then the smallest pair
    pairs = count_pairs(table)
    if not pairs:
        return None
    return min(pairs, key=lambda pair: (-pairs[pair], pair))
    # END SOLUTION


def merge_pair(table: dict[str, int], pair: tuple[str, str]) -> dict[str, int]:
    """A new table in which every adjacent occurrence of `pair` is fused into one symbol.

    Only whole symbols merge: merging ("e", "s") turns "f i n e s t </w>" into "f i n es t </w>",
    but leaves "f i ne s t </w>" alone (its symbols are "ne" and "s"). Counts are kept.
    """
    # BEGIN SOLUTION walk the symbols left to right, fusing each occurrence of the pair
    a, b = pair
    merged = {}
    for word, count in table.items():
        symbols = word.split(" ")
        out = []
        i = 0
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        key = " ".join(out)
        merged[key] = merged.get(key, 0) + count
    return merged
    # END SOLUTION


def train_bpe(word_counts: dict[str, int], num_merges: int) -> list[tuple[str, str]]:
    """Learn up to `num_merges` merges from word counts (§1.4, steps 1-4), in the order they are made.

    Each round merges most_frequent_pair; training stops early when every word is a single symbol.
    On the chapter's corpus the first two merges are ("e", "s") and ("es", "t").
    """
    # BEGIN SOLUTION build the table, then repeat: pick the best pair, record it, merge it
    table = word_table(word_counts)
    merges = []
    for _ in range(num_merges):
        pair = most_frequent_pair(table)
        if pair is None:
            break
        merges.append(pair)
        table = merge_pair(table, pair)
    return merges
    # END SOLUTION


def tokenize_word(word: str, merges: list[tuple[str, str]]) -> list[str]:
    """Split a word, seen in training or not, with learned merges: start from its characters and
    END_OF_WORD, then apply the merges in the order they were learned.

    With the chapter's first three merges, "newest" -> ["n", "e", "w", "est</w>"]: an unseen word
    falls back to smaller pieces and single characters.
    """
    # BEGIN SOLUTION start from the characters and the marker; apply each merge in order
    symbols = [*word, END_OF_WORD]
    for a, b in merges:
        out = []
        i = 0
        while i < len(symbols):
            if i + 1 < len(symbols) and symbols[i] == a and symbols[i + 1] == b:
                out.append(a + b)
                i += 2
            else:
                out.append(symbols[i])
                i += 1
        symbols = out
    return symbols
    # END SOLUTION
