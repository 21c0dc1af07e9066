"""Checks of §1.23, the pre-LN transformer encoder block (listing 1.33).

Given weights (norm1 and norm2 with different gains, so that swapping or reusing them shows)
are loaded by the book's names; the output is compared with the plain pre-LN block of
bert_reference, and the common wrong wirings (post-LN, missing shortcuts, a normalised
shortcut) are named. Dropout is read through weights under which each branch adds a constant
(transparent_state): output - x shows, element by element, what attention's out_dropout and the
feed-forward network's two Dropouts dropped over 12 train-mode calls, held to the rule of
grader/checking/draws.py; the residual no longer hides the zeros.
"""

import torch

from grader.checking import draws, grading
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
        Mistake(
            ref("post"),
            "this is post-LN, norm(x + sublayer(x)); the book's block is pre-LN: x + sublayer(norm(x))",
            "这是 post-LN：norm(x + sublayer(x))；书中的块是 pre-LN：x + sublayer(norm(x))",
        ),
        Mistake(
            ref("no_residual"),
            "the residual (shortcut) connections are missing: add the sub-layer's output to x",
            "缺少残差（快捷）连接：要把子层输出加回 x",
        ),
        Mistake(
            ref("no_attn_residual"),
            "the residual around attention is missing: `x = x + attn(norm1(x), mask)`",
            "注意力子层缺少残差：`x = x + attn(norm1(x), mask)`",
        ),
        Mistake(
            ref("no_ff_residual"),
            "the residual around the feed-forward network is missing: `x = x + ff(norm2(x))`",
            "前馈子层缺少残差：`x = x + ff(norm2(x))`",
        ),
        Mistake(
            ref("norm1_twice"),
            "`norm1` was used before both sub-layers; the feed-forward network reads `norm2(x)`",
            "两个子层前都用了 `norm1`；前馈网络之前应该用 `norm2`",
        ),
        Mistake(
            ref("residual_from_normed"),
            "x was replaced by norm(x) before the shortcut: the residual must add the block's un-normalised x",
            "在快捷连接之前把 x 换成了 norm(x)：残差要加的是未归一化的 x",
        ),
    ]


def _expect_values(sub, seed: int):
    """Eval output with other given weights on a fresh padded batch: paired with the check of the
    layout, so that the right layout around a wrong forward earns nothing."""
    sd = R.random_state(R.block_shapes(D, FF), seed=seed)
    x = torch.randn(2, 4, D, generator=torch.Generator().manual_seed(seed + 1))
    mask = torch.tensor([[1] * 4, [1] * 2 + [0] * 2])
    expect_tensor(
        _new(sub, sd)(x, mask),
        R.block(x, mask, sd, H),
        tol="encoder",
        what=Msg(
            "eval output of TransformerBlock({d}, {h}, {ff}) for a (2, 4, {d}) batch with given weights",
            "给定权重时 TransformerBlock({d}, {h}, {ff}) 对 (2, 4, {d}) 批次在 eval 模式下的输出",
            d=D,
            h=H,
            ff=FF,
        ),
        mistakes=_mistakes(x, mask, sd, H),
    )


def _new(sub, sd, dim=D, heads=H, ff_dim=FF, **kw):
    m = sub.new("TransformerBlock", dim, heads, ff_dim, **kw)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.33"], title="listing 1.33: the block's layout", title_zh="代码清单 1.33：编码器块的结构")
