"""Checks of §1.14, dropout written by hand (listing 1.13 and the scaling example).

A correct dropout may draw its mask in many ways, so no check compares a seed's mask: they test
properties over many elements with bounds of at least 5 standard deviations (and every check
seeds the worker first, so a verdict never changes between runs).
"""

import math

import torch

from grader.checking import draws, grading
from grader.checking import CheckFailure, Mistake, Msg, check, code, expect, expect_tensor, fixtures, from_input

EXERCISE = "s1_14_dropout"

# §1.14: row 4's weights [0.25, 0.26, 0.25, 0.24]; p = 0.5 drops the 2nd and 4th -> [0.50, 0, 0.50, 0].
SCALING_WEIGHTS = [0.25, 0.26, 0.25, 0.24]
SCALING_KEEP = [True, False, True, False]
SCALING_PRINTED = [0.50, 0.00, 0.50, 0.00]


def make_fixtures(sol):
    import importlib
    from grader.checking import book

    qkv = importlib.import_module("s1_10_qkv")
    causal = importlib.import_module("s1_13_causal_mask")
    wq, wk, wv = qkv.init_qkv_weights(8, 4)
    q, k, v = qkv.project_qkv(book.inputs(), wq, wk, wv)
    weights = causal.causal_attention_weights(q @ k.T / math.sqrt(4))
    g = torch.Generator().manual_seed(1414)
    x = torch.rand(6, 7, generator=g) + 0.1
    keep = torch.rand(6, 7, generator=g) >= 0.2
    fresh_scores = torch.randn(200, 6, 6, generator=g) * 2
    return {
        "weights": weights,
        "values": v,
        "x": x,
        "keep": keep,
        "x_dropped": sol.dropout_with_mask(x, keep, 0.2),
        "causal_batch": causal.causal_attention_weights(fresh_scores),
    }


def fx():
    return fixtures.load(EXERCISE)


def _survivor_mistakes(kept_x, p):
    return [
        Mistake(
            kept_x, "the kept values were not rescaled: divide them by `1 - p`", "保留下来的值没有放大：应除以 `1 - p`"
        ),
        Mistake(
            kept_x * (1 - p),
            "the kept values were multiplied by `1 - p`; divide by `1 - p` instead",
            "保留下来的值乘了 `1 - p`，应当除以 `1 - p`",
        ),
    ]


def _zero_fraction(out: torch.Tensor) -> float:
    return float((out == 0).double().mean())


CALLS = 16  # calls per rule check: the number dropped must vary across them as Binomial(n, p) does
RULE_HINT = Msg(
    "dropout is one independent draw per element: keep = torch.rand(x.shape) >= p, a new draw on "
    "every call, in every row and head",
    "dropout 对每个元素独立抽样一次：keep = torch.rand(x.shape) >= p，每次调用、每一行、每个头都重新抽样",
)


def rule_findings(outs, p: float, heads: bool = False) -> list:
    """What in the outputs of dropout(ones, p) breaks "each element dropped independently with
    probability p": the dropped elements are the zeros. With `heads`, (batch, heads, T, T) outputs
    are also read with the heads last, so that two heads sharing a mask show as neighbours."""
    dropped = [(o == 0, torch.ones_like(o, dtype=torch.bool)) for o in outs]
    found = draws.bernoulli_findings(dropped, p)
    if not found and heads:
        found = draws.bernoulli_findings([(d.permute(0, 2, 3, 1), e.permute(0, 2, 3, 1)) for d, e in dropped], p)
    return found


def expect_rule(sub, shape, p: float, what: Msg, heads: bool = False):
    # ones: every element, every row and every call get the same input, so a mask computed from
    # the input and the position instead of drawn shows in the statistics as structure
    x = torch.ones(*shape)
    outs = [sub.dropout(x, p) for _ in range(CALLS)]
    for out in outs:  # the scale is test_survivors_scaled's: here only which elements are 0
        expect(
            isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(shape) and bool(torch.isfinite(out).all()),
            Msg(
                "{what} must return a tensor of x's shape, without NaN",
                "{what} 必须返回与 x 形状相同、不含 NaN 的张量",
                what=what,
            ),
        )
    draws.expect_drawn(
        rule_findings(outs, p, heads),
        Msg("{what}, {n} calls in a row", "{what}，连续调用 {n} 次", what=what, n=from_input(CALLS)),
        Msg("dropped", "丢弃"),
        RULE_HINT,
    )


