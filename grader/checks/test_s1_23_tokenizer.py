"""Checks of §1.23's set-up and tokenizer (listings 1.20–1.22, 1.24–1.26).

The reference is the grader's own tokenizer on tiktoken, here in the trusted process: GPT-2's
encoding (grader.capstone.gpt2.encoding(): "gpt2", or offline "r50k_base", the same ranks) for the
book's numbers, and small tables of its own (no asset needed) for the rest, so that special
ids are not 50257.. and a hard-coded answer fails. The student's tokenizer reads the same ranks
in the sandbox (`sub.assets`).

The checks reach the reference only through `_ref_numbers`, `_ref_encode` and
`_wrong_encodings`, whose arguments name a table ("gpt2" or a small table's seed) and the
settings: the student bundle (`kata release`), which does not hold the reference, answers
the calls its public checks make from values recorded on the reference solution.
"""

import functools
import random

import pytest
import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from grader.capstone import data, gpt2
from grader.checks.tokenizer_reference import BertTokenizer as Reference
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

EXERCISE = "s1_23_tokenizer"
ENDOFTEXT = "<|endoftext|>"
# §1.23: "a typical sample is a review such as 'the movie is slow, but the acting is excellent'".
BOOK_REVIEW = "This movie is slow, but the acting is excellent."


def _long_review(n_sentences: int = 40) -> str:
    """A deterministic review of several hundred GPT-2 tokens whose verdict comes at the end."""
    rng = random.Random(1326)
    texts, _ = data.synthetic_split(n_sentences, 26, "train")  # synthetic_corpus(n, seed=26)'s train texts
    body = " ".join(rng.sample(texts, n_sentences))
    return "I went in with no expectations. " + body + " In the end, though, I loved every minute of it!"


LONG_REVIEW = _long_review()

# ---------------------------------------------------------------- small tables (no asset needed)
WORDS = [
    "the",
    "movie",
    "film",
    "was",
    "is",
    "good",
    "bad",
    "slow",
    "acting",
    "excellent",
    "but",
    "plot",
    "great",
    "boring",
    "end",
    "loved",
    "it",
    "and",
    "not",
    "CLS",
    "SEP",
    "PAD",
    "endoftext",
]


@functools.lru_cache(maxsize=None)
def _small_ranks(seed: int) -> dict[bytes, int]:
    """Single bytes in a shuffled order, then every prefix of WORDS (with and without a leading space)."""
    rng = random.Random(seed)
    order = list(range(256))
    rng.shuffle(order)
    ranks = {bytes([b]): i for i, b in enumerate(order)}
    words = WORDS[:]
    rng.shuffle(words)
    for w in words[: 12 + seed % 11]:
        for piece in (w, " " + w):
            raw = piece.encode()
            for k in range(2, len(raw) + 1):
                ranks.setdefault(raw[:k], len(ranks))
    return ranks


def _rows(ranks) -> list[list]:
    return [[list(token), rank] for token, rank in ranks.items()]


@functools.lru_cache(maxsize=None)
def _small_encoding(seed: int):
    import tiktoken
    from tiktoken_ext.openai_public import r50k_pat_str

    ranks = _small_ranks(seed)
    return tiktoken.Encoding(
        f"kata-small-{seed}", pat_str=r50k_pat_str, mergeable_ranks=ranks, special_tokens={ENDOFTEXT: len(ranks)}
    )


def _small(sub, seed: int = 7, **settings):
    """(student tokenizer, reference tokenizer) on the small table of `seed`."""
    return sub.from_rows(_rows(_small_ranks(seed)), **settings), _Ref(seed, settings)


SMALL_TEXTS = [
    "the movie was good",
    "The film is slow, but the acting is excellent.",
    "",
    "   ",
    "not bad, not great: it was boring and the end was slow",
    "<|endoftext|>",
    "[CLS] [SEP] [PAD]",
    "café 你好 🎉 — it's the end",
]


