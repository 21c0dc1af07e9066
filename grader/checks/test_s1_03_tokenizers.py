"""Checks of §1.3, word-level and character-level tokenizers: vocabularies, the unknown token,
encode/decode and token counts ("Hello, world!" = 13 characters, figures 1.13-1.17)."""

import random
import re

import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from grader.checking import CheckFailure, Msg, check, code, expect, expect_equal, expect_tensor, fixtures, from_input
from grader.checking.compare import HIDDEN
from grader.worker.proxy import StudentError

EXERCISE = "s1_03_tokenizers"
UNK = "<unk>"
HELLO = "Hello, world!"
TOKENIZATION = "Tokenization"  # figure 1.13
# Figure 1.15: related forms of "learn" are unrelated word tokens; a misspelling is unknown.
# A text written for the kata (not from the book).
LEARN_TEXT = (
    "I learn something new every day. We are learning to code. She learned French last year. "
    "He learnt to swim. The dog is running in the park."
)
LEARN_FORMS = ["learn", "learning", "learned", "learnt"]
MISSPELT = "The dog is runing in the park."
ASCII = "".join(chr(i) for i in range(128))  # all 128 ASCII characters (figure 1.16 says 256)
NO_SPACE_BEFORE = ",.!?;:"


# Trusted reference of the definitions in the exercise's docstrings (for generated inputs).
def ref_split(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]", text)


def ref_word_vocab(text: str) -> list[str]:
    return [UNK] + sorted(set(ref_split(text)))


def ref_counts(text: str) -> dict:
    return {
        "characters": len(text),
        "bytes": len(text.encode("utf-8")),
        "whitespace_words": len(text.split()),
        "words": len(ref_split(text)),
    }


def make_fixtures(sol):
    hello_w, hello_c = sol.WordTokenizer(HELLO), sol.CharTokenizer(HELLO)
    learn = sol.WordTokenizer(LEARN_TEXT)
    ids = lambda xs: torch.tensor(xs, dtype=torch.int64)
    return {
        "hello_word_ids": ids(hello_w.encode(HELLO)),
        "hello_char_ids": ids(hello_c.encode(HELLO)),
        "learn_form_ids": ids([learn.encode(w)[0] for w in LEARN_FORMS]),
        "misspelt_ids": ids(learn.encode(MISSPELT)),
        "tokenization_char_ids": ids(sol.CharTokenizer(TOKENIZATION).encode(TOKENIZATION)),
    }


def fx():
    return fixtures.load(EXERCISE)


def _ids(values, what: Msg) -> torch.Tensor:
    expect(
        isinstance(values, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in values),
        Msg(
            "{what}: expected a list of ints, got {values_type}",
            "{what}：应返回整数列表，实际得到 {values_type}",
            what=what,
            values_type=from_input(type(values).__name__),
        ),
    )
    return torch.tensor(values, dtype=torch.int64)


def _encode(tok, text: str, what: Msg) -> torch.Tensor:
    try:
        ids = tok.encode(text)
    except StudentError as e:
        if e.type != "KeyError":
            raise
        ids = None  # raised outside the except block, so that the report shows this message
    if ids is None:
        raise CheckFailure(
            Msg(
                "{what} raised KeyError: a token that is not in the vocabulary must get id `0` ({UNK}), not raise",
                "{what} 抛出了 KeyError：不在词表中的词元必须得到 id `0`（{UNK}），而不是抛出异常",
                what=what,
                UNK=UNK,
            )
        )
    return _ids(ids, what)


def _vocab(tok, expected: list[str], what: Msg) -> None:
    vocab = tok.attr("vocab")
    expect(
        isinstance(vocab, list),
        Msg(
            "{what}.vocab must be a list of str, got {vocab_type}",
            "{what}.vocab 必须是 str 的列表，实际为 {vocab_type}",
            what=what,
            vocab_type=from_input(type(vocab).__name__),
        ),
    )
    if vocab == expected:
        return
    why = None
    if vocab and vocab[0] != UNK:
        why = Msg("the vocabulary must start with {UNK!r} (id `0`)", "词表必须以 {UNK!r} 开头（id `0`）", UNK=UNK)
    elif sorted(vocab) == sorted(expected):
        why = Msg(
            "the distinct tokens must be sorted (sorted(set(...)))", "互不相同的词元必须排好序（sorted(set(...))）"
        )
    elif [t.lower() for t in expected] != expected and all(t == t.lower() for t in vocab):
        why = Msg("keep upper and lower case as they are", "保持大小写不变")
    elif len(vocab) != len(set(vocab)):
        why = Msg("each distinct token must appear once", "每个不同的词元只能出现一次")
    hidden = HIDDEN.get()
    raise CheckFailure(
        Msg(
            "{what}.vocab is wrong{detail}{why}",
            "{what}.vocab 不对{detail}{why}",
            what=what,
            detail=code("")
            if hidden
            else Msg(
                ": expected {expected!r}, got {vocab!r}",
                "：应为 {expected!r}，实际为 {vocab!r}",
                expected=expected,
                vocab=vocab,
            ),
            why=Msg(". {why}.", "。{why}。", why=why) if why else code(""),
        )
    )