# The course's training configuration (`kata train`: dim 256 in 4 heads of 64, ff 1024, max_len
# 256, batch 32), where the model's dropouts run: a rule honest at the shapes above and keyed on
# the size, the dtype or the place in the batch (keys past the head size, elements past 2^18,
# float64 or bfloat16, batch elements past 0) meets it here. Each output is read as dropped or
# kept, held to the rate, to draws.region_findings (every index of every axis drawn at rate p:
# sums only, cheap at 8.4M elements; the pair and triple statistics stay at the sizes above) and
# (in test_survivors_scaled) to the survivors' scale; TRAIN_CALLS call per input.
TRAIN_P = 0.1  # the course's dropout
TRAIN_CALLS = 1  # 8.4M elements a call: the region's statistics need no more, the grading budget is shared
SEQ, TOK, FEAT = Msg("sequence", "序列"), Msg("token", "词元"), Msg("feature", "特征")
WEIGHTS = ((32, 4, 256, 256), [SEQ, Msg("head", "头"), Msg("query", "查询"), Msg("key", "键")])
ACTIVATIONS = ((32, 256, 256), [SEQ, TOK, FEAT])
HIDDEN_FEATURES = ((32, 256, 1024), [SEQ, TOK, Msg("hidden feature", "隐藏特征")])
# bfloat16 holds 0.1 and 0.9 only to 8 bits (0.9 is 0.8984375): an honest rule that forms 1 - p in
# the input's dtype (torch.bernoulli(torch.full_like(x, 1 - p))) drops 0.1016. p = 1/8 and 7/8 are exact.
BF16_P = 0.125
DTYPE_TOL = {torch.float32: 1e-5, torch.float64: 1e-12, torch.bfloat16: 1 / 128}  # bf16: 8 bits of mantissa
UNDER_AUTOCAST = Msg(", under {dt} autocast", "，在 {dt} 自动混合精度（autocast）下", dt=from_input("bf16"))


def training_findings(dropped, p: float, axes) -> list:
    """The rate over every element of every call, then draws.region_findings: cheap enough for
    (32, 4, 256, 256) outputs."""
    n = sum(d.numel() for d in dropped)
    k = sum(draws.ones(d) for d in dropped)
    if abs(k - n * p) > draws.Z * math.sqrt(n * p * (1 - p)):
        return [draws.Finding("rate", k / n, p, {"n": n})]
    return draws.region_findings([(d, torch.ones_like(d)) for d in dropped], p, axes)