def test_listing_1_33_structure(sub):
    m = sub.new("TransformerBlock", 256, 4, 1024)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_block(256, 1024)))
    expect(
        not diff,
        Msg(
            "print(TransformerBlock(256, 4, 1024)) differs from listing 1.36's printed block (attn, ff, "
            "norm1, norm2, in that order): {diff}",
            "print(TransformerBlock(256, 4, 1024)) 与代码清单 1.36 中打印的块不同（依次为 attn、ff、norm1、norm2）：{diff}",
            diff=diff,
        ),
    )
    small = sub.new("TransformerBlock", D, H, FF).state_dict()
    shapes = R.block_shapes(D, FF)
    expect_equal(
        sorted(small),
        sorted(shapes),
        what=Msg(
            "parameter names of TransformerBlock({d}, {h}, {ff})",
            "TransformerBlock({d}, {h}, {ff}) 的参数名",
            d=D,
            h=H,
            ff=FF,
        ),
    )
    for name, shape in shapes.items():
        expect_equal(tuple(small[name].shape), shape, what=Msg("shape of {name}", "{name} 的形状", name=name))
    _expect_values(sub, seed=2366)


@check(
    points=4,
    listings=["1.33"],
    title="listing 1.33: output with given weights",
    title_zh="代码清单 1.33：给定权重时的输出",
)
def test_listing_1_33_given_weights(sub):
    f = fx()
    sd = _sd(f)
    out = _new(sub, sd)(f["x"], f["mask"])
    expect_tensor(
        out,
        f["out"],
        tol="encoder",
        what=Msg(
            "eval output of TransformerBlock({d}, {h}, {ff}) for a (3, 6, {d}) batch with given weights",
            "给定权重时 TransformerBlock({d}, {h}, {ff}) 对 (3, 6, {d}) 批次在 eval 模式下的输出",
            d=D,
            h=H,
            ff=FF,
        ),
        mistakes=_mistakes(f["x"], f["mask"], sd, H),
    )


@check(points=1, hidden=True, title="other sizes and lengths", title_zh="其他尺寸和长度")
def test_fresh_sizes(sub):
    g = torch.Generator().manual_seed(2362)
    for dim, heads, ff_dim, lengths, T in ((12, 2, 24, [5, 2], 5), (8, 4, 8, [1], 1), (20, 5, 40, [7, 7, 3], 7)):
        sd = R.random_state(R.block_shapes(dim, ff_dim), seed=2363 + dim)
        x = torch.randn(len(lengths), T, dim, generator=g)
        mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).long()
        expect_tensor(
            _new(sub, sd, dim, heads, ff_dim)(x, mask),
            R.block(x, mask, sd, heads),
            tol="encoder",
            what=Msg(
                "eval output of TransformerBlock({dim}, {heads}, {ff_dim}), real lengths {lengths} of {t}",
                "TransformerBlock({dim}, {heads}, {ff_dim}) 在 eval 模式下的输出，真实长度 {lengths}，共 {t}",
                dim=from_input(dim),
                heads=from_input(heads),
                ff_dim=from_input(ff_dim),
                lengths=from_input(lengths),
                t=from_input(T),
            ),
            mistakes=_mistakes(x, mask, sd, heads),
        )


@check(points=1, hidden=True, title="padding does not change the real positions", title_zh="填充不改变真实位置的输出")
def test_padding_is_hidden(sub):
    sd = R.random_state(R.block_shapes(D, FF), seed=2364)
    m = _new(sub, sd)
    g = torch.Generator().manual_seed(2365)
    x = torch.randn(2, 5, D, generator=g)
    mask = torch.tensor([[1] * 3 + [0] * 2, [1] * 4 + [0]])
    y = m(x, mask)
    B, T = mask.shape
    expect_tensor(
        y,
        R.block(x, mask, sd, H),
        tol="encoder",
        what=Msg(  # the property alone: a constant has it
            "eval output for real lengths {lengths} of {t}",
            "真实长度为 {lengths}（共 {t}）时 eval 模式下的输出",
            lengths=from_input(mask.sum(1).tolist()),
            t=from_input(T),
        ),
    )
    real = mask.bool()
    x2 = torch.where(real[..., None], x, 5 * torch.randn(x.shape, generator=g))
    expect_tensor(
        m(x2, mask)[real],
        y[real],
        tol="encoder",
        what=Msg(
            "outputs at real positions after changing the padded positions' vectors (pass mask to attn)",
            "改变填充位置的向量之后真实位置的输出（要把 mask 传给 attn）",
        ),
    )
    extra = 3
    x3 = torch.cat([x, torch.randn(B, extra, D, generator=g)], dim=1)
    mask3 = torch.cat([mask, torch.zeros(B, extra, dtype=torch.int64)], dim=1)
    expect_tensor(
        m(x3, mask3)[:, :T],
        y,
        tol="encoder",
        what=Msg(
            "outputs after appending {extra} more padding positions",
            "再追加 {extra} 个填充位置之后的输出",
            extra=from_input(extra),
        ),
    )


