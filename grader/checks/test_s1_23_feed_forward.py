"""Checks of §1.23, the encoder's feed-forward network (listing 1.32).

Given weights are loaded by the book's names and the eval output compared with
bert_reference.feed_forward. The two Dropout layers are read through weights that make output i
hidden feature i plus 1 (transparent_state): each output of a train-mode call shows whether the
last Dropout dropped it and, if not, whether the first dropped its hidden feature; the drops of
12 calls are held to the rule (grader/checking/draws.py), not to their share.
"""

import torch
from torch.nn.functional import linear as F_linear

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

EXERCISE = "s1_23_feed_forward"
D, HID = 8, 20


def make_fixtures(sol):
    sd = R.random_state(R.feed_forward_shapes(D, HID), seed=2350)
    x = torch.randn(2, 5, D, generator=torch.Generator().manual_seed(2351))
    m = sol.FeedForward(D, HID)
    m.load_state_dict(sd)
    m.eval()
    with torch.no_grad():
        out = m(x)
    return {"x": x, "out": out, **{f"sd/{k}": v for k, v in sd.items()}}


def fx():
    return fixtures.load(EXERCISE)


def _sd(f):
    return {k.split("/", 1)[1]: v for k, v in f.items() if k.startswith("sd/")}


def _mistakes(x, sd):
    return [
        Mistake(
            R.feed_forward(x, sd, "relu"),
            "ReLU instead of GELU between the linear layers",
            "两个线性层之间用了 ReLU 而不是 GELU",
        ),
        Mistake(
            R.feed_forward(x, sd, "tanh"),
            "the tanh approximation of GELU instead of nn.GELU()'s exact form",
            "用了 tanh 近似的 GELU，而不是 nn.GELU() 的精确形式",
        ),
        Mistake(
            R.feed_forward(x, sd, "none"), "no activation between the two linear layers", "两个线性层之间没有激活函数"
        ),
    ]


def _expect_values(sub, seed: int):
    """Eval output with other given weights on a fresh batch: paired with the check of the
    layout, so that the right layout around a wrong forward earns nothing."""
    sd = R.random_state(R.feed_forward_shapes(D, HID), seed=seed)
    x = torch.randn(2, 3, D, generator=torch.Generator().manual_seed(seed + 1))
    expect_tensor(
        _new(sub, sd)(x),
        R.feed_forward(x, sd),
        tol="norm",
        what=Msg(
            "eval output of FeedForward({d}, {hid}) on a (2, 3, {d}) batch with given weights",
            "给定权重时 FeedForward({d}, {hid}) 在 (2, 3, {d}) 批次上 eval 模式下的输出",
            d=D,
            hid=HID,
        ),
        mistakes=_mistakes(x, sd),
    )


def _new(sub, sd, dim=D, hidden=HID, **kw):
    m = sub.new("FeedForward", dim, hidden, **kw)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.32"], title="listing 1.32: the network's layout", title_zh="代码清单 1.32：网络的结构")
def test_listing_1_32_structure(sub):
    m = sub.new("FeedForward", 256, 1024)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_feed_forward(256, 1024)))
    expect(
        not diff,
        Msg(
            "print(FeedForward(256, 1024)) differs from listing 1.36's printed feed-forward network (net "
            "= Sequential(Linear, GELU, Dropout, Linear, Dropout)): {diff}",
            "print(FeedForward(256, 1024)) 与代码清单 1.36 中打印的前馈网络不同（net = Sequential(Linear, GELU, Dropout, "
            "Linear, Dropout)）：{diff}",
            diff=diff,
        ),
    )
    small = sub.new("FeedForward", D, HID).state_dict()
    shapes = R.feed_forward_shapes(D, HID)
    expect_equal(
        sorted(small),
        sorted(shapes),
        what=Msg("parameter names of FeedForward({d}, {hid})", "FeedForward({d}, {hid}) 的参数名", d=D, hid=HID),
    )
    for name, shape in shapes.items():
        expect_equal(tuple(small[name].shape), shape, what=Msg("shape of {name}", "{name} 的形状", name=name))
    _expect_values(sub, seed=2356)


