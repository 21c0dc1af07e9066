"""Checks of §1.23, multi-head self-attention with the padding mask (listing 1.31).

The mask hides padding *keys*. Checks load given weights by the book's names and compare with a
plain re-computation (bert_reference.attention); invariants show that padding is really hidden:
what sits at a padded position, and how much padding follows, change nothing.
"""
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checking import Mistake, Msg, check, code, expect, expect_equal, expect_tensor, fixtures
from grader.checks import bert_reference as R
from grader.worker.proxy import StudentError

EXERCISE = "s1_23_self_attention"
D, H = 16, 4


def make_fixtures(sol):
    sd = R.random_state(R.attention_shapes(D), seed=2340)
    g = torch.Generator().manual_seed(2341)
    x = torch.randn(3, 7, D, generator=g)
    mask = torch.tensor([[1] * 7, [1] * 5 + [0] * 2, [1] * 2 + [0] * 5])
    m = sol.MultiHeadSelfAttention(D, H)
    m.load_state_dict(sd)
    m.eval()
    with torch.no_grad():
        out = m(x, mask)
    return {"x": x, "mask": mask, "out": out, **{f"sd/{k}": v for k, v in sd.items()}}


def fx():
    return fixtures.load(EXERCISE)


def _sd(f):
    return {k.split("/", 1)[1]: v for k, v in f.items() if k.startswith("sd/")}


def _mistakes(x, mask, sd, heads):
    ref = lambda **kw: R.attention(x, mask, sd, heads, **kw)  # noqa: E731
    out = []
    for fill in (R.NEG, float("-inf")):  # with -inf, rows with every key hidden become NaN
        out += [
            Mistake(ref(mask_mode="queries", fill=fill),
                    "the mask was applied to the queries (rows) instead of the keys (columns): "
                    "reshape it to (B, 1, 1, T)", "掩码用在了查询（行）上，应该用在键（列）上：把它变成 (B, 1, 1, T)"),
            Mistake(ref(mask_mode="inverted", fill=fill),
                    "the mask is inverted: it hid the real tokens and kept the padding (hide where mask == 0)",
                    "掩码反了：遮住了真实词元、留下了填充（应遮住 mask == 0 的位置）"),
            Mistake(ref(mask_mode="both", fill=fill),
                    "padded queries were masked too: hide only the padding keys (columns), so that every row "
                    "still attends to the real tokens", "填充位置的查询也被遮住了：只应遮住填充的键（列）"),
        ]
    out += [
        Mistake(ref(mask_mode="none"), "the padding mask was not applied: padding keys still get weight",
                "没有使用填充掩码：填充的键仍然得到注意力权重"),
        Mistake(ref(scale="dim"), "the scores were scaled by sqrt(dim) instead of sqrt(d) = sqrt(dim // heads)",
                "分数除以了 sqrt(dim)，应该除以 sqrt(d) = sqrt(dim // heads)"),
        Mistake(ref(scale="none"), "the scores were not scaled by sqrt(d)", "分数没有除以 sqrt(d)"),
        Mistake(ref(split=False), "the heads were split with .view(B, heads, T, d) instead of view(B, T, heads, d) "
                "then transpose(1, 2)", "拆分多头时直接 view(B, heads, T, d)，而不是先 view(B, T, heads, d) 再 transpose(1, 2)"),
        Mistake(ref(merge=False), "the heads were merged without transpose(1, 2) back to (B, T, heads, d)",
                "合并多头前没有 transpose(1, 2) 回到 (B, T, heads, d)"),
        Mistake(ref(out=False), "the output projection `out` was not applied", "没有使用输出投影 out"),
    ]
    return out


def _expect_values(sub, seed: int):
    """Eval output with other given weights on a fresh padded batch: paired with the checks of
    structure and of invariants, so that the right layout or a constant answer earns nothing alone."""
    sd = R.random_state(R.attention_shapes(D), seed=seed)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(2, 5, D, generator=g)
    mask = torch.tensor([[1] * 5, [1] * 3 + [0] * 2])
    expect_tensor(_new(sub, sd)(x, mask), R.attention(x, mask, sd, H), tol="attention",
                  what=Msg(f"eval output (dim {D}, heads {H}) for a (2, 5, {D}) batch with given weights",
                           f"给定权重时 (2, 5, {D}) 批次在 eval 模式下的输出（dim {D}，heads {H}）"),
                  mistakes=_mistakes(x, mask, sd, H))


