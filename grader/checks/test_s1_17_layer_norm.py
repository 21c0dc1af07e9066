"""Checks of §1.17, layer normalisation (the six-value example and a LayerNorm module)."""

import torch
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from grader.checking import Mistake, Msg, check, code, expect, expect_equal, expect_tensor, fixtures, from_input

EXERCISE = "s1_17_layer_norm"

# §1.17: one layer's six outputs for one example.
SIX = [0.78, 1.05, 0.44, 0.73, 0.65, 0.28]
# True values (the book prints mean ~0.6, variance ~0.07 and [0.44, 1.48, -0.85, 0.28, -0.01, -1.33]:
# ERRATA E-1.17-a..d).
SIX_MEAN, SIX_VAR = 0.655, 0.0607
SIX_NORMALIZED = [0.507, 1.603, -0.873, 0.304, -0.020, -1.522]


def _ln(x, w=None, b=None, eps=1e-5, unbiased=False, eps_outside=False, dim=-1, by_var=False):
    """Layer norm written out, with switches for the common mistakes."""
    mean = x.mean(dim=dim, keepdim=True)
    var = x.var(dim=dim, keepdim=True, unbiased=unbiased)
    if by_var:
        y = (x - mean) / (var + eps)
    elif eps_outside:
        y = (x - mean) / (var.sqrt() + eps)
    else:
        y = (x - mean) / (var + eps).sqrt()
    return y if w is None else y * w + b


def _dim0_mistake(x, w, b, eps):
    """Normalised over dim 0."""
    return Mistake(
        _ln(x, w, b, eps, dim=0),
        "normalised over dim `0` instead of the last dimension (the features)",
        "在第 `0` 维而不是最后一维（特征维）上做了归一化",
    )


def _mistakes(x, w=None, b=None, eps=1e-5):
    """The named mistakes."""
    out = [
        Mistake(
            _ln(x, w, b, eps, unbiased=True),
            "the unbiased variance (dividing by `d - 1`): use d",
            "用了无偏方差（除以 `d - 1`），应除以 d",
        ),
        Mistake(
            _ln(x, w, b, eps, eps_outside=True),
            "eps added outside the square root: use sqrt(var + eps)",
            "eps 加在了平方根外面，应为 sqrt(var + eps)",
        ),
        Mistake(
            _ln(x, w, b, eps, by_var=True),
            "divided by the variance instead of the standard deviation",
            "除以了方差而不是标准差",
        ),
    ]
    if x.dim() > 1:
        out.append(_dim0_mistake(x, w, b, eps))
    if x.dim() > 2:
        out.append(
            Mistake(
                _ln(x, w, b, eps, dim=-2),
                "normalised over the tokens (dim `-2`) instead of the features",
                "在词元维（`-2`）而不是特征维上做了归一化",
            )
        )
    if w is not None:
        out.append(
            Mistake(
                _ln(x),
                "the learned scale (weight) and shift (bias) were not applied",
                "没有乘以可学习的 weight、加上 bias",
            )
        )
    return out


def _no_eps(x):
    """normalize without eps: (x - mean) / sqrt(var). A constant row divides 0 by 0."""
    return Mistake(
        _ln(x, eps=0.0),
        "eps was left out: (x - mean) / sqrt(var) divides by 0 for a constant row; use sqrt(var + eps)",
        "漏掉了 eps：(x - mean) / sqrt(var) 在常数行上除以 0；应为 sqrt(var + eps)",
    )


def _ignored_eps(x, w=None, b=None):
    """LayerNorm(..., eps=e).forward that calls normalize(x) without self.eps: the default 1e-5."""
    return Mistake(
        _ln(x, w, b),
        "LayerNorm.forward ignored self.eps: pass it on, normalize(x, self.eps)",
        "LayerNorm.forward 没有使用 self.eps：应把它传下去，normalize(x, self.eps)",
    )


def _torch_ln(x, w, b, eps=1e-5):
    ref = torch.nn.LayerNorm(x.shape[-1], eps=eps)
    with torch.no_grad():
        ref.weight.copy_(w)
        ref.bias.copy_(b)
        return ref(x)


