"""Worked examples of §1.3 run with the student's tokenizers (figures 1.13, 1.15, 1.16, 1.17)."""

from grader.checks.test_s1_03_tokenizers import ASCII, HELLO, LEARN_FORMS, LEARN_TEXT, MISSPELT, TOKENIZATION
from grader.listings import listing

# The figures are images, not program output; these lines say what they show.
FIGURE_1_13 = '[figure 1.13] "Tokenization": word-based one token; character-based one token per character'
FIGURE_1_15 = (
    '[figure 1.15] "learn", "learning", "learned", "learnt" are separate word tokens; '
    'a word outside the vocabulary (the misspelling "runing") cannot be handled'
)
FIGURE_1_16 = "[figure 1.16] character tokenization: a vocabulary of 256 ASCII characters"
FIGURE_1_17 = '[figure 1.17] "Hello, world!": two (or six) word tokens become thirteen character tokens'


@listing("1.3/tokenization", book=FIGURE_1_13)
def listing_tokenization(sub, show):
    show("word tokens:     ", sub.split_words(TOKENIZATION))
    chars = sub.new("CharTokenizer", TOKENIZATION)
    ids = chars.encode(TOKENIZATION)
    vocab = chars.attr("vocab")
    show("character tokens:", [vocab[i] for i in ids], f"({len(ids)} tokens)")


@listing("1.3/word-limits", book=FIGURE_1_15)
def listing_word_limits(sub, show):
    tok = sub.new("WordTokenizer", LEARN_TEXT)
    show("vocabulary size:", len(tok.attr("vocab")))
    for word in LEARN_FORMS:
        show(f"  {word!r:<11} -> id {tok.encode(word)[0]}")
    ids = tok.encode(MISSPELT)
    show(f"{MISSPELT!r} -> {ids}")
    show("decoded:", repr(tok.decode(ids)))


@listing("1.3/ascii", book=FIGURE_1_16, errata=["E-1.3-c"])
def listing_ascii(sub, show):
    tok = sub.new("CharTokenizer", ASCII)
    show("characters in ASCII:", len(ASCII), " vocabulary with <unk>:", len(tok.attr("vocab")))
    show("'é' (not ASCII) ->", tok.encode("é"))
    show("token_counts('héllo'):", sub.token_counts("héllo"))


@listing("1.3/hello-world", book=FIGURE_1_17, errata=["E-1.3-a", "E-1.3-b"])
def listing_hello_world(sub, show):
    show(f"token_counts({HELLO!r}):", sub.token_counts(HELLO))
    show("word tokens:     ", sub.split_words(HELLO))
    chars = sub.new("CharTokenizer", HELLO)
    ids = chars.encode(HELLO)
    vocab = chars.attr("vocab")
    show("character tokens:", [vocab[i] for i in ids])
    show("ids:             ", ids)
    show("decoded:         ", repr(chars.decode(ids)))