# ----------------------------------------------------------------------------- dropout, read through the output
DROP_P = 0.3
DROPOUT_CALLS = 12  # calls of the rule check: the number dropped must vary across them as Binomial(n, p) does
TB, TT = 16, 8
# The book's sizes too (listing 1.36: TransformerBlock(256, 4, 1024) on 128 tokens): a dropout honest
# at dim 16 and structured from 64+ features got full marks.
SMALL = (D, H, FF, TB, TT)  # (dim, heads, ff_dim, batch, tokens)
BOOK = (256, 4, 1024, 1, 128)
ALPHA = 10.0  # attn.out.bias: the attention branch adds 0 or ALPHA / (1 - p) to each feature
FF_SHIFT, BIAS = 1.5, 1.0  # ff.net.0 = 0 x + FF_SHIFT (+ a little per feature), ff.net.3 = [identity | 0] + BIAS
TOL = 1e-4
DEFAULT_P = 0.1  # what MultiHeadSelfAttention and FeedForward use when the block does not pass dropout on


def seen(size=SMALL) -> Msg:
    d, h, f, b, t = size
    return Msg(
        "TransformerBlock({d}, {h}, {f}, dropout={p}) in train mode on a ({b}, {t}, {d}) batch, with weights that "
        "make each branch's output a constant (`attn.out`: weight {w0}, bias {alpha}; `ff.net.0`: weight {w0}, bias "
        "about {shift}; `ff.net.3`: the identity, bias {bias}), so that output - x shows what each dropout dropped",
        "训练模式下的 TransformerBlock({d}, {h}, {f}, dropout={p})，输入 ({b}, {t}, {d}) 批次，所用权重使每个分支的输出"
        "都是常数（`attn.out`：权重 {w0}，偏置 {alpha}；`ff.net.0`：权重 {w0}，偏置约 {shift}；`ff.net.3`：单位矩阵，偏置 {bias}），"
        "因此 output - x 显示出每个 dropout 丢弃了什么",
        d=from_input(d),
        h=from_input(h),
        f=from_input(f),
        p=from_input(DROP_P),
        b=from_input(b),
        t=from_input(t),
        w0=from_input(0),
        alpha=from_input(ALPHA),
        shift=from_input(FF_SHIFT),
        bias=from_input(BIAS),
    )


DROPOUT_HINT = Msg(
    "pass dropout on: `self.attn = MultiHeadSelfAttention(dim, heads, dropout)` and "
    "`self.ff = FeedForward(dim, ff_dim, dropout)`, and add no dropout of your own",
    "把 dropout 传下去：`self.attn = MultiHeadSelfAttention(dim, heads, dropout)`，"
    "`self.ff = FeedForward(dim, ff_dim, dropout)`，不要再自己加 dropout",
)