# ---------------------------------------------------------------- GPT-2 (needs the asset)
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
def _gpt2_encoding():
    try:
        return gpt2.encoding()
    except gpt2.AssetMissing as e:
        pytest.skip(str(e))


def _gpt2(sub, **settings):
    folder = _asset_folder(sub)
    return sub.from_file(f"{folder}/{gpt2.ASSET_NAME}", **settings), _Ref("gpt2", settings)


# ---------------------------------------------------------------- the reference, by table and settings
NUMBERS = ("base_vocab_size", "pad_id", "cls_id", "sep_id", "vocab_size", "max_len", "truncation", "head_len")


def _encoding(table):
    """The base encoding of a table: "gpt2" (GPT-2's ranks) or the small table of a seed (an int)."""
    return _gpt2_encoding() if table == "gpt2" else _small_encoding(table)


def _ref_numbers(table, settings: dict) -> dict:
    """The reference tokenizer's sizes, special ids and settings on `table` with `settings`."""
    ref = Reference(_encoding(table), **settings)
    return {name: getattr(ref, name) for name in NUMBERS}


def _ref_encode(table, settings: dict, text: str, pad: bool) -> list[int]:
    """The reference's encode(text, pad=pad) on `table` with `settings`."""
    return Reference(_encoding(table), **settings).encode(text, pad=pad)


class _Ref:
    """The reference tokenizer as the checks use it: its numbers as attributes, encode, the base
    encoding and the wrong answers of an encode."""

    def __init__(self, table, settings: dict):
        self.table, self.settings = table, dict(settings)
        self.__dict__.update(_ref_numbers(self.table, self.settings))

    @property
    def base(self):
        return _encoding(self.table)

    def encode(self, text: str, pad: bool = True) -> list[int]:
        return _ref_encode(self.table, self.settings, text, pad)

    def wrong_encodings(self, text: str, pad: bool = True) -> list:
        return _wrong_encodings(self.table, self.settings, text, pad)


def make_fixtures(sol):
    out = {}
    if gpt2.have_asset():  # the book's review and a long one, encoded by the solution with GPT-2's table
        tok = sol.from_file(str(gpt2.asset_path()))
        out["book_review"] = torch.tensor(tok.encode(BOOK_REVIEW), dtype=torch.int64)
        out["long_review"] = torch.tensor(tok.encode(LONG_REVIEW), dtype=torch.int64)
        tok = sol.from_file(str(gpt2.asset_path()), truncation="head_tail")
        out["long_review_head_tail"] = torch.tensor(tok.encode(LONG_REVIEW), dtype=torch.int64)
    tok = sol.from_rows(_rows(_small_ranks(7)), max_len=12, truncation="head_tail", head_len=3)
    for i, text in enumerate(SMALL_TEXTS):
        out[f"small_head_tail_{i}"] = torch.tensor(tok.encode(text), dtype=torch.int64)
    return out


def fx():
    return fixtures.load(EXERCISE)


# ---------------------------------------------------------------- comparing ids, naming mistakes
def _ids(value, what) -> torch.Tensor:
    if not isinstance(value, (list, tuple)) or not all(isinstance(i, int) and not isinstance(i, bool) for i in value):
        raise CheckFailure(
            Msg(
                "{what} must be a list of int token ids, got {type_value}: {value}",
                "{what} 必须是整数词元 id 的列表，实际为 {type_value}：{value}",
                what=what,
                type_value=from_input(type(value).__name__),
                value=from_input(str(value)[:200]),
            )
        )
    return torch.tensor(list(value), dtype=torch.int64)


def expect_ids(actual, expected, what, mistakes=(), specials=None):
    """Token ids compared exactly; a known wrong answer is named. `mistakes` may be a function
    (called only on a failure); `specials` (id -> "[CLS]") names a special token missing or extra."""
    ids = _ids(actual, what)
    if ids.tolist() == list(expected):
        return
    mistakes = mistakes() if callable(mistakes) else mistakes
    expect_tensor(
        ids,
        torch.tensor(list(expected), dtype=torch.int64),
        tol="exact",
        what=what,
        specials=specials,
        mistakes=[Mistake(torch.tensor(v, dtype=torch.int64), en, zh) for v, en, zh in mistakes],
    )


