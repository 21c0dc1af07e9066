"""Checks of §1.23, multi-head self-attention with the padding mask (listing 1.31).

The mask hides padding *keys*. Checks load given weights by the book's names and compare with a
plain re-computation (bert_reference.attention); invariants show that padding is really hidden:
what sits at a padded position, and how much padding follows, change nothing. Dropout is read
through weights that make every output one attention weight plus 1 (transparent_state), so
that the dropped attention weights, not only the output's zeros, are held to the rule.
"""

import math

import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

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
            Mistake(
                ref(mask_mode="queries", fill=fill),
                "the mask was applied to the queries (rows) instead of the keys (columns): reshape it to `(B, 1, 1, T)`",
                "掩码用在了查询（行）上，应该用在键（列）上：把它变成 `(B, 1, 1, T)`",
            ),
            Mistake(
                ref(mask_mode="inverted", fill=fill),
                "the mask is inverted: it hid the real tokens and kept the padding (hide where `mask == 0`)",
                "掩码反了：掩码了真实词元、留下了填充（应掩码 `mask == 0` 的位置）",
            ),
            Mistake(
                ref(mask_mode="both", fill=fill),
                "padded queries were masked too: hide only the padding keys (columns), so that every row "
                "still attends to the real tokens",
                "填充位置的查询也被掩码了：只应掩码填充的键（列）",
            ),
        ]
    out += [
        Mistake(
            ref(mask_mode="none"),
            "the padding mask was not applied: padding keys still get weight",
            "没有使用填充掩码：填充的键仍然得到注意力权重",
        ),
        Mistake(
            ref(scale="dim"),
            "the scores were scaled by sqrt(dim) instead of sqrt(d) = sqrt(dim // heads)",
            "分数除以了 sqrt(dim)，应该除以 sqrt(d) = sqrt(dim // heads)",
        ),
        Mistake(ref(scale="none"), "the scores were not scaled by sqrt(d)", "分数没有除以 sqrt(d)"),
        Mistake(
            ref(split=False),
            "the heads were split with `.view(B, heads, T, d)` instead of `view(B, T, heads, d)` then `transpose(1, 2)`",
            "拆分多头时直接 `view(B, heads, T, d)`，而不是先 `view(B, T, heads, d)` 再 `transpose(1, 2)`",
        ),
        Mistake(
            ref(merge=False),
            "the heads were merged without `transpose(1, 2)` back to `(B, T, heads, d)`",
            "合并多头前没有 `transpose(1, 2)` 回到 `(B, T, heads, d)`",
        ),
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
    expect_tensor(
        _new(sub, sd)(x, mask),
        R.attention(x, mask, sd, H),
        tol="attention",
        what=Msg(
            "eval output (dim {d}, heads {h}) for a (2, 5, {d}) batch with given weights",
            "给定权重时 (2, 5, {d}) 批次在 eval 模式下的输出（dim {d}，heads {h}）",
            d=D,
            h=H,
        ),
        mistakes=_mistakes(x, mask, sd, H),
    )


def _new(sub, sd, dim=D, heads=H, **kw):
    m = sub.new("MultiHeadSelfAttention", dim, heads, **kw)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(
    points=2,
    listings=["1.31"],
    title="listing 1.31: the attention module's layout",
    title_zh="代码清单 1.31：注意力模块的结构",
)
def test_listing_1_31_structure(sub):
    m = sub.new("MultiHeadSelfAttention", 256, 4)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_attention(256)))
    expect(
        not diff,
        Msg(
            "print(MultiHeadSelfAttention(256, 4)) differs from listing 1.36's printed attention (qkv, "
            "out, attn_dropout, out_dropout, in that order): {diff}",
            "print(MultiHeadSelfAttention(256, 4)) 与代码清单 1.36 中打印的注意力模块不同（依次为 qkv、out、attn_dropout、out_dropout）：{diff}",
            diff=diff,
        ),
    )
    expect_equal(m.attr("heads"), 4, what=code("MultiHeadSelfAttention(256, 4).heads"))
    expect_equal(
        m.attr("d"),
        64,
        what=Msg(
            "MultiHeadSelfAttention(256, 4).d (features per head)", "MultiHeadSelfAttention(256, 4).d（每个头的特征数）"
        ),
    )
    try:
        sub.new("MultiHeadSelfAttention", 256, 6)
    except StudentError as e:
        if e.kind != "exception":
            raise
        expect(
            e.type in ("ValueError", "AssertionError"),
            Msg(
                "MultiHeadSelfAttention(256, 6) must raise ValueError (6 does not divide 256), not {raised}",
                "MultiHeadSelfAttention(256, 6) 必须抛出 ValueError（6 不能整除 256），而不是 {raised}",
                raised=e.type or e,
            ),
        )
    else:
        expect(
            False,
            Msg(
                "MultiHeadSelfAttention(256, 6) must raise ValueError: 256 features cannot be cut into 6 "
                "equal heads (listing 1.36's heads=6 is a book error)",
                "MultiHeadSelfAttention(256, 6) 必须抛出 ValueError：256 个特征无法平均分成 6 个头（代码清单 1.36 中的 heads=6 是书中的错误）",
            ),
        )
    _expect_values(sub, seed=2347)


