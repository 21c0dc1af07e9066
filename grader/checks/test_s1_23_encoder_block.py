"""Checks of §1.23, the pre-LN transformer encoder block (listing 1.33).

Given weights (norm1 and norm2 with different gains, so that swapping or reusing them shows)
are loaded by the book's names; the output is compared with the plain pre-LN block of
bert_reference, and the common wrong wirings (post-LN, missing shortcuts, a normalised
shortcut) are named.
"""
import torch

from grader.checking import Mistake, Msg, check, expect, expect_equal, expect_tensor, fixtures
from grader.checks import bert_reference as R

EXERCISE = "s1_23_encoder_block"
D, H, FF = 16, 4, 32


def make_fixtures(sol):
    sd = R.random_state(R.block_shapes(D, FF), seed=2360)
    g = torch.Generator().manual_seed(2361)
    x = torch.randn(3, 6, D, generator=g)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2, [1] * 3 + [0] * 3])
    m = sol.TransformerBlock(D, H, FF)
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
    ref = lambda order: R.block(x, mask, sd, heads, order=order)  # noqa: E731
    return [
        Mistake(ref("post"), "this is post-LN, norm(x + sublayer(x)); the book's block is pre-LN: "
                "x + sublayer(norm(x))", "这是 post-LN：norm(x + sublayer(x))；书中的块是 pre-LN：x + sublayer(norm(x))"),
        Mistake(ref("no_residual"), "the residual (shortcut) connections are missing: add the sub-layer's output to x",
                "缺少残差（快捷）连接：要把子层输出加回 x"),
        Mistake(ref("no_attn_residual"), "the residual around attention is missing: x = x + attn(norm1(x), mask)",
                "注意力子层缺少残差：x = x + attn(norm1(x), mask)"),
        Mistake(ref("no_ff_residual"), "the residual around the feed-forward network is missing: x = x + ff(norm2(x))",
                "前馈子层缺少残差：x = x + ff(norm2(x))"),
        Mistake(ref("norm1_twice"), "norm1 was used before both sub-layers; the feed-forward network reads norm2(x)",
                "两个子层前都用了 norm1；前馈网络之前应该用 norm2"),
        Mistake(ref("residual_from_normed"), "x was replaced by norm(x) before the shortcut: the residual must add "
                "the block's un-normalised x", "在快捷连接之前把 x 换成了 norm(x)：残差要加的是未归一化的 x"),
    ]


def _expect_values(sub, seed: int):
    """Eval output with other given weights on a fresh padded batch: paired with the check of the
    layout, so that the right layout around a wrong forward earns nothing."""
    sd = R.random_state(R.block_shapes(D, FF), seed=seed)
    x = torch.randn(2, 4, D, generator=torch.Generator().manual_seed(seed + 1))
    mask = torch.tensor([[1] * 4, [1] * 2 + [0] * 2])
    expect_tensor(_new(sub, sd)(x, mask), R.block(x, mask, sd, H), tol="encoder",
                  what=Msg(f"eval output of TransformerBlock({D}, {H}, {FF}) for a (2, 4, {D}) batch with given weights",
                           f"给定权重时 TransformerBlock({D}, {H}, {FF}) 对 (2, 4, {D}) 批次在 eval 模式下的输出"),
                  mistakes=_mistakes(x, mask, sd, H))


def _new(sub, sd, dim=D, heads=H, ff_dim=FF, **kw):
    m = sub.new("TransformerBlock", dim, heads, ff_dim, **kw)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.33"],
       title="listing 1.33: the block's layout", title_zh="代码清单 1.33：编码器块的结构")
def test_listing_1_33_structure(sub):
    m = sub.new("TransformerBlock", 256, 4, 1024)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_block(256, 1024)))
    expect(not diff, Msg("print(TransformerBlock(256, 4, 1024)) differs from listing 1.36's printed block "
                     f"(attn, ff, norm1, norm2, in that order): {diff}",
                         f"print(TransformerBlock(256, 4, 1024)) 与代码清单 1.36 中打印的块不同（依次为 attn、ff、norm1、norm2）：{diff}"))
    small = sub.new("TransformerBlock", D, H, FF).state_dict()
    shapes = R.block_shapes(D, FF)
    expect_equal(sorted(small), sorted(shapes), what=Msg(f"parameter names of TransformerBlock({D}, {H}, {FF})",
                                                         f"TransformerBlock({D}, {H}, {FF}) 的参数名"))
    for name, shape in shapes.items():
        expect_equal(tuple(small[name].shape), shape, what=Msg(f"shape of {name}", f"{name} 的形状"))
    _expect_values(sub, seed=2366)


