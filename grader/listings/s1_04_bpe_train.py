"""§1.4 worked examples of BPE training, run with the student's code (`kata run 1.4/merges`)."""

from grader.listings import figure, listing
from grader.course.messages import t
from grader.listings.plots import FigureError, Table, label

CORPUS = {"old": 7, "older": 3, "finest": 9, "lowest": 4}  # figure 1.20


@listing(
    "1.4/end-of-word",
    book="""old -> [o, l, d, </w>]
older -> [o, l, d, e, r, </w>]
finest -> [f, i, n, e, s, t, </w>]
lowest -> [l, o, w, e, s, t, </w>]""",
    errata=["E-1.4-a", "E-1.4-b"],
)
def end_of_word(sub, show):
    for symbols, count in sub.word_table(CORPUS).items():
        show(f"[{', '.join(symbols.split(' '))}] x{count}")


@listing(
    "1.4/pair-counts",
    book="""es: 13 (9 in finest + 4 in lowest), st: 13
ol: 10, ld: 10 (7 in old + 3 in older)
ne: 9, in: 9 (finest)""",
    errata=["E-1.4-c", "E-1.4-d", "E-1.4-e", "E-1.4-f"],
)
def pair_counts(sub, show):
    rows = sorted(sub.pair_counts(sub.word_table(CORPUS)), key=lambda r: (-r[2], r[0], r[1]))
    for a, b, n in rows:
        show(f"({a}, {b}): {n}")


@listing(
    "1.4/merges",
    book="""merge 1: es (13)
finest -> [f, i, n, es, t, </w>], lowest -> [l, o, w, es, t, </w>]
merge 2: est
finest -> [f, i, n, est, </w>], lowest -> [l, o, w, est, </w>]""",
    errata=["E-1.4-g", "E-1.4-h", "E-1.4-i"],
)
def merges(sub, show):
    table = sub.word_table(CORPUS)
    for step in (1, 2):
        pair = sub.most_frequent_pair(table)
        count = {(a, b): n for a, b, n in sub.pair_counts(table)}[tuple(pair)]
        table = sub.merge_pair(table, pair)
        show(f"merge {step}: {pair[0]} + {pair[1]} -> {pair[0] + pair[1]} ({count})")
        show("  " + ", ".join(f"[{', '.join(w.split(' '))}]" for w in table))


@listing(
    "1.4/vocabulary",
    book="""characters: [o, l, d, e, r, f, i, n, w, s, t]
subwords: [es, est, old, low, fin]
whole words: [old, finest]""",
    errata=["E-1.4-j", "E-1.4-k"],
)
def vocabulary(sub, show):
    learned = sub.train_bpe(CORPUS, 11)
    show("characters:", sorted({c for w in CORPUS for c in w}) + ["</w>"])
    for i, (a, b) in enumerate(learned, 1):
        show(f"merge {i:2d}: {a} + {b} -> {a + b}")
    for word in CORPUS:
        show(f"{word} -> {sub.tokenize_word(word, learned)}")


@figure("1.4/merges", "1.4/vocabulary")
def merge_table(sub):
    """The merges of figure 1.20's corpus, step by step, with each pair's count and the words after it."""
    table = sub.word_table(CORPUS)
    rows = []
    for step in range(1, 12):  # the 11 merges of listing 1.4/vocabulary
        pair = sub.most_frequent_pair(table)
        if pair is None:
            break
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
            raise FigureError(t("plot_bpe_pair", got=repr(pair)[:80]))
        a, b = pair
        count = {(x, y): n for x, y, n in sub.pair_counts(table)}.get((a, b), "?")
        table = sub.merge_pair(table, (a, b))
        rows.append(
            [str(step), f"{a} + {b}", a + b, str(count), "  ".join(f"[{', '.join(str(w).split(' '))}]" for w in table)]
        )
    columns = [
        label("plot_bpe_step"),
        label("plot_bpe_pair_col"),
        label("plot_bpe_symbol"),
        label("plot_bpe_count"),
        label("plot_bpe_words"),
    ]
    return [Table("bpe-merges", label("plot_bpe_title"), columns, rows)]
