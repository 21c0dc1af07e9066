"""Checks of §1.18, GELU and the position-wise feed-forward network (768 -> 3072 -> 768)."""

import math

import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checking import Mistake, Msg, check, code, expect, expect_equal, expect_tensor, fixtures, from_input

EXERCISE = "s1_18_feed_forward"
NAMES = {"fc1.weight": (3072, 768), "fc1.bias": (3072,), "fc2.weight": (768, 3072), "fc2.bias": (768,)}

# GELU's negative region (true values, float64): GELU(-1) = -Phi(1) * 1 = -0.1587, and its minimum
# is -0.1700 at x = -0.7518. ReLU is 0 on the whole negative axis.
GELU_MINUS_ONE = -0.1587
GELU_MIN, GELU_ARGMIN = -0.1700, -0.7518


def _erf_without_sqrt2(x):
    """erf(x) for erf(x / sqrt(2))."""
    return Mistake(
        0.5 * x * (1 + torch.erf(x)),
        "`erf(x)` instead of `erf(x / sqrt(2))`",
        "用了 `erf(x)` 而不是 `erf(x / sqrt(2))`",
    )


def _gelu_mistakes(x):
    """The named mistakes of a GELU."""
    return [
        Mistake(
            torch.relu(x),
            "this is ReLU: GELU is x * Phi(x), slightly negative below `0`",
            "这是 ReLU：GELU 是 x * Phi(x)",
        ),
        Mistake(
            F.gelu(x, approximate="tanh"),
            "the tanh approximation where the exact (erf) form was asked",
            "要求精确（erf）形式，却用了 tanh 近似",
        ),
        Mistake(
            F.gelu(x),
            "the exact (erf) form where the tanh approximation was asked",
            "要求 tanh 近似，却用了精确（erf）形式",
        ),
        Mistake(
            x * torch.sigmoid(1.702 * x),
            "the sigmoid approximation `x * sigmoid(1.702 x)`",
            "用了 sigmoid 近似 `x * sigmoid(1.702 x)`",
        ),
        _erf_without_sqrt2(x),
        Mistake(
            0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * x)),
            "the `0.044715 * x**3` term is missing",
            "漏掉了 `0.044715 * x**3` 项",
        ),
    ]


def _ffn(x, sd, act=F.gelu):
    return F.linear(act(F.linear(x, sd["fc1.weight"], sd["fc1.bias"])), sd["fc2.weight"], sd["fc2.bias"])


def _ffn_mistakes(x, sd):
    return [
        Mistake(_ffn(x, sd, torch.relu), "ReLU between the layers instead of GELU", "两层之间用了 ReLU 而不是 GELU"),
        Mistake(
            _ffn(x, sd, lambda h: F.gelu(h, approximate="tanh")),
            "the tanh GELU instead of the exact one",
            "用了 tanh 近似的 GELU，而不是精确形式",
        ),
        Mistake(_ffn(x, sd, lambda h: h), "no activation between the two linear layers", "两个线性层之间没有激活函数"),
    ]


def make_fixtures(sol):
    g = torch.Generator().manual_seed(118)
    grid = torch.linspace(-6, 6, 241)
    x64 = torch.randn(3, 7, generator=g, dtype=torch.float64) * 3
    small = torch.randn(2, 4, 8, generator=g)
    sd = {
        "fc1.weight": torch.randn(20, 8, generator=g) * 0.5,
        "fc1.bias": torch.randn(20, generator=g) * 0.5,
        "fc2.weight": torch.randn(8, 20, generator=g) * 0.5,
        "fc2.bias": torch.randn(8, generator=g) * 0.5,
    }
    m = sol.FeedForward(8, hidden_dim=20)
    m.load_state_dict(sd)
    with torch.no_grad():
        y = m(small)
    return {
        "grid": grid,
        "grid_gelu": sol.gelu(grid),
        "grid_tanh": sol.gelu_tanh(grid),
        "x64": x64,
        "x64_gelu": sol.gelu(x64),
        "x64_tanh": sol.gelu_tanh(x64),
        "small": small,
        "small_y": y,
        **{f"sd/{k}": v for k, v in sd.items()},
    }


def fx():
    return fixtures.load(EXERCISE)