def make_fixtures(sol):
    six = torch.tensor(SIX)
    mean, var = sol.mean_and_variance(six)
    g = torch.Generator().manual_seed(117)
    x = torch.randn(2, 5, 16, generator=g) * 3 + 1
    small = torch.randn(4, 8, generator=g) * 1e-3
    m = sol.LayerNorm(16)
    w, b = torch.randn(16, generator=g), torch.randn(16, generator=g)
    m.load_state_dict({"weight": w, "bias": b})
    with torch.no_grad():
        y = m(x)
    return {
        "six": six,
        "six_mean": mean,
        "six_var": var,
        "six_norm": sol.normalize(six, eps=0.0),
        "six_norm_eps": sol.normalize(six),
        "x": x,
        "w": w,
        "b": b,
        "y": y,
        "small": small,
        "small_norm": sol.normalize(small),
        "small_norm_big_eps": sol.normalize(small, eps=1e-3),
        "rows": x[0],
        "rows_norm": sol.normalize(x[0]),
        **_steady(sol),
    }


def _steady(sol):
    """The public example of eps at work: two nearly constant rows (variance 1e-6 to 2e-6, below eps = 1e-5)."""
    steady = torch.randn(2, 6, generator=torch.Generator().manual_seed(1170)) * 2e-3
    return {"steady": steady, "steady_norm": sol.normalize(steady)}


def fx():
    return fixtures.load(EXERCISE)


@check(
    points=3,
    listings=["1.17/six-values"],
    title="the book's six activations normalised",
    title_zh="书中六个激活值的归一化",
)
def test_book_six_values(sub):
    six = torch.tensor(SIX)
    out = sub.mean_and_variance(six)
    expect(
        isinstance(out, (tuple, list)) and len(out) == 2,
        Msg(
            "mean_and_variance: expected a tuple (mean, var), got {type_out}",
            "mean_and_variance：应返回元组 (mean, var)，实际得到 {type_out}",
            type_out=from_input(type(out).__name__),
        ),
    )
    mean, var = out
    expect_tensor(
        mean,
        torch.tensor([SIX_MEAN]),
        tol="printed3",
        what=Msg("mean of the six values, shape (1,)", "六个值的均值，形状为 (1,)"),
    )
    expect_tensor(
        var,
        torch.tensor([SIX_VAR]),
        tol="printed4",
        what=Msg("biased variance of the six values, shape (1,)", "六个值的有偏方差，形状为 (1,)"),
        mistakes=[
            Mistake(
                six.var(keepdim=True, dim=-1),
                "the unbiased variance (dividing by 5): layer norm divides by the number of features, 6",
                "用了无偏方差（除以 5），应除以 6",
            )
        ],
    )
    for eps in (0.0, 1e-5):
        y = sub.normalize(six, eps=eps)
        expect_tensor(
            y,
            torch.tensor(SIX_NORMALIZED),
            tol="printed3",
            what=Msg("normalize(six values, eps={eps:g})", "normalize（六个值，eps={eps:g}）", eps=eps),
            mistakes=_mistakes(six, eps=eps),
        )
    y = y.double()
    expect(
        abs(float(y.mean())) < 1e-6, Msg("the normalised six values must have mean 0", "归一化后的六个值均值必须为 0")
    )
    expect(
        abs(float(y.var(unbiased=False)) - 1) < 1e-3,
        Msg("the normalised six values must have (biased) variance 1", "归一化后的六个值（有偏）方差必须为 1"),
    )


@check(points=1, title="LayerNorm's scale and shift parameters", title_zh="LayerNorm 的缩放和平移参数")
def test_parameters(sub):
    m = sub.new("LayerNorm", 6)
    state = m.state_dict()
    expect_equal(
        sorted(state),
        ["bias", "weight"],
        what=Msg(
            "parameter names of LayerNorm (weight = scale, bias = shift)",
            "LayerNorm 的参数名（weight = 缩放，bias = 平移）",
        ),
    )
    expect_tensor(
        state["weight"],
        torch.ones(6),
        tol="exact",
        what=Msg("initial weight (the scale): ones", "初始 weight（缩放）：全 1"),
    )
    expect_tensor(
        state["bias"],
        torch.zeros(6),
        tol="exact",
        what=Msg("initial bias (the shift): zeros", "初始 bias（平移）：全 0"),
    )
    expect(
        len(list(m.named_parameters())) == 2,
        Msg(
            "weight and bias must be nn.Parameter so that an optimizer trains them",
            "weight 和 bias 必须是 nn.Parameter，优化器才会训练它们",
        ),
    )