def expect_rule_at_training_size(
    sub, seed: int, shape, axes, dtype=torch.float32, p: float = TRAIN_P, scale: bool = False
):
    """dropout(torch.ones(shape, dtype=dtype), p) TRAIN_CALLS times: the dropped ones (the zeros)
    at rate p at every index of every axis; with `scale` (test_survivors_scaled's reading, so that
    the rule checks do not charge a scale mistake twice) instead each element 0 or 1 / (1 - p),
    within the dtype's precision."""
    what = Msg(
        "{call}, x requiring grad{amp}",
        "{call}，x 需要梯度{amp}",
        call=code(
            "dropout(torch.ones{shape}{dt}, p={p})",
            shape=from_input(shape),
            dt=from_input("" if dtype == torch.float32 else ", dtype=" + str(dtype)),
            p=from_input(p),
        ),
        amp=UNDER_AUTOCAST if dtype == torch.bfloat16 else "",
    )
    x = torch.ones(*shape, dtype=dtype)
    sub.seed(seed)
    dropped = []
    fn = sub.get("dropout")
    for _ in range(TRAIN_CALLS):  # as in a model being trained: x requires grad; bf16 under autocast
        out = sub.in_training(fn, x, p, bf16_autocast=dtype == torch.bfloat16, label=code("dropout"))
        expect(
            isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(shape) and out.is_floating_point(),
            Msg(
                "{what} must return a floating tensor of x's shape", "{what} 必须返回与 x 形状相同的浮点张量", what=what
            ),
        )
        if out.dtype not in (torch.float32, torch.float64):
            out = out.float()
        zero = out == 0
        dropped.append(zero)
        if not scale:
            continue
        ok = zero | ((out - 1 / (1 - p)).abs() <= DTYPE_TOL[dtype] / (1 - p))
        if not bool(ok.all()):
            kept = out[~zero]
            close = {v: bool(((kept - v).abs() <= DTYPE_TOL[dtype] * 2).all()) for v in (1.0, 1 - p)}
            raise CheckFailure(
                Msg(
                    "{what}: the kept elements must be `1 / (1 - p)` ({hint})",
                    "{what}：保留的元素必须是 `1 / (1 - p)`（{hint}）",
                    what=what,
                    hint=Msg("they were not rescaled: divide them by `1 - p`", "它们没有放大：应除以 `1 - p`")
                    if close[1.0]
                    else Msg(
                        "they were multiplied by `1 - p`; divide by `1 - p` instead",
                        "它们乘了 `1 - p`，应当除以 `1 - p`",
                    )
                    if close[1 - p]
                    else Msg(
                        "every element is dropped (`0`) or kept and divided by `1 - p`, in every dtype",
                        "在任何数据类型下，每个元素要么被丢弃（`0`），要么保留并除以 `1 - p`",
                    ),
                ),
                mistake=Msg(
                    "not `0` or `x / (1 - p)` at the training size", "在训练规模下元素不是 `0` 或 `x / (1 - p)`"
                ),
            )
    if scale:
        return
    draws.expect_drawn(
        training_findings(dropped, p, axes),
        Msg(
            "{what}, {n} call(s) (the course's training size)",
            "{what}，调用 {n} 次（课程训练时的规模）",
            what=what,
            n=from_input(TRAIN_CALLS),
        ),
        Msg("dropped", "丢弃"),
        RULE_HINT,
    )


def expect_rule_in_training(sub, seed: int, first, second):
    """The training size in float32 (`first`), then float64 and bfloat16 on `second`'s shape."""
    expect_rule_at_training_size(sub, seed, *first)
    expect_rule_at_training_size(sub, seed + 2, *second, dtype=torch.float64)
    expect_rule_at_training_size(sub, seed + 3, *second, dtype=torch.bfloat16, p=BF16_P)


@check(
    points=1,
    listings=["1.14/scaling"],
    title="the book's example: kept weights scaled to 0.50",
    title_zh="书中的示例：保留的权重放大为 0.50",
)
def test_book_scaling_example(sub):
    x = torch.tensor(SCALING_WEIGHTS)
    keep = torch.tensor(SCALING_KEEP)
    out = sub.dropout_with_mask(x, keep, 0.5)
    expect_tensor(
        out,
        torch.tensor(SCALING_PRINTED),
        tol="printed2",
        what=code("dropout_with_mask([0.25, 0.26, 0.25, 0.24], keep=[T, F, T, F], p=0.5)"),
        mistakes=_survivor_mistakes(x * keep, 0.5)
        + [
            Mistake(
                x * ~keep * 2,
                "the mask was inverted: True in keep means the element survives",
                "掩码用反了：keep 中的 True 表示该元素被保留",
            )
        ],
    )


