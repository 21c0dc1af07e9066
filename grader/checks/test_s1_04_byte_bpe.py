"""Checks of §1.4, GPT-2's byte-level BPE (figure 1.25: 50,257 tokens, "Building" -> 25954).

Expected ids come from tiktoken, here in the trusted process (grader.capstone.gpt2.encoding(): "gpt2",
or offline "r50k_base", the same ranks). The student's tokenizer, in the sandbox, reads the
same ranks from gpt2.tiktoken in the worker's assets folder (`sub.assets`).
"""

import functools
import json
import random

import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from grader.capstone import gpt2
from grader.checking import (
    CheckFailure,
    Mistake,
    Msg,
    check,
    code,
    expect,
    expect_equal,
    expect_tensor,
    fixtures,
    from_input,
)
from grader.course.messages import t
from grader.worker.proxy import StudentError

EXERCISE = "s1_04_byte_bpe"
ENDOFTEXT = "<|endoftext|>"
# GPT-2's pre-tokenization pattern, as the stub gives it (tiktoken's r50k pattern is equivalent).
GPT2_PATTERN = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""

# Varied text: punctuation, digits, whitespace runs, contractions, accents, CJK, emoji, the special token.
TEXTS = [
    "Hello, world!",
    "Building",
    "The next day is bright.",
    "I'll say it's what they're doing; we've done, you'd... 'S'",
    "Rock'n'roll isn't Bob's; 'tis the '90s.'s end",  # ".'s": whole-text BPE would merge across pieces
    "quotes: \"it's\" (she'll) 'they've'",
    "1234567890 3.14159 and 1,000,000 (2024-05-17)",
    "   three leading spaces, two trailing  ",
    "tabs\tand\nnew lines\n\n\nand   runs    of     spaces",
    "café naïve résumé Ærøskøbing Straße",
    "你好，世界！Transformer 模型 注意力机制",
    "emoji 🎉🔥 thumbs 👍🏽 family 👨\u200d👩\u200d👧",
    "a<|endoftext|>b <|endoftext|> c<|endoftext|>",
    "Ωμέγα кириллица עברית العربية हिन्दी",
    '!!!???...---***===>>> <a href="x">#hash @at $5 %20</a>',
    "\u00a0no-break\u2003em space\u3000ideographic\r\nCRLF",
]
# Single pre-tokenization pieces: merging them by rank is all encode does.
PIECES = [
    " Building",
    "lowest",
    " finest",
    " transformers",
    " internationalization",
    "1234567",
    " 你好",
    "ééé",
    " !!!???",
    "                ",
    " antidisestablishmentarianism",
    "🎉",
]


def make_fixtures(sol):
    # tiktoken's ids of TEXTS when the fixtures were made. Checks compare with tiktoken live; the
    # fixture catches a reference that changed since (another tiktoken or ranks file).
    enc = gpt2.encoding()
    ids = [_expected(enc, text) for text in TEXTS]
    return {
        "texts": torch.tensor(list(json.dumps(TEXTS).encode("utf-8")), dtype=torch.uint8),
        "ids": torch.tensor([i for row in ids for i in row], dtype=torch.int64),
        "lengths": torch.tensor([len(row) for row in ids], dtype=torch.int64),
    }


def _fixture_ids() -> dict[str, list[int]]:
    f = fixtures.load(EXERCISE)
    texts = json.loads(bytes(f["texts"].tolist()).decode("utf-8"))
    rows = torch.split(f["ids"], f["lengths"].tolist())
    return {text: row.tolist() for text, row in zip(texts, rows)}


# ---------------------------------------------------------------- the asset and tiktoken
def _asset_folder(sub) -> str:
    """The worker's path of the folder holding gpt2.tiktoken; skips the check when there is none."""
    if not gpt2.have_asset():
        pytest.skip(t("asset_unavailable", name=gpt2.ASSET_NAME))  # `kata check`: a grading stops before
    try:
        folder = object.__getattribute__(sub, "assets")  # not sub.assets: that would name a remote function
    except AttributeError:
        folder = None
    if not isinstance(folder, str) or not folder:
        pytest.skip(t("no_assets"))
    return folder