@check(
    points=2,
    listings=["1.32"],
    title="listing 1.32: output with given weights",
    title_zh="代码清单 1.32：给定权重时的输出",
)
def test_listing_1_32_given_weights(sub):
    f = fx()
    sd = _sd(f)
    expect_tensor(
        _new(sub, sd)(f["x"]),
        f["out"],
        tol="norm",
        what=Msg(
            "eval output of FeedForward({d}, {hid}) on a (2, 5, {d}) batch with given weights",
            "给定权重时 FeedForward({d}, {hid}) 在 (2, 5, {d}) 批次上 eval 模式下的输出",
            d=D,
            hid=HID,
        ),
        mistakes=_mistakes(f["x"], sd),
    )


@check(points=2, hidden=True, title="other sizes and input shapes", title_zh="其他尺寸和输入形状")
def test_fresh_sizes_and_shapes(sub):
    g = torch.Generator().manual_seed(2352)
    for dim, hidden, shape in ((12, 48, (3, 4)), (4, 7, (2, 3, 5)), (16, 64, (1, 1))):
        sd = R.random_state(R.feed_forward_shapes(dim, hidden), seed=2353 + dim)
        x = torch.randn(*shape, dim, generator=g)
        m = _new(sub, sd, dim, hidden)
        y = m(x)
        expect_tensor(
            y,
            R.feed_forward(x, sd),
            tol="norm",
            what=Msg(
                "eval output of FeedForward({dim}, {hidden}) on a {shape_x} input",
                "FeedForward({dim}, {hidden}) 在 {shape_x} 输入上 eval 模式下的输出",
                dim=from_input(dim),
                hidden=from_input(hidden),
                shape_x=from_input(tuple(x.shape)),
            ),
            mistakes=_mistakes(x, sd),
        )
        # Position-wise: one vector alone gives what it gets inside the batch.
        flat = x.reshape(-1, dim)
        expect_tensor(
            m(flat[-1:]),
            y.reshape(-1, dim)[-1:],
            tol="norm",
            what=Msg("one token vector on its own", "单独一个词元向量"),
        )


