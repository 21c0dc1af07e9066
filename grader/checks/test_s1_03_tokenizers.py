"""Checks of §1.3, word-level and character-level tokenizers: vocabularies, the unknown token,
encode/decode and token counts ("Hello, world!" = 13 characters, figures 1.13-1.17)."""
import random
import re

import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from grader.checking import CheckFailure, check, expect, expect_equal, expect_tensor, fixtures
from grader.checking.compare import HIDDEN
from grader.worker.proxy import StudentError

EXERCISE = "s1_03_tokenizers"
UNK = "<unk>"
HELLO = "Hello, world!"
TOKENIZATION = "Tokenization"  # figure 1.13
# Figure 1.15: related forms of "learn" are unrelated word tokens; a misspelling is unknown.
# A text written for the kata (not from the book).
LEARN_TEXT = ("I learn something new every day. We are learning to code. She learned French last year. "
              "He learnt to swim. The dog is running in the park.")
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
    return {"characters": len(text), "bytes": len(text.encode("utf-8")),
            "whitespace_words": len(text.split()), "words": len(ref_split(text))}


def make_fixtures(sol):
    hello_w, hello_c = sol.WordTokenizer(HELLO), sol.CharTokenizer(HELLO)
    learn = sol.WordTokenizer(LEARN_TEXT)
    ids = lambda xs: torch.tensor(xs, dtype=torch.int64)
    return {"hello_word_ids": ids(hello_w.encode(HELLO)), "hello_char_ids": ids(hello_c.encode(HELLO)),
            "learn_form_ids": ids([learn.encode(w)[0] for w in LEARN_FORMS]),
            "misspelt_ids": ids(learn.encode(MISSPELT)),
            "tokenization_char_ids": ids(sol.CharTokenizer(TOKENIZATION).encode(TOKENIZATION))}


def fx():
    return fixtures.load(EXERCISE)


def _ids(values, what: str) -> torch.Tensor:
    expect(isinstance(values, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in values),
           f"{what}: expected a list of ints, got {type(values).__name__}")
    return torch.tensor(values, dtype=torch.int64)


def _encode(tok, text: str, what: str) -> torch.Tensor:
    try:
        ids = tok.encode(text)
    except StudentError as e:
        if e.type != "KeyError":
            raise
        ids = None  # raised outside the except block, so that the report shows this message
    if ids is None:
        raise CheckFailure(f"{what} raised KeyError: a token that is not in the vocabulary must get id 0 ({UNK}), not raise")
    return _ids(ids, what)


def _vocab(tok, expected: list[str], what: str) -> None:
    vocab = tok.attr("vocab")
    expect(isinstance(vocab, list), f"{what}.vocab must be a list of str, got {type(vocab).__name__}")
    if vocab == expected:
        return
    why = ""
    if vocab and vocab[0] != UNK:
        why = f"the vocabulary must start with {UNK!r} (id 0)"
    elif sorted(vocab) == sorted(expected):
        why = "the distinct tokens must be sorted (sorted(set(...)))"
    elif [t.lower() for t in expected] != expected and all(t == t.lower() for t in vocab):
        why = "keep upper and lower case as they are"
    elif len(vocab) != len(set(vocab)):
        why = "each distinct token must appear once"
    hidden = HIDDEN.get()
    raise CheckFailure(f"{what}.vocab is wrong" + ("" if hidden else f": expected {expected!r}, got {vocab!r}")
                         + (f". {why}." if why else ""))


def _decode(tok, ids: list[int], expected: str, what: str, tokens: list[str] | None = None) -> None:
    """decode(ids) must give `expected`. For a word tokenizer, `tokens` (the tokens behind ids)
    lets a wrong way of joining them be named."""
    out = tok.decode(ids)
    if tokens is None:
        known = {" ".join(expected): "join the characters with nothing between them"}
    else:
        known = {" ".join(tokens): "there must be no space before , . ! ? ; or :",
                 "".join(tokens): "join the tokens with single spaces"}
    if isinstance(out, str) and out != expected and out in known:
        got = "" if HIDDEN.get() else f" (got {out!r})"
        raise CheckFailure(f"{what}{got}: {known[out]}")
    expect_equal(out, expected, what=what)


