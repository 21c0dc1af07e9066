"""Checks of §1.23's attention mask for padding (listing 1.27) and how attention uses it."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checking import CheckFailure, Mistake, Msg, check, code, expect, expect_tensor, fixtures, from_input

EXERCISE = "s1_23_padding_mask"
PAD, CLS, SEP = 50257, 50258, 50259

# Two reviews as listing 1.26 frames them with GPT-2's ids, max_len 12: "This movie is slow, but the
# acting is excellent." cut to 10 tokens, and "Great film!" padded.
BOOK_IDS = [
    [CLS, 1212, 3807, 318, 3105, 11, 475, 262, 7205, 318, 6275, SEP],
    [CLS, 13681, 2646, 0, SEP, PAD, PAD, PAD, PAD, PAD, PAD, PAD],
]


def _batch(lengths, seq_len, pad_id, gen):
    ids = torch.randint(0, 50257, (len(lengths), seq_len), generator=gen)
    ids[ids == pad_id] = pad_id + 1 if pad_id < 50256 else 1  # no real token equals pad_id by chance
    for row, n in enumerate(lengths):
        ids[row, n:] = pad_id
    return ids


def _query_masked(scores, mask):
    m = mask.bool()[:, None, :, None]
    return torch.softmax(scores.masked_fill(~m, -1e9), dim=-1)


def _key_masked(scores, mask):
    """The right weights, on the trusted side: padded keys get -1e9 before the softmax over the keys."""
    return torch.softmax(scores.masked_fill(~mask.bool()[:, None, None, :], -1e9), dim=-1)


def make_fixtures(sol):
    g = torch.Generator().manual_seed(1327)
    ids = torch.tensor(BOOK_IDS)
    fresh = _batch([7, 2, 9, 1], 9, PAD, g)
    scores = torch.randn(3, 2, 6, 6, generator=g) * 3
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0], [1, 1, 0, 0, 0, 0]])
    return {
        "book_ids": ids,
        "book_mask": sol.create_attention_mask(ids),
        "fresh_ids": fresh,
        "fresh_mask": sol.create_attention_mask(fresh),
        "scores": scores,
        "mask": mask,
        "weights": sol.masked_attention_weights(scores, mask),
        "key_mask": sol.key_mask(mask),
    }


def fx():
    return fixtures.load(EXERCISE)


def _mask_mistakes(ids, pad_id):
    out = [
        Mistake(
            (ids == pad_id).long(),
            "the mask is inverted: `1` marks a real token, `0` marks [PAD]",
            "掩码反了：`1` 表示真实词元，`0` 表示 [PAD]",
        )
    ]
    if pad_id != 0:
        out.append(
            Mistake(
                (ids != 0).long(),
                "compared with `0`: padding is pad_id, not `0`",
                "与 `0` 比较了：填充 id 是 pad_id，不是 `0`",
            )
        )
    return out


def _minus_inf(scores, mask):
    """Padded keys filled with -inf: a sequence of padding only is then exp(-inf) / 0 = NaN."""
    return Mistake(
        torch.softmax(scores.masked_fill(~mask.bool()[:, None, None, :], float("-inf")), dim=-1),
        "padded keys were filled with -inf: a sequence of padding only becomes 0 / 0 (NaN); fill with "
        "NEG_INF (-1e9), as the book does, and such a row gets uniform weights",
        "填充的键被填成了 -inf：全是填充的序列会变成 0 / 0（NaN）；应像书中那样填充 NEG_INF（-1e9），"
        "这样的行会得到均匀的权重",
    )


def _weight_mistakes(scores, mask):
    m = mask.bool()[:, None, None, :]
    return [
        Mistake(torch.softmax(scores, dim=-1), "the mask was not applied", "没有使用掩码"),
        Mistake(
            _query_masked(scores, mask),
            "the padded query rows were masked instead of the padded keys: the mask "
            "must broadcast over the last axis, shape (batch, 1, 1, seq_len)",
            "掩盖了填充的查询行而不是填充的键：掩码形状应为 (batch, 1, 1, seq_len)，作用在最后一维",
        ),
        Mistake(
            torch.softmax(scores + mask[:, None, None, :], dim=-1),
            "the 0/1 mask was added to the scores: padded keys need a very negative score (masked_fill with -1e9)",
            "把 0/1 掩码直接加到了分数上：填充的键需要一个极小的分数（masked_fill -1e9）",
        ),
        Mistake(
            torch.softmax(scores.masked_fill(~m, 0.0), dim=-1),
            "padded scores were set to 0, which still gets weight after the softmax: use -1e9",
            "填充位置的分数被设为 0，softmax 后仍有权重：应使用 -1e9",
        ),
        Mistake(
            torch.softmax(scores.masked_fill(~m, -1e9), dim=-2),
            "softmax over the queries (dim=-2): normalise over the keys, dim=-1",
            "在查询维 (dim=-2) 上做了 softmax：应在键维 dim=-1 上归一化",
        ),
    ]


@check(
    points=2,
    listings=["1.27"],
    title="listing 1.27: the attention mask, 1 on real tokens",
    title_zh="代码清单 1.27：注意力掩码，真实词元处为 1",
)
def test_listing_1_27_mask(sub):
    f = fx()
    for key in ("book", "fresh"):
        ids = f[f"{key}_ids"]
        expect_tensor(
            sub.create_attention_mask(ids),
            f[f"{key}_mask"],
            tol="exact",
            what=Msg(
                "create_attention_mask of a {shape_ids} batch (long: .long(), as the book)",
                "{shape_ids} 批次的 create_attention_mask（long 类型：.long()，与书中一致）",
                shape_ids=from_input(tuple(ids.shape)),
            ),
            mistakes=_mask_mistakes(ids, PAD),
        )


@check(points=1, title="the mask reshaped to hide keys", title_zh="重塑为作用于键的掩码")
def test_key_mask(sub):
    f = fx()
    mask = f["mask"]
    expect_tensor(
        sub.key_mask(mask),
        f["key_mask"],
        tol="exact",
        what=Msg("key_mask of a (3, 6) mask, bool", "(3, 6) 掩码的 key_mask，bool 类型"),
        mistakes=[
            Mistake(
                mask.bool()[:, None, :, None],
                "that shape masks the query rows: put seq_len last, (batch, 1, 1, seq_len), to mask the keys",
                "这个形状掩盖的是查询行：应把 seq_len 放在最后，(batch, 1, 1, seq_len)",
            )
        ],
    )


@check(points=2, title="attention weights with padded keys masked", title_zh="掩码填充键之后的注意力权重")
def test_masked_weights(sub):
    f = fx()
    got = sub.masked_attention_weights(f["scores"], f["mask"])
    expect_tensor(
        got,
        f["weights"],
        tol="softmax",
        what=Msg("masked_attention_weights of (3, 2, 6, 6) scores", "(3, 2, 6, 6) 分数的 masked_attention_weights"),
        mistakes=_weight_mistakes(f["scores"], f["mask"]),
    )
    # a sequence of padding only: every key masked alike, uniform weights, never 0 / 0
    mask = torch.tensor([[1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0]])
    expect_tensor(
        sub.masked_attention_weights(f["scores"], mask),
        _key_masked(f["scores"], mask),
        tol="softmax",
        what=Msg(
            "masked_attention_weights of (3, 2, 6, 6) scores where the second sequence is padding only",
            "第二个序列全是填充时 (3, 2, 6, 6) 分数的 masked_attention_weights",
        ),
        mistakes=[_minus_inf(f["scores"], mask), *_weight_mistakes(f["scores"], mask)],
    )


@check(points=1, hidden=True, title="the pad_id argument", title_zh="pad_id 参数")
def test_pad_id_argument(sub):
    g = torch.Generator().manual_seed(27)
    for pad_id in (0, 3, 50257):
        ids = _batch([4, 6, 1], 6, pad_id, g)
        ids[0, 1] = pad_id  # a [PAD] in the middle is padding too
        expect_tensor(
            sub.create_attention_mask(ids, pad_id),
            (ids != pad_id).long(),
            tol="exact",
            what=code("create_attention_mask(ids, pad_id={pad_id})", pad_id=from_input(pad_id)),
            mistakes=_mask_mistakes(ids, pad_id),
        )
    ids = torch.tensor([CLS, 11, 12, SEP, PAD, PAD])
    expect_tensor(
        sub.create_attention_mask(ids),
        torch.tensor([1, 1, 1, 1, 0, 0]),
        tol="exact",
        what=Msg(
            "create_attention_mask of one unbatched sequence (seq_len,)",
            "单个无批次序列 (seq_len,) 的 create_attention_mask",
        ),
    )


@check(
    points=2,
    hidden=True,
    title="padding does not change the weights of real tokens",
    title_zh="填充不改变真实词元的权重",
)
def test_padding_invariance(sub):
    @settings(max_examples=20, derandomize=True, database=None, deadline=None)
    @given(
        st.lists(st.integers(1, 6), min_size=1, max_size=4),
        st.integers(0, 4),
        st.integers(1, 3),
        st.integers(0, 2**31 - 1),
    )
    def invariant(lengths, extra, heads, seed):
        g = torch.Generator().manual_seed(seed)
        seq_len = max(lengths) + extra
        scores = torch.randn(len(lengths), heads, seq_len, seq_len, generator=g) * 4
        mask = torch.tensor([[1] * n + [0] * (seq_len - n) for n in lengths])
        got = sub.masked_attention_weights(scores, mask)
        expect(
            isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(scores.shape),
            Msg(
                "masked_attention_weights must keep the scores' shape {shape_scores}",
                "masked_attention_weights 必须保持分数的形状 {shape_scores}",
                shape_scores=from_input(tuple(scores.shape)),
            ),
        )
        for b, n in enumerate(lengths):
            alone = torch.softmax(scores[b, :, :n, :n], dim=-1)  # the sequence without any padding
            expect_tensor(
                got[b, :, :n, :n],
                alone,
                tol="softmax",
                what=Msg(
                    "weights of sequence {b} ({n} real tokens of {seq_len}) among its real tokens, which must "
                    "equal those without padding",
                    "序列 {b}（{seq_len} 个位置中有 {n} 个真实词元）在其真实词元上的权重，必须与没有填充时相同",
                    b=from_input(b),
                    n=from_input(n),
                    seq_len=from_input(seq_len),
                ),
            )
            expect_tensor(
                got[b, :, :, n:],
                torch.zeros(heads, seq_len, seq_len - n),
                tol="exact",
                what=Msg("weights on the padded keys of sequence {b}", "序列 {b} 在填充键上的权重", b=from_input(b)),
            )

    invariant()


@check(points=1, hidden=True, title="a sequence of padding only", title_zh="全是填充的序列")
def test_all_padding_row(sub):
    scores = torch.randn(2, 1, 4, 4, generator=torch.Generator().manual_seed(4))
    mask = torch.tensor([[1, 1, 0, 0], [0, 0, 0, 0]])
    got = sub.masked_attention_weights(scores, mask)
    if isinstance(got, torch.Tensor) and tuple(got.shape) == (2, 1, 4, 4) and torch.isnan(got).any():
        raise CheckFailure(
            Msg(
                "a sequence of padding only gave NaN weights: fill with `-1e9` (NEG_INF), not `-inf`",
                "全是填充的序列得到了 NaN 权重：应填充 `-1e9`（NEG_INF），而不是 `-inf`",
            )
        )
    expect_tensor(
        got[0],
        _key_masked(scores, mask)[0],
        tol="softmax",
        what=Msg(
            "weights of the sequence with {real} real tokens of {t}",
            "{t} 个位置中有 {real} 个真实词元的序列的权重",
            real=from_input(int(mask[0].sum())),
            t=from_input(mask.shape[1]),
        ),
    )
    expect_tensor(
        got[1],
        torch.full((1, 4, 4), 0.25),
        tol="softmax",
        what=Msg(
            "weights of a sequence of padding only (all keys masked alike: uniform)",
            "全是填充的序列的权重（所有键都被同样掩码：均匀分布）",
        ),
    )


@check(points=1, hidden=True, title="the scores of padded keys do not matter", title_zh="填充键的分数不起作用")
def test_padding_scores_cannot_leak(sub):
    g = torch.Generator().manual_seed(31)
    scores = torch.randn(2, 2, 5, 5, generator=g)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 0]])
    base = sub.masked_attention_weights(scores, mask)
    expect_tensor(
        base,
        _key_masked(scores, mask),
        tol="softmax",  # the property alone: a constant has it
        what=Msg(
            "weights of a {shape} batch whose sequences hold {lengths} real tokens",
            "各序列真实词元个数为 {lengths} 的 {shape} 批次的权重",
            shape=from_input(tuple(scores.shape)),
            lengths=from_input(mask.sum(1).tolist()),
        ),
    )
    loud = scores.clone()
    loud[0, :, :, 3:] = 1e4  # huge scores on padded keys must change nothing
    loud[1, :, :, 4:] = -1e4
    expect_tensor(
        sub.masked_attention_weights(loud, mask),
        base,
        tol="softmax",
        what=Msg(
            "weights when the padded keys' scores change (they must not matter)",
            "填充键的分数改变时的权重（它们不应有影响）",
        ),
    )