def _new(sub, sd, dim=D, heads=H, **kw):
    m = sub.new("MultiHeadSelfAttention", dim, heads, **kw)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.31"],
       title="listing 1.31: the attention module's layout", title_zh="代码清单 1.31：注意力模块的结构")
def test_listing_1_31_structure(sub):
    m = sub.new("MultiHeadSelfAttention", 256, 4)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_attention(256)))
    expect(not diff, Msg("print(MultiHeadSelfAttention(256, 4)) differs from listing 1.36's printed attention "
                     f"(qkv, out, attn_dropout, out_dropout, in that order): {diff}",
                         f"print(MultiHeadSelfAttention(256, 4)) 与代码清单 1.36 中打印的注意力模块不同（依次为 qkv、out、attn_dropout、out_dropout）：{diff}"))
    expect_equal(m.attr("heads"), 4, what=code("MultiHeadSelfAttention(256, 4).heads"))
    expect_equal(m.attr("d"), 64, what=Msg("MultiHeadSelfAttention(256, 4).d (features per head)",
                                           "MultiHeadSelfAttention(256, 4).d（每个头的特征数）"))
    try:
        sub.new("MultiHeadSelfAttention", 256, 6)
    except StudentError as e:
        if e.kind != "exception":
            raise
        expect(e.type in ("ValueError", "AssertionError"),
               Msg(f"MultiHeadSelfAttention(256, 6) must raise ValueError (6 does not divide 256), not {e.type or e}",
                   f"MultiHeadSelfAttention(256, 6) 必须抛出 ValueError（6 不能整除 256），而不是 {e.type or e}"))
    else:
        expect(False, Msg("MultiHeadSelfAttention(256, 6) must raise ValueError: 256 features cannot be cut into 6 "
                      "equal heads (listing 1.36's heads=6 is a book error)",
                          "MultiHeadSelfAttention(256, 6) 必须抛出 ValueError：256 个特征无法平均分成 6 个头（代码清单 1.36 中的 heads=6 是书中的错误）"))
    _expect_values(sub, seed=2347)


@check(points=4, listings=["1.31"],
       title="listing 1.31: output with given weights and padding", title_zh="代码清单 1.31：给定权重和填充时的输出")
def test_listing_1_31_given_weights(sub):
    f = fx()
    sd = _sd(f)
    out = _new(sub, sd)(f["x"], f["mask"])
    expect_tensor(out, f["out"], tol="attention",
                  what=Msg(f"eval output (dim {D}, heads {H}) for a (3, 7, {D}) batch with 0, 2 and 5 padding positions",
                           f"(3, 7, {D}) 批次（分别有 0、2、5 个填充位置）在 eval 模式下的输出（dim {D}，heads {H}）"),
                  mistakes=_mistakes(f["x"], f["mask"], sd, H))


@check(points=3, hidden=True,
       title="other sizes and lengths", title_zh="其他尺寸和长度")
def test_fresh_sizes(sub):
    g = torch.Generator().manual_seed(2342)
    for dim, heads, lengths, T in ((12, 3, [6, 4], 6), (8, 1, [3, 1, 5], 5), (24, 6, [9], 9), (16, 4, [1], 1)):
        sd = R.random_state(R.attention_shapes(dim), seed=2343 + dim + heads)
        x = torch.randn(len(lengths), T, dim, generator=g)
        mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).long()
        out = _new(sub, sd, dim, heads)(x, mask)
        expect_tensor(out, R.attention(x, mask, sd, heads), tol="attention",
                      what=Msg(f"eval output for dim {dim}, heads {heads}, real lengths {lengths} of {T}",
                               f"dim {dim}、heads {heads}、真实长度 {lengths}（共 {T}）时 eval 模式下的输出"),
                      mistakes=_mistakes(x, mask, sd, heads))