# ------------------------------------------------------------------------- public checks
@check(points=2, listings=["1.3/hello-world"])
def test_hello_world(sub):
    counts = sub.token_counts(HELLO)
    expect(isinstance(counts, dict), f"token_counts must return a dict, got {type(counts).__name__}")
    expect_equal(counts.get("characters"), 13, what="token_counts('Hello, world!')['characters'] (figure 1.17: 13)")
    expect_equal(counts.get("bytes"), 13, what="token_counts('Hello, world!')['bytes'] (ASCII: one byte per character)")
    expect_equal(counts.get("whitespace_words"), 2, what="token_counts('Hello, world!')['whitespace_words'] (two words)")
    words = counts.get("words")
    expect(words != 2, "token_counts(...)['words']: split_words must split the punctuation off the words")
    expect_equal(words, 4, what="token_counts('Hello, world!')['words'] (Hello , world !)")
    expect_equal(sorted(counts), sorted(ref_counts(HELLO)), what="the keys of token_counts")
    f = fx()
    chars = sub.new("CharTokenizer", HELLO)
    _vocab(chars, [UNK] + sorted(set(HELLO)), "CharTokenizer('Hello, world!')")
    expect_tensor(_encode(chars, HELLO, "CharTokenizer.encode('Hello, world!')"), f["hello_char_ids"], tol="exact",
                  what="CharTokenizer.encode('Hello, world!'): 13 ids")
    _decode(chars, f["hello_char_ids"].tolist(), HELLO, "CharTokenizer.decode(its ids of 'Hello, world!')")
    words_tok = sub.new("WordTokenizer", HELLO)
    _vocab(words_tok, ref_word_vocab(HELLO), "WordTokenizer('Hello, world!')")
    expect_tensor(_encode(words_tok, HELLO, "WordTokenizer.encode('Hello, world!')"), f["hello_word_ids"], tol="exact",
                  what="WordTokenizer.encode('Hello, world!'): 4 ids")
    _decode(words_tok, f["hello_word_ids"].tolist(), HELLO, "WordTokenizer.decode(its ids of 'Hello, world!')",
            tokens=ref_split(HELLO))


@check(points=1, listings=["1.3/tokenization"])
def test_tokenization_figure(sub):
    expect_equal(sub.split_words(TOKENIZATION), [TOKENIZATION], what="split_words('Tokenization'): one word token")
    chars = sub.new("CharTokenizer", TOKENIZATION)
    expect_tensor(_encode(chars, TOKENIZATION, "CharTokenizer.encode('Tokenization')"), fx()["tokenization_char_ids"],
                  tol="exact", what="CharTokenizer('Tokenization').encode('Tokenization'): 12 character tokens")


@check(points=2, listings=["1.3/word-limits"])
def test_word_limits(sub):
    f = fx()
    tok = sub.new("WordTokenizer", LEARN_TEXT)
    _vocab(tok, ref_word_vocab(LEARN_TEXT), "WordTokenizer(LEARN_TEXT)")
    forms = torch.stack([_encode(tok, w, f"WordTokenizer.encode({w!r})")[0] for w in LEARN_FORMS])
    expect_tensor(forms, f["learn_form_ids"], tol="exact", what=f"ids of {LEARN_FORMS}")
    expect(len(set(forms.tolist())) == 4 and 0 not in forms.tolist(),
           "learn, learning, learned and learnt must be four different known tokens")
    ids = _encode(tok, MISSPELT, f"WordTokenizer.encode({MISSPELT!r})")
    expect_tensor(ids, f["misspelt_ids"], tol="exact", what=f"WordTokenizer.encode({MISSPELT!r}): 'runing' is unknown (id 0)")
    _decode(tok, ids.tolist(), "The dog is <unk> in the park.", "decode of the misspelt sentence",
            tokens=["The", "dog", "is", UNK, "in", "the", "park", "."])


