"""Checks of §1.4, learning BPE merges from word counts (the old/older/finest/lowest example)."""

import json
import random

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checking import CheckFailure, Msg, check, code, expect, expect_equal, fixtures, from_input
from grader.checking.compare import HIDDEN

EXERCISE = "s1_04_bpe_train"
EOW = "</w>"

# Figure 1.20: the chapter's word counts.
BOOK_CORPUS = {"old": 7, "older": 3, "finest": 9, "lowest": 4}
BOOK_TABLE = {"o l d </w>": 7, "o l d e r </w>": 3, "f i n e s t </w>": 9, "l o w e s t </w>": 4}
# Figure 1.23 and its text: "es" 13 (9 + 4), "st" 13, "ol" and "ld" 10 (7 + 3), "ne" and "in" 9.
BOOK_PAIR_COUNTS = {("e", "s"): 13, ("s", "t"): 13, ("o", "l"): 10, ("l", "d"): 10, ("n", "e"): 9, ("i", "n"): 9}
# The two merges of figures 1.23-1.24.
BOOK_AFTER_ES = {"o l d </w>": 7, "o l d e r </w>": 3, "f i n es t </w>": 9, "l o w es t </w>": 4}
BOOK_AFTER_EST = {"o l d </w>": 7, "o l d e r </w>": 3, "f i n est </w>": 9, "l o w est </w>": 4}
# Step 4: the vocabulary holds single characters, subwords and whole words.
BOOK_CHARS = ["o", "l", "d", "e", "r", "f", "i", "n", "w", "s", "t"]
BOOK_SUBWORDS = ["es", "est", "old", "low", "fin"]
BOOK_WORDS = ["old</w>", "finest</w>"]  # printed without the marker
BOOK_VOCAB_MERGES = 11  # the fewest merges whose vocabulary holds all of the above ("low" is merge 11)
UNSEEN = ["newest", "fold", "zest", "lower", "oldest", "finer", "e", "lowestlowest"]


# ---------------------------------------------------------------- fixtures: JSON kept in a uint8 tensor
def _pack(obj) -> torch.Tensor:
    return torch.tensor(list(json.dumps(obj).encode("utf-8")), dtype=torch.uint8)


def _unpack(tensor: torch.Tensor):
    return json.loads(bytes(tensor.tolist()).decode("utf-8"))


# Wrong answers students give, computed here (trusted) to name them in messages.
def _table(corpus):
    return {" ".join([*w, EOW]): n for w, n in corpus.items()}


def _counts(table, weighted=True):
    pairs = {}
    for word, n in table.items():
        s = word.split(" ")
        for p in zip(s, s[1:]):
            pairs[p] = pairs.get(p, 0) + (n if weighted else 1)
    return pairs


def _merge(table, pair):
    out = {}
    for word, n in table.items():
        s, i, r = word.split(" "), 0, []
        while i < len(s):
            if i + 1 < len(s) and (s[i], s[i + 1]) == tuple(pair):
                r.append(s[i] + s[i + 1])
                i += 2
            else:
                r.append(s[i])
                i += 1
        out[" ".join(r)] = n
    return out


def _train_variant(corpus, num_merges, tie="smallest", weighted=True):
    table, merges = _table(corpus), []
    for _ in range(num_merges):
        pairs = _counts(table, weighted)
        if not pairs:
            break
        if tie == "smallest":
            best = min(pairs, key=lambda p: (-pairs[p], p))
        elif tie == "corpus":
            best = max(pairs, key=pairs.get)
        else:  # "largest"
            best = max(pairs, key=lambda p: (pairs[p], p))
        merges.append(best)
        table = _merge(table, best)
    return merges