@check(
    points=4,
    listings=["1.31"],
    title="listing 1.31: output with given weights and padding",
    title_zh="代码清单 1.31：给定权重和填充时的输出",
)
def test_listing_1_31_given_weights(sub):
    f = fx()
    sd = _sd(f)
    out = _new(sub, sd)(f["x"], f["mask"])
    expect_tensor(
        out,
        f["out"],
        tol="attention",
        what=Msg(
            "eval output (dim {d}, heads {h}) for a (3, 7, {d}) batch with 0, 2 and 5 padding positions",
            "(3, 7, {d}) 批次（分别有 0、2、5 个填充位置）在 eval 模式下的输出（dim {d}，heads {h}）",
            d=D,
            h=H,
        ),
        mistakes=_mistakes(f["x"], f["mask"], sd, H),
    )


@check(points=3, hidden=True, title="other sizes and lengths", title_zh="其他尺寸和长度")
def test_fresh_sizes(sub):
    g = torch.Generator().manual_seed(2342)
    for dim, heads, lengths, T in ((12, 3, [6, 4], 6), (8, 1, [3, 1, 5], 5), (24, 6, [9], 9), (16, 4, [1], 1)):
        sd = R.random_state(R.attention_shapes(dim), seed=2343 + dim + heads)
        x = torch.randn(len(lengths), T, dim, generator=g)
        mask = (torch.arange(T)[None, :] < torch.tensor(lengths)[:, None]).long()
        out = _new(sub, sd, dim, heads)(x, mask)
        expect_tensor(
            out,
            R.attention(x, mask, sd, heads),
            tol="attention",
            what=Msg(
                "eval output for dim {dim}, heads {heads}, real lengths {lengths} of {t}",
                "dim {dim}、heads {heads}、真实长度 {lengths}（共 {t}）时 eval 模式下的输出",
                dim=from_input(dim),
                heads=from_input(heads),
                lengths=from_input(lengths),
                t=from_input(T),
            ),
            mistakes=_mistakes(x, mask, sd, heads),
        )


@check(points=3, hidden=True, title="padding does not change the real positions", title_zh="填充不改变真实位置的输出")
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
        expect_tensor(
            y,
            R.attention(x, mask, sd, H),
            tol="attention",  # the property alone: a constant has it
            what=Msg(
                "eval output for real lengths {lengths}",
                "真实长度为 {lengths} 时 eval 模式下的输出",
                lengths=from_input(lengths),
            ),
        )
        real = mask.bool()
        # Whatever sits at a padded position is never read.
        x2 = torch.where(real[..., None], x, 10 * torch.randn(x.shape, generator=g))
        expect_tensor(
            m(x2, mask)[real],
            y[real],
            tol="attention",
            what=Msg(
                "outputs at real positions after changing the padded positions' vectors (lengths {lengths})",
                "改变填充位置的向量之后真实位置的输出（长度 {lengths}）",
                lengths=from_input(lengths),
            ),
        )
        # More padding at the end changes no output.
        x3 = torch.cat([x, torch.randn(len(lengths), extra, D, generator=g)], dim=1)
        mask3 = torch.cat([mask, torch.zeros(len(lengths), extra, dtype=torch.int64)], dim=1)
        expect_tensor(
            m(x3, mask3)[:, :T],
            y,
            tol="attention",
            what=Msg(
                "outputs after appending {extra} more padding positions (lengths {lengths})",
                "再追加 {extra} 个填充位置之后的输出（长度 {lengths}）",
                extra=from_input(extra),
                lengths=from_input(lengths),
            ),
        )
        # A sequence alone, cut to its real tokens, gives what it gets inside the padded batch.
        for b, n in enumerate(lengths):
            alone = m(x[b : b + 1, :n], mask[b : b + 1, :n])
            expect_tensor(
                alone[0],
                y[b, :n],
                tol="attention",
                what=Msg(
                    "sequence {b} of length {n} on its own, without padding and without the rest of the batch",
                    "长度为 {n} 的序列 {b} 单独计算，不加填充、不带批次中其他序列时的结果",
                    b=from_input(b),
                    n=from_input(n),
                ),
            )

    invariants()