@check(
    points=2,
    listings=["1.13"],
    title="listing 1.13: dropout on the causal weights",
    title_zh="代码清单 1.13：对因果权重做 dropout",
)
def test_listing_1_13_dropout(sub):
    f = fx()
    w = f["weights"]
    sub.seed(0)
    m = sub.new("Dropout", p=0.5)
    out = m(w)
    expect(
        isinstance(out, torch.Tensor) and tuple(out.shape) == (5, 5),
        Msg(
            "Dropout(p=0.5) applied to the (5, 5) causal weights must return a (5, 5) tensor",
            "对 (5, 5) 的因果权重应用 Dropout(p=0.5) 必须返回 (5, 5) 的张量",
        ),
    )
    kept = out != 0
    # Whatever the mask, each weight is either dropped (0) or doubled (1 / (1 - 0.5) = 2).
    expect_tensor(
        out,
        w * kept * 2,
        tol="attention",
        what=Msg(
            "listing 1.13: causal weights after Dropout(p=0.5) (each entry 0 or 2 x the weight)",
            "代码清单 1.13：Dropout(p=0.5) 之后的因果权重（每个元素是 0 或权重的 2 倍）",
        ),
        mistakes=[
            Mistake(
                w * kept,
                "the kept weights were not rescaled: divide them by (1 - p)",
                "保留下来的权重没有放大：应除以 (1 - p)",
            )
        ],
    )
    expect(
        bool((out[w == 0] == 0).all()),
        Msg(
            "weights hidden by the causal mask (0) must stay 0 after dropout",
            "被因果掩码隐藏的权重（0）在 dropout 之后必须仍为 0",
        ),
    )
    expect(
        not bool(kept[w != 0].all()),
        Msg(
            "Dropout(p=0.5) in training mode kept all 15 visible weights: is the mask drawn at all? "
            "(a new module is in training mode)",
            "训练模式下的 Dropout(p=0.5) 保留了全部 15 个可见权重：是不是根本没有生成掩码？（新建的模块处于训练模式）",
        ),
    )
    m.eval()
    expect_tensor(
        m(w),
        w,
        tol="exact",
        what=Msg(
            "Dropout(p=0.5) after .eval() (must return its input unchanged)",
            ".eval() 之后的 Dropout(p=0.5)（必须原样返回输入）",
        ),
        mistakes=[
            Mistake(
                w * 0.5,
                "in evaluation mode the input was scaled by (1 - p): inverted dropout scales only during training",
                "评估模式下输入被乘了 (1 - p)：倒置 dropout 只在训练时缩放",
            )
        ],
    )


@check(points=2, title="dropout zeroes a fraction p of the elements", title_zh="dropout 把比例为 p 的元素置零")
def test_zero_fraction(sub):
    x = torch.ones(400, 500)
    sub.seed(1)
    for p in (0.2, 0.5, 0.7):
        out = sub.dropout(x, p)
        expect(
            isinstance(out, torch.Tensor) and tuple(out.shape) == (400, 500),
            Msg(
                "dropout(x, p={p}) must return a tensor of the same shape as x, (400, 500)",
                "dropout(x, p={p}) 必须返回与 x 形状相同的张量，即 (400, 500)",
                p=from_input(p),
            ),
        )
        frac = _zero_fraction(out)
        if frac == 0:
            expect(
                False,
                Msg(
                    "dropout(x, p={p}) in training mode dropped nothing (training=True is the default)",
                    "训练模式下 dropout(x, p={p}) 什么也没丢弃（training=True 是默认值）",
                    p=from_input(p),
                ),
            )
        if p != 0.5 and abs(frac - (1 - p)) < 0.01:
            expect(
                False,
                Msg(
                    "dropout(x, p={p}) zeroed {frac:.3f} of the elements: it kept each element with "
                    "probability p instead of 1 - p (p is the probability of dropping)",
                    "dropout(x, p={p}) 把 {frac:.3f} 的元素置零了：它以概率 p 而不是 1 - p 保留每个元素（p 是丢弃的概率）",
                    p=from_input(p),
                    frac=from_input(frac),
                ),
            )
        # 200,000 elements: the standard deviation of the fraction is at most 0.0012; 0.01 is > 8 of them.
        expect(
            abs(frac - p) < 0.01,
            Msg(
                "dropout(x, p={p}) zeroed {frac:.4f} of 200,000 elements; about {p} (±0.01) should be zero",
                "dropout(x, p={p}) 把 200,000 个元素中的 {frac:.4f} 置零了；应约有 {p}（±0.01）为零",
                p=from_input(p),
                frac=from_input(frac),
            ),
        )
    # The share alone is one consequence of the rule: a fixed count at a fixed stride has it too.
    for p in (0.2, 0.5):
        expect_rule(sub, (64, 256), p, code("dropout(torch.ones(64, 256), p={p})", p=from_input(p)))
    # ... and at the sizes the course trains with: attention weights, activations; float64, bfloat16
    if grading():  # not in `kata check`: seconds of reads that only a rule keyed on the size fails
        expect_rule_in_training(sub, 1410, WEIGHTS, ACTIVATIONS)
    # The two ends the docstring promises, after the draws above (which they leave as they were):
    # p = 0 drops nothing, p = 1 everything. The usual shortcut, x * keep / (1 - p) for every p,
    # divides 0 by 0 at p = 1.
    small = torch.randn(4, 5, generator=torch.Generator().manual_seed(24))
    expect_tensor(
        sub.dropout(small, 0.0),
        small,
        tol="exact",
        what=Msg("dropout(x, p=0) in training mode (nothing to drop)", "训练模式下的 dropout(x, p=0)（没有要丢弃的）"),
    )
    expect_tensor(
        sub.dropout(small, 1.0),
        torch.zeros_like(small),
        tol="exact",
        what=Msg(
            "dropout(x, p=1) in training mode (everything dropped: zeros, never NaN)",
            "训练模式下的 dropout(x, p=1)（全部丢弃：结果为 0，不能有 NaN）",
        ),
        mistakes=[
            Mistake(
                torch.full_like(small, float("nan")),
                "p = 1 was not handled: x * keep / (1 - p) divides 0 by 0; return zeros when p is 1",
                "没有单独处理 p = 1：x * keep / (1 - p) 成了 0 除以 0；p 为 1 时应返回全 0",
            )
        ],
    )