@check(points=3, hidden=True,
       title="padding does not change the real positions", title_zh="填充不改变真实位置的输出")
def test_padding_is_hidden(sub):
    sd = R.random_state(R.attention_shapes(D), seed=2344)
    m = _new(sub, sd)

    @settings(max_examples=12, derandomize=True, database=None, deadline=None)
    @given(st.lists(st.integers(1, 6), min_size=1, max_size=3), st.integers(0, 4), st.integers(0, 2**31 - 1))
    def invariants(lengths, extra, seed):
        g = torch.Generator().manual_seed(seed)
        T = max(lengths) + 1
        x = torch.randn(len(lengths), T, D, generator=g)
        mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).long()
        y = m(x, mask)
        expect_tensor(y, R.attention(x, mask, sd, H), tol="attention",  # the property alone: a constant has it
                      what=Msg(f"eval output for real lengths {lengths}", f"真实长度为 {lengths} 时 eval 模式下的输出"))
        real = mask.bool()
        # Whatever sits at a padded position is never read.
        x2 = torch.where(real[..., None], x, 10 * torch.randn(x.shape, generator=g))
        expect_tensor(m(x2, mask)[real], y[real], tol="attention",
                      what=Msg(f"outputs at real positions after changing the padded positions' vectors (lengths {lengths})",
                               f"改变填充位置的向量之后真实位置的输出（长度 {lengths}）"))
        # More padding at the end changes no output.
        x3 = torch.cat([x, torch.randn(len(lengths), extra, D, generator=g)], dim=1)
        mask3 = torch.cat([mask, torch.zeros(len(lengths), extra, dtype=torch.int64)], dim=1)
        expect_tensor(m(x3, mask3)[:, :T], y, tol="attention",
                      what=Msg(f"outputs after appending {extra} more padding positions (lengths {lengths})",
                               f"再追加 {extra} 个填充位置之后的输出（长度 {lengths}）"))
        # A sequence alone, cut to its real tokens, gives what it gets inside the padded batch.
        for b, n in enumerate(lengths):
            alone = m(x[b:b + 1, :n], mask[b:b + 1, :n])
            expect_tensor(alone[0], y[b, :n], tol="attention",
                          what=Msg(f"sequence {b} of length {n} on its own, without padding and without the rest of the batch",
                                   f"长度为 {n} 的序列 {b} 单独计算，不加填充、不带批次中其他序列时的结果"))

    invariants()


@check(points=2, hidden=True,
       title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.attention_shapes(D), seed=2345)
    g = torch.Generator().manual_seed(2346)
    x = torch.randn(2, 6, D, generator=g)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2])
    sub.seed(3)
    m = _new(sub, sd, dropout=0.5)
    first = m(x, mask)
    expect_tensor(m(x, mask), first, tol="exact", what=Msg("two calls in eval mode (dropout must be off)",
                                                           "eval 模式下的两次调用（dropout 必须关闭）"))
    expect_tensor(first, R.attention(x, mask, sd, H), tol="attention", what=Msg(
            "eval output with dropout=0.5", "dropout=0.5 时 eval 模式下的输出"))
    m.train()
    a, b = m(x, mask), m(x, mask)
    expect(isinstance(a, torch.Tensor) and not torch.equal(a, first) and not torch.equal(a, b),
           Msg("with dropout=0.5 in train mode, outputs must change from call to call (attn_dropout, out_dropout)",
               "dropout=0.5 时训练模式下每次调用的输出都必须不同（attn_dropout、out_dropout）"))
    expect(0.35 < float((a == 0).float().mean()) < 0.65,
           Msg("with dropout=0.5 in train mode about half of the outputs must be 0 (out_dropout after the projection)",
               "dropout=0.5 时训练模式下大约一半的输出必须为 0（out_dropout 在投影之后）"))
    plain = _new(sub, sd, dropout=0.0)
    plain.train()
    expect_tensor(plain(x, mask), first, tol="attention", what=Msg(
            "train-mode output with dropout=0.0 (equal to eval mode)", "dropout=0.0 时训练模式下的输出（与 eval 模式相同）"))
