"""Checks of §1.12, the SelfAttention module (listing 1.8)."""

import torch

from grader.checking import Mistake, Msg, check, expect, expect_equal, expect_tensor, fixtures, from_input
from grader.checking import book

EXERCISE = "s1_12_self_attention"
NAMES = ["W_query", "W_key", "W_value"]


def make_fixtures(sol):
    torch.manual_seed(123)
    sa = sol.SelfAttention(d_in=8, d_out=4)
    out = {"listing_out": sa(book.inputs()).detach()}
    out.update({f"init_{k}": v.detach() for k, v in sa.state_dict().items()})
    g = torch.Generator().manual_seed(16)
    weights = {n: torch.randn(6, 3, generator=g) for n in NAMES}
    x = torch.randn(7, 6, generator=g)
    xb = torch.randn(2, 5, 6, generator=g)
    m = sol.SelfAttention(6, 3)
    m.load_state_dict(weights)
    with torch.no_grad():
        out.update({f"given_{n}": w for n, w in weights.items()})
        out.update({"x": x, "y": m(x), "xb": xb, "yb": m(xb)})
        q, k, v = x @ weights["W_query"], x @ weights["W_key"], x @ weights["W_value"]
        out["y_unscaled"] = torch.softmax(q @ k.T, dim=-1) @ v
        out["y_by_dk"] = torch.softmax(q @ k.T / 3, dim=-1) @ v
    small = torch.Generator().manual_seed(128)  # the public batch: other sizes than the hidden one
    m = sol.SelfAttention(5, 3)
    m.load_state_dict({n: torch.randn(5, 3, generator=small) for n in NAMES})
    xs = torch.randn(2, 4, 5, generator=small)
    with torch.no_grad():
        out.update({f"small_{n}": w.detach().clone() for n, w in m.state_dict().items()})
        out.update({"small_x": xs, "small_y": m(xs)})
    return out


def fx():
    return fixtures.load(EXERCISE)


def _scale_mistakes(q, k, v):
    """The scale's plausible wrong answers (d_k = 2 or 3 in the public checks: d_k and sqrt(d_k) differ)."""
    scores = torch.einsum("...id,...jd->...ij", q, k)  # q k^T over the last two dimensions
    d_k = k.shape[-1]
    return [
        Mistake(torch.softmax(scores, dim=-1) @ v, "the scores were not scaled by sqrt(d_k)", "分数没有除以 sqrt(d_k)"),
        Mistake(
            torch.softmax(scores / d_k, dim=-1) @ v,
            "dividing by d_k instead of sqrt(d_k)",
            "除以了 d_k 而不是 sqrt(d_k)",
        ),
    ]


@check(
    points=3,
    listings=["1.8"],
    title="listing 1.8: SelfAttention's initial weights and output",
    title_zh="代码清单 1.8：SelfAttention 的初始权重和输出",
)
def test_listing_1_8_shape_and_init(sub):
    f = fx()
    sub.seed(123)
    sa = sub.new("SelfAttention", d_in=8, d_out=4)
    state = sa.state_dict()
    for name in NAMES:
        expect(
            name in state,
            Msg(
                "SelfAttention has no parameter named {name}",
                "SelfAttention 没有名为 {name} 的参数",
                name=name,
            ),
        )
        expect_tensor(
            state[name],
            f[f"init_{name}"],
            tol="exact",
            what=Msg(
                "{name} after torch.manual_seed(123) (create W_query, W_key, W_value in that order)",
                "torch.manual_seed(123) 之后的 {name}（按 W_query、W_key、W_value 的顺序创建）",
                name=name,
            ),
        )
    out = sa(book.inputs())
    expect_tensor(
        out,
        f["listing_out"],
        tol="attention",
        what=Msg(
            "SelfAttention(8, 4) output on listing 1.1's inputs", "SelfAttention(8, 4) 在代码清单 1.1 的输入上的输出"
        ),
    )


