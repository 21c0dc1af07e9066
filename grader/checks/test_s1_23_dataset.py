"""Checks of §1.23's data pipeline: loading (listing 1.23, through grader.capstone.data), the dataset
(listing 1.28) and its loaders (listing 1.29), with ids computed once and per-batch padding.

Expected values come from a copy of the given WordEncoder here in the trusted process; labels
and texts are the grader's own. The given helpers of the student's file (WordEncoder, item,
size, batches) can be rewritten, so none is used: datasets and loaders are indexed, measured and
iterated by the runtime (`sub.getitem`, `sub.length`, `sub.iterate`), and the encoder passed to
the dataset is answered here, call by call (`sub.forward`, TrustedEncoder): how often the
student's code encoded, and what, is counted where that code cannot write, and its ids follow
a labelling of the vocabulary drawn for each encoder, so ids computed without calling it are
wrong.

The checks of the split path hand the student what listing 1.23's load_dataset gives: a real
`datasets.Dataset` (ClassLabel labels) built in the worker from plain columns by the runtime's
given `hf_dataset`, and its columns `split["text"]`, `split["label"]` (datasets.Column) taken by
the runtime's own indexing. Only the columns go in and handles come back: no object of the
worker's is ever decoded here. datasets' import costs each of those checks' workers about
0.4-0.9 s, so no other check asks for a split.
"""

import random
import tempfile
from collections import Counter
from pathlib import Path

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.capstone import data
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
from grader.worker.proxy import Refused, StudentError

EXERCISE = "s1_23_dataset"
VOCAB = sorted(set(" ".join(data.POSITIVE_WORDS + data.NEGATIVE_WORDS + data.NEUTRAL_WORDS).lower().split()))
MAX_LEN = 32
PAD_AFTER_VOCAB = len(VOCAB) + 4  # a pad id after the vocabulary, as [PAD] follows GPT-2's tokens
SPECIALS = {0: "[PAD]", 1: "[CLS]", 2: "[SEP]"}  # the given WordEncoder's, named where an id sequence differs


def encode(text: str, max_len: int = MAX_LEN) -> list[int]:
    """The trusted copy of the given WordEncoder (pad 0, cls 1, sep 2, unk 3, words from 4)."""
    index = {w: i + 4 for i, w in enumerate(VOCAB)}
    words = [w.strip(".,!?;:\"'") for w in text.lower().split()]
    return [1] + [index.get(w, 3) for w in words if w][: max_len - 2] + [2]


def reference_collate(items, pad_id):
    longest = max(len(ids) for ids, _ in items)
    ids = torch.full((len(items), longest), pad_id, dtype=torch.long)
    for row, (seq, _) in enumerate(items):
        ids[row, : len(seq)] = torch.tensor(seq, dtype=torch.long)
    return ids, (ids != pad_id).long(), torch.tensor([y for _, y in items], dtype=torch.long)


INTEGERS = (torch.int64, torch.int32, torch.int16, torch.int8, torch.uint8)


class TrustedEncoder:
    """The encoder the checks hand to IMDBDataset: the given WordEncoder over VOCAB, answered here.
    The student's code holds only a handle (`handle`) whose every call comes over the wire to
    __call__, so `calls` and `encoded` (the ids returned, as a multiset) are the grader's own
    count: nothing in the worker can set them back. The ids are the book's under a labelling
    drawn anew for each encoder: the words' ids (4 and up) permuted in one cycle, so that no word
    keeps its id, the special ids 0-3 kept. Ids computed without calling the encoder (a copy of
    WordEncoder in the student's file) are then wrong. `book()` maps the ids the student's code
    returns back to the book's labelling: every comparison and message is in the book's ids, the
    same in every run."""

    def __init__(self, sub, max_len=MAX_LEN):
        words = list(range(4, PAD_AFTER_VOCAB))
        random.SystemRandom().shuffle(words)
        self.relabel = list(range(PAD_AFTER_VOCAB))
        for word, other in zip(words, words[1:] + words[:1]):
            self.relabel[word] = other
        self.unlabel = torch.empty(PAD_AFTER_VOCAB, dtype=torch.long)
        self.unlabel[torch.tensor(self.relabel)] = torch.arange(PAD_AFTER_VOCAB)
        self.max_len = max_len
        self.calls = 0
        self.encoded = Counter()
        self.handle = sub.forward("WordEncoder", self)

    def __call__(self, text):
        if not isinstance(text, str):
            raise Refused("TypeError", f"WordEncoder encodes a str, not {type(text).__name__}")
        self.calls += 1
        ids = encode(text, self.max_len)
        self.encoded[tuple(ids)] += 1
        return [self.relabel[i] for i in ids]

    def book(self, value):
        """`value` (ds[i], a batch, a list of batches) with the ids of its integer tensors in the
        book's labelling; masks and labels (0 and 1) and pad ids stay as they are."""
        if isinstance(value, (tuple, list)):
            return type(value)(self.book(v) for v in value)
        if not isinstance(value, torch.Tensor) or value.dtype not in INTEGERS:
            return value
        inside = (value >= 4) & (value < PAD_AFTER_VOCAB)
        return torch.where(inside, self.unlabel[value.long().clamp(4, PAD_AFTER_VOCAB - 1)], value.long()).to(
            value.dtype
        )

    def expect_each_once(self, texts, what):
        """encode ran once on each of `texts` and on nothing else (`what`: the count's message)."""
        expect(self.calls == len(texts), what)
        expect(
            self.encoded == Counter(tuple(encode(t, self.max_len)) for t in texts),
            Msg(
                "encode ran {n} times, but not once on each of the dataset's texts: encode each text exactly once, "
                "in __init__, and keep the ids it returns",
                "encode 运行了 {n} 次，却不是对数据集的每条文本各运行一次："
                "每条文本只在 __init__ 中编码一次，并保存它返回的 id",
                n=self.calls,
            ),
        )