# ----------------------------------------------------------------------------- dropout, read through the output
TH, TT = 4, 8  # heads and tokens: a head has d = TT features, so a value can be its token's one-hot
TD = TH * TT
TB = 16  # sequences
# The book's sizes too (listing 1.36: dim 256 in 4 heads of 64; 128 tokens in 2 heads of 128 for the
# hidden check): a dropout honest at dim 32 and structured from 64+ features got full marks.
BOOK = (4, 64, 1)  # (heads, tokens, batch): dim 256; the statistics cost grows with the weights read
BOOK_HIDDEN = (4, 64, 2)
LONG = (2, 128, 1)
BIAS = 1.0
DROP_P = 0.3
DROPOUT_CALLS = 12  # calls per dropout check: the number dropped must vary across them as Binomial(n, p) does
TINY = 1e-3  # weights below this are not read: dropped or kept, they look alike within the tolerance
DROPOUT_HINT = Msg(
    "attn_dropout draws once for each attention weight, after the softmax and before the weights mix "
    "the values: `attn = self.attn_dropout(torch.softmax(scores, dim=-1))`, a new draw on every call, "
    "in every row and head",
    "attn_dropout 在 softmax 之后、权重与值相乘之前，对每个注意力权重独立抽样一次："
    "`attn = self.attn_dropout(torch.softmax(scores, dim=-1))`，每次调用、每一行、每个头都重新抽样",
)


def seen(heads: int = TH, tokens: int = TT, batch: int = TB) -> Msg:
    return Msg(
        "MultiHeadSelfAttention({dim}, {heads}, dropout={p}) in train mode on ({b}, {t}, {dim}) inputs, with weights "
        "that make each output one attention weight plus {bias} (value j: token j's one-hot; `out`: the identity, "
        "bias {bias})",
        "训练模式下的 MultiHeadSelfAttention({dim}, {heads}, dropout={p})，输入形状 ({b}, {t}, {dim})，所用权重使每个输出"
        "都等于一个注意力权重加 {bias}（值 j：词元 j 的 one-hot；`out`：单位矩阵，偏置 {bias}）",
        dim=from_input(heads * tokens),
        heads=from_input(heads),
        p=from_input(DROP_P),
        b=from_input(batch),
        t=from_input(tokens),
        bias=from_input(BIAS),
    )


def transparent_state(seed: int, heads: int = TH, tokens: int = TT) -> dict:
    """Given weights under which the output shows the attention weights: random queries and
    keys; in every head (of d = tokens features), value j is token j's one-hot (x[..., :tokens]
    holds it); out is the identity with bias BIAS. Then output[b, i, h * tokens + j] =
    weight[b, h, i, j] + BIAS, with the weight after attention dropout and the sum after output
    dropout."""
    dim = heads * tokens
    sd = R.random_state(R.attention_shapes(dim), seed=seed)
    w, b = sd["qkv.weight"].clone(), sd["qkv.bias"].clone()
    w[2 * dim :], b[2 * dim :] = 0.0, 0.0
    for h in range(heads):
        w[2 * dim + h * tokens + torch.arange(tokens), torch.arange(tokens)] = 1.0
    return dict(
        sd, **{"qkv.weight": w, "qkv.bias": b, "out.weight": torch.eye(dim), "out.bias": torch.full((dim,), BIAS)}
    )