@functools.lru_cache(maxsize=1)
def _enc():
    try:
        return gpt2.encoding()
    except gpt2.AssetMissing as e:
        pytest.skip(str(e))


def _tokenizer(sub):
    folder = _asset_folder(sub)
    enc = _enc()
    return sub.from_file(f"{folder}/{gpt2.ASSET_NAME}"), enc


def _expected(enc, text):
    return enc.encode(text, allowed_special="all")


@functools.lru_cache(maxsize=1)
def _ranks():
    from tiktoken.load import load_tiktoken_bpe

    return load_tiktoken_bpe(str(gpt2.asset_path()))


# ---------------------------------------------------------------- wrong answers, to name them
def _greedy_merge(piece: bytes, ranks) -> list[int]:
    """Wrong: join the leftmost joinable pair each time, whatever its rank."""
    parts = [bytes([b]) for b in piece]
    merged = True
    while merged:
        merged = False
        for i in range(len(parts) - 1):
            if parts[i] + parts[i + 1] in ranks:
                parts[i : i + 2] = [parts[i] + parts[i + 1]]
                merged = True
                break
    return [ranks[p] for p in parts]


def _wrong_answers(text: str, enc) -> list[tuple[list[int], str, str]]:
    import regex

    ranks = _ranks()

    def per_part(encode_part):  # the special token handled right, the rest by `encode_part`
        ids = []
        for n, part in enumerate(text.split(ENDOFTEXT)):
            ids += [enc.eot_token] if n else []
            ids += encode_part(part)
        return ids

    def pieces(part, merge):
        return [i for p in regex.findall(GPT2_PATTERN, part) for i in merge(p.encode("utf-8"), ranks)]

    return [
        (
            per_part(lambda part: _merge_all(part.encode("utf-8"), ranks)),
            "BPE ran on the whole text: cut it into pieces with `GPT2_PATTERN` first",
            "在整段文本上做了 BPE：应先用 `GPT2_PATTERN` 切分",
        ),
        (
            per_part(lambda part: pieces(part, _greedy_merge)),
            "merging the leftmost joinable pair instead of the pair with the lowest rank",
            "合并了最左边可合并的字节对，而不是秩最低的字节对",
        ),
        (
            per_part(lambda part: [i for word in part.split() for i in pieces(word, _merge_all)]),
            "text.split() dropped the spaces: GPT-2 keeps a word's leading space in its piece",
            "text.split() 丢掉了空格：GPT-2 把单词前面的空格保留在切片里",
        ),
        (
            enc.encode_ordinary(text),
            "<|endoftext|> was encoded as plain text: it is one special token, id len(ranks)",
            "<|endoftext|> 被当作普通文本编码：它是一个特殊词元，id 为 len(ranks)",
        ),
        (
            list(text.encode("utf-8")),
            "raw byte values are not token ids, and no merges were made",
            "原始字节值不是词元 id，而且没有进行合并",
        ),
        (
            [ranks[bytes([b])] for b in text.encode("utf-8")],
            "no merges were made: only single-byte tokens",
            "没有进行合并：只有单字节词元",
        ),
    ]


def _merge_all(piece: bytes, ranks) -> list[int]:
    parts = [bytes([b]) for b in piece]
    while len(parts) > 1:
        cands = [(ranks[parts[i] + parts[i + 1]], i) for i in range(len(parts) - 1) if parts[i] + parts[i + 1] in ranks]
        if not cands:
            break
        _, i = min(cands)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]
    return [ranks[p] for p in parts]