@check(points=4, listings=["1.33"],
       title="listing 1.33: output with given weights", title_zh="代码清单 1.33：给定权重时的输出")
def test_listing_1_33_given_weights(sub):
    f = fx()
    sd = _sd(f)
    out = _new(sub, sd)(f["x"], f["mask"])
    expect_tensor(out, f["out"], tol="encoder", what=Msg(f"eval output of TransformerBlock({D}, {H}, {FF}) for a "
                  f"(3, 6, {D}) batch with given weights",
                                                         f"给定权重时 TransformerBlock({D}, {H}, {FF}) 对 (3, 6, {D}) 批次在 eval 模式下的输出"), mistakes=_mistakes(f["x"], f["mask"], sd, H))


@check(points=2, hidden=True,
       title="other sizes and lengths", title_zh="其他尺寸和长度")
def test_fresh_sizes(sub):
    g = torch.Generator().manual_seed(2362)
    for dim, heads, ff_dim, lengths, T in ((12, 2, 24, [5, 2], 5), (8, 4, 8, [1], 1), (20, 5, 40, [7, 7, 3], 7)):
        sd = R.random_state(R.block_shapes(dim, ff_dim), seed=2363 + dim)
        x = torch.randn(len(lengths), T, dim, generator=g)
        mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).long()
        expect_tensor(_new(sub, sd, dim, heads, ff_dim)(x, mask), R.block(x, mask, sd, heads), tol="encoder",
                      what=Msg(f"eval output of TransformerBlock({dim}, {heads}, {ff_dim}), real lengths {lengths} of {T}",
                               f"TransformerBlock({dim}, {heads}, {ff_dim}) 在 eval 模式下的输出，真实长度 {lengths}，共 {T}"),
                      mistakes=_mistakes(x, mask, sd, heads))


@check(points=1, hidden=True,
       title="padding does not change the real positions", title_zh="填充不改变真实位置的输出")
def test_padding_is_hidden(sub):
    sd = R.random_state(R.block_shapes(D, FF), seed=2364)
    m = _new(sub, sd)
    g = torch.Generator().manual_seed(2365)
    x = torch.randn(2, 5, D, generator=g)
    mask = torch.tensor([[1] * 3 + [0] * 2, [1] * 4 + [0]])
    y = m(x, mask)
    expect_tensor(y, R.block(x, mask, sd, H), tol="encoder", what=Msg(  # the property alone: a constant has it
            "eval output for real lengths [3, 4] of 5", "真实长度为 [3, 4]（共 5）时 eval 模式下的输出"))
    real = mask.bool()
    x2 = torch.where(real[..., None], x, 5 * torch.randn(x.shape, generator=g))
    expect_tensor(m(x2, mask)[real], y[real], tol="encoder",
                  what=Msg("outputs at real positions after changing the padded positions' vectors (pass mask to attn)",
                           "改变填充位置的向量之后真实位置的输出（要把 mask 传给 attn）"))
    x3 = torch.cat([x, torch.randn(2, 3, D, generator=g)], dim=1)
    mask3 = torch.cat([mask, torch.zeros(2, 3, dtype=torch.int64)], dim=1)
    expect_tensor(m(x3, mask3)[:, :5], y, tol="encoder", what=Msg(
            "outputs after appending 3 more padding positions", "再追加 3 个填充位置之后的输出"))


@check(points=1, hidden=True,
       title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.block_shapes(D, FF), seed=2366)
    x = torch.randn(2, 6, D, generator=torch.Generator().manual_seed(2367))
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2])
    sub.seed(11)
    m = _new(sub, sd, dropout=0.3)
    first = m(x, mask)
    expect_tensor(m(x, mask), first, tol="exact", what=Msg("two calls in eval mode (dropout must be off)",
                                                           "eval 模式下的两次调用（dropout 必须关闭）"))
    m.train()
    a, b = m(x, mask), m(x, mask)
    expect(isinstance(a, torch.Tensor) and not torch.equal(a, first) and not torch.equal(a, b),
           Msg("with dropout=0.3 in train mode, outputs must change from call to call (pass dropout to attn and ff)",
               "dropout=0.3 时训练模式下每次调用的输出都必须不同（要把 dropout 传给 attn 和 ff）"))
    plain = _new(sub, sd, dropout=0.0)
    plain.train()
    expect_tensor(plain(x, mask), first, tol="encoder", what=Msg(
            "train-mode output with dropout=0.0 (equal to eval mode)", "dropout=0.0 时训练模式下的输出（与 eval 模式相同）"))