def transparent_input(seed: int, batch: int = TB, heads: int = TH, tokens: int = TT) -> torch.Tensor:
    x = torch.randn(batch, tokens, heads * tokens, generator=torch.Generator().manual_seed(seed))
    x[:, :, :tokens] = torch.eye(tokens)
    return x


def _heads(x: torch.Tensor) -> int:
    """A transparent input's heads: each has d = tokens features."""
    return x.shape[-1] // x.shape[1]


def transparent_weights(x: torch.Tensor, sd: dict) -> torch.Tensor:
    """The attention weights (batch, heads, query, key) of x under sd, no mask, no dropout."""
    B, T, heads = x.shape[0], x.shape[1], _heads(x)
    q, k, _ = F.linear(x, sd["qkv.weight"], sd["qkv.bias"]).chunk(3, dim=-1)
    q, k = (t.view(B, T, heads, T).transpose(1, 2) for t in (q, k))
    return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(T), dim=-1)


def _as_weights(y: torch.Tensor) -> torch.Tensor:
    return y.reshape(y.shape[0], y.shape[1], _heads(y), y.shape[1]).transpose(1, 2)


def read_dropout(ys, weights: torch.Tensor, p: float):
    """Sort each output of train-mode calls on the transparent weights: 0 (output dropout),
    BIAS / (1 - p) (its attention weight dropped), (weight / (1 - p) + BIAS) / (1 - p) (kept).
    Returns (how, reads): `how` is None when every output is one of those, else the first of
    "unscaled" (the kept weights are weight, not weight / (1 - p)), "multiplied" (weight x
    (1 - p)) or "other" that fits; reads holds per call (attention weight dropped, readable,
    output dropped), shaped (batch, heads, query, key). An output dropout without its scale is
    not this reader's concern: it is read as well."""
    s = 1 / (1 - p)
    close = lambda a, b: (a - b).abs() <= 2e-5  # noqa: E731
    for how, kept_scale in ((None, s), ("unscaled", 1.0), ("multiplied", 1 - p)):
        for out_scale in (s, 1.0):
            reads = []
            for y in ys:
                y = _as_weights(y)
                out_dropped = y == 0
                dropped = ~out_dropped & close(y, BIAS * out_scale)
                kept = ~out_dropped & close(y, (weights * kept_scale + BIAS) * out_scale)
                if not bool((out_dropped | dropped | kept).all()):
                    break
                readable = ~out_dropped & (weights >= TINY)  # a weight under TINY reads as dropped and kept alike
                reads.append((dropped & ~kept & readable, readable, out_dropped))
            else:
                return how, reads
    return "other", []