def _encoder(sub, max_len=MAX_LEN):
    return TrustedEncoder(sub, max_len)


def _corpus(n, seed):
    return data.synthetic_corpus(n, seed=seed, test_n=0).train


def _distinct(split):
    """Texts whose encodings are all different (so a batch row tells which text it is)."""
    seen, texts, labels = set(), [], []
    for t, y in zip(split.texts, split.labels):
        key = tuple(encode(t))
        if key not in seen:
            seen.add(key)
            texts.append(t)
            labels.append(y)
    return texts, labels


# A small local IMDb copy in the original archive's layout, with one file that is not UTF-8.
ACLIMDB = {
    "train/pos/0_9.txt": "A wonderful film, the cast was superb and the ending moving.",
    "train/pos/1_8.txt": "Great fun, charming and clever from the first act.",
    "train/pos/12_10.txt": "Brilliant! I thought the music was beautiful.",
    "train/neg/0_1.txt": "Awful. The plot was dull and the dialogue painful.",
    "train/neg/3_2.txt": "Boring and tedious, a messy script with a weak cast.",
    "train/neg/7_4.txt": "The director made a clumsy, lifeless movie.",
    "test/pos/0_7.txt": "Enjoyable and touching, the actress was excellent.",
    "test/pos/5_10.txt": "A gripping story with fantastic effects.",
    "test/neg/2_3.txt": "Poor pacing and silly costumes.",
    "test/neg/4_1.txt": "Dreadful and forgettable.",
}
LATIN1 = ("test/neg/9_2.txt", "Caf\xe9 scene was bland, na\xefve and dull.".encode("latin-1"))


def _load_local_imdb() -> data.Corpus:
    with tempfile.TemporaryDirectory(prefix="kata-aclimdb-") as tmp:
        root = Path(tmp) / "aclImdb"
        for rel, text in ACLIMDB.items():
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(text, encoding="utf-8")
        (root / LATIN1[0]).write_bytes(LATIN1[1])
        return data.load_imdb(root)


def make_fixtures(sol):
    enc = sol.WordEncoder(VOCAB)
    texts = ["the movie was good", "", "bad plot and awful acting but great music", "dull"]
    items = [(torch.tensor(enc(t)), torch.tensor(y)) for t, y in zip(texts, [1, 0, 0, 0])]
    ids, mask, labels = sol.collate(items, pad_id=0)
    ids_p, mask_p, _ = sol.collate(items, pad_id=PAD_AFTER_VOCAB)
    return {
        "collate_ids": ids,
        "collate_mask": mask,
        "collate_labels": labels,
        "collate_ids_pad_after": ids_p,
        "collate_mask_pad_after": mask_p,
    }


def fx():
    return fixtures.load(EXERCISE)


def _items(texts, labels):
    return [(encode(t), y) for t, y in zip(texts, labels)]


def _as_items(texts, labels):
    return [
        (torch.tensor(encode(t), dtype=torch.long), torch.tensor(y, dtype=torch.long)) for t, y in zip(texts, labels)
    ]


def _expect_batch(batch, items, pad_id, what):
    if not isinstance(batch, tuple) or len(batch) != 3:
        size = Msg(" of {n}", "（{n} 个元素）", n=len(batch)) if isinstance(batch, (tuple, list)) else code("")
        raise CheckFailure(
            Msg(
                "{what}: a batch must be (ids, mask, labels), got {kind}{size}",
                "{what}：一个批次必须是 (ids, mask, labels)，实际得到 {kind}{size}",
                what=what,
                kind=type(batch).__name__,
                size=size,
            )
        )
    ids, mask, labels = reference_collate(items, pad_id)
    longest = ids.shape[1]
    fixed = max(MAX_LEN, longest)
    padded_fixed = torch.full((len(items), fixed), pad_id, dtype=torch.long)
    padded_fixed[:, :longest] = ids
    expect_tensor(
        batch[0],
        ids,
        tol="exact",
        what=Msg("{what}: ids", "{what}：ids（词元 id）", what=what),
        specials={1: "[CLS]", 2: "[SEP]", pad_id: "[PAD]"},
        mistakes=[
            Mistake(
                padded_fixed,
                f"padded to the encoder's max_len ({MAX_LEN}): pad each batch only to its longest sequence",
                f"填充到了编码器的 max_len（{MAX_LEN}）：每个批次只需填充到其中最长的序列",
            ),
            Mistake(
                torch.where(ids == pad_id, torch.zeros_like(ids), ids),
                "padded with `0`: fill with pad_id",
                "用 `0` 填充了：应使用 pad_id 填充",
            ),
        ],
    )
    expect_tensor(
        batch[1],
        mask,
        tol="exact",
        what=Msg("{what}: mask (long, `1` = real token)", "{what}：mask（long 类型，`1` = 真实词元）", what=what),
        mistakes=[
            Mistake(
                1 - mask,
                "the mask is inverted: `1` marks a real token, `0` padding",
                "掩码反了：`1` 表示真实词元，`0` 表示填充",
            )
        ],
    )
    expect_tensor(batch[2], labels, tol="exact", what=Msg("{what}: labels", "{what}：labels（标签）", what=what))