def _specials(ref) -> dict:
    return {ref.pad_id: "[PAD]", ref.cls_id: "[CLS]", ref.sep_id: "[SEP]"}


NO_TAIL = (
    "ids[-tail:] with tail = 0: ids[-0:] is the whole list, not an empty one. With `head_len = max_len - 2` "
    "there is no tail: take it as `ids[len(ids) - tail:]` (empty when tail is `0`)",
    "tail = 0 时的 ids[-tail:]：ids[-0:] 是整个列表，而不是空列表。`head_len = max_len - 2` 时没有结尾部分："
    "应写成 `ids[len(ids) - tail:]`（tail 为 `0` 时为空）",
)


def _wrong_encodings(table, settings: dict, text: str, pad: bool = True) -> list:
    """Plausible wrong answers of encode(text) on `table` with `settings`, each with what went wrong."""
    ref = Reference(_encoding(table), **settings)
    ids = ref.base.encode_ordinary(text)
    budget = ref.max_len - 2
    cls, sep, padid = ref.cls_id, ref.sep_id, ref.pad_id

    def padded(seq, with_id=padid):
        return seq + [with_id] * (ref.max_len - len(seq)) if pad else seq

    kept = ref.truncate(ids)
    out = [
        (
            [cls] + kept + [padid] * (budget - len(kept)) + [sep],
            "[SEP] goes right after the text, before the padding",
            "[SEP] 应紧跟在文本之后、填充之前",
        ),
        (
            padded(ids[:budget]),
            "the text must be framed: [CLS] first, [SEP] right after the text",
            "文本两端要加特殊词元：[CLS] 在前，[SEP] 紧跟文本",
        ),
        (
            [cls] + ids[: ref.max_len] + [sep],
            "leave room for [CLS] and [SEP]: keep at most `max_len - 2` text tokens",
            "要给 [CLS] 和 [SEP] 留位置：最多保留 `max_len - 2` 个文本词元",
        ),
        (
            ([cls] + ids + [sep])[: ref.max_len],
            "the text was cut after [SEP] was added, so a long text lost its [SEP]: truncate the text first",
            "在加入 [SEP] 之后才截断，长文本丢失了 [SEP]：应先截断文本",
        ),
        (
            [cls] + ids[:budget] + [sep] + ([padid] * (budget - len(ids[:budget])) if pad else []),
            "`truncation='head_tail'` kept only the head: keep the first head_len and the last "
            "`max_len - 2 - head_len` tokens",
            "`truncation='head_tail'` 只保留了开头：应保留前 head_len 个和最后 `max_len - 2 - head_len` 个词元",
        ),
        (
            padded([cls] + (ids[len(ids) - budget :] if len(ids) > budget else ids) + [sep]),
            "the tail was kept: `truncation='head'` keeps the first `max_len - 2` tokens, as the book does",
            "保留了结尾：`truncation='head'` 应像书中那样保留前 `max_len - 2` 个词元",
        ),
        (padded([cls] + kept + [sep], 0), "padding must use pad_id, not `0`", "填充应使用 pad_id，而不是 `0`"),
        ([cls] + kept + [sep], "`pad=True`: add pad_id up to max_len", "`pad=True` 时应用 pad_id 填充到 max_len"),
        (
            [padid if i == cls else cls if i == padid else i for i in padded([cls] + kept + [sep])],
            "the special ids are in the wrong order: `pad_id = base_vocab_size`, then cls_id, then sep_id",
            "特殊 id 顺序错误：`pad_id = base_vocab_size`，然后是 cls_id、sep_id",
        ),
        (
            [{cls: 50258, sep: 50259, padid: 50257}.get(i, i) for i in padded([cls] + kept + [sep])],
            "the special ids must follow the base tokenizer's vocabulary (base.n_vocab), not be GPT-2's fixed numbers",
            "特殊 id 应紧跟在基础分词器的词表之后（base.n_vocab），而不是 GPT-2 的固定数字",
        ),
    ]
    if ref.truncation == "head_tail" and len(ids) > budget:
        tail = budget - ref.head_len
        swapped = ids[:tail] + (ids[len(ids) - ref.head_len :] if ref.head_len else [])
        out.append(
            (
                padded([cls] + swapped + [sep]),
                "head and tail lengths swapped: head_len tokens come from the "
                "start, `max_len - 2 - head_len` from the end",
                "头尾长度弄反了：开头取 head_len 个，结尾取 `max_len - 2 - head_len` 个",
            )
        )
        out.append(
            (
                padded([cls] + ids[len(ids) - tail :] + ids[: ref.head_len] + [sep]),
                "the tail was put before the head: keep the text's order",
                "结尾被放在了开头之前：应保持文本顺序",
            )
        )
        if tail == 0:
            out.append((padded([cls] + ids[: ref.head_len] + ids[-tail:] + [sep]), *NO_TAIL))
    return out