@check(points=2, title="the kept elements are divided by 1 - p", title_zh="保留的元素除以 1 - p")
def test_survivors_scaled(sub):
    g = torch.Generator().manual_seed(21)
    x = torch.rand(300, 400, generator=g) + 0.5
    sub.seed(2)
    p = 0.3
    out = sub.dropout(x, p)
    expect(
        isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(x.shape),
        Msg("dropout(x, p) must return a tensor of the same shape as x", "dropout(x, p) 必须返回与 x 形状相同的张量"),
    )
    kept = out != 0
    expect(bool(kept.any()), Msg("dropout(x, p=0.3) zeroed every element", "dropout(x, p=0.3) 把所有元素都置零了"))
    expect_tensor(
        out[kept],
        x[kept] / (1 - p),
        tol="attention",
        what=Msg(
            "the elements that survive dropout(x, p=0.3) (x / (1 - p))",
            "dropout(x, p=0.3) 中保留下来的元素（x / (1 - p)）",
        ),
        mistakes=_survivor_mistakes(x[kept], p),
    )
    # ... in every dtype, at the course's training size (a rescaling keyed on the dtype meets it)
    if grading():
        expect_rule_at_training_size(sub, 1430, *ACTIVATIONS, dtype=torch.float64, scale=True)
        expect_rule_at_training_size(sub, 1431, *ACTIVATIONS, dtype=torch.bfloat16, p=BF16_P, scale=True)