# ---------------------------------------------------------------- listings 1.23 and 1.28
@check(
    points=2,
    listings=["1.23", "1.28"],
    title="listings 1.23 and 1.28: loading IMDb into a Dataset",
    title_zh="代码清单 1.23 和 1.28：把 IMDb 加载到 Dataset 中",
)
def test_listing_1_23_1_28_dataset(sub):
    corpus = _load_local_imdb()  # grader.capstone.data reads the aclImdb tree, as listing 1.23's load_dataset would
    expect_equal(
        (len(corpus.train), len(corpus.test)),
        (6, 5),
        Msg("grader.capstone.data: sizes of the local aclImdb copy", "grader.capstone.data：本地 aclImdb 副本的大小"),
    )
    expect(
        len(corpus.replaced) == 1,
        Msg(
            "grader.capstone.data: the latin-1 review is decoded with errors='replace' and reported",
            "grader.capstone.data：latin-1 编码的评论用 errors='replace' 解码并报告",
        ),
    )
    for split in ("train", "test"):
        texts, labels = list(corpus[split]["text"]), list(corpus[split]["label"])  # plain lists: the list path
        enc = _encoder(sub)
        ds = sub.new("IMDBDataset", texts, labels, enc.handle)
        expect_equal(
            sub.length(ds),
            len(texts),
            Msg("len() of the {split} dataset", "{split} 数据集的 len()", split=split),
        )
        calls = enc.calls
        enc.expect_each_once(
            texts,
            Msg(
                "IMDBDataset.__init__ called encode {calls} times for {n_texts} texts: encode each text exactly "
                "once, in __init__",
                "IMDBDataset.__init__ 对 {n_texts} 条文本调用了 {calls} 次 encode：每条文本只在 __init__ 中编码一次",
                calls=from_input(calls),
                n_texts=from_input(len(texts)),
            ),
        )
        for i, (text, label) in enumerate(zip(texts, labels)):
            got = enc.book(sub.getitem(ds, i))
            if not isinstance(got, tuple) or len(got) != 2:
                raise CheckFailure(
                    Msg(
                        "ds[{i}] must be (ids, label), got {type_got}: the mask is made in collate, per batch",
                        "ds[{i}] 必须是 (ids, label)，实际得到 {type_got}：掩码在 collate 中按批次生成",
                        i=from_input(i),
                        type_got=from_input(type(got).__name__),
                    )
                )
            expect_tensor(
                got[0],
                torch.tensor(encode(text), dtype=torch.long),
                tol="exact",
                specials=SPECIALS,
                what=Msg(
                    "ds[{i}][0] of the {split} split, the ids of {text!r}",
                    "{split} 划分的 ds[{i}][0]，即 {text!r} 的 id",
                    i=from_input(i),
                    split=split,
                    text=from_input(text[:40]),
                ),
            )
            expect_tensor(
                got[1],
                torch.tensor(label, dtype=torch.long),
                tol="exact",
                what=Msg(
                    "ds[{i}][1] of the {split} split, a 0-D long tensor",
                    "{split} 划分的 ds[{i}][1]，一个 0 维 long 张量",
                    i=from_input(i),
                    split=split,
                ),
            )
        extra = enc.calls - len(texts)
        expect(
            extra == 0,
            Msg(
                "encode ran {extra} more times after __init__ (indexing the {split} dataset): __getitem__ "
                "must look up the stored ids, not encode again",
                "__init__ 之后 encode 又运行了 {extra} 次（索引 {split} 数据集时）：__getitem__ 必须查找保存好的 id，而不是再次编码",
                extra=from_input(extra),
                split=split,
            ),
        )