def _encode(tok, ref, text, pad=True, what=None):
    what = what or code(
        "encode({text!r}{more}{pad_arg})",
        text=from_input(text[:60]),
        more=from_input("..." if len(text) > 60 else ""),
        pad_arg="" if pad else ", pad=False",
    )
    try:
        got = tok.encode(text, pad=pad) if not pad else tok.encode(text)
    except StudentError as e:
        if e.type == "ValueError" and ENDOFTEXT in text:
            raise CheckFailure(
                Msg(
                    "{what} raised ValueError: tiktoken's encode refuses '<|endoftext|>' in a text. Encode reviews "
                    "as ordinary text with encode_ordinary (a review is not a control signal)",
                    "{what} 抛出了 ValueError：tiktoken 的 encode 不接受文本中出现 '<|endoftext|>'。应使用 encode_ordinary 把评论当作普通文本编码（评论不是控制信号）",
                    what=what,
                )
            ) from None
        raise
    # The wrong answers are worked out before the comparison, so that `kata release` records them
    # along with the expected ids (cheap: a few lists of ids).
    expect_ids(got, ref.encode(text, pad=pad), what, mistakes=ref.wrong_encodings(text, pad), specials=_specials(ref))


# ---------------------------------------------------------------- listings 1.20–1.22
@check(
    points=1,
    listings=["1.20", "1.21", "1.22"],
    title="listings 1.20-1.22: packages and the compute device",
    title_zh="代码清单 1.20-1.22：依赖包和计算设备",
)
def test_setup_and_device(sub):
    import importlib.util

    for name in ("torch", "tiktoken"):  # listing 1.20's packages that the kata needs (datasets is optional)
        expect(
            importlib.util.find_spec(name) is not None,
            Msg(
                "listing 1.20: the package {name} is not installed",
                "代码清单 1.20：没有安装 {name} 包",
                name=name,
            ),
        )
    cuda = sub.given("cuda_available")  # the runtime's own answer, not the given helper of the student's file
    expected = "cuda" if cuda else "cpu"
    got = sub.choose_device()
    expect(
        isinstance(got, str),
        Msg(
            "choose_device() must return the device's name, a str, not {type_got}",
            "choose_device() 必须返回设备名（str），而不是 {type_got}",
            type_got=from_input(type(got).__name__),
        ),
    )
    expect_equal(
        got,
        expected,
        Msg(
            "choose_device() where torch.cuda.is_available() is {cuda}",
            "torch.cuda.is_available() 为 {cuda} 时的 choose_device()",
            cuda=from_input(cuda),
        ),
    )
    # What listing 1.22 prints: print(device) shows the name, not the repr "device(type='cuda')".
    expect_equal(str(torch.device(got)), expected, code("str(torch.device(choose_device()))"))
    expect_equal(repr(torch.device("cuda")), "device(type='cuda')", Msg("the repr the book shows", "书中显示的 repr"))