@check(points=1, title="in eval mode dropout changes nothing", title_zh="在 eval 模式下 dropout 不做任何改变")
def test_eval_is_identity(sub):
    g = torch.Generator().manual_seed(22)
    x = torch.randn(8, 9, generator=g)
    for p in (0.5, 0.1):
        expect_tensor(
            sub.dropout(x, p, training=False),
            x,
            tol="exact",
            what=Msg(
                "dropout(x, p={p}, training=False) (must return x unchanged)",
                "dropout(x, p={p}, training=False)（必须原样返回 x）",
                p=from_input(p),
            ),
            mistakes=[
                Mistake(
                    x * (1 - p),
                    "in evaluation mode x was scaled by (1 - p): inverted dropout scales only during training",
                    "评估模式下 x 被乘了 (1 - p)：倒置 dropout 只在训练时缩放",
                )
            ],
        )
    m = sub.new("Dropout", p=0.3)
    m.eval()
    expect_tensor(
        m(x),
        x,
        tol="exact",
        what=Msg(
            "Dropout(p=0.3) after .eval() (must return its input unchanged)",
            ".eval() 之后的 Dropout(p=0.3)（必须原样返回输入）",
        ),
    )
    # Returning the input is right only in eval mode: in training the same function and module must drop.
    ones = torch.ones(20, 20)
    m.train()
    for out, p, what in (
        (sub.dropout(ones, 0.5, training=True), 0.5, code("dropout(ones, 0.5, training=True)")),
        (m(ones), 0.3, Msg("Dropout(p=0.3) after .train() on ones", ".train() 之后的 Dropout(p=0.3) 作用在全 1 上")),
    ):
        scale = 1 / (1 - p)
        kept = out != 0 if isinstance(out, torch.Tensor) and tuple(out.shape) == (20, 20) else None
        expect(
            kept is not None
            and 0 < int(kept.sum()) < 400
            and bool(torch.isclose(out[kept], torch.full_like(out[kept], scale)).all()),
            Msg(
                "{what} in training mode must drop some elements (0) and scale the others by 1 / (1 - p)",
                "训练模式下 {what} 必须丢弃一部分元素（变为 0），并把其余元素乘以 1 / (1 - p)",
                what=what,
            ),
        )


@check(
    points=2,
    hidden=True,
    title="dropout keeps the expected value of each weight",
    title_zh="dropout 保持每个权重的期望值",
)
def test_expectation_preserved(sub):
    f = fx()
    w = f["weights"]
    p = 0.3
    batch = w.expand(4000, 5, 5).contiguous()
    sub.seed(4)
    out = sub.dropout(batch, p)
    expect(
        isinstance(out, torch.Tensor) and tuple(out.shape) == (4000, 5, 5),
        Msg("dropout must return a tensor of the same shape as its input", "dropout 必须返回与输入形状相同的张量"),
    )
    visible = w > 0
    ratio = float(out.double().sum() / batch.double().sum())
    for value, what in (
        (1 - p, Msg("the kept weights were not rescaled by `1 / (1 - p)`", "保留的权重没有按 `1 / (1 - p)` 放大")),
        (
            (1 - p) ** 2,
            Msg(
                "the kept weights were multiplied by `1 - p` instead of divided",
                "保留的权重乘以了 `1 - p`，而不是除以 `1 - p`",
            ),
        ),
        (
            p / (1 - p),
            Msg("each weight was kept with probability p instead of `1 - p`", "每个权重以概率 p 而不是 `1 - p` 被保留"),
        ),
        (
            p,
            Msg(
                "each weight was kept with probability p instead of `1 - p`, and not rescaled",
                "每个权重以概率 p 而不是 `1 - p` 被保留，并且没有放大",
            ),
        ),
    ):
        expect(
            abs(ratio - value) > 0.02,
            Msg(
                "on average dropout changed the weights by a factor {ratio:.3f}: {what}",
                "dropout 平均把权重改变为 {ratio:.3f} 倍：{what}",
                ratio=from_input(ratio),
                what=what,
            ),
        )
    # Each of the 15 visible weights averaged over 4000 draws: standard deviation w * 0.0104; bound 0.06 w.
    mean = out.double().mean(0)
    ok = ((mean - w.double()).abs() <= 0.06 * w.double() + 1e-9) | ~visible
    expect(
        bool(ok.all()),
        Msg(
            "the average of dropout(w, p={p}) over {n} draws must stay close to w for every "
            "weight (inverted dropout preserves the expected value of each element)",
            "dropout(w, p={p}) 在 {n} 次抽取上的平均值必须对每个权重都接近 w（inverted dropout 保持每个元素的期望值）",
            p=from_input(p),
            n=from_input(batch.shape[0]),
        ),
    )
    # The book's "each row is still a probability distribution" is wrong (ERRATA E-1.14-e): only on average.
    sums = out.double().sum(-1)
    expect(
        bool((sums - 1).abs().max() > 0.1),
        Msg(
            "rows of dropped weights must not be renormalised to sum to `1`",
            "dropout 之后的权重各行不应重新归一化为和为 `1`",
        ),
    )
    expect(
        abs(float(sums.mean()) - 1) < 0.02,
        Msg(
            "the row sums of dropped causal weights must be `1` on average", "dropout 之后因果权重的行和平均必须为 `1`"
        ),
    )