def _ids(value, what) -> torch.Tensor:
    if not isinstance(value, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise CheckFailure(
            Msg(
                "{what} must be a list of int token ids, got {value_type}: {value_text}",
                "{what} 必须是整数词元 id 的列表，实际为 {value_type}：{value_text}",
                what=what,
                value_type=from_input(type(value).__name__),
                value_text=from_input(str(value)[:200]),
            )
        )
    return torch.tensor(list(value), dtype=torch.int64)


def expect_ids(actual, expected, what, mistakes=()):
    """Token ids compared exactly; a known wrong answer is named. `mistakes` may be a function
    (called only on a failure, as computing wrong answers takes time)."""
    ids = _ids(actual, what)
    if ids.tolist() == list(expected):
        return
    mistakes = mistakes() if callable(mistakes) else mistakes
    expect_tensor(
        ids,
        torch.tensor(expected, dtype=torch.int64),
        tol="exact",
        what=what,
        mistakes=[Mistake(torch.tensor(v, dtype=torch.int64), en, zh) for v, en, zh in mistakes],
    )


# ---------------------------------------------------------------- the book's numbers
@check(
    points=1,
    listings=["1.4/gpt2"],
    title="GPT-2's vocabulary: 50,257 tokens and 50,000 merges",
    title_zh="GPT-2 的词表：50,257 个词元和 50,000 条合并规则",
)
def test_book_vocabulary_size(sub):
    tok, enc = _tokenizer(sub)
    expect_equal(
        enc.n_vocab,
        50257,
        Msg(
            "tiktoken's GPT-2 vocabulary size (the grader's own reference)",
            "tiktoken 的 GPT-2 词表大小（评分器自己的参照）",
        ),
    )
    expect_equal(
        tok.vocab_size(),
        50257,
        Msg(
            "vocab_size() of GPT-2's table: 50,256 ranked tokens and <|endoftext|>",
            "GPT-2 表的 vocab_size()：50,256 个有排名的词元加上 <|endoftext|>",
        ),
    )
    expect_equal(
        tok.num_merges(),
        50000,
        Msg(
            "num_merges() of GPT-2's table: the tokens longer than one byte",
            "GPT-2 表的 num_merges()：长度超过一个字节的词元",
        ),
    )


@check(
    points=2,
    listings=["1.4/gpt2"],
    title="'Building' = 25954 and <|endoftext|> = 50256",
    title_zh="'Building' 的 id 为 25954，<|endoftext|> 的 id 为 50256",
)
def test_book_building_and_endoftext(sub):
    tok, enc = _tokenizer(sub)
    expect_equal(
        _expected(enc, "Building"),
        [25954],
        Msg(
            "tiktoken's ids of 'Building' (the grader's own reference)",
            "tiktoken 给出的 'Building' 的 id（评分器自己的参照）",
        ),
    )
    expect_ids(
        tok.encode("Building"), [25954], code("encode('Building')"), mistakes=lambda: _wrong_answers("Building", enc)
    )
    expect_ids(
        tok.encode(ENDOFTEXT),
        [50256],
        code("encode('<|endoftext|>')"),
        mistakes=[
            (
                enc.encode_ordinary(ENDOFTEXT),
                "<|endoftext|> was encoded as plain text: it is one special token, id len(ranks) = 50256",
                "<|endoftext|> 被当作普通文本编码：它是一个特殊词元，id 为 len(ranks) = 50256",
            )
        ],
    )
    expect_equal(tok.decode([25954]), "Building", code("decode([25954])"))
    expect_equal(tok.decode([50256]), ENDOFTEXT, code("decode([50256])"))


# ---------------------------------------------------------------- varied text
@check(points=3, title="encoding varied texts like tiktoken", title_zh="像 tiktoken 一样编码各种文本")
def test_varied_text_matches_tiktoken(sub):
    tok, enc = _tokenizer(sub)
    stored = _fixture_ids()
    for text in TEXTS:
        expected = _expected(enc, text)
        assert stored.get(text) == expected, (
            f"the grader's reference ids of {text!r} changed since the fixtures "
            f"were made ({gpt2.SOURCE}): run `kata fixtures`"
        )
        expect_ids(
            tok.encode(text),
            expected,
            Msg("the token ids of encode({text!r})", "encode({text!r}) 的词元 id", text=from_input(text)),
            mistakes=lambda: _wrong_answers(text, enc),
        )


@check(points=2, title="decode(encode(text)) gives the text back", title_zh="decode(encode(text)) 还原出原文")
def test_round_trip(sub):
    tok, enc = _tokenizer(sub)
    for text in TEXTS:
        expect_equal(
            tok.decode(_expected(enc, text)),
            text,
            Msg(
                "decode of tiktoken's ids of {text!r}",
                "对 tiktoken 给出的 {text!r} 的 id 做 decode",
                text=from_input(text),
            ),
        )
        expect_equal(tok.decode(tok.encode(text)), text, code("decode(encode({text!r}))", text=from_input(text)))


@check(
    points=1, title="vocab_size and num_merges of a table of its own", title_zh="自定义表的 vocab_size 和 num_merges"
)
def test_sizes_of_a_small_table(sub):
    """Sizes that follow the table: not GPT-2's numbers typed in."""
    ranks = {bytes([b]): i for i, b in enumerate(reversed(range(256)))}
    for token in (b"th", b"the", b" the", b"er", b" er"):
        ranks[token] = len(ranks)
    tok = sub.from_rows([[list(k), r] for k, r in ranks.items()])
    got = tok.vocab_size()
    if got == 50257:
        raise CheckFailure(
            Msg(
                "vocab_size() of a table of {n_ranks} ranked tokens is 50257, GPT-2's: count the "
                "table's tokens, len(ranks) + 1 (<|endoftext|>)",
                "含 {n_ranks} 个有排名词元的表的 vocab_size() 是 GPT-2 的 50257：应按这张表计数，"
                "即 len(ranks) + 1（<|endoftext|>）",
                n_ranks=from_input(len(ranks)),
            )
        )
    expect_equal(
        got,
        len(ranks) + 1,
        Msg(
            "vocab_size() of a table of {n_ranks} ranked tokens: len(ranks) + 1",
            "含 {n_ranks} 个有排名词元的表的 vocab_size()：len(ranks) + 1",
            n_ranks=from_input(len(ranks)),
        ),
    )
    expect_equal(
        tok.num_merges(),
        5,
        Msg("num_merges() of a table with 5 tokens longer than one byte", "含 5 个多字节词元的表的 num_merges()"),
    )


@check(points=1, title="decoding one token of a character split in two", title_zh="解码一个被拆开的字符中的单个词元")
def test_decode_part_of_a_character(sub):
    tok, enc = _tokenizer(sub)
    for text in ("🙂", "日本"):
        for i in _expected(enc, text):
            what = Msg(
                "decode([{i}]), one of the tokens of {text!r}: it holds only part of a character",
                "decode([{i}])，{text!r} 的一个词元：它只含某个字符的一部分",
                i=from_input(i),
                text=from_input(text),
            )
            try:
                got = tok.decode([i])
            except StudentError as e:
                if e.type != "UnicodeDecodeError":
                    raise
                raise CheckFailure(
                    Msg(
                        "{e}\n{what}: its bytes are not valid UTF-8 on their own. Decode with "
                        'errors="replace", which shows them as \ufffd instead of raising',
                        '{e}\n{what}：它的字节单独看不是合法的 UTF-8。用 errors="replace" 解码，'
                        "这样会显示为 \ufffd，而不是抛出异常",
                        e=Msg.of(e),
                        what=what,
                    )
                ) from None
            expect_equal(got, enc.decode([i]), what)


@check(points=3, hidden=True, title="encoding random texts like tiktoken", title_zh="像 tiktoken 一样编码随机文本")
def test_random_text_matches_tiktoken(sub):
    tok, enc = _tokenizer(sub)
    fragments = st.sampled_from(
        [
            " ",
            "  ",
            "\n",
            "\t",
            "'s",
            "'ll",
            ".'s",
            "'",
            '"',
            "it's",
            "Building",
            " the",
            "42",
            "3.5",
            "é",
            "ü",
            "中文",
            "😀",
            "👍🏽",
            "!",
            "...",
            ENDOFTEXT,
            "\r\n",
            "\u00a0",
        ]
    )
    # text() as hypothesis draws it by default (every character UTF-8 writes: all but the surrogates),
    # with the alphabet said: its default tests 1.1 million code points against UTF-8 in every grading
    utf8 = st.characters(exclude_categories=["Cs"])
    texts = st.lists(st.one_of(fragments, st.text(utf8, max_size=6)), max_size=12).map("".join)

    # No shrinking: each try re-runs pure-Python BPE in the sandbox, and a hidden check shows only the input.
    @settings(
        max_examples=25,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
    @given(texts)
    def same_ids(text):
        ids = tok.encode(text)
        expect_ids(
            ids,
            _expected(enc, text),
            Msg("the token ids of encode({text!r})", "encode({text!r}) 的词元 id", text=from_input(text)),
            mistakes=lambda: _wrong_answers(text, enc),
        )
        expect_equal(tok.decode(ids), text, code("decode(encode({text!r}))", text=from_input(text)))

    same_ids()


@check(points=2, hidden=True, title="merging by rank, lowest first", title_zh="按排名合并，排名最低的优先")
def test_merge_by_rank(sub):
    tok, enc = _tokenizer(sub)
    ranks = _ranks()
    for piece in PIECES:
        data = piece.encode("utf-8")
        expected = enc.encode_ordinary(piece)  # each of PIECES is a single pre-tokenization piece
        expect_ids(
            tok.merge_bytes(list(data)),
            expected,
            Msg("bpe_merge of the piece {piece!r}", "对片段 {piece!r} 做 bpe_merge", piece=from_input(piece)),
            mistakes=[
                (
                    _greedy_merge(data, ranks),
                    "merging the leftmost joinable pair instead of the pair with the lowest rank",
                    "合并了最左边可合并的字节对，而不是秩最低的字节对",
                )
            ],
        )
    # Bytes that are not valid UTF-8 on their own still merge by rank.
    rng = random.Random(1404)
    for _ in range(5):
        data = bytes(rng.randrange(256) for _ in range(rng.randint(1, 12)))
        expect_ids(
            tok.merge_bytes(list(data)),
            _merge_all(data, ranks),
            Msg("bpe_merge of the bytes {data!r}", "对字节 {data!r} 做 bpe_merge", data=from_input(data)),
        )


@check(points=2, hidden=True, title="a small table of its own", title_zh="一张自定义的小表")
def test_small_table(sub):
    """A table of its own (no asset needed): single bytes in a shuffled order and a few merges, so
    that ids are not byte values and the special token's id is len(ranks), not 50256."""
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str

    rng = random.Random(25954)
    order = list(range(256))
    rng.shuffle(order)
    ranks = {bytes([b]): i for i, b in enumerate(order)}
    for token in (b"es", b"est", b"ol", b"old", b" l", b" lo", b" low", b"in", b"fin", b" fin", b"\xe4\xbd"):
        ranks[token] = len(ranks)
    ref = tiktoken.Encoding(
        "kata-small", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={ENDOFTEXT: len(ranks)}
    )
    tok = sub.from_rows([[list(t), r] for t, r in ranks.items()])
    expect_equal(
        tok.vocab_size(),
        len(ranks) + 1,
        Msg(
            "vocab_size() of a table of {n_ranks} ranked tokens",
            "含 {n_ranks} 个有排名词元的表的 vocab_size()",
            n_ranks=from_input(len(ranks)),
        ),
    )
    expect_equal(
        tok.num_merges(),
        len(ranks) - 256,
        Msg(
            "num_merges() of a table with {n_merges} merges",
            "含 {n_merges} 条合并规则的表的 num_merges()",
            n_merges=from_input(len(ranks) - 256),
        ),
    )
    for text in ["old finest lowest", " fin fin  final", "oldest<|endoftext|>lowest", "你好 est"]:
        expect_ids(
            tok.encode(text),
            ref.encode(text, allowed_special="all"),
            Msg("encode({text!r}) with a small table", "用小表做 encode({text!r})", text=from_input(text)),
        )
        expect_equal(
            tok.decode(tok.encode(text)),
            text,
            Msg(
                "decode(encode({text!r})) with a small table",
                "用小表做 decode(encode({text!r}))",
                text=from_input(text),
            ),
        )


@check(points=1, hidden=True, title="decoding tokens that hold part of a character", title_zh="解码只含半个字符的词元")
def test_decode_partial_characters(sub):
    tok, enc = _tokenizer(sub)
    for text in ["🎉", "注意", "é!"]:
        for i in _expected(enc, text):
            expect_equal(
                tok.decode([i]),
                enc.decode([i]),
                Msg(
                    "decode([{i}]), a token of {text!r} that may hold part of a character "
                    "(decode with `errors='replace'`)",
                    "decode([{i}])，这是 {text!r} 的一个词元，可能只含某个字符的一部分（用 `errors='replace'` 解码）",
                    i=from_input(i),
                    text=from_input(text),
                ),
            )
    expect(tok.decode([]) == "", Msg("decode([]) must be the empty string", "decode([]) 必须是空字符串"))