@check(points=3, title="LayerNorm equals torch.nn.LayerNorm", title_zh="LayerNorm 与 torch.nn.LayerNorm 一致")
def test_layer_norm_matches_torch(sub):
    f = fx()
    x, w, b = f["x"], f["w"], f["b"]
    m = sub.new("LayerNorm", 16)
    expect_tensor(
        m(x),
        _torch_ln(x, torch.ones(16), torch.zeros(16)),
        tol="norm",
        what=Msg(
            "LayerNorm(16) with its initial parameters on a (2, 5, 16) batch",
            "使用初始参数的 LayerNorm(16) 在 (2, 5, 16) 批次上的输出",
        ),
        mistakes=_mistakes(x),
    )
    m.load_state_dict({"weight": w, "bias": b})
    expect_tensor(
        m(x),
        _torch_ln(x, w, b),
        tol="norm",
        what=Msg(
            "LayerNorm(16) against torch.nn.LayerNorm with the same weight and bias",
            "使用相同 weight 和 bias 时 LayerNorm(16) 与 torch.nn.LayerNorm 的对比",
        ),
        mistakes=_mistakes(x, w, b),
    )


@check(
    points=1,
    title="constant and nearly constant rows: eps inside the square root",
    title_zh="常数行与几乎不变的行：eps 在平方根里面",
)
def test_eps_inside_the_square_root(sub):
    f = fx()
    steady = f["steady"]
    expect_tensor(
        sub.normalize(steady),
        f["steady_norm"],
        tol="norm",
        what=Msg(
            "normalize of two nearly constant rows (variance about 2e-6, smaller than eps = 1e-5): "
            "(x - mean) / sqrt(var + eps)",
            "对两行几乎不变的值做 normalize（方差约 2e-6，小于 eps = 1e-5）：(x - mean) / sqrt(var + eps)",
        ),
        mistakes=[_no_eps(steady), *_mistakes(steady)],
    )
    # a constant row: variance 0, so only eps keeps the denominator positive; the result is zeros
    const = torch.tensor([[3.0] * 6, [-1.5] * 6])
    expect_tensor(
        sub.normalize(const),
        torch.zeros_like(const),
        tol="norm",
        what=Msg(
            "normalize of two constant rows (variance 0): zeros, never NaN",
            "对两行常数做 normalize（方差为 0）：结果为 0，不能有 NaN",
        ),
        mistakes=[_no_eps(const)],
    )
    # A module built with another eps must use it: forward passes self.eps on, not normalize's default.
    rows = steady * 1e3  # variance about 4: eps = 0.1 changes every output by about 1%
    m = sub.new("LayerNorm", 6, eps=0.1)
    ones, zeros = torch.ones(6), torch.zeros(6)
    expect_tensor(
        m(rows),
        _torch_ln(rows, ones, zeros, eps=0.1),
        tol="norm",
        what=Msg(
            "LayerNorm(6, eps=0.1) against torch.nn.LayerNorm(6, eps=0.1)",
            "LayerNorm(6, eps=0.1) 与 torch.nn.LayerNorm(6, eps=0.1) 的对比",
        ),
        mistakes=[_ignored_eps(rows), *_mistakes(rows, eps=0.1)],
    )