@check(points=1, hidden=True, title="masked weights stay 0 after dropout", title_zh="被掩码的权重在 dropout 之后仍为 0")
def test_masked_zeros_stay_zero(sub):
    f = fx()
    w = f["causal_batch"]
    sub.seed(5)
    p = 0.4
    out = sub.dropout(w, p)
    expect(
        isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(w.shape),
        Msg("dropout must return a tensor of the same shape as its input", "dropout 必须返回与输入形状相同的张量"),
    )
    expect(bool(torch.isfinite(out).all()), Msg("dropout produced NaN or inf", "dropout 产生了 NaN 或 inf"))
    expect(
        bool((out[w == 0] == 0).all()),
        Msg(
            "weights hidden by the causal mask (`0`) must stay exactly `0` after dropout",
            "被因果掩码隐藏的权重（`0`）在 dropout 之后必须恰好仍为 `0`",
        ),
    )
    expect(
        bool((out >= 0).all()),
        Msg("dropout of non-negative weights must stay non-negative", "非负权重经过 dropout 之后必须仍然非负"),
    )
    # The property alone holds for a constant 0: each weight must be dropped (0) or kept and scaled by 1 / (1 - p).
    live = w > 0
    kept, scaled = out[live] != 0, w[live] / (1 - p)
    expect(
        bool(torch.isclose(out[live][kept], scaled[kept], rtol=1e-5, atol=1e-7).all()),
        Msg(
            "each kept weight of dropout(w, p={p}) must be scaled by `1 / (1 - p)`, each dropped one must be `0`",
            "dropout(w, p={p}) 中每个保留的权重都要乘以 `1 / (1 - p)`，每个被丢弃的权重都必须为 `0`",
            p=from_input(p),
        ),
    )
    expect(
        0 < int(kept.sum()) < int(live.sum()),
        Msg(
            "dropout(w, p={p}) must keep some of the non-zero weights and drop others",
            "dropout(w, p={p}) 必须保留一部分非零权重、丢弃另一部分",
            p=from_input(p),
        ),
    )


@check(
    points=1,
    hidden=True,
    title="a new mask on every call, repeatable with a seed",
    title_zh="每次调用生成新掩码，设定种子后可复现",
)
def test_new_mask_each_call_and_seeded(sub):
    x = torch.ones(100, 100)
    p = 0.5
    sub.seed(3)
    a = sub.dropout(x, p)
    b = sub.dropout(x, p)
    expect(
        isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor),
        Msg("dropout must return a tensor", "dropout 必须返回张量"),
    )
    # Random values alone change from call to call too: each output must be dropped (0) or kept and scaled (2).
    expect(
        tuple(a.shape) == (100, 100) and bool(((a == 0) | (a == 2)).all()) and bool(((b == 0) | (b == 2)).all()),
        Msg(
            "dropout(ones, {p}) must give `0` (dropped) or {scale} (kept and scaled by `1 / (1 - p)`) in every place",
            "dropout(ones, {p})（ones 为全 `1` 张量）的每个位置都必须是 `0`（丢弃）或 {scale}（保留并乘以 `1 / (1 - p)`）",
            p=from_input(p),
            scale=from_input(1 / (1 - p)),
        ),
    )
    expect(
        not torch.equal(a, b),
        Msg(
            "two calls in a row dropped the same elements: draw a new random mask on every "
            "call (do not call torch.manual_seed inside dropout)",
            "连续两次调用丢弃了相同的元素：每次调用都要生成新的随机掩码（不要在 dropout 内部调用 torch.manual_seed）",
        ),
    )
    sub.seed(3)
    c = sub.dropout(x, p)
    expect(
        torch.equal(a, c),
        Msg(
            "after the same torch.manual_seed the mask must repeat: draw it from torch's generator "
            "(torch.rand, torch.bernoulli), not from Python's random or numpy",
            "在相同的 torch.manual_seed 之后掩码必须重复：从 torch 的生成器中抽取（torch.rand、torch.bernoulli），而不是用 Python 的 random 或 numpy",
        ),
    )