@check(points=1, title="token ids are computed once, in __init__", title_zh="词元 id 只在 __init__ 中计算一次")
def test_ids_computed_once(sub):
    texts, labels = _distinct(_corpus(20, 3))
    enc = _encoder(sub)
    ds = sub.new("IMDBDataset", texts, labels, enc.handle)
    calls = enc.calls
    enc.expect_each_once(
        texts,
        Msg(
            "building a dataset of {n_texts} texts called encode {calls} times: encode each text exactly "
            "once, in __init__; __getitem__ must look up the stored ids, not encode again (the book's "
            "__getitem__ tokenizes every review again at every epoch)",
            "构建包含 {n_texts} 条文本的数据集时调用了 {calls} 次 encode：每条文本只在 __init__ 中编码一次；__getitem__ 必须查找保存好的 id，而不是再次编码（书中的 "
            "__getitem__ 在每个 epoch 都会重新对每条评论分词）",
            n_texts=from_input(len(texts)),
            calls=from_input(calls),
        ),
    )
    for i in range(3):  # the ids it keeps are the ones encode returned (not ones computed some other way)
        got = enc.book(sub.getitem(ds, i))
        expect(
            isinstance(got, tuple) and len(got) == 2,
            Msg("ds[{i}] must be (ids, label)", "ds[{i}] 必须是 (ids, label)", i=from_input(i)),
        )
        expect_tensor(
            got[0],
            torch.tensor(encode(texts[i]), dtype=torch.long),
            tol="exact",
            what=Msg(
                "ds[{i}][0], the ids encode returned for {texts!r}",
                "ds[{i}][0]，即 encode 为 {texts!r} 返回的 id",
                i=from_input(i),
                texts=from_input(texts[i][:40]),
            ),
        )
    train, test = sub.make_loaders(ds, ds, batch_size=4, pad_id=0, seed=0)
    sub.iterate(train)
    sub.iterate(train)
    sub.iterate(test)
    calls = enc.calls
    expect(
        calls == len(texts),
        Msg(
            "encode ran {calls} more times after __init__ (indexing and three passes over the loaders): "
            "__getitem__ must look up the stored ids, not encode again",
            "__init__ 之后 encode 又运行了 {calls} 次（索引和对加载器的三次遍历）：__getitem__ 必须查找保存好的 id，而不是再次编码",
            calls=from_input(calls - len(texts)),
        ),
    )


@check(points=2, title="collate pads each batch to its longest sequence", title_zh="collate 把每个批次填充到最长的序列")
def test_collate(sub):
    f = fx()
    texts = ["the movie was good", "", "bad plot and awful acting but great music", "dull"]
    labels = [1, 0, 0, 0]
    items = _as_items(texts, labels)
    got = sub.collate(items, 0)
    _expect_batch(got, _items(texts, labels), 0, Msg("collate of 4 items, pad_id=0", "4 个样本、pad_id=0 的 collate"))
    expect_tensor(got[0], f["collate_ids"], tol="exact", what=Msg("collate ids", "collate 的 ids"))
    got = sub.collate(items, pad_id=PAD_AFTER_VOCAB)
    _expect_batch(
        got,
        _items(texts, labels),
        PAD_AFTER_VOCAB,
        Msg(
            "collate of 4 items, pad_id={pad_after_vocab}",
            "4 个样本、pad_id={pad_after_vocab} 的 collate",
            pad_after_vocab=PAD_AFTER_VOCAB,
        ),
    )
    expect_tensor(
        got[0],
        f["collate_ids_pad_after"],
        tol="exact",
        what=Msg(
            "collate ids, pad_id={pad_after_vocab}",
            "collate 的 ids，pad_id={pad_after_vocab}",
            pad_after_vocab=PAD_AFTER_VOCAB,
        ),
    )


@check(
    points=2,
    listings=["1.29"],
    title="listing 1.29: the training and test loaders",
    title_zh="代码清单 1.29：训练和测试加载器",
)
def test_listing_1_29_loaders(sub):
    texts, labels = _distinct(_corpus(60, 29))
    texts, labels = texts[:37], labels[:37]
    enc = _encoder(sub)
    ds = sub.new("IMDBDataset", texts, labels, enc.handle)
    by_row = {tuple(encode(t)): i for i, t in enumerate(texts)}
    # The book's batch size, 16: 37 examples give batches of 16, 16 and 5.
    train, test = sub.make_loaders(ds, ds, pad_id=0, seed=1)
    got = enc.book(sub.iterate(test))
    expect_equal(
        [len(b[0]) if isinstance(b, tuple) and b and isinstance(b[0], torch.Tensor) else None for b in got],
        [16, 16, 5],
        Msg(
            "sizes of the test loader's batches (batch_size=16 by default, the last one kept)",
            "测试加载器各批次的大小（默认 batch_size=16，保留最后一个批次）",
        ),
    )
    start = 0
    for n, batch in enumerate(got):
        items = _items(texts[start : start + 16], labels[start : start + 16])
        _expect_batch(
            batch,
            items,
            0,
            Msg(
                "test batch {n} (the test loader keeps the dataset's order)",
                "测试批次 {n}（测试加载器保持数据集的顺序）",
                n=from_input(n),
            ),
        )
        start += 16
    order = []
    for n, batch in enumerate(enc.book(sub.iterate(train))):
        expect(
            isinstance(batch, tuple) and len(batch) == 3,
            Msg("a training batch must be (ids, mask, labels)", "训练批次必须是 (ids, mask, labels)"),
        )
        rows = []
        for row, m in zip(batch[0], batch[1]):
            key = tuple(row[: int(m.sum())].tolist())
            expect(
                key in by_row,
                Msg(
                    "training batch {n} holds a row that is no example's ids: {key}",
                    "训练批次 {n} 中有一行不是任何样本的 id：{key}",
                    n=from_input(n),
                    key=from_input(list(key)[:12]),
                ),
            )
            rows.append(by_row[key])
        _expect_batch(
            batch,
            _items([texts[i] for i in rows], [labels[i] for i in rows]),
            0,
            Msg("training batch {n}", "训练批次 {n}", n=from_input(n)),
        )
        order += rows
    expect(
        sorted(order) == list(range(len(texts))),
        Msg(
            "one pass of the training loader must hold every example once", "训练加载器遍历一次必须恰好包含每个样本一次"
        ),
    )
    expect(
        order != list(range(len(texts))),
        Msg("the training loader must shuffle (shuffle=True)", "训练加载器必须打乱顺序（shuffle=True）"),
    )