def _decode(tok, ids: list[int], expected: str, what: Msg, tokens: list[str] | None = None) -> None:
    """decode(ids) must give `expected`. For a word tokenizer, `tokens` (the tokens behind ids)
    lets a wrong way of joining them be named."""
    out = tok.decode(ids)
    if tokens is None:
        known = {
            " ".join(expected): Msg("join the characters with nothing between them", "字符之间不加任何东西直接拼接")
        }
    else:
        known = {
            " ".join(tokens): Msg("there must be no space before , . ! ? ; or :", ", . ! ? ; 或 : 之前不能有空格"),
            "".join(tokens): Msg("join the tokens with single spaces", "词元之间用一个空格连接"),
        }
    if isinstance(out, str) and out != expected and out in known:
        got = code("") if HIDDEN.get() else Msg(" (got {out!r})", "（实际为 {out!r}）", out=out)
        raise CheckFailure(Msg("{what}{got}: {why}", "{what}{got}：{why}", what=what, got=got, why=known[out]))
    expect_equal(out, expected, what=what)


# ------------------------------------------------------------------------- public checks
@check(
    points=2,
    listings=["1.3/hello-world"],
    title="figure 1.17: 'Hello, world!' as words, word tokens and character tokens",
    title_zh="图 1.17：'Hello, world!' 的词、单词词元和字符词元",
)
def test_hello_world(sub):
    counts = sub.token_counts(HELLO)
    expect(
        isinstance(counts, dict),
        Msg(
            "token_counts must return a dict, got {counts_type}",
            "token_counts 必须返回 dict，实际返回了 {counts_type}",
            counts_type=from_input(type(counts).__name__),
        ),
    )
    expect_equal(
        counts.get("characters"),
        13,
        what=Msg(
            "token_counts('Hello, world!')['characters'] (figure 1.17: 13)",
            "token_counts('Hello, world!')['characters']（图 1.17：13）",
        ),
    )
    expect_equal(
        counts.get("bytes"),
        13,
        what=Msg(
            "token_counts('Hello, world!')['bytes'] (ASCII: one byte per character)",
            "token_counts('Hello, world!')['bytes']（ASCII：每个字符一个字节）",
        ),
    )
    expect_equal(
        counts.get("whitespace_words"),
        2,
        what=Msg(
            "token_counts('Hello, world!')['whitespace_words'] (two words)",
            "token_counts('Hello, world!')['whitespace_words']（两个词）",
        ),
    )
    words = counts.get("words")
    expect(
        words != 2,
        Msg(
            "token_counts(...)['words']: split_words must split the punctuation off the words",
            "token_counts(...)['words']：split_words 必须把标点从单词上分开",
        ),
    )
    expect_equal(
        words,
        4,
        what=Msg(
            "token_counts('Hello, world!')['words'] (Hello , world !)",
            "token_counts('Hello, world!')['words']（应为 Hello , world !）",
        ),
    )
    expect_equal(sorted(counts), sorted(ref_counts(HELLO)), what=Msg("the keys of token_counts", "token_counts 的键"))
    f = fx()
    chars = sub.new("CharTokenizer", HELLO)
    _vocab(chars, [UNK] + sorted(set(HELLO)), code("CharTokenizer('Hello, world!')"))
    expect_tensor(
        _encode(chars, HELLO, code("CharTokenizer.encode('Hello, world!')")),
        f["hello_char_ids"],
        tol="exact",
        what=Msg("CharTokenizer.encode('Hello, world!'): 13 ids", "CharTokenizer.encode('Hello, world!')：13 个 id"),
    )
    _decode(
        chars,
        f["hello_char_ids"].tolist(),
        HELLO,
        Msg("CharTokenizer.decode(its ids of 'Hello, world!')", "CharTokenizer.decode（'Hello, world!' 的 id）"),
    )
    words_tok = sub.new("WordTokenizer", HELLO)
    _vocab(words_tok, ref_word_vocab(HELLO), code("WordTokenizer('Hello, world!')"))
    expect_tensor(
        _encode(words_tok, HELLO, code("WordTokenizer.encode('Hello, world!')")),
        f["hello_word_ids"],
        tol="exact",
        what=Msg("WordTokenizer.encode('Hello, world!'): 4 ids", "WordTokenizer.encode('Hello, world!')：4 个 id"),
    )
    _decode(
        words_tok,
        f["hello_word_ids"].tolist(),
        HELLO,
        Msg("WordTokenizer.decode(its ids of 'Hello, world!')", "WordTokenizer.decode（'Hello, world!' 的 id）"),
        tokens=ref_split(HELLO),
    )