# ---------------------------------------------------------------- listings 1.24–1.26 with GPT-2
@check(
    points=2,
    listings=["1.24", "1.25"],
    title="listings 1.24-1.25: GPT-2's vocabulary and the special ids",
    title_zh="代码清单 1.24-1.25：GPT-2 的词表和特殊 id",
)
def test_listing_1_24_1_25_vocabulary(sub):
    tok, ref = _gpt2(sub)
    expect_equal(
        ref.base_vocab_size,
        50257,
        Msg("tiktoken's GPT-2 vocabulary (the grader's own reference)", "tiktoken 的 GPT-2 词表（评分器自己的参照）"),
    )
    base = tok.attr("base_vocab_size")
    expect_equal(
        base,
        50257,
        Msg(
            "base_vocab_size with GPT-2's table (listing 1.24): base.n_vocab",
            "使用 GPT-2 的表时的 base_vocab_size（代码清单 1.24）：base.n_vocab",
        ),
    )
    got = {name: tok.attr(name) for name in ("pad_id", "cls_id", "sep_id", "vocab_size")}
    if got["vocab_size"] == 50259:
        raise CheckFailure(
            Msg(
                "vocab_size is 50259: it counts the base tokens and all three special ids, 50257 + 3",
                "vocab_size 是 50259：它应把基础词元和全部三个特殊 id 都算在内，即 50257 + 3",
            )
        )
    expect_equal(
        got,
        {"pad_id": 50257, "cls_id": 50258, "sep_id": 50259, "vocab_size": 50260},
        Msg(
            "the special ids and vocab_size with GPT-2's table (listing 1.25)",
            "使用 GPT-2 的表时的特殊 id 和 vocab_size（代码清单 1.25）",
        ),
    )


@check(
    points=2,
    listings=["1.26"],
    title="listing 1.26: encoding a text to a fixed length",
    title_zh="代码清单 1.26：把文本编码为固定长度",
)
def test_listing_1_26_encode(sub):
    tok, ref = _gpt2(sub)
    f = fx()
    for key, text in (("book_review", BOOK_REVIEW), ("long_review", LONG_REVIEW)):
        expected = ref.encode(text)
        assert f[key].tolist() == expected, (
            f"the reference ids of {key} changed since the fixtures were made: run `kata fixtures`"
        )
        _encode(tok, ref, text)
    ids = tok.encode(BOOK_REVIEW)
    expect(
        len(ids) == 256 and ids[0] == 50258,
        Msg("encode gives 256 ids starting with [CLS] = 50258", "encode 给出 256 个 id，以 [CLS] = 50258 开头"),
    )
    # A review that contains "<|endoftext|>": the book's tokenizer.encode raises ValueError on it.
    _encode(tok, ref, f"Worst film ever{ENDOFTEXT}", pad=False)
    expect_ids(
        tok.encode(ENDOFTEXT, pad=False),
        [50258, 27, 91, 437, 1659, 5239, 91, 29, 50259],
        Msg(
            "encode('<|endoftext|>', pad=False) with GPT-2: its seven ordinary tokens between [CLS] and [SEP]",
            "用 GPT-2 做 encode('<|endoftext|>', pad=False)：[CLS] 和 [SEP] 之间是它的七个普通词元",
        ),
        specials={50257: "[PAD]", 50258: "[CLS]", 50259: "[SEP]"},
    )


# ---------------------------------------------------------------- small tables
@check(points=1, title="the special ids follow the base vocabulary", title_zh="特殊 id 紧跟在基础词表之后")
def test_special_ids_follow_the_base(sub):
    for seed in (7, 12):
        tok, ref = _small(sub, seed)
        expect_equal(
            tok.attr("base_vocab_size"),
            ref.base_vocab_size,
            Msg(
                "base_vocab_size of a table of {base_vocab_size} tokens (use base.n_vocab)",
                "含 {base_vocab_size} 个词元的表的 base_vocab_size（使用 base.n_vocab）",
                base_vocab_size=from_input(ref.base_vocab_size),
            ),
        )
        got = {name: tok.attr(name) for name in ("pad_id", "cls_id", "sep_id", "vocab_size")}
        expect_equal(
            got,
            {"pad_id": ref.pad_id, "cls_id": ref.cls_id, "sep_id": ref.sep_id, "vocab_size": ref.vocab_size},
            Msg(
                "the special ids and vocab_size on a table of {base_vocab_size} tokens (they follow it)",
                "含 {base_vocab_size} 个词元的表上的特殊 id 和 vocab_size（它们紧跟在后面）",
                base_vocab_size=from_input(ref.base_vocab_size),
            ),
        )