# ---------------------------------------------------------------- a datasets split, as listing 1.23 hands it over
LABEL_NAMES = ["neg", "pos"]  # IMDb's ClassLabel
SPLIT_CALL = code('IMDBDataset(split["text"], split["label"], encode)')


def _split(sub, texts, labels, label_names=LABEL_NAMES):
    """A datasets.Dataset of these columns, built in the worker (label a ClassLabel over
    label_names; None: the type datasets infers): its handle."""
    return sub.given("hf_dataset", {"text": list(texts), "label": list(labels)}, label_names)


def _columns(sub, split):
    """split["text"] and split["label"], taken in the worker by datasets' own indexing: handles of
    datasets.Column objects, passed on to the student's code as they are."""
    return sub.getitem(split, "text"), sub.getitem(split, "label")


def _dataset_of_split(sub, split, enc, what):
    """IMDBDataset(split["text"], split["label"], enc); an error names the columns it was given."""
    texts, labels = _columns(sub, split)
    try:
        return sub.new("IMDBDataset", texts, labels, enc.handle)
    except StudentError as e:
        if e.kind == "not_implemented":
            raise
        raise CheckFailure(
            Msg(
                "{call} with {what}: {err}. The columns of a datasets split are datasets.Column objects, not lists "
                "(len(), iteration and indexing work; list methods and isinstance(column, list) do not): "
                "IMDBDataset must take them as well as lists",
                "{call}，输入为{what}：{err}。datasets 划分的列是 datasets.Column 对象，不是列表"
                "（len()、迭代和索引都可用；列表的方法和 isinstance(column, list) 不行）：IMDBDataset 必须既接受列表，也接受它们",
                call=SPLIT_CALL,
                what=what,
                err=Msg.of(e),
            )
        ) from None


def _expect_refused(sub, texts, labels, enc, what, mistake=""):
    """IMDBDataset(texts, labels, enc) must raise ValueError before encoding anything; `mistake`
    names what a dataset that accepts them has left out."""
    try:
        sub.new("IMDBDataset", texts, labels, enc.handle)
    except StudentError as e:
        if e.kind == "not_implemented":
            raise
        expect(
            e.type == "ValueError",
            Msg(
                "IMDBDataset with {what} must raise ValueError, not {type}",
                "IMDBDataset 遇到{what}时必须抛出 ValueError，而不是 {type}",
                what=what,
                type=e.type,
            ),
        )
    else:
        raise CheckFailure(
            Msg(
                "IMDBDataset with {what} must raise ValueError",
                "IMDBDataset 遇到{what}时必须抛出 ValueError",
                what=what,
            ),
            mistake=mistake,
        )
    expect(
        enc.calls == 0,
        Msg(
            "IMDBDataset with {what}: check the labels before encoding anything",
            "IMDBDataset 遇到{what}：在编码任何内容之前先检查标签",
            what=what,
        ),
    )


def _expect_items(sub, ds, enc, texts, labels, what):
    """len(ds) and every ds[i], exactly (`enc`: the dataset's encoder)."""
    expect_equal(sub.length(ds), len(texts), Msg("len() of the dataset of {what}", "{what}的数据集的 len()", what=what))
    for i, (text, label) in enumerate(zip(texts, labels)):
        got = enc.book(sub.getitem(ds, i))
        expect(
            isinstance(got, tuple) and len(got) == 2,
            Msg("ds[{i}] must be (ids, label)", "ds[{i}] 必须是 (ids, label)", i=from_input(i)),
        )
        expect_tensor(
            got[0],
            torch.tensor(encode(text), dtype=torch.long),
            tol="exact",
            what=Msg(
                "`ds[{i}][0]` of {what}, the ids of {text}",
                "{what}的 `ds[{i}][0]`，即 {text} 的 id",
                i=from_input(i),
                what=what,
                text=from_input(repr(text[:40])),
            ),
        )
        expect_tensor(
            got[1],
            torch.tensor(label, dtype=torch.long),
            tol="exact",
            what=Msg(
                "`ds[{i}][1]` of {what}, the label {label} as a `0-D` long tensor",
                "{what}的 `ds[{i}][1]`，即标签 {label}（`0-D` long 张量）",
                i=from_input(i),
                what=what,
                label=from_input(label),
            ),
        )


def _expect_test_pass(sub, loader, enc, texts, labels, batch_size, pad_id, what):
    """One pass of a test loader: batches of batch_size in the dataset's order (the last one kept),
    each padded to its own longest row (`enc`: the dataset's encoder)."""
    got = enc.book(sub.iterate(loader))
    sizes = [len(b[0]) if isinstance(b, tuple) and b and isinstance(b[0], torch.Tensor) else None for b in got]
    expected = [min(batch_size, len(texts) - start) for start in range(0, len(texts), batch_size)]
    expect_equal(sizes, expected, Msg("sizes of the batches of {what}", "{what}各批次的大小", what=what))
    for n, batch in enumerate(got):
        start = n * batch_size
        _expect_batch(
            batch,
            _items(texts[start : start + batch_size], labels[start : start + batch_size]),
            pad_id,
            Msg(
                "batch {n} of {what} (in the dataset's order)",
                "{what}的批次 {n}（按数据集的顺序）",
                n=from_input(n),
                what=what,
            ),
        )