def transparent_state(seed: int, dim: int = D, ff_dim: int = FF) -> dict:
    """Given weights under which neither branch reads its input: attention's out is 0 x +
    ALPHA, so its branch adds ALPHA x b (b: out_dropout's factor); the feed-forward network's
    first Linear is 0 x + g0 (hidden feature i: GELU(g0_i) = g_i), its second the identity on the
    first dim hidden features + BIAS, so its branch adds (g_i x a_i + BIAS) x c_i (a: the first
    Dropout's factor, c: the last one's). output - x is the sum of the two, a value of its own
    for each outcome (g0 spans FF_SHIFT + [0, 0.64): every sum stays apart at any size)."""
    sd = R.random_state(R.block_shapes(dim, ff_dim), seed=seed)
    w3 = torch.zeros(dim, ff_dim)
    w3[torch.arange(dim), torch.arange(dim)] = 1.0
    return dict(
        sd,
        **{
            "attn.out.weight": torch.zeros(dim, dim),
            "attn.out.bias": torch.full((dim,), ALPHA),
            "ff.net.0.weight": torch.zeros(ff_dim, dim),
            "ff.net.0.bias": FF_SHIFT + 0.64 * torch.arange(ff_dim).float() / ff_dim,
            "ff.net.3.weight": w3,
            "ff.net.3.bias": torch.full((dim,), BIAS),
        },
    )


def read_dropout(branches, g: torch.Tensor, p_attn: float, p_ff: float, tol: float = TOL):
    """Sort each element of output - x: attention's branch 0 or ALPHA x s_attn; the feed-forward
    branch 0, BIAS x s_ff or (g x s_ff + BIAS) x s_ff (s = 1 / (1 - p); p = 0: never dropped).
    Returns per call (attention output dropped, hidden feature dropped, readable, ff output
    dropped), each (B, T, dim), or None when some element is none of those sums."""
    sa, sf = 1 / (1 - p_attn), 1 / (1 - p_ff)
    attn = [(True, 0.0), (False, ALPHA * sa)] if p_attn > 0 else [(False, ALPHA)]
    ff = [(0, 0.0), (1, BIAS * sf), (2, (g * sf + BIAS) * sf)] if p_ff > 0 else [(2, g + BIAS)]
    combos = [(a, f, va + vf) for a, va in attn for f, vf in ff]
    reads = []
    for y in branches:
        idx = R.read_levels(y, [torch.as_tensor(v) for _, _, v in combos], tol)
        if idx is None:
            return None
        a_dropped = torch.tensor([a for a, _, _ in combos])[idx]
        f = torch.tensor([f for _, f, _ in combos])[idx]
        reads.append((a_dropped, f == 1, f != 0, f == 0))
    return reads