@check(
    points=2,
    title="the weights are parameters named W_query, W_key, W_value",
    title_zh="权重是名为 W_query、W_key、W_value 的参数",
)
def test_parameter_names(sub):
    sa = sub.new("SelfAttention", d_in=5, d_out=2)
    state = sa.state_dict()
    expect_equal(sorted(state), sorted(NAMES), what=Msg("parameter names of SelfAttention", "SelfAttention 的参数名"))
    for name in NAMES:
        expect_equal(
            tuple(state[name].shape),
            (5, 2),
            what=Msg("shape of {name} for d_in=5, d_out=2", "d_in=5、d_out=2 时 {name} 的形状", name=name),
        )
    params = sa.named_parameters()
    expect(
        len(list(params)) == 3,
        Msg(
            "the three matrices must be nn.Parameter so that an optimizer trains them",
            "这三个矩阵必须是 nn.Parameter，优化器才会训练它们",
        ),
    )
    # The right names around a wrong forward earn nothing: the output with these weights must match too.
    g = torch.Generator().manual_seed(1205)
    weights = {n: torch.randn(5, 2, generator=g) for n in NAMES}
    x = torch.randn(4, 5, generator=g)
    sa.load_state_dict(weights)
    q, k, v = x @ weights["W_query"], x @ weights["W_key"], x @ weights["W_value"]
    expect_tensor(
        sa(x),
        torch.softmax(q @ k.T / 2**0.5, dim=-1) @ v,
        tol="attention",
        what=Msg(
            "SelfAttention(5, 2) output on a (4, 5) input with these weights",
            "使用这些权重时 SelfAttention(5, 2) 在 (4, 5) 输入上的输出",
        ),
        mistakes=_scale_mistakes(q, k, v),
    )


@check(
    points=1,
    title="forward on a small batch: transpose only the last two dimensions",
    title_zh="小批次上的前向计算：只交换最后两个维度",
)
def test_small_batch(sub):
    f = fx()
    sa = sub.new("SelfAttention", 5, 3)
    sa.load_state_dict({n: f[f"small_{n}"] for n in NAMES})
    what = Msg("SelfAttention(5, 3) on a (2, 4, 5) batch", "SelfAttention(5, 3) 在 (2, 4, 5) 批次上的输出")
    out = sa(f["small_x"])  # keys.T on the batch: explained for every exercise (proxy._batched_T)
    x = f["small_x"]
    q, k, v = (x @ f[f"small_{n}"] for n in NAMES)
    expect_tensor(out, f["small_y"], tol="attention", what=what, mistakes=_scale_mistakes(q, k, v))


@check(points=3, hidden=True, title="forward with given weights", title_zh="给定权重时的前向计算")
def test_forward_given_weights(sub):
    f = fx()
    sa = sub.new("SelfAttention", 6, 3)
    sa.load_state_dict({n: f[f"given_{n}"] for n in NAMES})
    out = sa(f["x"])
    expect_tensor(
        out,
        f["y"],
        tol="attention",
        what=Msg(
            "output for given weights on a {shape} input",
            "给定权重时在 {shape} 输入上的输出",
            shape=from_input(tuple(f["x"].shape)),
        ),
        mistakes=[
            Mistake(f["y_unscaled"], "the scores were not scaled by sqrt(d_k)", "分数没有除以 sqrt(d_k)"),
            Mistake(f["y_by_dk"], "dividing by d_k instead of sqrt(d_k)", "除以了 d_k 而不是 sqrt(d_k)"),
        ],
    )


@check(points=2, hidden=True, title="forward on a batch", title_zh="批次上的前向计算")
def test_batched_input(sub):
    f = fx()
    sa = sub.new("SelfAttention", 6, 3)
    sa.load_state_dict({n: f[f"given_{n}"] for n in NAMES})
    out = sa(f["xb"])
    expect_tensor(
        out,
        f["yb"],
        tol="attention",
        what=Msg(
            "output on a {shape} batch (use `transpose(-2, -1)`, not `.T`)",
            "在 {shape} 批次上的输出（使用 `transpose(-2, -1)`，而不是 `.T`）",
            shape=from_input(tuple(f["xb"].shape)),
        ),
    )