def _fresh_corpora():
    rng = random.Random(104)
    out = []
    for alphabet in ("abc", "abcd", "abcde", "lowest", "xyz"):
        words = {"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 6))) for _ in range(rng.randint(4, 9))}
        out.append({w: rng.randint(1, 4) for w in sorted(words)})
    return out


def make_fixtures(sol):
    book_merges = sol.train_bpe(BOOK_CORPUS, 100)
    fresh = []
    for corpus in _fresh_corpora():
        merges = sol.train_bpe(corpus, 30)
        fresh.append(
            {
                "corpus": corpus,
                "merges": merges,
                "corpus_order": _train_variant(corpus, 30, tie="corpus"),
                "largest": _train_variant(corpus, 30, tie="largest"),
                "unweighted": _train_variant(corpus, 30, weighted=False),
                "tokens": {w: sol.tokenize_word(w, merges[:8]) for w in [*corpus, "cab", "zz"]},
            }
        )
    data = {
        "book_table": sol.word_table(BOOK_CORPUS),
        "book_pairs": sol.pair_counts(sol.word_table(BOOK_CORPUS)),
        "book_merges": book_merges,
        "book_unseen": {w: sol.tokenize_word(w, book_merges[:BOOK_VOCAB_MERGES]) for w in UNSEEN},
        "fresh": fresh,
        "aaaa": sol.train_bpe({"aaaa": 1}, 10),
        # the plausible wrong answers on the book's corpus (they differ there), stored: the public check
        # names them without shipping a BPE trainer in the student bundle
        "book_mistakes": {
            "corpus_order": _train_variant(BOOK_CORPUS, 100, tie="corpus"),
            "largest": _train_variant(BOOK_CORPUS, 100, tie="largest"),
            "unweighted": _train_variant(BOOK_CORPUS, 100, weighted=False),
        },
    }
    return {"data": _pack(data)}


def fx():
    return _unpack(fixtures.load(EXERCISE)["data"])


# ---------------------------------------------------------------- helpers
def _merges_of(value, what):
    """The student's merges as a list of (a, b) tuples; anything else fails with a plain message."""
    if not isinstance(value, (list, tuple)) or not all(
        isinstance(p, (list, tuple)) and len(p) == 2 and all(isinstance(s, str) for s in p) for p in value
    ):
        raise CheckFailure(
            Msg(
                "{what} must be a list of (str, str) pairs, got {value_type}: {value_text}",
                "{what} 必须是 (str, str) 字符对的列表，实际为 {value_type}：{value_text}",
                what=what,
                value_type=from_input(type(value).__name__),
                value_text=from_input(str(value)[:200]),
            )
        )
    return [tuple(p) for p in value]


def _pair_of(value):
    return tuple(value) if isinstance(value, list) and len(value) == 2 else value


def _symbols(value):
    return list(value) if isinstance(value, tuple) else value


def _pairs(rows):
    return {(a, b): n for a, b, n in rows}


TIE_CORPUS = (
    "ties broken by corpus order (max over the dict): the smallest pair must win",
    "平局按语料顺序决定（对字典取 max）：应选最小的字符对",
)
TIE_LARGEST = (
    "ties broken in favour of the largest pair: the smallest pair must win",
    "平局时选了最大的字符对：应选最小的",
)
UNWEIGHTED = (
    "pairs counted once per word instead of weighted by the word's count",
    "字符对按单词计数一次，而没有按词频加权",
)


def _training_mistakes(stored: dict):
    """train_bpe's plausible wrong answers, as make_fixtures stored them (keys corpus_order,
    largest, unweighted)."""
    return [
        (_tuples(stored["corpus_order"]), *TIE_CORPUS),
        (_tuples(stored["largest"]), *TIE_LARGEST),
        (_tuples(stored["unweighted"]), *UNWEIGHTED),
    ]


def _same(actual, expected, what, mistakes=()):
    """actual == expected, else name a known mistake if actual matches one, else the usual message."""
    if actual == expected:
        return
    for value, en, zh in mistakes:
        if actual == value:
            hint = Msg.key("mistake", mistake=Msg(en, zh))
            if HIDDEN.get():
                raise CheckFailure(Msg.key("with_hint", message=Msg.key("hidden_failed", what=what), hint=hint))
            raise CheckFailure(
                Msg.key(
                    "with_hint",
                    message=Msg.key("not_equal", what=what, expected=repr(expected), actual=repr(actual)),
                    hint=hint,
                )
            )
    expect_equal(actual, expected, what)


def _tuples(merges):
    return [tuple(p) for p in merges]


# ---------------------------------------------------------------- the book's example
@check(
    points=1,
    listings=["1.4/end-of-word"],
    title="the book's corpus split into symbols with </w>",
    title_zh="书中语料拆成带 </w> 的符号",
)
def test_book_word_table(sub):
    out = sub.word_table(BOOK_CORPUS)
    expect(
        isinstance(out, dict),
        Msg(
            "word_table must return a dict, got {out_type}",
            "word_table 必须返回 dict，实际返回了 {out_type}",
            out_type=from_input(type(out).__name__),
        ),
    )
    _same(
        out,
        BOOK_TABLE,
        code("word_table({'old': 7, 'older': 3, 'finest': 9, 'lowest': 4})"),
        mistakes=[
            (
                {" ".join(w): n for w, n in BOOK_CORPUS.items()},
                "the end-of-word marker </w> is missing",
                "缺少词尾标记 </w>",
            ),
            (
                {" ".join(w) + EOW: n for w, n in BOOK_CORPUS.items()},
                "</w> glued to the last character: it must be a symbol of its own",
                "</w> 粘在了最后一个字符上：它必须是单独的符号",
            ),
            ({" ".join(w) + " </w>": 1 for w in BOOK_CORPUS}, "the word counts were dropped", "丢掉了词频"),
        ],
    )


@check(
    points=2,
    listings=["1.4/pair-counts"],
    title="pair counts of the book's corpus (figure 1.23)",
    title_zh="书中语料的字符对计数（图 1.23）",
)
def test_book_pair_counts(sub):
    rows = sub.pair_counts(BOOK_TABLE)
    expect(
        isinstance(rows, list),
        Msg(
            "pair_counts must return a list, got {rows_type}",
            "pair_counts 必须返回 list，实际返回了 {rows_type}",
            rows_type=from_input(type(rows).__name__),
        ),
    )
    got = _pairs(rows)
    expect(
        len(got) == len(rows),
        Msg(
            "count_pairs returned the same pair twice: keep one entry per pair",
            "count_pairs 把同一个字符对返回了两次：每个字符对只保留一项",
        ),
    )
    if got.get(("e", "s")) == 2:
        raise CheckFailure(
            Msg.key(
                "with_hint",
                message=Msg(
                    "the count of ('e', 's') is 2, but the book's is 13 = 9 (finest) + 4 (lowest)",
                    "('e', 's') 的计数是 2，而书中是 13 = 9（finest）+ 4（lowest）",
                ),
                hint=Msg.key(
                    "mistake",
                    mistake=Msg(
                        "counting words instead of weighting by word frequency", "只数了单词个数，没有按词频加权"
                    ),
                ),
            )
        )
    for pair, n in BOOK_PAIR_COUNTS.items():
        expect_equal(
            got.get(pair),
            n,
            Msg("count of the pair {pair} (figure 1.23)", "字符对 {pair} 的计数（图 1.23）", pair=pair),
        )
    expect_equal(
        got.get(("t", EOW)),
        13,
        Msg(
            "count of ('t', '</w>'): it ties with ('e', 's') and ('s', 't') at 13",
            "('t', '</w>') 的计数：它与 ('e', 's') 和 ('s', 't') 并列，都是 13",
        ),
    )
    expect_equal(
        got, _pairs(fx()["book_pairs"]), Msg("all pair counts of the book's corpus", "书中语料的所有字符对计数")
    )


@check(
    points=2,
    listings=["1.4/merges"],
    title="the first two merges: 'es', then 'est'",
    title_zh="前两次合并：先 'es'，再 'est'",
)
def test_book_first_two_merges(sub):
    _same(
        _pair_of(sub.most_frequent_pair(BOOK_TABLE)),
        ("e", "s"),
        Msg(
            "most_frequent_pair of the book's table ((e,s), (s,t) and (t,</w>) tie at 13: the smallest pair wins)",
            "书中词表的 most_frequent_pair（(e,s)、(s,t) 和 (t,</w>) 都是 13，并列时取最小的字符对）",
        ),
        mistakes=[
            (
                ("t", EOW),
                "the largest pair won the tie: ties go to the smallest pair",
                "平局时选了最大的字符对：应选最小的",
            )
        ],
    )
    after = sub.merge_pair(BOOK_TABLE, ("e", "s"))
    expect_equal(after, BOOK_AFTER_ES, Msg("merge_pair(book table, ('e', 's'))", "merge_pair（书中词表，('e', 's')）"))
    expect_equal(
        _pairs(sub.pair_counts(after)).get(("es", "t")),
        13,
        Msg("count of ('es', 't') after the first merge", "第一次合并后 ('es', 't') 的计数"),
    )
    _same(
        _pair_of(sub.most_frequent_pair(after)),
        ("es", "t"),
        Msg(
            "most_frequent_pair after the first merge ((es,t) and (t,</w>) tie at 13: the smallest pair wins)",
            "第一次合并后的 most_frequent_pair（(es,t) 和 (t,</w>) 都是 13，并列时取最小的字符对）",
        ),
    )
    expect_equal(sub.merge_pair(after, ("es", "t")), BOOK_AFTER_EST, code("merge_pair(..., ('es', 't'))"))
    merges = _merges_of(sub.train_bpe(BOOK_CORPUS, 2), Msg("train_bpe(book corpus, 2)", "train_bpe（书中语料，2）"))
    expect_equal(
        merges,
        [("e", "s"), ("es", "t")],
        Msg("the first two merges (the book: 'es', then 'est')", "前两次合并（书中：先 'es'，再 'est'）"),
    )


@check(points=1, listings=["1.4/vocabulary"], title="the book's final vocabulary", title_zh="书中最终的词表")
def test_book_vocabulary(sub):
    f = fx()
    merges = _merges_of(
        sub.train_bpe(BOOK_CORPUS, 100), Msg("train_bpe(book corpus, 100)", "train_bpe（书中语料，100）")
    )
    _same(
        merges,
        _tuples(f["book_merges"]),
        Msg(
            "all merges of the book's corpus (15, then no pair is left)",
            "书中语料的全部合并（15 次，之后没有字符对可合并）",
        ),
        mistakes=_training_mistakes(f["book_mistakes"]),
    )
    base = {symbol for word in sub.word_table(BOOK_CORPUS) for symbol in word.split(" ")}
    expect_equal(
        sorted(base - {EOW}),
        sorted(BOOK_CHARS),
        Msg("the single characters of the book's corpus (step 4)", "书中语料的单个字符（第 4 步）"),
    )
    vocab = base | {a + b for a, b in merges[:BOOK_VOCAB_MERGES]}
    for token in BOOK_SUBWORDS + BOOK_WORDS:
        expect(
            token in vocab,
            Msg(
                "after {BOOK_VOCAB_MERGES} merges the vocabulary must hold {token!r} (step 4)",
                "经过 {BOOK_VOCAB_MERGES} 次合并后，词表中必须有 {token!r}（第 4 步）",
                BOOK_VOCAB_MERGES=BOOK_VOCAB_MERGES,
                token=token,
            ),
        )
    expect(
        "low" not in base | {a + b for a, b in merges[: BOOK_VOCAB_MERGES - 1]},
        Msg(
            "'low' must be merge {BOOK_VOCAB_MERGES}, the last one step 4's list needs",
            "'low' 必须是第 {BOOK_VOCAB_MERGES} 次合并，也就是第 4 步的列表所需的最后一次",
            BOOK_VOCAB_MERGES=BOOK_VOCAB_MERGES,
        ),
    )
    for word, pieces in (
        ("lowest", ["low", "est</w>"]),
        ("finest", ["finest</w>"]),
        ("older", ["old", "e", "r", "</w>"]),
    ):
        expect_equal(
            _symbols(sub.tokenize_word(word, merges[:BOOK_VOCAB_MERGES])),
            pieces,
            Msg(
                "tokenize_word({word!r}) with the first {BOOK_VOCAB_MERGES} merges",
                "用前 {BOOK_VOCAB_MERGES} 条合并规则做 tokenize_word({word!r})",
                word=from_input(word),
                BOOK_VOCAB_MERGES=BOOK_VOCAB_MERGES,
            ),
        )


# ---------------------------------------------------------------- fresh inputs
@check(points=3, hidden=True, title="BPE training on other corpora", title_zh="在其他语料上训练 BPE")
def test_fresh_corpora(sub):
    n_merges = 30
    for i, case in enumerate(fx()["fresh"]):
        merges = _merges_of(
            sub.train_bpe(case["corpus"], n_merges),
            Msg(
                "train_bpe(corpus {number}, {n_merges})",
                "train_bpe（语料 {number}，{n_merges}）",
                number=from_input(i + 1),
                n_merges=from_input(n_merges),
            ),
        )
        _same(
            merges,
            _tuples(case["merges"]),
            Msg(
                "train_bpe on fresh corpus {number} (ties are frequent here)",
                "在新语料 {number} 上做 train_bpe（这里经常出现并列）",
                number=from_input(i + 1),
            ),
            mistakes=_training_mistakes(case),
        )


@check(points=1, title="merges fuse whole symbols only", title_zh="合并只作用于完整的符号")
def test_merge_whole_symbols_only(sub):
    table = {"f i ne s t </w>": 2, "e s": 1, "n e s e s </w>": 3, "e st </w>": 4, "s e e s": 5}
    expected = {"f i ne s t </w>": 2, "es": 1, "n es es </w>": 3, "e st </w>": 4, "s e es": 5}
    naive = {w.replace("e s", "es"): n for w, n in table.items()}
    _same(
        sub.merge_pair(table, ("e", "s")),
        expected,
        Msg(
            "merge_pair(..., ('e', 's')) on symbols such as 'ne' and 'st'",
            "对 'ne' 和 'st' 这类符号做 merge_pair(..., ('e', 's'))",
        ),
        mistakes=[
            (
                naive,
                "a plain text replace of 'e s': it also fuses 'ne s' and 'e st'; compare whole symbols",
                "直接对文本 'e s' 做替换：这也会错误地合并 'ne s' 和 'e st'；应比较完整的符号",
            )
        ],
    )
    expect_equal(
        sub.most_frequent_pair({"a": 5}),
        None,
        Msg(
            "most_frequent_pair of a table whose words are single symbols",
            "单词都是单个符号的词表的 most_frequent_pair",
        ),
    )
    merges = _merges_of(sub.train_bpe({"aaaa": 1}, 10), code("train_bpe({'aaaa': 1}, 10)"))
    expect_equal(
        merges,
        _tuples(fx()["aaaa"]),
        Msg(
            "train_bpe({'aaaa': 1}, 10): 'a a' pairs fuse left to right, and training stops when nothing is left",
            "train_bpe({'aaaa': 1}, 10)：'a a' 字符对从左到右合并，没有可合并的内容时训练停止",
        ),
    )


@check(
    points=1,
    hidden=True,
    title="tokenizing unseen words with learned merges",
    title_zh="用学到的合并规则对未见过的单词分词",
)
def test_tokenize_unseen_words(sub):
    f = fx()
    merges = _tuples(f["book_merges"][:BOOK_VOCAB_MERGES])
    for word, pieces in f["book_unseen"].items():
        expect_equal(
            _symbols(sub.tokenize_word(word, merges)),
            pieces,
            Msg(
                "tokenize_word({word!r}) with the book's first merges",
                "用书中的前几条合并规则做 tokenize_word({word!r})",
                word=from_input(word),
            ),
        )
    for i, case in enumerate(f["fresh"]):
        merges = _tuples(case["merges"][:8])
        for word, pieces in case["tokens"].items():
            expect_equal(
                _symbols(sub.tokenize_word(word, merges)),
                pieces,
                Msg(
                    "tokenize_word({word!r}) with corpus {number}'s merges",
                    "用语料 {number} 的合并规则做 tokenize_word({word!r})",
                    word=from_input(word),
                    number=from_input(i + 1),
                ),
            )


@check(points=2, hidden=True, title="BPE properties on random corpora", title_zh="随机语料上 BPE 的性质")
def test_invariants(sub):
    corpora = st.dictionaries(
        st.text(alphabet="abcdel", min_size=1, max_size=6), st.integers(1, 6), min_size=1, max_size=6
    )

    @settings(max_examples=20, derandomize=True, database=None, deadline=None)
    @given(corpora, st.randoms(use_true_random=False))
    def invariants(corpus, rnd):
        n = 12
        merges = _merges_of(
            sub.train_bpe(corpus, n), code("train_bpe({corpus}, {n})", corpus=from_input(corpus), n=from_input(n))
        )
        expect(
            len(merges) <= n,
            Msg(
                "train_bpe({corpus}, {n}) made more than {n} merges",
                "train_bpe({corpus}, {n}) 做了超过 {n} 次合并",
                corpus=from_input(corpus),
                n=from_input(n),
            ),
        )
        words = list(corpus.items())
        rnd.shuffle(words)
        again = _merges_of(sub.train_bpe(dict(words), n), code("train_bpe"))
        expect(
            again == merges,
            Msg(
                "train_bpe({counts}, {n}) differs from train_bpe({corpus}, {n}): the same counts "
                "listed in another order must give the same merges (ties go to the smallest pair)",
                "train_bpe({counts}, {n}) 与 train_bpe({corpus}, {n}) 不同：相同的计数换一种顺序列出，必须得到相同的合并（并列时取最小的字符对）",
                counts=from_input(dict(words)),
                corpus=from_input(corpus),
                n=from_input(n),
            ),
        )
        table = sub.word_table(corpus)
        pairs = _pairs(sub.pair_counts(table))
        expect(
            sum(pairs.values()) == sum(n * len(w) for w, n in corpus.items()),
            Msg(
                "pair counts of {corpus}: a word of k characters has k adjacent pairs (with </w>), each counted n times",
                "{corpus} 的字符对计数：k 个字符的单词（含 </w>）有 k 个相邻字符对，每个计 n 次",
                corpus=from_input(corpus),
            ),
        )
        if merges:
            a, b = merges[0]
            after = sub.merge_pair(table, merges[0])
            expect(
                sorted(w.replace(" ", "") for w in after) == sorted(w.replace(" ", "") for w in table)
                and sorted(after.values()) == sorted(table.values()),
                Msg(
                    "merge_pair({table}, {first}) must keep every word and its count",
                    "merge_pair({table}, {first}) 必须保留每个单词及其计数",
                    table=from_input(table),
                    first=from_input(merges[0]),
                ),
            )
            size = sum(n * len(w.split(" ")) for w, n in table.items())
            fused = size - sum(n * len(w.split(" ")) for w, n in after.items())
            ok = fused == pairs.get((a, b)) if a != b else 0 < fused <= pairs.get((a, b), 0)
            expect(
                ok,
                Msg(
                    "merge_pair({table}, {first}) must fuse every occurrence of the pair, left to right",
                    "merge_pair({table}, {first}) 必须从左到右合并该字符对的每一次出现",
                    table=from_input(table),
                    first=from_input(merges[0]),
                ),
            )
        full = _merges_of(sub.train_bpe(corpus, 1000), code("train_bpe"))
        for word in corpus:
            expect(
                _symbols(sub.tokenize_word(word, full)) == [word + EOW],
                Msg(
                    "with every merge of {corpus}, tokenize_word({word!r}) must be the single symbol {symbol!r}",
                    "使用 {corpus} 的全部合并规则后，tokenize_word({word!r}) 必须是单个符号 {symbol!r}",
                    corpus=from_input(corpus),
                    word=from_input(word),
                    symbol=from_input(word + EOW),
                ),
            )

    invariants()