def dropout_reads(sub, seed: int, size=SMALL):
    dim, heads, ff_dim, batch, tokens = size
    what = seen(size)
    sd = transparent_state(seed, dim, ff_dim)
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.randn(batch, tokens, dim, generator=g)
    mask = torch.ones(batch, tokens, dtype=torch.int64)
    sub.seed(seed % 100)
    m = _new(sub, sd, dim, heads, ff_dim, dropout=DROP_P)
    want = R.block(x, mask, sd, heads)
    for _ in range(2):
        expect_tensor(
            m(x, mask),
            want,
            tol="encoder",
            what=Msg(
                "{what}, after .eval() (no dropout: the same output on every call)",
                "{what}，.eval() 之后（没有 dropout：每次调用输出都相同）",
                what=what,
            ),
            mistakes=_mistakes(x, mask, sd, heads),
        )
    m.train()
    ys = [m(x, mask) for _ in range(DROPOUT_CALLS)]
    for y in ys:
        expect(
            isinstance(y, torch.Tensor) and tuple(y.shape) == tuple(x.shape) and bool(torch.isfinite(y).all()),
            Msg(
                "{what} must return a tensor of x's shape, without NaN",
                "{what} 必须返回与 x 形状相同、不含 NaN 的张量",
                what=what,
            ),
        )
    gelu = torch.nn.functional.gelu(sd["ff.net.0.bias"][:dim])
    branches = [y.double() - x.double() for y in ys]
    reads = read_dropout(branches, gelu, DROP_P, DROP_P)
    if reads is not None:
        return reads
    for p_attn in (DROP_P, DEFAULT_P, 0.0):
        for p_ff in (DROP_P, DEFAULT_P, 0.0):
            if (p_attn, p_ff) != (DROP_P, DROP_P) and read_dropout(branches, gelu, p_attn, p_ff) is not None:
                which = [n for n, q in (("attn", p_attn), ("ff", p_ff)) if q != DROP_P]
                raise CheckFailure(
                    Msg(
                        "{what}: {which} dropped as if built with dropout=`{got}`, not {p}. {hint}",
                        "{what}：{which} 的丢弃方式相当于 dropout=`{got}`，而不是 {p}。{hint}",
                        what=what,
                        which=" and ".join(which),
                        got=p_attn if p_attn != DROP_P else p_ff,
                        p=from_input(DROP_P),
                        hint=DROPOUT_HINT,
                    ),
                    mistake=Msg("dropout not passed on", "dropout 没有传给子层"),
                )
    raise CheckFailure(
        Msg(
            "{what}: output - x is not what the two sub-layers' dropouts give (each of attn's outputs "
            "`0` or `{alpha} / (1 - p)`, plus each of ff's `0`, `{bias} / (1 - p)` or `(g / (1 - p) + {bias}) / (1 - p)`): "
            "the block adds attn's and ff's outputs to x as they are, without a dropout or a scale of "
            "its own. {hint}",
            "{what}：output - x 不是两个子层的 dropout 所给出的值（attn 的每个输出为 `0` 或 `{alpha} / (1 - p)`，"
            "加上 ff 的每个输出 `0`、`{bias} / (1 - p)` 或 `(g / (1 - p) + {bias}) / (1 - p)`）：块把 attn 和 ff 的输出原样"
            "加到 x 上，不另做 dropout 或缩放。{hint}",
            what=what,
            alpha=from_input(ALPHA),
            bias=from_input(BIAS),
            hint=DROPOUT_HINT,
        ),
        mistake=Msg("dropout of the block's own", "模块自己另加了 dropout"),
    )


@check(
    points=1,
    listings=["1.33"],
    title="dropout in training: attention's and the feed-forward network's, passed on",
    title_zh="训练时的 dropout：传给注意力和前馈网络的 dropout",
)
def test_dropout_in_training(sub):
    # output - x read as what each sub-layer's dropout dropped, 12 calls, at a small size (~0.1 s)
    _expect_drawn(dropout_reads(sub, 2374, SMALL), seen(SMALL))
    # and at the book's size and where the course trains: batch 32 x 256 tokens, float32, float64 and bf16
    # (not in `kata check`: seconds of reads that only a rule keyed on the size or the dtype fails)
    if grading():
        _expect_drawn(dropout_reads(sub, 2370, BOOK), seen(BOOK))
        expect_rule_where_the_course_trains(sub, seed=2372)


@check(points=1, hidden=True, title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.block_shapes(D, FF), seed=2366)
    x = torch.randn(2, 6, D, generator=torch.Generator().manual_seed(2367))
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2])
    sub.seed(11)
    p_on, p_off = 0.3, 0.0
    m = _new(sub, sd, dropout=p_on)
    first = m(x, mask)
    expect_tensor(
        m(x, mask),
        first,
        tol="exact",
        what=Msg("two calls in eval mode (dropout must be off)", "eval 模式下的两次调用（dropout 必须关闭）"),
    )
    # The rule, not "outputs change", on another draw of the small size (the book's size and the
    # training size are test_dropout_in_training's, when grading)
    _expect_drawn(dropout_reads(sub, 2368, SMALL), seen(SMALL))
    plain = _new(sub, sd, dropout=p_off)
    plain.train()
    expect_tensor(
        plain(x, mask),
        first,
        tol="encoder",
        what=Msg(
            "train-mode output with dropout={p}, equal to eval mode",
            "训练模式下的输出（dropout={p}），应与 eval 模式相同",
            p=from_input(p_off),
        ),
    )