@check(
    points=2, listings=["1.18/gelu-relu"], title="exact GELU and its negative region", title_zh="精确 GELU 及其负值区域"
)
def test_gelu_exact_and_its_negative_region(sub):
    f = fx()
    grid = f["grid"]
    out = sub.gelu(grid)
    expect_tensor(
        out,
        F.gelu(grid),
        tol="norm",
        what=Msg("gelu on [-6, 6] against torch's exact GELU", "在 [-6, 6] 上 gelu 与 torch 的精确 GELU 的对比"),
        mistakes=_gelu_mistakes(grid)[:2] + _gelu_mistakes(grid)[3:5],
    )
    x = torch.tensor([-1.0, 0.0, GELU_ARGMIN, 1.0], dtype=torch.float64)
    y = sub.gelu(x)
    expect_tensor(y[:1], torch.tensor([GELU_MINUS_ONE], dtype=torch.float64), tol="printed4", what=code("gelu(-1)"))
    expect_tensor(y[1:2], torch.zeros(1, dtype=torch.float64), tol="exact", what=code("gelu(0)"))
    expect_tensor(
        y[2:3],
        torch.tensor([GELU_MIN], dtype=torch.float64),
        tol="printed4",
        what=Msg("gelu(-0.7518), GELU's minimum", "gelu(-0.7518)，GELU 的最小值"),
    )
    # Unlike ReLU, GELU is negative on the whole negative axis and never below its minimum.
    neg = out[(grid < 0) & (grid > -4)]  # below -4, float32 rounds x * Phi(x) to 0
    expect(
        bool((neg < 0).all()),
        Msg(
            "gelu(x) must be negative for -4 < x < 0 (ReLU would give exactly 0)",
            "当 -4 < x < 0 时 gelu(x) 必须为负（ReLU 会给出恰好 0）",
        ),
    )
    expect(
        bool((out[grid < 0] <= 0).all()), Msg("gelu(x) must not be positive for x < 0", "当 x < 0 时 gelu(x) 不能为正")
    )
    expect(
        bool((neg >= GELU_MIN - 1e-4).all()),
        Msg("gelu(x) must never go below its minimum, about -0.170", "gelu(x) 永远不能低于它的最小值，约 -0.170"),
    )
    # GELU(x) - ReLU(x) = -|x| * Phi(-|x|): an even function, so GELU(x) - GELU(-x) = x.
    expect_tensor(
        out - sub.gelu(-grid),
        grid,
        tol="norm",
        what=Msg("gelu(x) - gelu(-x) (must equal x for every x)", "gelu(x) - gelu(-x)（对所有 x 都必须等于 x）"),
    )
    expect(
        float((out - torch.relu(grid)).min()) < -0.16,
        Msg(
            "gelu(x) - relu(x) must reach about -0.17 near |x| = 0.75: GELU differs from ReLU around 0",
            "gelu(x) - relu(x) 在 |x| = 0.75 附近必须达到约 -0.17：GELU 在 0 附近与 ReLU 不同",
        ),
    )


@check(points=1, listings=["1.18/gelu-relu"], title="the tanh approximation of GELU", title_zh="GELU 的 tanh 近似")
def test_gelu_tanh(sub):
    f = fx()
    grid = f["grid"]
    out = sub.gelu_tanh(grid)
    expect_tensor(
        out,
        F.gelu(grid, approximate="tanh"),
        tol="norm",
        what=Msg(
            "gelu_tanh on [-6, 6] against torch's GELU(approximate='tanh')",
            "在 [-6, 6] 上 gelu_tanh 与 torch 的 GELU(approximate='tanh') 的对比",
        ),
        mistakes=[m for i, m in enumerate(_gelu_mistakes(grid)) if i != 1],
    )
    gap = (out.double() - F.gelu(grid.double())).abs().max()
    expect(
        float(gap) < 1e-3,
        Msg("the tanh form must stay within 1e-3 of the exact GELU", "tanh 形式与精确 GELU 的差必须在 1e-3 以内"),
    )