@check(points=2, title="encoding and truncation with a small table", title_zh="用小表编码和截断")
def test_encode_and_truncate_small_table(sub):
    f = fx()
    tok, ref = _small(sub, 7, max_len=12)
    for text in SMALL_TEXTS[:2] + SMALL_TEXTS[4:5]:
        _encode(tok, ref, text)
        _encode(tok, ref, text, pad=False)
    tok, ref = _small(sub, 7, max_len=12, truncation="head_tail", head_len=3)
    for i, text in enumerate(SMALL_TEXTS):
        expected = ref.encode(text)
        assert f[f"small_head_tail_{i}"].tolist() == expected, (
            "reference changed since the fixtures: run `kata fixtures`"
        )
        _encode(
            tok,
            ref,
            text,
            what=Msg(
                "encode({text!r}) with max_len=12, truncation='head_tail', head_len=3",
                "max_len=12、truncation='head_tail'、head_len=3 时的 encode({text!r})",
                text=from_input(text),
            ),
        )
    long = " ".join(["the movie was good"] * 3 + ["but the end was bad"])
    expect_ids(
        tok.truncate(list(range(20))),
        list(range(3)) + list(range(13, 20)),
        Msg(
            "truncate(list(range(20))) with max_len=12, head_len=3: the first 3 and the last 7",
            "max_len=12、head_len=3 时的 truncate(list(range(20)))：前 3 个和最后 7 个",
        ),
    )
    _encode(
        tok,
        ref,
        long,
        what=Msg(
            "encode({long!r}) with max_len=12, truncation='head_tail', head_len=3",
            "max_len=12、truncation='head_tail'、head_len=3 时的 encode({long!r})",
            long=from_input(long),
        ),
    )


@check(
    points=1,
    title="head_tail truncation with head_len = max_len - 2: no tail",
    title_zh="head_len = max_len - 2 时的 head_tail 截断：没有结尾部分",
)
def test_head_tail_without_a_tail(sub):
    tok, ref = _small(sub, 7, max_len=12, truncation="head_tail", head_len=10)
    expect_ids(
        tok.truncate(list(range(20))),
        list(range(10)),
        Msg(
            "truncate(list(range(20))) with max_len=12, truncation='head_tail', head_len=10: the first 10, no tail",
            "max_len=12、truncation='head_tail'、head_len=10 时的 truncate(list(range(20)))：前 10 个，没有结尾部分",
        ),
        mistakes=[
            (list(range(10)) + list(range(20)), *NO_TAIL),
            (
                list(range(10, 20)),
                "head and tail lengths swapped: head_len tokens come from the start, "
                "`max_len - 2 - head_len` from the end",
                "头尾长度弄反了：开头取 head_len 个，结尾取 `max_len - 2 - head_len` 个",
            ),
        ],
    )
    long = " ".join(["the movie was good"] * 3 + ["but the end was bad"])
    _encode(
        tok,
        ref,
        long,
        what=Msg(
            "encode({long!r}) with max_len=12, truncation='head_tail', head_len=10",
            "max_len=12、truncation='head_tail'、head_len=10 时的 encode({long!r})",
            long=from_input(long),
        ),
    )


@check(points=1, title="decoding leaves the special ids out", title_zh="解码时去掉特殊 id")
def test_decode(sub):
    tok, ref = _small(sub, 7, max_len=40)
    for text in SMALL_TEXTS:
        ids = ref.encode(text)
        expect_equal(
            tok.decode(ids),
            text,
            Msg(
                "decode(encode({text!r})): the special ids are left out",
                "decode(encode({text!r}))：去掉了特殊 id",
                text=from_input(text),
            ),
        )
    expect_equal(tok.decode([ref.cls_id, ref.pad_id, ref.sep_id]), "", code("decode([cls_id, pad_id, sep_id])"))