@check(
    points=1,
    listings=["1.3/tokenization"],
    title="figure 1.13: 'Tokenization' as one word or 12 characters",
    title_zh="图 1.13：'Tokenization' 作为一个单词或 12 个字符",
)
def test_tokenization_figure(sub):
    expect_equal(
        sub.split_words(TOKENIZATION),
        [TOKENIZATION],
        what=Msg("split_words('Tokenization'): one word token", "split_words('Tokenization')：一个单词词元"),
    )
    chars = sub.new("CharTokenizer", TOKENIZATION)
    expect_tensor(
        _encode(chars, TOKENIZATION, code("CharTokenizer.encode('Tokenization')")),
        fx()["tokenization_char_ids"],
        tol="exact",
        what=Msg(
            "CharTokenizer('Tokenization').encode('Tokenization'): 12 character tokens",
            "CharTokenizer('Tokenization').encode('Tokenization')：12 个字符词元",
        ),
    )


@check(
    points=2,
    listings=["1.3/word-limits"],
    title="figure 1.15: related word forms and an unknown word",
    title_zh="图 1.15：相关的词形和一个未知词",
)
def test_word_limits(sub):
    f = fx()
    tok = sub.new("WordTokenizer", LEARN_TEXT)
    _vocab(tok, ref_word_vocab(LEARN_TEXT), code("WordTokenizer(LEARN_TEXT)"))
    forms = torch.stack([_encode(tok, w, code("WordTokenizer.encode({w!r})", w=from_input(w)))[0] for w in LEARN_FORMS])
    expect_tensor(
        forms,
        f["learn_form_ids"],
        tol="exact",
        what=Msg("ids of {LEARN_FORMS}", "{LEARN_FORMS} 的 id", LEARN_FORMS=from_input(LEARN_FORMS)),
    )
    expect(
        len(set(forms.tolist())) == 4 and 0 not in forms.tolist(),
        Msg(
            "learn, learning, learned and learnt must be four different known tokens",
            "learn、learning、learned 和 learnt 必须是四个不同的已知词元",
        ),
    )
    ids = _encode(tok, MISSPELT, code("WordTokenizer.encode({MISSPELT!r})", MISSPELT=from_input(MISSPELT)))
    expect_tensor(
        ids,
        f["misspelt_ids"],
        tol="exact",
        what=Msg(
            "WordTokenizer.encode({MISSPELT!r}): 'runing' is unknown (id 0)",
            "WordTokenizer.encode({MISSPELT!r})：'runing' 是未知词（id 0）",
            MISSPELT=from_input(MISSPELT),
        ),
    )
    _decode(
        tok,
        ids.tolist(),
        "The dog is <unk> in the park.",
        Msg("decode of the misspelt sentence", "拼写错误的句子的 decode 结果"),
        tokens=["The", "dog", "is", UNK, "in", "the", "park", "."],
    )


@check(
    points=1,
    listings=["1.3/ascii"],
    title="figure 1.16: a character vocabulary over ASCII",
    title_zh="图 1.16：基于 ASCII 的字符词表",
)
def test_ascii_vocabulary(sub):
    tok = sub.new("CharTokenizer", ASCII)
    vocab = tok.attr("vocab")
    expect(isinstance(vocab, list), Msg("CharTokenizer.vocab must be a list", "CharTokenizer.vocab 必须是列表"))
    expect_equal(
        len(vocab),
        129,
        what=Msg(
            "vocabulary size of a CharTokenizer over all ASCII characters "
            "(128 characters + <unk>; figure 1.16's 256 counts bytes, not ASCII)",
            "基于全部 ASCII 字符的 CharTokenizer 的词表大小（128 个字符 + <unk>；图 1.16 中的 256 数的是字节，不是 ASCII）",
        ),
    )
    expect_equal(
        _encode(tok, "é", code("CharTokenizer(ASCII).encode('é')")).tolist(),
        [0],
        what=Msg(
            "CharTokenizer(ASCII).encode('é'): é is not ASCII", "CharTokenizer(ASCII).encode('é')：é 不是 ASCII 字符"
        ),
    )
    counts = sub.token_counts("héllo")
    expect_equal(counts.get("characters"), 5, what=code("token_counts('héllo')['characters']"))
    expect(
        counts.get("bytes") != 5,
        Msg(
            "token_counts(...)['bytes'] counts bytes of the UTF-8 encoding: len(text.encode('utf-8')), and é takes two",
            "token_counts(...)['bytes'] 统计的是 UTF-8 编码的字节数：len(text.encode('utf-8'))，而 é 占两个字节",
        ),
    )
    expect_equal(counts.get("bytes"), 6, what=code("token_counts('héllo')['bytes']"))