@check(points=1, listings=["1.3/ascii"])
def test_ascii_vocabulary(sub):
    tok = sub.new("CharTokenizer", ASCII)
    vocab = tok.attr("vocab")
    expect(isinstance(vocab, list), "CharTokenizer.vocab must be a list")
    expect_equal(len(vocab), 129, what="vocabulary size of a CharTokenizer over all ASCII characters "
                                       "(128 characters + <unk>; figure 1.16's 256 counts bytes, not ASCII)")
    expect_equal(_encode(tok, "é", "CharTokenizer(ASCII).encode('é')").tolist(), [0],
                 what="CharTokenizer(ASCII).encode('é'): é is not ASCII")
    counts = sub.token_counts("héllo")
    expect_equal(counts.get("characters"), 5, what="token_counts('héllo')['characters']")
    expect(counts.get("bytes") != 5, "token_counts(...)['bytes'] counts bytes of the UTF-8 encoding: "
                                     "len(text.encode('utf-8')), and é takes two")
    expect_equal(counts.get("bytes"), 6, what="token_counts('héllo')['bytes']")


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


@check(points=2, hidden=True)
def test_word_tokenizer_fresh(sub):
    texts = _canonical_texts(31, 8)
    train = " ".join(texts[:5])
    tok = sub.new("WordTokenizer", train)
    vocab = ref_word_vocab(train)
    _vocab(tok, vocab, "WordTokenizer of another text")
    stoi = {t: i for i, t in enumerate(vocab)}
    for text in texts:
        expected = [stoi.get(t, 0) for t in ref_split(text)]
        expect_equal(_encode(tok, text, "WordTokenizer.encode").tolist(), expected,
                     what="WordTokenizer.encode of a text with known and unknown words")
    for text in texts[:5]:
        _decode(tok, [stoi[t] for t in ref_split(text)], text, "WordTokenizer.decode(encode(text)) for a training text",
                tokens=ref_split(text))
    for text in ("a  b\tc\n d", "x+y=z", "(see: it's fine!)", ""):
        expect_equal(sub.split_words(text), ref_split(text), what=f"split_words({text!r})")


@check(points=2, hidden=True)
def test_char_tokenizer_fresh(sub):
    alphabet = st.characters(codec="utf-8", exclude_categories=["Cs"])

    @settings(max_examples=20, derandomize=True, database=None, deadline=None, phases=[Phase.explicit, Phase.generate])
    @given(st.text(alphabet, min_size=1, max_size=40), st.text(alphabet, max_size=20))
    def round_trip(train, other):
        tok = sub.new("CharTokenizer", train)
        vocab = [UNK] + sorted(set(train))
        _vocab(tok, vocab, "CharTokenizer of a generated text")
        stoi = {c: i for i, c in enumerate(vocab)}
        ids = _encode(tok, train, "CharTokenizer.encode of its training text").tolist()
        expect_equal(ids, [stoi[c] for c in train], what="CharTokenizer.encode of its training text")
        _decode(tok, ids, train, "CharTokenizer.decode(encode(text))")
        expect_equal(_encode(tok, other, "CharTokenizer.encode").tolist(), [stoi.get(c, 0) for c in other],
                     what="CharTokenizer.encode of a text with unseen characters (they get id 0)")

    round_trip()


@check(points=1, hidden=True)
def test_token_counts_fresh(sub):
    @settings(max_examples=20, derandomize=True, database=None, deadline=None, phases=[Phase.explicit, Phase.generate])
    @given(st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=60))
    def counts(text):
        expect_equal(sub.token_counts(text), ref_counts(text), what="token_counts of a generated text")

    counts()
    for text in ("", "   ", "Hello,world!", "你好，世界！", " two  spaces "):
        expect_equal(sub.token_counts(text), ref_counts(text), what=f"token_counts({text!r})")