@check(
    points=1,
    hidden=True,
    title="special-token strings in a review are ordinary text",
    title_zh="评论中形如特殊词元的字符串是普通文本",
)
def test_special_token_strings_are_text(sub):
    tok, ref = _small(sub, 7, max_len=24)
    for text in (ENDOFTEXT, "[CLS] [SEP] [PAD]", f"the end{ENDOFTEXT}the movie", "<|endoftext|><|endoftext|>"):
        _encode(tok, ref, text)
        got = tok.encode(text, pad=False)
        expect(
            isinstance(got, list)
            and got.count(ref.cls_id) == 1
            and got.count(ref.sep_id) == 1
            and ref.base_vocab_size - 1 not in got,
            Msg(
                "encode({text!r}): text that looks like a special token is ordinary text (one [CLS], one "
                "[SEP], no <|endoftext|> id)",
                "encode({text!r})：形如特殊词元的文本是普通文本（一个 [CLS]、一个 [SEP]，没有 <|endoftext|> 的 id）",
                text=from_input(text),
            ),
        )


@check(points=2, hidden=True, title="short, long and bad settings", title_zh="很短、很长的文本和非法设置")
def test_edge_cases(sub):
    max_len = 10
    tok, ref = _small(sub, 12, max_len=max_len)
    _encode(tok, ref, "")
    _encode(tok, ref, "", pad=False)
    # Exactly max_len - 2 text tokens: nothing cut, nothing padded; one more: cut.
    enc = ref.base
    words = "the movie was good but the end was slow and the plot was bad".split()
    fits = next(
        " ".join(words[:k])
        for k in range(len(words), 0, -1)
        if len(enc.encode_ordinary(" ".join(words[:k]))) <= max_len - 2
    )
    for text in (fits, fits + " the", " ".join(words)):
        _encode(
            tok,
            ref,
            text,
            what=Msg(
                "encode({text!r}) with max_len={max_len}",
                "encode({text!r})（设置 max_len={max_len}）",
                text=from_input(text),
                max_len=from_input(max_len),
            ),
        )
    shortest = 2
    tok2, ref2 = _small(sub, 12, max_len=shortest)
    _encode(
        tok2,
        ref2,
        "the movie was good",
        what=Msg(
            "encode(...) with max_len={max_len}: only [CLS] and [SEP]",
            "encode(...)（max_len={max_len}）：只有 [CLS] 和 [SEP]",
            max_len=from_input(shortest),
        ),
    )
    for head_len in (0, 8):
        tok3, ref3 = _small(sub, 12, max_len=max_len, truncation="head_tail", head_len=head_len)
        _encode(
            tok3,
            ref3,
            " ".join(words),
            what=Msg(
                "encode(...) with max_len={max_len}, truncation={truncation}, head_len={head_len}",
                "encode(...)（设置 max_len={max_len}、truncation={truncation}、head_len={head_len}）",
                max_len=from_input(max_len),
                truncation=from_input("head_tail"),
                head_len=from_input(head_len),
            ),
        )
    long_max_len = 64
    tok4, ref4 = _small(sub, 12, max_len=long_max_len)
    very_long = "the movie was good. " * 5000
    _encode(
        tok4,
        ref4,
        very_long,
        what=Msg(
            "encode of a {n:,}-character text with max_len={max_len}",
            "对 {n:,} 个字符的文本做 encode（max_len={max_len}）",
            n=from_input(len(very_long)),
            max_len=from_input(long_max_len),
        ),
    )
    for bad in ({"max_len": 1}, {"truncation": "tail"}, {"max_len": 10, "truncation": "head_tail", "head_len": 9}):
        try:
            sub.from_rows(_rows(_small_ranks(12)), **bad)
        except StudentError as e:
            expect(
                e.type == "ValueError",
                Msg(
                    "BertTokenizer(..., {bad}) must raise ValueError, not {raised}",
                    "BertTokenizer(..., {bad}) 必须抛出 ValueError，而不是 {raised}",
                    bad=from_input(bad),
                    raised=e.type,
                ),
            )
        else:
            raise CheckFailure(
                Msg(
                    "BertTokenizer(..., {bad}) must raise ValueError (keep the given checks in __init__)",
                    "BertTokenizer(..., {bad}) 必须抛出 ValueError（保留 __init__ 中给出的检查）",
                    bad=from_input(bad),
                )
            )