# ----------------------------------------------------------------------------- dropout, read through the output
DROP_P = 0.3
DROPOUT_CALLS = 12  # calls per dropout check: the number dropped must vary across them as Binomial(n, p) does
TD = 16  # dim = hidden: the second Linear is the identity, so each output shows one hidden feature
TB, TT = 8, 12  # batch and tokens of the dropout checks
# The book's sizes (listing 1.36: dim 256, ff 1024) on 128 tokens, so that a rule keyed on size
# meets the real ones: fewer calls there, the statistics pool them.
BD, BH, BB, BT, BIG_CALLS = 256, 1024, 2, 128, 3
IN_GAIN, IN_SHIFT, BIAS = 0.25, 1.5, 1.0
TOL = 1e-4
DROPOUT_HINT = Msg(
    "net has two Dropout layers, each drawing once for each element it gets, on every call: "
    "`net = Sequential(Linear, GELU, Dropout, Linear, Dropout)`, run in that order",
    "net 中有两个 Dropout 层，每次调用时对各自收到的每个元素独立抽样一次："
    "`net = Sequential(Linear, GELU, Dropout, Linear, Dropout)`，按这个顺序执行",
)
SEEN = Msg(
    "FeedForward({d}, {d}, dropout={p}) in train mode on a ({b}, {t}, {d}) batch, with weights that make "
    "output i hidden feature i plus {bias} (`net.0` = {g} x identity + {c}, `net.3` = identity + {bias})",
    "训练模式下的 FeedForward({d}, {d}, dropout={p})，输入 ({b}, {t}, {d}) 批次，所用权重使第 i 个输出等于"
    "第 i 个隐藏特征加 {bias}（`net.0` = {g} x 单位矩阵 + {c}，`net.3` = 单位矩阵 + {bias}）",
    d=from_input(TD),
    p=from_input(DROP_P),
    b=from_input(TB),
    t=from_input(TT),
    g=from_input(IN_GAIN),
    c=from_input(IN_SHIFT),
    bias=from_input(BIAS),
)
SEEN_BIG = Msg(
    "FeedForward({d}, {h}, dropout={p}) in train mode on a ({b}, {t}, {d}) batch, with weights that make "
    "output i show hidden features i, i + {d}, i + {d2}, i + {d3} (`net.0` = {g} x {k} stacked identities + "
    "{c}, `net.3` = those identities side by side, weighted {w}, + {bias})",
    "训练模式下的 FeedForward({d}, {h}, dropout={p})，输入 ({b}, {t}, {d}) 批次，所用权重使第 i 个输出"
    "显示第 i、i + {d}、i + {d2}、i + {d3} 个隐藏特征（`net.0` = {g} x {k} 个上下堆叠的单位矩阵 + {c}，"
    "`net.3` = 这些单位矩阵左右并排，分别乘以 {w}，再加 {bias}）",
    d=from_input(BD),
    h=from_input(BH),
    d2=from_input(2 * BD),
    d3=from_input(3 * BD),
    k=from_input(BH // BD),
    p=from_input(DROP_P),
    b=from_input(BB),
    t=from_input(BT),
    g=from_input(IN_GAIN),
    c=from_input(IN_SHIFT),
    w=from_input([2**j for j in range(BH // BD)]),
    bias=from_input(BIAS),
)


def transparent_state(dim: int = TD, hidden: int = TD) -> dict:
    """net.0 = IN_GAIN x identity + IN_SHIFT (inputs within +-3: GELU's outputs g lie in
    [0.58, 2.2]), net.3 = identity + BIAS: output i = (g_i x a_i + BIAS) x b_i, with a_i the first
    Dropout's factor for hidden feature i and b_i the second's for output i. With hidden = k x dim
    (k <= 4), net.0 stacks k identities (hidden feature i + j dim = input i) and net.3 lays them side
    by side weighted 2^j: output i = (g_i x sum_j 2^j a_(i + j dim) + BIAS) x b_i, every subset of
    kept hidden features a value of its own."""
    k = hidden // dim
    assert k * dim == hidden and 1 <= k <= 4
    eye = torch.eye(dim)
    return {
        "net.0.weight": IN_GAIN * eye.repeat(k, 1),
        "net.0.bias": torch.full((hidden,), IN_SHIFT),
        "net.3.weight": torch.cat([2.0**j * eye for j in range(k)], 1),
        "net.3.bias": torch.full((dim,), BIAS),
    }


def transparent_input(seed: int, b: int = TB, t: int = TT, dim: int = TD) -> torch.Tensor:
    return torch.randn(b, t, dim, generator=torch.Generator().manual_seed(seed)).clamp(-3, 3)


def read_dropout(ys, g: torch.Tensor, p: float, tol: float = TOL):
    """Sort each output of train-mode calls: 0 (the second Dropout dropped it), BIAS x b (the
    first dropped its hidden feature), (g x a + BIAS) x b (both kept it), for the scales a and b
    of the kept values. Returns (scales, reads): scales = (a, b), the first pair (tried: 1/(1-p),
    1, 1-p each) under which every output reads, or None; reads holds per call (hidden feature
    dropped (B, T, hidden), readable (B, T, hidden), output dropped (B, T, dim)). g is GELU's
    output, (B, T, hidden); with hidden = k x dim (transparent_state) an output reads as the sum
    m of 2^j over its kept hidden features: level 1 + m."""
    s = 1 / (1 - p)
    dim = ys[0].shape[-1] if ys and isinstance(ys[0], torch.Tensor) and ys[0].dim() else g.shape[-1]
    k = max(1, g.shape[-1] // max(1, dim))
    g = g[..., :dim]
    for a in (s, 1.0, 1 - p):
        for b in (s, 1.0, 1 - p):
            reads = []
            levels = [torch.zeros(())] + [(g * a * m + BIAS) * b for m in range(2**k)]
            for y in ys:
                idx = R.read_levels(y, levels, tol)
                if idx is None:
                    break
                m = (idx - 1).clamp(min=0)
                hidden = torch.cat([((m >> j) & 1) == 0 for j in range(k)], -1)
                readable = (idx != 0).repeat(*([1] * (idx.dim() - 1)), k)
                reads.append((hidden & readable, readable, idx == 0))
            else:
                return (a, b), reads
    return None, []


def dropout_reads(sub, x: torch.Tensor, seed: int, hidden: int = TD, calls: int = DROPOUT_CALLS, seen: Msg = SEEN):
    """`calls` train-mode calls on the transparent weights (FeedForward(x's dim, hidden)), after
    checking that eval mode gives the reference twice over; fails with what a wrong dropout does."""
    SEEN = seen  # noqa: N806 - every message below names what was read
    DROPOUT_CALLS = calls  # noqa: N806
    sd = transparent_state(x.shape[-1], hidden)
    sub.seed(seed)
    m = _new(sub, sd, x.shape[-1], hidden, dropout=DROP_P)
    want = R.feed_forward(x, sd)
    for _ in range(2):
        expect_tensor(
            m(x),
            want,
            tol="norm",
            what=Msg(
                "{what}, after .eval() (no dropout: the same output on every call)",
                "{what}，.eval() 之后（没有 dropout：每次调用输出都相同）",
                what=SEEN,
            ),
            mistakes=_mistakes(x, sd),
        )
    m.train()
    ys = [m(x) for _ in range(DROPOUT_CALLS)]
    for y in ys:
        expect(
            isinstance(y, torch.Tensor) and tuple(y.shape) == tuple(x.shape) and bool(torch.isfinite(y).all()),
            Msg(
                "{what} must return a tensor of x's shape, without NaN",
                "{what} 必须返回与 x 形状相同、不含 NaN 的张量",
                what=SEEN,
            ),
        )
    g = torch.nn.functional.gelu(F_linear(x, sd["net.0.weight"], sd["net.0.bias"]))
    scales, reads = read_dropout(ys, g, DROP_P)
    if scales is None:
        raise CheckFailure(
            Msg(
                "{what}: some outputs are neither `0` (the last Dropout), `{bias} / (1 - p)` (the first Dropout "
                "dropped the hidden feature) nor `(g / (1 - p) + {bias}) / (1 - p)` (both kept it): the first "
                "Dropout acts on GELU's output, the second on the second Linear's, once each. {hint}",
                "{what}：有些输出既不是 `0`（最后一个 Dropout），也不是 `{bias} / (1 - p)`（第一个 Dropout 丢弃了隐藏"
                "特征），也不是 `(g / (1 - p) + {bias}) / (1 - p)`（两者都保留）：第一个 Dropout 作用于 GELU 的输出，"
                "第二个作用于第二个 Linear 的输出，各一次。{hint}",
                what=SEEN,
                bias=from_input(BIAS),
                hint=DROPOUT_HINT,
            ),
            mistake=Msg("dropout in the wrong place", "dropout 位置不对"),
        )
    s = 1 / (1 - DROP_P)
    a, b = scales
    if not any(bool(h.any()) for h, _, _ in reads):
        raise CheckFailure(
            Msg(
                "{what}: over {n} calls no hidden feature was dropped: the Dropout after GELU is left "
                "out (or never drops). {hint}",
                "{what}：在 {n} 次调用中没有任何隐藏特征被丢弃：GELU 之后的 Dropout 被漏掉了（或者从不丢弃）。{hint}",
                what=SEEN,
                n=from_input(DROPOUT_CALLS),
                hint=DROPOUT_HINT,
            ),
            mistake=Msg("the first dropout left out", "漏掉了第一个 dropout"),
        )
    if not any(bool(o.any()) for _, _, o in reads):
        raise CheckFailure(
            Msg(
                "{what}: over {n} calls no output was `0`: the last Dropout comes after the second "
                "Linear, and it is left out (or never drops). {hint}",
                "{what}：在 {n} 次调用中没有任何输出为 `0`：最后一个 Dropout 应该在第二个 Linear 之后，"
                "它被漏掉了（或者从不丢弃）。{hint}",
                what=SEEN,
                n=from_input(DROPOUT_CALLS),
                hint=DROPOUT_HINT,
            ),
            mistake=Msg("the last dropout left out", "漏掉了最后一个 dropout"),
        )
    for scale, which in (
        (a, Msg("the first Dropout (after GELU)", "第一个 Dropout（GELU 之后）")),
        (b, Msg("the last Dropout (after the second Linear)", "最后一个 Dropout（第二个 Linear 之后）")),
    ):
        if scale == 1.0:
            raise CheckFailure(
                Msg(
                    "{what}: the values that survive {which} were not rescaled by `1 / (1 - p)`: inverted "
                    "dropout (nn.Dropout) divides the survivors by `(1 - p)`",
                    "{what}：{which}保留下来的值没有乘以 `1 / (1 - p)`：倒置 dropout（nn.Dropout）要把保留"
                    "下来的值除以 `(1 - p)`",
                    what=SEEN,
                    which=which,
                ),
                mistake=Msg("dropout not rescaled", "dropout 之后没有放大"),
            )
        if scale != s:
            raise CheckFailure(
                Msg(
                    "{what}: the values that survive {which} were multiplied by `(1 - p)`; divide them "
                    "by `(1 - p)` (nn.Dropout does)",
                    "{what}：{which}保留下来的值乘了 `(1 - p)`；应当除以 `(1 - p)`（nn.Dropout 就是这样做的）",
                    what=SEEN,
                    which=which,
                ),
                mistake=Msg("dropout multiplied by `(1 - p)`", "dropout 乘了 `(1 - p)`"),
            )
    return reads


def _expect_drawn(reads, batch_apart: bool = False, seen: Msg = SEEN):
    """The hidden features the first Dropout dropped (where readable) and the outputs the last
    one dropped, each held to the rule; with batch_apart, read with the batch last too."""
    SEEN = seen  # noqa: N806
    DROPOUT_CALLS = len(reads)  # noqa: N806
    hint_first = Msg(
        "the Dropout after GELU draws once for each hidden feature of each token",
        "GELU 之后的 Dropout 对每个词元的每个隐藏特征独立抽样一次",
    )
    hint_last = Msg(
        "the last Dropout draws once for each output element", "最后一个 Dropout 对每个输出元素独立抽样一次"
    )
    for part, name, hint in (
        (
            [(h, e) for h, e, _ in reads],
            Msg("the hidden features (first Dropout)", "隐藏特征（第一个 Dropout）"),
            hint_first,
        ),
        (
            [(o, torch.ones_like(o)) for _, _, o in reads],
            Msg("the outputs (last Dropout)", "输出（最后一个 Dropout）"),
            hint_last,
        ),
    ):
        found = draws.bernoulli_findings(part, DROP_P)
        if not found and batch_apart:  # the same mask for every sequence shows with the batch last
            found = draws.bernoulli_findings([(c.permute(1, 2, 0), e.permute(1, 2, 0)) for c, e in part], DROP_P)
        draws.expect_drawn(
            found,
            Msg(
                "{what}, {n} calls in a row: {name}",
                "{what}，连续调用 {n} 次：{name}",
                what=SEEN,
                n=from_input(DROPOUT_CALLS),
                name=name,
            ),
            Msg("dropped", "丢弃"),
            Msg("{hint}. {rule}", "{hint}。{rule}", hint=hint, rule=DROPOUT_HINT),
        )


@check(points=1, listings=["1.32"], title="both dropouts in training", title_zh="训练时的两个 dropout")
def test_both_dropouts_in_training(sub):
    _expect_drawn(dropout_reads(sub, transparent_input(2357), seed=6))
    # and at the book's sizes, where a rule keyed on size would show, and where the course trains: batch
    # 32 x 256 tokens, float32, float64 and bf16 (not in `kata check`: seconds of reads that only a rule
    # keyed on the size fails)
    if grading():
        _expect_drawn(
            dropout_reads(sub, transparent_input(2359, BB, BT, BD), seed=8, hidden=BH, calls=BIG_CALLS, seen=SEEN_BIG),
            seen=SEEN_BIG,
        )
        expect_rule_where_the_course_trains(sub, seed=2361)


@check(points=1, hidden=True, title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.feed_forward_shapes(D, HID), seed=2354)
    x = torch.randn(4, 10, D, generator=torch.Generator().manual_seed(2355))
    sub.seed(5)
    p_on, p_off = 0.5, 0.0
    m = _new(sub, sd, dropout=p_on)
    first = m(x)
    expect_tensor(
        m(x),
        first,
        tol="exact",
        what=Msg("two calls in eval mode (dropout must be off)", "eval 模式下的两次调用（dropout 必须关闭）"),
    )
    expect_tensor(
        first,
        R.feed_forward(x, sd),
        tol="norm",
        what=Msg("eval output with dropout={p}", "eval 模式下的输出（dropout={p}）", p=from_input(p_on)),
    )
    plain = _new(sub, sd, dropout=p_off)
    plain.train()
    expect_tensor(
        plain(x),
        first,
        tol="norm",
        what=Msg(
            "train-mode output with dropout={p}, equal to eval mode",
            "训练模式下的输出（dropout={p}），应与 eval 模式相同",
            p=from_input(p_off),
        ),
    )
    # The rule, not the share: another input, the batch read apart too.
    _expect_drawn(dropout_reads(sub, transparent_input(2358), seed=7), batch_apart=True)
    _expect_drawn(
        dropout_reads(sub, transparent_input(2360, BB, BT, BD), seed=9, hidden=BH, calls=BIG_CALLS, seen=SEEN_BIG),
        seen=SEEN_BIG,
    )  # (the batch read apart above)
    expect_rule_where_the_course_trains(sub, seed=2362)


# ----------------------------------------------------------------------------- dropout where the course trains
# Issue 24, fourth outside attack: a rule honest at the shapes above and wrong where `kata train`
# runs (batch 32 x 256 tokens x dim 256, ff 1024; float64 or bf16 under --amp) got full marks: both
# Dropouts only on tokens 0..127, or none outside float32. So the rule is read there as well, a few
# calls, every index of every axis at rate p (draws.region_findings: sums only, cheap at this size).
TRAIN_B, TRAIN_T, TRAIN_CALLS = 32, 256, 2
DTYPE_TOL = {torch.float64: TOL, torch.bfloat16: 0.9}  # bf16: levels 2.9 apart under the constant GELU below
AMP_NAME = "bfloat16 autocast"  # the bf16 read: float32 weights and input under torch.autocast, as `kata train` runs


def _seen_train(dtype: torch.dtype, gain: float) -> Msg:
    return Msg(
        "FeedForward({d}, {h}, dropout={p}) in train mode on a ({b}, {t}, {d}) {dtype} batch (the course's "
        "training size), with weights that make output i show hidden features i, i + {d}, i + {d2}, i + {d3} "
        "(`net.0` = {g} x {k} stacked identities + {c}, `net.3` = those identities side by side, weighted {w}, "
        "+ {bias})",
        "训练模式下的 FeedForward({d}, {h}, dropout={p})，输入 ({b}, {t}, {d}) 的 {dtype} 批次（课程训练时的规模），"
        "所用权重使第 i 个输出显示第 i、i + {d}、i + {d2}、i + {d3} 个隐藏特征（`net.0` = {g} x {k} 个上下堆叠的"
        "单位矩阵 + {c}，`net.3` = 这些单位矩阵左右并排，分别乘以 {w}，再加 {bias}）",
        d=from_input(BD),
        h=from_input(BH),
        d2=from_input(2 * BD),
        d3=from_input(3 * BD),
        k=from_input(BH // BD),
        p=from_input(DROP_P),
        b=from_input(TRAIN_B),
        t=from_input(TRAIN_T),
        g=from_input(gain),
        c=from_input(IN_SHIFT),
        w=from_input([2**j for j in range(BH // BD)]),
        bias=from_input(BIAS),
        dtype=from_input(AMP_NAME if dtype == torch.bfloat16 else str(dtype).removeprefix("torch.")),
    )


def expect_rule_where_the_course_trains(sub, seed: int):
    """The course's training size in float32 (TRAIN_CALLS calls), float64 (one call, the module and
    its input cast) and bfloat16 autocast (one call, float32 weights, as `kata train` runs bf16), every
    call as in training (x requires grad): a rule keyed on the dtype fails. Each output read as in
    dropout_reads, the survivors' scales checked, and every index of every axis (sequence, token,
    hidden feature or output feature) held to rate p."""
    for dtype, calls in ((torch.float32, TRAIN_CALLS), (torch.float64, 1), (torch.bfloat16, 1)):
        gain = IN_GAIN if dtype != torch.bfloat16 else 0.0  # bf16: every hidden feature GELU(1.5), levels far apart
        what = _seen_train(dtype, gain)
        sd = transparent_state(BD, BH)
        sd["net.0.weight"] = sd["net.0.weight"] * (gain / IN_GAIN)
        x = transparent_input(seed, TRAIN_B, TRAIN_T, BD)
        sub.seed(seed % 1000)
        m = _new(sub, sd, BD, BH, dropout=DROP_P)
        m.train()
        amp = dtype == torch.bfloat16  # as `kata train` runs bf16: float32 weights under autocast
        if dtype == torch.float64:
            m.to(dtype)
        ys = [
            sub.in_training(m, x.to(torch.float32 if amp else dtype), bf16_autocast=amp, label=code("FeedForward"))
            for _ in range(calls)
        ]
        for y in ys:
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
        g = torch.nn.functional.gelu(F_linear(x.double(), sd["net.0.weight"].double(), sd["net.0.bias"].double()))
        reads = _read_honest([y.double() for y in ys], g[..., :BD], BH // BD, DTYPE_TOL.get(dtype, TOL))
        if reads is None:
            raise CheckFailure(
                Msg(
                    "{what}: the outputs are not those of two Dropouts that drop elements and divide the "
                    "survivors by `(1 - p)`, as in `float32` at the smaller sizes: the rule is the same in "
                    "every dtype and at every size. {hint}",
                    "{what}：输出不是两个 Dropout（丢弃元素并把保留下来的值除以 `(1 - p)`）应给出的值，"
                    "而在 `float32` 和较小的规模下是：规则在每种 dtype、每种规模下都相同。{hint}",
                    what=what,
                    hint=DROPOUT_HINT,
                ),
                mistake=Msg("dropout keyed on the dtype or the size", "dropout 随 dtype 或规模而变"),
            )
        for i, name, axes in (
            (
                0,
                Msg("the hidden features (first Dropout)", "隐藏特征（第一个 Dropout）"),
                ["sequence", "token", "hidden feature"],
            ),
            (2, Msg("the outputs (last Dropout)", "输出（最后一个 Dropout）"), ["sequence", "token", "feature"]),
        ):
            part = [(r[i], r[1] if i == 0 else torch.ones_like(r[i])) for r in reads]
            draws.expect_drawn(
                draws.rate_findings(part, DROP_P) or draws.region_findings(part, DROP_P, axes),
                Msg(
                    "{what}, {n} call(s): {name}",
                    "{what}，调用 {n} 次：{name}",
                    what=what,
                    n=from_input(calls),
                    name=name,
                ),
                Msg("dropped", "丢弃"),
                Msg(
                    "every element is dropped at rate p, whatever its dtype, its sequence, its token "
                    "or its feature. {rule}",
                    "每个元素都以概率 p 被丢弃，与 dtype、所在序列、词元或特征无关。{rule}",
                    rule=DROPOUT_HINT,
                ),
            )


def _read_honest(ys, g: torch.Tensor, k: int, tol: float):
    """read_dropout's reads under the scales (1 / (1 - p), 1 / (1 - p)) alone, computed rather
    than searched (16 levels over 2M outputs cost seconds): an output y is 0, or (g s m + 1) s
    for the sum m of 2^j over its kept hidden features. None when some output is neither."""
    s = 1 / (1 - DROP_P)
    reads = []
    for y in ys:
        out = y.abs() <= tol
        m = ((y / s - 1) / (g * s)).round().clamp(0, 2**k - 1)
        if not bool((out | ((y - (g * s * m + BIAS) * s).abs() <= tol)).all()):
            return None
        m = m.long()
        hidden = torch.cat([((m >> j) & 1) == 0 for j in range(k)], -1)
        readable = (~out).repeat(*([1] * (y.dim() - 1)), k)
        reads.append((hidden & readable, readable, out))
    return reads