@check(points=2, hidden=True, title="GELU properties and other dtypes", title_zh="GELU 的性质与其他数据类型")
def test_gelu_fresh(sub):
    f = fx()
    x = f["x64"]
    expect_tensor(
        sub.gelu(x),
        F.gelu(x),
        tol="norm",
        what=Msg(
            "gelu of a {dtype} {shape} tensor",
            "{dtype} {shape} 张量的 gelu",
            dtype=from_input(str(x.dtype).removeprefix("torch.")),
            shape=from_input(tuple(x.shape)),
        ),
        mistakes=_gelu_mistakes(x),
    )
    expect_tensor(
        sub.gelu_tanh(x),
        F.gelu(x, approximate="tanh"),
        tol="norm",
        what=Msg(
            "gelu_tanh of a {dtype} {shape} tensor",
            "{dtype} {shape} 张量的 gelu_tanh",
            dtype=from_input(str(x.dtype).removeprefix("torch.")),
            shape=from_input(tuple(x.shape)),
        ),
        mistakes=_gelu_mistakes(x),
    )
    big = torch.tensor([-40.0, -10.0, 10.0, 40.0])
    for name in ("gelu", "gelu_tanh"):
        expect_tensor(
            getattr(sub, name)(big),
            torch.tensor([0.0, 0.0, 10.0, 40.0]),
            tol="norm",
            what=Msg(
                "{name} far from zero (zero on the left, x on the right, no NaN)",
                "远离零处的 {name}（左边为零，右边为 x，不能有 NaN）",
                name=name,
            ),
        )

    @settings(max_examples=20, derandomize=True, database=None, deadline=None)
    @given(st.lists(st.floats(-8, 8, allow_nan=False), min_size=1, max_size=10))
    def odd_part(values):
        x = torch.tensor(values, dtype=torch.float64)
        for name in ("gelu", "gelu_tanh"):
            fn = getattr(sub, name)
            y, y_neg = fn(x), fn(-x)
            expect_tensor(
                y - y_neg,
                x,
                tol="norm",
                what=Msg(
                    "{name}(x) - {name}(-x) (must equal x), x = {values}",
                    "{name}(x) - {name}(-x)（必须等于 x），x = {values}",
                    name=name,
                    values=from_input(values),
                ),
            )
            expect(
                bool((y <= torch.relu(x) + 1e-12).all()),
                Msg(
                    "{name}(x) must never exceed relu(x) (x = {values})",
                    "{name}(x) 永远不能超过 relu(x)（x = {values}）",
                    name=name,
                    values=from_input(values),
                ),
            )

    odd_part()


@check(
    points=3,
    listings=["1.18/ffn"],
    title="the 768 -> 3072 -> 768 feed-forward network",
    title_zh="768 -> 3072 -> 768 的前馈网络",
)
def test_feed_forward_768(sub):
    m = sub.new("FeedForward", 768)
    state = m.state_dict()
    expect_equal(
        sorted(state), sorted(NAMES), what=Msg("parameter names of FeedForward(768)", "FeedForward(768) 的参数名")
    )
    for name, shape in NAMES.items():
        expect_equal(
            tuple(state[name].shape),
            shape,
            what=Msg(
                "shape of {name} (768 -> 4 * 768 = 3072 -> 768)",
                "{name} 的形状（768 -> 4 * 768 = 3072 -> 768）",
                name=name,
            ),
        )
    g = torch.Generator().manual_seed(1121)
    sd = {name: torch.randn(*shape, generator=g) * 0.03 for name, shape in NAMES.items()}
    m.load_state_dict(sd)
    x = torch.randn(2, 3, 768, generator=g)  # (batch, tokens, emb_dim), as in figure 1.120
    y = m(x)
    expected = _ffn(x, sd)
    expect_tensor(
        y,
        expected,
        tol="norm",
        what=Msg(
            "FeedForward(768) on a (2, 3, 768) batch against "
            "nn.Sequential(nn.Linear(768, 3072), nn.GELU(), nn.Linear(3072, 768)) with the same weights",
            "使用相同权重时 FeedForward(768) 在 (2, 3, 768) 批次上与 nn.Sequential(nn.Linear(768, 3072), nn.GELU(), nn.Linear(3072, 768)) 的对比",
        ),
        mistakes=_ffn_mistakes(x, sd),
    )


@check(points=2, hidden=True, title="the feed-forward network on other shapes", title_zh="前馈网络在其他形状上的结果")
def test_feed_forward_fresh(sub):
    f = fx()
    sd = {k.split("/", 1)[1]: v for k, v in f.items() if k.startswith("sd/")}
    emb_dim, hidden_dim = 8, 20
    m = sub.new("FeedForward", emb_dim, hidden_dim=hidden_dim)
    m.load_state_dict(sd)
    x = f["small"]
    y = m(x)
    expect_tensor(
        y,
        f["small_y"],
        tol="norm",
        what=Msg(
            "FeedForward({d}, hidden_dim={hidden}) on a {shape} batch",
            "FeedForward({d}, hidden_dim={hidden}) 在 {shape} 批次上的输出",
            d=from_input(emb_dim),
            hidden=from_input(hidden_dim),
            shape=from_input(tuple(x.shape)),
        ),
        mistakes=_ffn_mistakes(x, sd),
    )
    # Position-wise: one token alone gives the same vector as inside its batch.
    expect_tensor(
        m(x[1, 2]),
        f["small_y"][1, 2],
        tol="norm",
        what=Msg(
            "one token vector {shape} on its own", "单独一个词元向量 {shape}", shape=from_input(tuple(x[1, 2].shape))
        ),
    )
    expect_tensor(
        m(x[0]),
        f["small_y"][0],
        tol="norm",
        what=Msg(
            "one sequence {shape} without a batch dimension",
            "没有批次维度的一个序列 {shape}",
            shape=from_input(tuple(x[0].shape)),
        ),
    )