def _train_pass(sub, loader, enc, texts, labels, pad_id, what) -> list[int]:
    """One pass of a training loader: each batch padded to its own longest row, every example
    once; the order of the examples (`enc`: the dataset's encoder)."""
    by_row = {tuple(encode(t)): i for i, t in enumerate(texts)}
    order = []
    for n, batch in enumerate(enc.book(sub.iterate(loader))):
        expect(
            isinstance(batch, tuple) and len(batch) == 3,
            Msg("a batch of {what} must be (ids, mask, labels)", "{what}的批次必须是 (ids, mask, labels)", what=what),
        )
        rows = []
        for row, m in zip(batch[0], batch[1]):
            key = tuple(row[: int(m.sum())].tolist())
            expect(
                key in by_row,
                Msg(
                    "batch {n} of {what} holds a row that is no example's ids",
                    "{what}的批次 {n} 中有一行不是任何样本的 id",
                    n=from_input(n),
                    what=what,
                ),
            )
            rows.append(by_row[key])
        _expect_batch(
            batch,
            _items([texts[i] for i in rows], [labels[i] for i in rows]),
            pad_id,
            Msg("batch {n} of {what}", "{what}的批次 {n}", n=from_input(n), what=what),
        )
        order += rows
    expect(
        sorted(order) == list(range(len(texts))),
        Msg("one pass of {what} must hold every example once", "{what}遍历一次必须恰好包含每个样本一次", what=what),
    )
    return order


@check(
    points=2,
    listings=["1.23", "1.28"],
    title='listing 1.28 on a datasets split: IMDBDataset(split["text"], split["label"], encode)',
    title_zh='在 datasets 划分上运行代码清单 1.28：IMDBDataset(split["text"], split["label"], encode)',
)
def test_datasets_split(sub):
    texts, labels = _distinct(_corpus(40, 23))
    texts, labels = texts[:21], labels[:21]
    enc = _encoder(sub)
    ds = _dataset_of_split(sub, _split(sub, texts, labels), enc, Msg("a split of 21 reviews", "21 条评论的划分"))
    calls = enc.calls
    enc.expect_each_once(
        texts,
        Msg(
            "IMDBDataset.__init__ called encode {calls} times for a split of {n_texts} reviews: encode "
            "each text exactly once, in __init__",
            "IMDBDataset.__init__ 对 {n_texts} 条评论的划分调用了 {calls} 次 encode：每条文本只在 __init__ 中编码一次",
            calls=from_input(calls),
            n_texts=from_input(len(texts)),
        ),
    )
    _expect_items(sub, ds, enc, texts, labels, Msg("the split", "该划分"))
    train, test = sub.make_loaders(ds, ds, batch_size=8, pad_id=0, seed=2)
    _expect_test_pass(
        sub,
        test,
        enc,
        texts,
        labels,
        8,
        0,
        Msg("the split's test loader (batch_size=8)", "该划分的测试加载器（batch_size=8）"),
    )
    order = _train_pass(sub, train, enc, texts, labels, 0, Msg("the split's training loader", "该划分的训练加载器"))
    expect(
        order != list(range(len(texts))),
        Msg("the training loader must shuffle (shuffle=True)", "训练加载器必须打乱顺序（shuffle=True）"),
    )
    calls = enc.calls
    expect(
        calls == len(texts),
        Msg(
            "encode ran {calls} more times after __init__ (indexing and two passes over the loaders): "
            "__getitem__ must look up the stored ids, not encode again",
            "__init__ 之后 encode 又运行了 {calls} 次（索引和对加载器的两次遍历）：__getitem__ 必须查找保存好的 id，而不是再次编码",
            calls=from_input(calls - len(texts)),
        ),
    )


@check(points=1, title="bad labels are refused", title_zh="拒绝非法的标签")
def test_label_validation(sub):
    """The docstring's promise, public: labels other than 0 and 1, and texts and labels of
    different lengths, raise ValueError (a hidden check asks the same of a datasets split)."""
    for texts, labels, what in (
        (["good", "bad"], [0, 2], Msg("a label 2", "标签 2")),
        (["good", "bad"], [-1, 1], Msg("a label -1", "标签 -1")),
        (["good", "bad"], [0, 0.5], Msg("a label 0.5", "标签 0.5")),
    ):
        _expect_refused(
            sub,
            texts,
            labels,
            _encoder(sub),
            what,
            mistake=Msg("labels other than `0` and `1` not refused", "`0` 和 `1` 以外的标签没有被拒绝"),
        )
    _expect_refused(
        sub,
        ["good", "bad", "dull"],
        [0, 1],
        _encoder(sub),
        Msg("3 texts, 2 labels", "3 条文本、2 个标签"),
        mistake=Msg("texts and labels of different lengths not refused", "长度不同的文本和标签没有被拒绝"),
    )
    texts, labels = ["good", "bad"], [0, 1]  # good labels must work too: refusing everything is not the answer
    enc = _encoder(sub)
    ds = sub.new("IMDBDataset", texts, labels, enc.handle)
    expect_equal(sub.length(ds), 2, Msg("len() of a dataset with the labels [0, 1]", "标签为 [0, 1] 的数据集的 len()"))
    for i, (text, label) in enumerate(zip(texts, labels)):
        got = enc.book(sub.getitem(ds, i))
        expect(
            isinstance(got, tuple) and len(got) == 2,
            Msg("ds[{i}] must be (ids, label)", "ds[{i}] 必须是 (ids, label)", i=from_input(i)),
        )
        expect_tensor(
            got[0],
            torch.tensor(encode(text), dtype=torch.long),
            tol="exact",
            what=Msg(
                "ds[{i}][0], the ids of {text!r}",
                "ds[{i}][0]，即 {text!r} 的 id",
                i=from_input(i),
                text=from_input(text),
            ),
        )
        expect_tensor(
            got[1],
            torch.tensor(label, dtype=torch.long),
            tol="exact",
            what=Msg(
                "ds[{i}][1], the label {label}", "ds[{i}][1]，即标签 {label}", i=from_input(i), label=from_input(label)
            ),
        )