# ------------------------------------------------------------------------- hidden checks
WORDS = ["the", "The", "cat", "sat", "on", "mat", "Mat", "a", "dog", "ran", "fast", "it_is", "2024", "über", "naïve"]


def _canonical_texts(seed: int, n: int) -> list[str]:
    """Texts on which decode(encode(t)) == t: words separated by single spaces, with , . ! ? ; :
    right after a word."""
    rng = random.Random(seed)
    texts = []
    for _ in range(n):
        parts = []
        for _ in range(rng.randint(1, 12)):
            parts.append(rng.choice(WORDS) + (rng.choice(NO_SPACE_BEFORE) if rng.random() < 0.3 else ""))
        texts.append(" ".join(parts))
    return texts


@check(points=2, hidden=True, title="the word tokenizer on other texts", title_zh="单词分词器处理其他文本")
def test_word_tokenizer_fresh(sub):
    texts = _canonical_texts(31, 8)
    train = " ".join(texts[:5])
    tok = sub.new("WordTokenizer", train)
    vocab = ref_word_vocab(train)
    _vocab(tok, vocab, Msg("WordTokenizer of another text", "另一段文本的 WordTokenizer"))
    stoi = {t: i for i, t in enumerate(vocab)}
    for text in texts:
        expected = [stoi.get(t, 0) for t in ref_split(text)]
        expect_equal(
            _encode(tok, text, code("WordTokenizer.encode")).tolist(),
            expected,
            what=Msg(
                "WordTokenizer.encode of a text with known and unknown words",
                "对含有已知词和未知词的文本做 WordTokenizer.encode",
            ),
        )
    for text in texts[:5]:
        _decode(
            tok,
            [stoi[t] for t in ref_split(text)],
            text,
            Msg(
                "WordTokenizer.decode(encode(text)) for a training text",
                "对训练文本做 WordTokenizer.decode(encode(text))",
            ),
            tokens=ref_split(text),
        )
    for text in ("a  b\tc\n d", "x+y=z", "(see: it's fine!)", ""):
        expect_equal(sub.split_words(text), ref_split(text), what=code("split_words({text!r})", text=from_input(text)))


@check(points=2, hidden=True, title="the character tokenizer on other texts", title_zh="字符分词器处理其他文本")
def test_char_tokenizer_fresh(sub):
    # every character UTF-8 can write: all but the surrogates (Cs). Said as codec="utf-8" too,
    # hypothesis tests each of the 1.1 million code points against the codec: a second per grading.
    alphabet = st.characters(exclude_categories=["Cs"])

    @settings(max_examples=20, derandomize=True, database=None, deadline=None, phases=[Phase.explicit, Phase.generate])
    @given(st.text(alphabet, min_size=1, max_size=40), st.text(alphabet, max_size=20))
    def round_trip(train, other):
        tok = sub.new("CharTokenizer", train)
        vocab = [UNK] + sorted(set(train))
        _vocab(tok, vocab, Msg("CharTokenizer of a generated text", "生成文本的 CharTokenizer"))
        stoi = {c: i for i, c in enumerate(vocab)}
        ids = _encode(
            tok, train, Msg("CharTokenizer.encode of its training text", "对其训练文本做 CharTokenizer.encode")
        ).tolist()
        expect_equal(
            ids,
            [stoi[c] for c in train],
            what=Msg("CharTokenizer.encode of its training text", "对其训练文本做 CharTokenizer.encode"),
        )
        _decode(tok, ids, train, code("CharTokenizer.decode(encode(text))"))
        expect_equal(
            _encode(tok, other, code("CharTokenizer.encode")).tolist(),
            [stoi.get(c, 0) for c in other],
            what=Msg(
                "CharTokenizer.encode of a text with unseen characters (they get id `0`)",
                "对含有未见过字符的文本做 CharTokenizer.encode（这些字符得到 id `0`）",
            ),
        )

    round_trip()


@check(points=1, hidden=True, title="token counts of other texts", title_zh="其他文本的词元计数")
def test_token_counts_fresh(sub):
    @settings(max_examples=20, derandomize=True, database=None, deadline=None, phases=[Phase.explicit, Phase.generate])
    @given(st.text(st.characters(exclude_categories=["Cs"]), max_size=60))  # all UTF-8 writes
    def counts(text):
        expect_equal(
            sub.token_counts(text),
            ref_counts(text),
            what=Msg("token_counts of a generated text", "生成文本的 token_counts"),
        )

    counts()
    for text in ("", "   ", "Hello,world!", "你好，世界！", " two  spaces "):
        expect_equal(
            sub.token_counts(text), ref_counts(text), what=code("token_counts({text!r})", text=from_input(text))
        )
