"""§1.4 BPE training graded for real: plausible wrong answers lose points with a message that names
the mistake; a correct answer written differently scores full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_04_bpe_train"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()


def _replace(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _graded(submission, source):
    r = grade(submission({EX: source}), "-e", EX)
    return r, {c["name"]: c for c in checks_of(r, EX)}


def test_corpus_order_tie_break_loses_the_fresh_corpus_points(submission):
    # The most natural code: max() over the counts keeps the first pair seen on a tie. It still gives
    # "es" then "est" on the book's corpus, but not the stated rule (smallest pair wins).
    wrong = _replace(
        "    return min(pairs, key=lambda pair: (-pairs[pair], pair))", "    return max(pairs, key=pairs.get)"
    )
    r, by = _graded(submission, wrong)
    assert by["test_book_first_two_merges"]["status"] == "passed"
    fresh = by["test_fresh_corpora"]
    assert fresh["status"] == "failed" and "ties broken by corpus order" in fresh["message"], fresh
    assert by["test_invariants"]["status"] == "failed"
    assert "listed in another order must give the same merges" in by["test_invariants"]["message"]
    assert score_of(r, EX) < 13


def test_unweighted_pair_counts_are_named(submission):
    wrong = _replace("            pairs[pair] += count", "            pairs[pair] += 1")
    r, by = _graded(submission, wrong)
    counts = by["test_book_pair_counts"]
    assert counts["status"] == "failed" and "weighting by word frequency" in counts["message"], counts
    assert "13 = 9 (finest) + 4 (lowest)" in counts["message"]
    assert score_of(r, EX) <= 13 - 2 - 3


def test_text_replace_merge_and_glued_marker_are_named(submission):
    # Two slips in one file (each shows in its own check): the end-of-word marker glued to the last
    # character, and merging with str.replace on the spaced string, which is right on the book's
    # first merges but fuses parts of symbols such as "ne" or "st".
    body = SOURCE[SOURCE.index("    # BEGIN SOLUTION walk the symbols") : SOURCE.index("def train_bpe")]
    wrong = SOURCE.replace(
        body, "    a, b = pair\n    return {w.replace(f'{a} {b}', a + b): n for w, n in table.items()}\n\n\n"
    )
    old = '    return {" ".join([*word, END_OF_WORD]): count for word, count in word_counts.items()}'
    assert old in wrong
    wrong = wrong.replace(
        old, '    return {" ".join(word) + END_OF_WORD: count for word, count in word_counts.items()}'
    )
    r, by = _graded(submission, wrong)
    check = by["test_book_word_table"]
    assert check["status"] == "failed" and "</w> glued to the last character" in check["message"], check
    check = by["test_merge_whole_symbols_only"]
    assert check["status"] == "failed" and "plain text replace" in check["message"], check
    assert check["visibility"] == "public"  # issue 28: named in kata check, before the grade counts it
    assert score_of(r, EX) < 13


def test_correct_but_different_implementation_scores_full_marks(submission):
    # Sennrich et al.'s style: a regex with look-arounds to merge whole symbols, defaultdict counts,
    # the tie-break written as a sort, and tokenize_word through the same merge function.
    variant = '''"""A different, correct §1.4 BPE trainer."""
import re
from collections import defaultdict

END_OF_WORD = "</w>"


def word_table(word_counts):
    table = {}
    for word in word_counts:
        table[" ".join(list(word) + ["</w>"])] = word_counts[word]
    return table


def count_pairs(table):
    pairs = defaultdict(int)
    for word, freq in table.items():
        symbols = word.split()
        for i in range(len(symbols) - 1):
            pairs[symbols[i], symbols[i + 1]] += freq
    return pairs


def pair_counts(table):
    return [(a, b, n) for (a, b), n in count_pairs(table).items()]


def most_frequent_pair(table):
    pairs = count_pairs(table)
    ranked = sorted(pairs.items(), key=lambda kv: (-kv[1], kv[0]))
    return ranked[0][0] if ranked else None


def merge_pair(table, pair):
    bigram = re.escape(" ".join(pair))
    pattern = re.compile(r"(?<!\\S)" + bigram + r"(?!\\S)")
    return {pattern.sub("".join(pair), word): freq for word, freq in table.items()}


def train_bpe(word_counts, num_merges):
    table, merges = word_table(word_counts), []
    while len(merges) < num_merges:
        best = most_frequent_pair(table)
        if best is None:
            break
        merges.append(tuple(best))
        table = merge_pair(table, best)
    return merges


def tokenize_word(word, merges):
    entry = {" ".join(list(word) + ["</w>"]): 1}
    for pair in merges:
        entry = merge_pair(entry, pair)
    return next(iter(entry)).split()
'''
    r, by = _graded(submission, variant)
    assert score_of(r, EX) == 13, [c for c in by.values() if c["status"] != "passed"]