@check(points=2, hidden=True, title="collate of other batches", title_zh="其他批次的 collate")
def test_collate_fresh(sub):
    @settings(max_examples=20, derandomize=True, database=None, deadline=None)
    @given(
        st.lists(st.tuples(st.lists(st.integers(4, 60), max_size=12), st.integers(0, 1)), min_size=1, max_size=6),
        st.sampled_from([0, 3, 50257]),
    )
    def same(rows, pad_id):
        items = [([1] + seq + [2], y) for seq, y in rows]
        tensors = [(torch.tensor(s, dtype=torch.long), torch.tensor(y, dtype=torch.long)) for s, y in items]
        _expect_batch(
            sub.collate(tensors, pad_id),
            items,
            pad_id,
            Msg(
                "collate of {n_items} items, pad_id={pad_id}",
                "{n_items} 个样本的 collate，pad_id={pad_id}",
                n_items=from_input(len(items)),
                pad_id=from_input(pad_id),
            ),
        )

    same()


@check(
    points=1,
    hidden=True,
    title="the training loader reshuffles every epoch",
    title_zh="训练加载器每个 epoch 都重新打乱",
)
def test_shuffle_each_pass(sub):
    texts, labels = _distinct(_corpus(40, 5))
    texts, labels = texts[:24], labels[:24]
    enc = _encoder(sub)
    ds = sub.new("IMDBDataset", texts, labels, enc.handle)
    by_row = {tuple(encode(t)): i for i, t in enumerate(texts)}

    def order(loader):
        out = []
        for batch in enc.book(sub.iterate(loader)):
            for row, m in zip(batch[0], batch[1]):
                out.append(by_row.get(tuple(row[: int(m.sum())].tolist()), -1))
        return out

    train, test = sub.make_loaders(ds, ds, batch_size=5, pad_id=0, seed=3)
    first, second = order(train), order(train)
    expect(
        sorted(first) == sorted(second) == list(range(24)),
        Msg("each pass of the training loader holds every example", "训练加载器的每次遍历都包含所有样本"),
    )
    expect(
        first != second,
        Msg("the training loader must reshuffle at every pass (epoch)", "训练加载器必须在每次遍历（epoch）时重新打乱"),
    )
    expect(
        order(test) == order(test) == list(range(24)),
        Msg("the test loader keeps the dataset's order at every pass", "测试加载器每次遍历都保持数据集的顺序"),
    )
    again, _ = sub.make_loaders(ds, ds, batch_size=5, pad_id=0, seed=3)
    expect(
        order(again) == first,
        Msg(
            "with the same seed, the training loader's first pass is the same "
            "(use torch.Generator().manual_seed(seed))",
            "相同种子下，训练加载器的第一次遍历必须相同（使用 torch.Generator().manual_seed(seed)）",
        ),
    )


@check(points=1, hidden=True, title="empty and over-long texts", title_zh="空文本和过长的文本")
def test_short_and_long_texts(sub):
    long_text = " ".join(["the movie was good"] * 40)
    texts, labels = ["", "dull", long_text], [0, 0, 1]
    max_len = 8
    enc = _encoder(sub, max_len=max_len)
    ds = sub.new("IMDBDataset", texts, labels, enc.handle)
    for i, t in enumerate(texts):
        expect_tensor(
            enc.book(sub.getitem(ds, i))[0],
            torch.tensor(encode(t, max_len), dtype=torch.long),
            tol="exact",
            what=Msg(
                "`ds[{i}][0]` for the text {t!r} (max_len {max_len})",
                "文本 {t!r} 的 `ds[{i}][0]`（max_len {max_len}）",
                i=from_input(i),
                t=from_input(t[:30]),
                max_len=from_input(max_len),
            ),
        )
    got = sub.collate([(torch.tensor([1, 2]), torch.tensor(1))], 0)
    _expect_batch(
        got, [([1, 2], 1)], 0, Msg("collate of one empty review ([CLS] [SEP])", "一条空评论的 collate（[CLS] [SEP]）")
    )