def dropout_reads(sub, sd: dict, x: torch.Tensor, seed: int, what: Msg):
    """DROPOUT_CALLS train-mode calls of a module on the transparent weights, after checking that
    eval mode gives weight + BIAS twice over; fails with what a wrong dropout does."""
    sub.seed(seed)
    m = _new(sub, sd, x.shape[-1], _heads(x), dropout=DROP_P)
    mask = torch.ones(x.shape[:2], dtype=torch.int64)
    weights = transparent_weights(x, sd)
    want = weights.transpose(1, 2).reshape(x.shape) + BIAS
    for _ in range(2):
        expect_tensor(
            m(x, mask),
            want,
            tol="attention",
            what=Msg(
                "{what}, after .eval() (no dropout: the same output on every call)",
                "{what}，.eval() 之后（没有 dropout：每次调用输出都相同）",
                what=what,
            ),
            mistakes=_mistakes(x, mask, sd, _heads(x)),
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
    how, reads = read_dropout(ys, weights, DROP_P)
    if how == "unscaled" and not any(bool(d.any()) for d, _, _ in reads):
        raise CheckFailure(
            Msg(
                "{what}: over {n} calls no attention weight was dropped (every output was its weight "
                "+ {bias}, scaled or zeroed by out_dropout): in train mode attn_dropout must drop the attention "
                "weights. {hint}",
                "{what}：在 {n} 次调用中没有任何注意力权重被丢弃（每个输出都是它的权重 + {bias}，"
                "只经过 out_dropout 的放大或置零）：训练模式下 attn_dropout 必须丢弃注意力权重。{hint}",
                what=what,
                n=from_input(DROPOUT_CALLS),
                bias=from_input(BIAS),
                hint=DROPOUT_HINT,
            ),
            mistake=Msg("attention dropout left out", "漏掉了注意力 dropout"),
        )
    if how == "unscaled":
        raise CheckFailure(
            Msg(
                "{what}: the attention weights that survive dropout were not rescaled by "
                "`1 / (1 - p)`: inverted dropout (nn.Dropout) divides the survivors by `(1 - p)`",
                "{what}：dropout 之后保留下来的注意力权重没有乘以 `1 / (1 - p)`：倒置 dropout（nn.Dropout）"
                "要把保留下来的值除以 `(1 - p)`",
                what=what,
            ),
            mistake=Msg("attention dropout not rescaled", "注意力 dropout 之后没有放大"),
        )
    if how == "multiplied":
        raise CheckFailure(
            Msg(
                "{what}: the attention weights that survive dropout were multiplied by `(1 - p)`; "
                "divide them by `(1 - p)` (nn.Dropout does)",
                "{what}：dropout 之后保留下来的注意力权重乘了 `(1 - p)`；应当除以 `(1 - p)`（nn.Dropout 就是这样做的）",
                what=what,
            ),
            mistake=Msg("attention dropout multiplied by `(1 - p)`", "注意力 dropout 乘了 `(1 - p)`"),
        )
    if how == "other":
        raise CheckFailure(
            Msg(
                "{what}: some outputs are neither `0` (out_dropout), `{bias} / (1 - p)` (the attention weight "
                "dropped) nor `(weight / (1 - p) + {bias}) / (1 - p)` (kept): apply attn_dropout to the "
                "softmax weights and out_dropout to the projected output, once each. {hint}",
                "{what}：有些输出既不是 `0`（out_dropout），也不是 `{bias} / (1 - p)`（注意力权重被丢弃），也不是 "
                "`(weight / (1 - p) + {bias}) / (1 - p)`（被保留）：attn_dropout 作用于 softmax 权重，out_dropout "
                "作用于投影之后的输出，各一次。{hint}",
                what=what,
                bias=from_input(BIAS),
                hint=DROPOUT_HINT,
            ),
            mistake=Msg("dropout not on the weights", "dropout 没有作用在注意力权重上"),
        )
    return reads


@check(points=1, title="attention dropout on the weights in training", title_zh="训练时对注意力权重做 dropout")
def test_attention_dropout_in_training(sub):
    # the book's sizes and the course's training size only when grading (not in `kata check`: seconds of
    # reads that only a rule keyed on the size fails)
    for k, (heads, tokens, batch) in enumerate(((TH, TT, TB), BOOK) if grading() else ((TH, TT, TB),)):
        what = seen(heads, tokens, batch)
        reads = dropout_reads(
            sub,
            transparent_state(2350 + 10 * k, heads, tokens),
            transparent_input(2351 + 10 * k, batch, heads, tokens),
            seed=4 + 10 * k,
            what=what,
        )
        draws.expect_drawn(
            draws.bernoulli_findings([(d, e) for d, e, _ in reads], DROP_P),
            Msg(
                "{what}, {n} calls in a row: the attention weights",
                "{what}，连续调用 {n} 次：注意力权重",
                what=what,
                n=from_input(DROPOUT_CALLS),
            ),
            Msg("dropped", "丢弃"),
            DROPOUT_HINT,
        )
    # and where the course trains: 4 heads of 64 on 256 tokens, batch 32; float32, float64, bf16
    if grading():
        expect_rule_where_the_course_trains(sub, seed=2390)


@check(points=1, hidden=True, title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.attention_shapes(D), seed=2345)
    g = torch.Generator().manual_seed(2346)
    x = torch.randn(2, 6, D, generator=g)
    mask = torch.tensor([[1] * 6, [1] * 4 + [0] * 2])
    sub.seed(3)
    p_on, p_off = 0.5, 0.0
    m = _new(sub, sd, dropout=p_on)
    first = m(x, mask)
    expect_tensor(
        m(x, mask),
        first,
        tol="exact",
        what=Msg("two calls in eval mode (dropout must be off)", "eval 模式下的两次调用（dropout 必须关闭）"),
    )
    expect_tensor(
        first,
        R.attention(x, mask, sd, H),
        tol="attention",
        what=Msg("eval output with dropout={p}", "eval 模式下的输出（dropout={p}）", p=from_input(p_on)),
    )
    m.train()
    a, b = m(x, mask), m(x, mask)
    expect(
        isinstance(a, torch.Tensor) and not torch.equal(a, first) and not torch.equal(a, b),
        Msg(
            "with dropout {p} in train mode, outputs must change from call to call (attn_dropout, out_dropout)",
            "dropout 为 {p} 时，训练模式下每次调用的输出都必须不同（attn_dropout、out_dropout）",
            p=from_input(p_on),
        ),
    )
    expect(
        0.35 < float((a == 0).float().mean()) < 0.65,
        Msg(
            "with dropout {p} in train mode about a share {p} of the outputs must be `0` (out_dropout after the "
            "projection)",
            "dropout 为 {p} 时，训练模式下大约 {p} 的输出必须为 `0`（out_dropout 在投影之后）",
            p=from_input(p_on),
        ),
    )
    plain = _new(sub, sd, dropout=p_off)
    plain.train()
    expect_tensor(
        plain(x, mask),
        first,
        tol="attention",
        what=Msg(
            "train-mode output with dropout={p}, equal to eval mode",
            "训练模式下的输出（dropout={p}），应与 eval 模式相同",
            p=from_input(p_off),
        ),
    )
    # The rule, not the share: the attention weights dropped (heads read apart too) and the outputs
    # dropped, at the small size and at the book's (dim 256: 4 heads x 64 tokens, 2 heads x 128).
    for k, (heads, tokens, batch) in enumerate(((TH, TT, TB), BOOK_HIDDEN, LONG)):
        what = seen(heads, tokens, batch)
        reads = dropout_reads(
            sub,
            transparent_state(2352 + 10 * k, heads, tokens),
            transparent_input(2353 + 10 * k, batch, heads, tokens),
            seed=5 + 10 * k,
            what=what,
        )
        draws.expect_drawn(
            draws.heads_findings([(d, e) for d, e, _ in reads], DROP_P),
            Msg(
                "{what}, {n} calls in a row: the attention weights",
                "{what}，连续调用 {n} 次：注意力权重",
                what=what,
                n=from_input(DROPOUT_CALLS),
            ),
            Msg("dropped", "丢弃"),
            DROPOUT_HINT,
        )
        outputs = [
            (o.transpose(1, 2).flatten(2), torch.ones_like(o.transpose(1, 2).flatten(2), dtype=torch.bool))
            for _, _, o in reads
        ]
        draws.expect_drawn(
            draws.bernoulli_findings(outputs, DROP_P),
            Msg(
                "{what}, {n} calls in a row: the outputs",
                "{what}，连续调用 {n} 次：输出",
                what=what,
                n=from_input(DROPOUT_CALLS),
            ),
            Msg("dropped", "丢弃"),
            Msg(
                "out_dropout draws once for each output element: return self.out_dropout(self.out(...))",
                "out_dropout 对每个输出元素独立抽样一次：return self.out_dropout(self.out(...))",
            ),
        )
    expect_rule_where_the_course_trains(sub, seed=2391)


# ----------------------------------------------------------------------------- dropout where the course trains
# Issue 24, fourth outside attack: attn_dropout only on keys j < d (the head size) got full marks,
# since every read above has as many tokens as a head has features (value j = token j's one-hot
# needs it). The course trains 4 heads of 64 on 256 tokens. There the weights are made one-hot
# instead: token i's input is its one-hot over the 256 features; in head h, key j is a random unit
# vector u_hj and query i is SHARP x u_h(pi_h(i)) for a permutation pi_h of the tokens, so query i
# puts all but < 1e-6 of its weight on key pi_h(i); every value is all ones, out the identity + 1.
# Each output (query i, head h, feature) is then 0 (out_dropout), 1 / (1 - p) (the weight on key
# pi_h(i) dropped) or (1 / (1 - p) + 1) / (1 - p) (kept): one attention weight per query and head
# is read, at a key drawn apart from the query. Batch 32, float32 (2 calls), float64 and bfloat16
# autocast (1 call each; float32 weights, as `kata train` runs bf16), every call as in training (x
# requires grad), every index of every axis (sequence, head, query, key; and the outputs') at rate p.
TRAIN_HEADS, TRAIN_T, TRAIN_B, TRAIN_CALLS = 4, 256, 32, 2
SHARP = 1600.0  # query size: the chosen key's score beats every other by 60+ (cosines of random unit vectors)
REL_TOL = {torch.float32: 1e-4, torch.float64: 1e-6, torch.bfloat16: 3e-2}
AMP_NAME = "bfloat16 autocast"  # the bf16 read: float32 weights and input under torch.autocast, as `kata train` runs


def sharp_state(seed: int, heads: int = TRAIN_HEADS, tokens: int = TRAIN_T):
    """(state, pi): the weights above for dim = tokens features in `heads` heads, and pi
    (heads, tokens), pi[h, i] the key that query i attends to in head h."""
    dim = tokens
    d = dim // heads
    g = torch.Generator().manual_seed(seed)
    w = torch.zeros(3 * dim, dim)
    pi = torch.stack([torch.randperm(tokens, generator=g) for _ in range(heads)])
    for h in range(heads):
        u = torch.randn(tokens, d, generator=g, dtype=torch.float64)
        u = u / u.norm(dim=1, keepdim=True)
        w[h * d : (h + 1) * d] = (SHARP * u[pi[h]]).T.float()  # queries: column i = SHARP u[pi[h, i]]
        w[dim + h * d : dim + (h + 1) * d] = u.T.float()  # keys: column j = u[j]
    w[2 * dim :] = 1.0  # values: all ones
    sd = {
        "qkv.weight": w,
        "qkv.bias": torch.zeros(3 * dim),
        "out.weight": torch.eye(dim),
        "out.bias": torch.full((dim,), BIAS),
    }
    return sd, pi


def sharp_input(batch: int = TRAIN_B, tokens: int = TRAIN_T) -> torch.Tensor:
    return torch.eye(tokens).expand(batch, tokens, tokens).contiguous()


def _sharp_weights_ok(sd: dict, pi: torch.Tensor) -> bool:
    """The trusted side's own proof that the weights are one-hot: all but < 1e-6 on pi (float64)."""
    heads, tokens = pi.shape
    x = sharp_input(1, tokens).double()
    q, k, _ = F.linear(x, sd["qkv.weight"].double()).chunk(3, dim=-1)
    q, k = (t.view(1, tokens, heads, -1).transpose(1, 2) for t in (q, k))
    w = torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(tokens // heads), dim=-1)[0]
    on = w.gather(-1, pi[..., None])
    return bool((on > 1 - 1e-6).all()) and float(w.sum(-1).sub(on[..., 0]).max()) < 1e-6


def expect_rule_where_the_course_trains(sub, seed: int):
    sd, pi = sharp_state(seed)
    assert _sharp_weights_ok(sd, pi)
    heads, T, B = TRAIN_HEADS, TRAIN_T, TRAIN_B
    x = sharp_input(B, T)
    mask = torch.ones(B, T, dtype=torch.int64)
    s = 1 / (1 - DROP_P)
    for dtype, calls in ((torch.float32, TRAIN_CALLS), (torch.float64, 1), (torch.bfloat16, 1)):
        what = Msg(
            "MultiHeadSelfAttention({dim}, {heads}, dropout={p}) in train mode on a ({b}, {t}, {dim}) {dtype} "
            "batch (the course's training size), with weights that make each query of each head attend to one "
            "key (token i's input: its one-hot; every value: all ones; `out`: the identity, bias {bias})",
            "训练模式下的 MultiHeadSelfAttention({dim}, {heads}, dropout={p})，输入 ({b}, {t}, {dim}) 的 {dtype} "
            "批次（课程训练时的规模），所用权重使每个头的每个查询只关注一个键（词元 i 的输入：它的 one-hot；每个值："
            "全为一；`out`：单位矩阵，偏置 {bias}）",
            dim=from_input(T),
            heads=from_input(heads),
            p=from_input(DROP_P),
            b=from_input(B),
            t=from_input(T),
            bias=from_input(BIAS),
            dtype=from_input(AMP_NAME if dtype == torch.bfloat16 else str(dtype).removeprefix("torch.")),
        )
        sub.seed(seed % 1000)
        m = _new(sub, sd, T, heads, dropout=DROP_P)
        m.train()
        amp = dtype == torch.bfloat16  # as `kata train` runs bf16: float32 weights under autocast
        if dtype == torch.float64:
            m.to(dtype)
        weights, keys, outs = [], [], []
        for _ in range(calls):
            y = sub.in_training(
                m, x.to(torch.float32 if amp else dtype), mask, bf16_autocast=amp, label=code("MultiHeadSelfAttention")
            )
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
            y = y.double().view(B, T, heads, T // heads).transpose(1, 2)  # (batch, head, query, feature)
            out = y == 0
            dropped = (y - s).abs() <= REL_TOL[dtype] * s
            kept = (y - (s + 1) * s).abs() <= REL_TOL[dtype] * (s + 1) * s
            readable = (~out).any(-1)
            w_dropped = (dropped & ~out).any(-1)
            if not bool((out | dropped | kept).all()) or bool((w_dropped & (kept & ~out).any(-1)).any()):
                raise CheckFailure(
                    Msg(
                        "{what}: some outputs are neither `0` (out_dropout), `{bias} / (1 - p)` (the attention "
                        "weight dropped) nor `(1 / (1 - p) + {bias}) / (1 - p)` (kept), as they are in `float32` "
                        "at the smaller sizes: the rule is the same in every dtype and at every size. "
                        "{hint}",
                        "{what}：有些输出既不是 `0`（out_dropout），也不是 `{bias} / (1 - p)`（注意力权重被丢弃），也不是 "
                        "`(1 / (1 - p) + {bias}) / (1 - p)`（被保留），而在 `float32` 和较小的规模下是：规则在每种 dtype、"
                        "每种规模下都相同。{hint}",
                        what=what,
                        bias=from_input(BIAS),
                        hint=DROPOUT_HINT,
                    ),
                    mistake=Msg("dropout keyed on the dtype or the size", "dropout 随 dtype 或规模而变"),
                )
            weights.append((w_dropped & readable, readable))
            at = pi[None].expand(B, heads, T)  # the weight read at query i sits on key pi[h, i]
            keys.append(
                (
                    torch.zeros_like(readable).scatter(-1, at, w_dropped & readable),
                    torch.zeros_like(readable).scatter(-1, at, readable),
                )
            )
            o = out.transpose(1, 2).reshape(B, T, T)
            outs.append((o, torch.ones_like(o)))
        rule = Msg(
            "every attention weight is dropped at rate p, whatever its dtype, sequence, head, query or key. {rule}",
            "每个注意力权重都以概率 p 被丢弃，与 dtype、序列、头、查询或键无关。{rule}",
            rule=DROPOUT_HINT,
        )
        for part, axes in ((weights, ["sequence", "head", "query"]), (keys, ["sequence", "head", "key"])):
            draws.expect_drawn(
                draws.rate_findings(part, DROP_P) or draws.region_findings(part, DROP_P, axes),
                Msg(
                    "{what}, {n} call(s): the attention weights",
                    "{what}，调用 {n} 次：注意力权重",
                    what=what,
                    n=from_input(calls),
                ),
                Msg("dropped", "丢弃"),
                rule,
            )
        draws.expect_drawn(
            draws.rate_findings(outs, DROP_P) or draws.region_findings(outs, DROP_P, ["sequence", "token", "feature"]),
            Msg("{what}, {n} call(s): the outputs", "{what}，调用 {n} 次：输出", what=what, n=from_input(calls)),
            Msg("dropped", "丢弃"),
            Msg(
                "out_dropout draws once for each output element, whatever its dtype, sequence, token or "
                "feature: return self.out_dropout(self.out(...))",
                "out_dropout 对每个输出元素独立抽样一次，与 dtype、序列、词元或特征无关："
                "return self.out_dropout(self.out(...))",
            ),
        )