def _expect_drawn(reads, what: Msg) -> None:
    for i, name, hint in (
        (
            0,
            Msg("attention's outputs (out_dropout)", "注意力的输出（out_dropout）"),
            Msg(
                "attn's out_dropout draws once for each output element",
                "attn 的 out_dropout 对每个输出元素独立抽样一次",
            ),
        ),
        (
            1,
            Msg(
                "the feed-forward network's hidden features (its first Dropout)", "前馈网络的隐藏特征（第一个 Dropout）"
            ),
            Msg(
                "ff's first Dropout draws once for each hidden feature of each token",
                "ff 的第一个 Dropout 对每个词元的每个隐藏特征独立抽样一次",
            ),
        ),
        (
            3,
            Msg("the feed-forward network's outputs (its last Dropout)", "前馈网络的输出（最后一个 Dropout）"),
            Msg(
                "ff's last Dropout draws once for each output element",
                "ff 的最后一个 Dropout 对每个输出元素独立抽样一次",
            ),
        ),
    ):
        part = [(r[i], r[2] if i == 1 else torch.ones_like(r[i])) for r in reads]
        found = draws.bernoulli_findings(part, DROP_P)
        if not found:  # the same mask for every sequence shows with the batch last
            found = draws.bernoulli_findings([(c.permute(1, 2, 0), e.permute(1, 2, 0)) for c, e in part], DROP_P)
        draws.expect_drawn(
            found,
            Msg(
                "{what}, {n} calls in a row: {name}",
                "{what}，连续调用 {n} 次：{name}",
                what=what,
                n=from_input(DROPOUT_CALLS),
                name=name,
            ),
            Msg("dropped", "丢弃"),
            Msg("{hint}; {rule}", "{hint}；{rule}", hint=hint, rule=DROPOUT_HINT),
        )


# ----------------------------------------------------------------------------- dropout where the course trains
# Issue 24, fourth outside attack: a block whose dropouts were all off for T > 128 (or outside
# float32) got full marks: the checks above read 128 tokens at most, in float32. So the rule is
# also read at the course's training size, TransformerBlock(256, 4, 1024) on a (32, 256, 256)
# batch, in float32 (2 calls), float64 (1 call, module and input cast) and bfloat16 autocast (1 call,
# float32 weights, as `kata train` runs bf16), every call as in training (x requires grad), every
# index of every axis held to rate p (draws.region_findings: sums only, cheap at this size).
TRAIN = (256, 4, 1024, 32, 256)
TRAIN_CALLS = 2
DTYPE_TOL = {torch.float32: 1e-3, torch.float64: TOL, torch.bfloat16: 0.5}  # bf16: output - x to a few ulps of 16
AMP_NAME = "bfloat16 autocast"  # the bf16 read: float32 weights and input under torch.autocast, as `kata train` runs