@check(
    points=1, hidden=True, title="a datasets split with bad labels is refused", title_zh="拒绝标签非法的 datasets 划分"
)
def test_datasets_split_labels(sub):
    for texts, labels, names, what in (
        (
            ["good", "bad", "dull"],
            [-1, -1, -1],
            LABEL_NAMES,
            Msg(
                "the columns of IMDb's unsupervised split (every label {label})",
                "IMDb 的 unsupervised 划分的列（标签都是 {label}）",
                label=from_input(-1),
            ),
        ),
        (
            ["good", "bad", "dull"],
            [0, 2, 1],
            ["neg", "neutral", "pos"],
            Msg(
                "the columns of a {k}-class split (a label {label})",
                "{k} 分类划分的列（标签 {label}）",
                k=from_input(3),
                label=from_input(2),
            ),
        ),
        (
            ["good", "bad"],
            [0.0, 0.5],
            None,
            Msg(
                "the columns of a split with float labels (a label {label})",
                "浮点标签划分的列（标签 {label}）",
                label=from_input(0.5),
            ),
        ),
    ):
        texts, labels = _columns(sub, _split(sub, texts, labels, names))
        _expect_refused(
            sub,
            texts,
            labels,
            _encoder(sub),
            what,
            mistake=Msg("labels other than `0` and `1` not refused", "`0` 和 `1` 以外的标签没有被拒绝"),
        )
    longer, shorter = ["good", "bad", "dull"], ["good", "bad"]
    texts, _ = _columns(sub, _split(sub, longer, [0, 1, 1]))
    _, labels = _columns(sub, _split(sub, shorter, [0, 1]))
    _expect_refused(
        sub,
        texts,
        labels,
        _encoder(sub),
        Msg(
            "the texts of a {n_texts}-review split and the labels of a {n_labels}-review split",
            "{n_texts} 条评论划分的文本和 {n_labels} 条评论划分的标签",
            n_texts=from_input(len(longer)),
            n_labels=from_input(len(shorter)),
        ),
        mistake=Msg("texts and labels of different lengths not refused", "长度不同的文本和标签没有被拒绝"),
    )
    texts, labels = ["good", "bad"], [1, 0]  # good labels must work too: refusing everything is not the answer
    enc = _encoder(sub)
    what = Msg("a split with the labels {labels}", "标签为 {labels} 的划分", labels=from_input(labels))
    ds = _dataset_of_split(sub, _split(sub, texts, labels), enc, what)
    _expect_items(sub, ds, enc, texts, labels, what)


@check(points=1, hidden=True, title="the loaders of a training and a test split", title_zh="训练划分和测试划分的加载器")
def test_datasets_split_loaders(sub):
    texts, labels = _distinct(_corpus(60, 41))
    train_texts, train_labels, test_texts, test_labels = texts[:23], labels[:23], texts[23:34], labels[23:34]
    enc = _encoder(sub)
    train_ds = _dataset_of_split(
        sub,
        _split(sub, train_texts, train_labels),
        enc,
        Msg("a training split of {n} reviews", "{n} 条评论的训练划分", n=from_input(len(train_texts))),
    )
    test_ds = _dataset_of_split(
        sub,
        _split(sub, test_texts, test_labels),
        enc,
        Msg("a test split of {n} reviews", "{n} 条评论的测试划分", n=from_input(len(test_texts))),
    )
    n = len(train_texts) + len(test_texts)
    enc.expect_each_once(
        train_texts + test_texts,
        Msg(
            "building the datasets of two splits, {n} reviews, called encode {calls} times: encode each "
            "text exactly once, in __init__",
            "构建两个划分（共 {n} 条评论）的数据集时调用了 {calls} 次 encode：每条文本只在 __init__ 中编码一次",
            n=from_input(n),
            calls=from_input(enc.calls),
        ),
    )
    batch_size = 6
    train, test = sub.make_loaders(train_ds, test_ds, batch_size=batch_size, pad_id=PAD_AFTER_VOCAB, seed=7)
    _expect_test_pass(
        sub,
        test,
        enc,
        test_texts,
        test_labels,
        batch_size,
        PAD_AFTER_VOCAB,
        Msg(
            "the test split's loader (batch_size={batch_size}, pad_id={pad_after_vocab})",
            "测试划分的加载器（batch_size={batch_size}，pad_id={pad_after_vocab}）",
            batch_size=from_input(batch_size),
            pad_after_vocab=from_input(PAD_AFTER_VOCAB),
        ),
    )
    what = Msg("the training split's loader", "训练划分的加载器")
    first = _train_pass(sub, train, enc, train_texts, train_labels, PAD_AFTER_VOCAB, what)
    second = _train_pass(sub, train, enc, train_texts, train_labels, PAD_AFTER_VOCAB, what)
    expect(
        first != second,
        Msg("the training loader must reshuffle at every pass (epoch)", "训练加载器必须在每次遍历（epoch）时重新打乱"),
    )
    calls, n = enc.calls, len(train_texts) + len(test_texts)
    enc.expect_each_once(
        train_texts + test_texts,
        Msg(
            "encode ran {calls} times for {n} reviews in two splits: encode each text exactly once, in __init__",
            "两个划分共 {n} 条评论，encode 却运行了 {calls} 次：每条文本只在 __init__ 中编码一次",
            calls=from_input(calls),
            n=from_input(n),
        ),
    )