@check(points=1, hidden=True, title="every element is dropped independently", title_zh="每个元素独立地被丢弃")
def test_elements_independent(sub):
    x = torch.ones(400, 400)
    sub.seed(6)
    out = sub.dropout(x, 0.5)
    expect(
        isinstance(out, torch.Tensor) and tuple(out.shape) == (400, 400),
        Msg("dropout must return a tensor of the same shape as its input", "dropout 必须返回与输入形状相同的张量"),
    )
    zero = (out == 0).double()
    # 400 elements per row or column: standard deviation 0.025, bound 0.15 (6 of them).
    for frac, what in ((zero.mean(1), Msg("rows", "行")), (zero.mean(0), Msg("columns", "列"))):
        expect(
            bool(((frac - 0.5).abs() < 0.15).all()),
            Msg(
                "some {what} lose far more or far fewer elements than p: every element must be dropped "
                "independently (one random draw per element, not per row or column)",
                "有些{what}丢弃的元素比 p 多得多或少得多：每个元素都必须独立地丢弃（每个元素抽一次随机数，而不是每行或每列一次）",
                what=what,
            ),
        )
    shape, p = (4, 4, 32, 32), 0.3
    expect_rule(
        sub, shape, p, code("dropout(torch.ones{shape}, p={p})", shape=from_input(shape), p=from_input(p)), heads=True
    )
    expect_rule_in_training(sub, 1420, WEIGHTS, ACTIVATIONS)
    expect_rule_at_training_size(sub, 1424, *HIDDEN_FEATURES)  # ff's hidden features


@check(points=1, hidden=True, title="p = 0, p = 1 and other dtypes", title_zh="p = 0、p = 1 和其他数据类型")
def test_edge_cases(sub):
    f = fx()
    x = torch.randn(20, 30, generator=torch.Generator().manual_seed(23))
    sub.seed(7)
    none, every = 0.0, 1.0
    expect_tensor(
        sub.dropout(x, none),
        x,
        tol="exact",
        what=Msg(
            "dropout(x, p={p}) in training mode (nothing to drop)",
            "训练模式下的 dropout(x, p={p})（没有要丢弃的）",
            p=from_input(none),
        ),
    )
    out = sub.dropout(x, every)
    expect_tensor(
        out,
        torch.zeros_like(x),
        tol="exact",
        what=Msg(
            "dropout(x, p={p}) (everything dropped, no NaN)",
            "dropout(x, p={p})（全部丢弃，不能有 NaN）",
            p=from_input(every),
        ),
    )
    out64 = sub.dropout(x.double(), 0.5)
    expect(
        isinstance(out64, torch.Tensor) and out64.dtype == torch.float64,
        Msg(
            "dropout of a {dtype} tensor must return {dtype}",
            "{dtype} 张量经过 dropout 必须返回 {dtype}",
            dtype=from_input("float64"),
        ),
    )
    expect_tensor(
        sub.dropout_with_mask(f["x"], f["keep"], 0.2),
        f["x_dropped"],
        tol="attention",
        what=Msg(
            "dropout_with_mask(x, keep, p={p}) on a {shape} tensor x",
            "对形状为 {shape} 的张量 x 做 dropout_with_mask(x, keep, p={p})",
            p=from_input(0.2),
            shape=from_input(tuple(f["x"].shape)),
        ),
        mistakes=_survivor_mistakes(f["x"] * f["keep"], 0.2),
    )