def expect_rule_where_the_course_trains(sub, seed: int):
    """TRAIN in each dtype: output - x read as in dropout_reads (every element one of the sums
    the three dropouts give, within the dtype's rounding), and attn's out_dropout, ff's first and
    last Dropout each at rate p at every sequence, token and feature."""
    dim, heads, ff_dim, batch, tokens = TRAIN
    sd = transparent_state(seed, dim, ff_dim)
    x = torch.randn(batch, tokens, dim, generator=torch.Generator().manual_seed(seed + 1))
    mask = torch.ones(batch, tokens, dtype=torch.int64)
    gelu = torch.nn.functional.gelu(sd["ff.net.0.bias"][:dim].double())
    for dtype, calls in ((torch.float32, TRAIN_CALLS), (torch.float64, 1), (torch.bfloat16, 1)):
        what = Msg(
            "TransformerBlock({d}, {h}, {f}, dropout={p}) in train mode on a ({b}, {t}, {d}) {dtype} batch (the "
            "course's training size), with weights that make each branch's output a constant (attn.out = 0 x + "
            "{alpha}; ff.net.0 = 0 x + about {shift}, ff.net.3 = identity + 1), so that output - x shows what "
            "each dropout dropped",
            "训练模式下的 TransformerBlock({d}, {h}, {f}, dropout={p})，输入 ({b}, {t}, {d}) 的 {dtype} 批次（课程"
            "训练时的规模），所用权重使每个分支的输出都是常数（attn.out = 0 x + {alpha}；ff.net.0 = 0 x + 约 {shift}，"
            "ff.net.3 = 单位矩阵 + 1），因此 output - x 显示出每个 dropout 丢弃了什么",
            d=dim,
            h=heads,
            f=ff_dim,
            p=DROP_P,
            b=batch,
            t=tokens,
            alpha=ALPHA,
            shift=FF_SHIFT,
            dtype=AMP_NAME if dtype == torch.bfloat16 else str(dtype).removeprefix("torch."),
        )
        sub.seed(seed % 1000)
        m = _new(sub, sd, dim, heads, ff_dim, dropout=DROP_P)
        m.train()
        amp = dtype == torch.bfloat16  # as `kata train` runs bf16: float32 weights under autocast
        if dtype == torch.float64:
            m.to(dtype)
        xd = x.to(torch.float32 if amp else dtype)
        branches = []
        for _ in range(calls):
            y = sub.in_training(m, xd, mask, bf16_autocast=amp, label=code("TransformerBlock"))
            expect(
                isinstance(y, torch.Tensor)
                and tuple(y.shape) == tuple(x.shape)
                and (y.dtype in (torch.bfloat16, torch.float32) if amp else y.dtype == dtype)
                and bool(torch.isfinite(y.double()).all()),
                Msg(
                    "{what} must return a tensor of x's shape and dtype, without NaN",
                    "{what} 必须返回与 x 形状和 dtype 相同、不含 NaN 的张量",
                    what=what,
                ),
            )
            branches.append(y.double() - xd.double())
        reads = read_dropout(branches, gelu, DROP_P, DROP_P, DTYPE_TOL[dtype])
        if reads is None:
            raise CheckFailure(
                Msg(
                    "{what}: output - x is not what the two sub-layers' dropouts give, as it is in "
                    "float32 at the smaller sizes: the rule is the same in every dtype and at every "
                    "size. {hint}",
                    "{what}：output - x 不是两个子层的 dropout 所给出的值，而在 float32 和较小的规模下是："
                    "规则在每种 dtype、每种规模下都相同。{hint}",
                    what=what,
                    hint=DROPOUT_HINT,
                ),
                mistake=Msg("dropout keyed on the dtype or the size", "dropout 随 dtype 或规模而变"),
            )
        for i, name in (
            (0, Msg("attention's outputs (out_dropout)", "注意力的输出（out_dropout）")),
            (
                1,
                Msg(
                    "the feed-forward network's hidden features (its first Dropout)",
                    "前馈网络的隐藏特征（第一个 Dropout）",
                ),
            ),
            (3, Msg("the feed-forward network's outputs (its last Dropout)", "前馈网络的输出（最后一个 Dropout）")),
        ):
            part = [(r[i], r[2] if i == 1 else torch.ones_like(r[i])) for r in reads]
            draws.expect_drawn(
                draws.rate_findings(part, DROP_P)
                or draws.region_findings(part, DROP_P, ["sequence", "token", "feature"]),
                Msg("{what}, {n} call(s): {name}", "{what}，调用 {n} 次：{name}", what=what, n=calls, name=name),
                Msg("dropped", "丢弃"),
                Msg(
                    "every element is dropped at rate p, whatever its dtype, its sequence, its token or "
                    "its feature; {rule}",
                    "每个元素都以概率 p 被丢弃，与 dtype、所在序列、词元或特征无关；{rule}",
                    rule=DROPOUT_HINT,
                ),
            )