@check(points=2, hidden=True, title="small variances and eps", title_zh="很小的方差与 eps")
def test_small_variance_and_eps(sub):
    f = fx()
    small = f["small"]  # rows whose variance (~1e-6) is smaller than eps
    expect_tensor(
        sub.normalize(small),
        f["small_norm"],
        tol="norm",
        what=Msg(
            "normalize of rows with variance ~{var:.0e}",
            "方差约为 {var:.0e} 的行的 normalize",
            var=from_input(float(small.var(-1, unbiased=False).mean())),
        ),
        mistakes=_mistakes(small),
    )
    big_eps = 1e-3
    expect_tensor(
        sub.normalize(small, eps=big_eps),
        f["small_norm_big_eps"],
        tol="norm",
        what=Msg(
            "normalize(..., eps={eps:g}) (use the eps argument)",
            "normalize(..., eps={eps:g})（使用 eps 参数）",
            eps=from_input(big_eps),
        ),
        mistakes=_mistakes(small, eps=big_eps),
    )
    d, eps = small.shape[-1], 0.1
    m = sub.new("LayerNorm", d, eps=eps)
    ones, zeros = torch.ones(d), torch.zeros(d)
    expect_tensor(
        m(small * 1e3),
        _torch_ln(small * 1e3, ones, zeros, eps=eps),
        tol="norm",
        what=Msg(
            "LayerNorm({d}, eps={eps}) against torch.nn.LayerNorm({d}, eps={eps})",
            "LayerNorm({d}, eps={eps}) 与 torch.nn.LayerNorm({d}, eps={eps}) 的对比",
            d=from_input(d),
            eps=from_input(eps),
        ),
        mistakes=[_ignored_eps(small * 1e3), *_mistakes(small * 1e3, eps=eps)],
    )
    const = torch.full((2, 8), 3.0)
    out = m(const)
    expect(
        bool(torch.isfinite(out).all()) and bool((out == 0).all()),
        Msg(
            "a constant row must normalise to zeros (no division by zero: eps keeps the denominator positive)",
            "常数行必须归一化为全零（不能除以零：eps 让分母保持为正）",
        ),
    )


@check(points=1, hidden=True, title="statistics over the last dimension only", title_zh="只在最后一个维度上统计")
def test_last_dimension_only(sub):
    f = fx()
    rows = f["rows"]  # (5, 16)
    expect_tensor(
        sub.normalize(rows),
        f["rows_norm"],
        tol="norm",
        what=Msg(
            "normalize of a {shape} matrix, row by row",
            "对 {shape} 矩阵逐行做 normalize",
            shape=from_input(tuple(rows.shape)),
        ),
        mistakes=_mistakes(rows),
    )
    one = sub.normalize(rows[2:3])
    expect_tensor(
        one,
        f["rows_norm"][2:3],
        tol="norm",
        what=Msg(
            "a row normalised alone equals the same row normalised in a batch (no statistics across rows)",
            "单独归一化的一行必须等于在批次中归一化的同一行（不能跨行统计）",
        ),
    )


@check(points=2, hidden=True, title="layer normalisation properties", title_zh="层归一化的性质")
def test_invariants(sub):
    rows = st.lists(st.floats(-50, 50, allow_nan=False, width=32), min_size=2, max_size=12)

    @settings(max_examples=20, derandomize=True, database=None, deadline=None)
    @given(rows, st.floats(0.1, 20), st.floats(-30, 30))
    def invariants(values, a, c):
        x = torch.tensor(values, dtype=torch.float64)
        var = float(x.var(unbiased=False))
        assume(var > 1e-3)
        y = sub.normalize(x, eps=0.0)
        expect_tensor(
            y,
            _ln(x, eps=0.0),
            tol="norm",
            what=code("normalize({values}, eps={eps})", values=from_input(values), eps=from_input(0)),
            mistakes=_mistakes(x, eps=0.0),
        )
        expect(
            abs(float(y.mean())) < 1e-9,
            Msg(
                "normalize({values}) must have mean `0`",
                "normalize({values}) 的均值必须为 `0`",
                values=from_input(values),
            ),
        )
        expect(
            abs(float(y.var(unbiased=False)) - 1) < 1e-9,
            Msg(
                "normalize({values}, eps={eps}) must have variance `1`",
                "normalize({values}, eps={eps}) 的方差必须为 `1`",
                values=from_input(values),
                eps=from_input(0),
            ),
        )
        y_eps = sub.normalize(x)
        expect(
            abs(float(y_eps.var(unbiased=False)) - var / (var + 1e-5)) < 1e-9,
            Msg(
                "normalize({values}) with the default `eps=1e-5` must have variance `var / (var + eps)`",
                "默认 `eps=1e-5` 时 normalize({values}) 的方差必须为 `var / (var + eps)`",
                values=from_input(values),
            ),
        )
        expect_tensor(
            sub.normalize(a * x + c, eps=0.0),
            y,
            tol="norm",
            what=Msg(
                "normalize({a:g} * x + {c:g}) (scaling by a positive number and shifting change nothing)",
                "normalize({a:g} * x + {c:g})（乘以一个正数再平移不应改变结果）",
                a=from_input(a),
                c=from_input(c),
            ),
        )

    invariants()