@check(points=2, hidden=True, title="random texts and settings", title_zh="随机文本和设置")
def test_random_texts_match_reference(sub):
    fragments = st.sampled_from(
        [
            "the",
            " movie",
            " was",
            " good",
            " bad",
            "!",
            " ",
            "  ",
            "\n",
            "é",
            "🎉",
            "it's",
            ENDOFTEXT,
            "[CLS]",
            " the end",
            "0",
            "42",
        ]
    )
    # text() as hypothesis draws it by default (every character UTF-8 writes: all but the surrogates),
    # with the alphabet said: its default tests 1.1 million code points against UTF-8 in every grading
    utf8 = st.characters(exclude_categories=["Cs"])
    texts = st.lists(st.one_of(fragments, st.text(utf8, max_size=4)), max_size=16).map("".join)
    configs = st.tuples(st.integers(2, 14), st.sampled_from(["head", "head_tail"]), st.integers(0, 12), st.booleans())
    toks = {}

    @settings(
        max_examples=25,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.explicit, Phase.reuse, Phase.generate],
    )
    @given(texts, configs)
    def same_ids(text, config):
        max_len, truncation, head_len, pad = config
        head_len = min(head_len, max_len - 2)
        key = (max_len, truncation, head_len)
        if key not in toks:
            toks[key] = _small(sub, 7, max_len=max_len, truncation=truncation, head_len=head_len)
        tok, ref = toks[key]
        _encode(
            tok,
            ref,
            text,
            pad=pad,
            what=Msg(
                "encode({text!r}, pad={pad}) with max_len={max_len}, truncation={truncation!r}, head_len={head_len}",
                "encode({text!r}, pad={pad})（设置 max_len={max_len}、truncation={truncation!r}、head_len={head_len}）",
                text=from_input(text),
                pad=from_input(pad),
                max_len=from_input(max_len),
                truncation=from_input(truncation),
                head_len=from_input(head_len),
            ),
        )

    same_ids()


@check(points=1, hidden=True, title="head+tail truncation with GPT-2", title_zh="用 GPT-2 做开头加结尾的截断")
def test_gpt2_head_tail(sub):
    truncation = "head_tail"
    tok, ref = _gpt2(sub, truncation=truncation)
    expect_equal(
        ref.head_len,
        63,
        Msg("the reference's default head_len for max_len `256`", "max_len 为 `256` 时参照实现的默认 head_len"),
    )
    expect_equal(
        tok.attr("head_len"),
        63,
        Msg(
            "head_len's default for `max_len=256`: `(256 - 2) // 4`",
            "`max_len=256` 时 head_len 的默认值：`(256 - 2) // 4`",
        ),
    )
    expected = ref.encode(LONG_REVIEW)
    assert fx()["long_review_head_tail"].tolist() == expected, (
        "reference changed since the fixtures: run `kata fixtures`"
    )
    _encode(
        tok,
        ref,
        LONG_REVIEW,
        what=Msg(
            "encode(a long review) with truncation={truncation!r}",
            "对一条长评论做 encode（truncation={truncation!r}）",
            truncation=from_input(truncation),
        ),
    )
    kept = tok.decode(tok.encode(LONG_REVIEW))
    expect(
        kept.endswith("I loved every minute of it!"),
        Msg("head_tail keeps the review's last sentence (its verdict)", "head_tail 保留了评论的最后一句（它的结论）"),
    )
