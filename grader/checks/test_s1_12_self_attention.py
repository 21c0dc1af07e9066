"""Checks of §1.12, the SelfAttention module (listing 1.8)."""
import torch

from grader.checking import Mistake, check, expect, expect_equal, expect_tensor, fixtures
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
    return out


def fx():
    return fixtures.load(EXERCISE)


@check(points=3, listings=["1.8"])
def test_listing_1_8_shape_and_init(sub):
    f = fx()
    sub.seed(123)
    sa = sub.new("SelfAttention", d_in=8, d_out=4)
    state = sa.state_dict()
    for name in NAMES:
        expect(name in state, f"SelfAttention has no parameter named {name}")
        expect_tensor(state[name], f[f"init_{name}"], tol="exact",
                      what=f"{name} after torch.manual_seed(123) (create W_query, W_key, W_value in that order)")
    out = sa(book.inputs())
    expect_tensor(out, f["listing_out"], tol="attention", what="SelfAttention(8, 4) output on listing 1.1's inputs")


@check(points=2)
def test_parameter_names(sub):
    sa = sub.new("SelfAttention", d_in=5, d_out=2)
    state = sa.state_dict()
    expect_equal(sorted(state), sorted(NAMES), what="parameter names of SelfAttention")
    for name in NAMES:
        expect_equal(tuple(state[name].shape), (5, 2), what=f"shape of {name} for d_in=5, d_out=2")
    params = sa.named_parameters()
    expect(len(list(params)) == 3, "the three matrices must be nn.Parameter so that an optimizer trains them")


@check(points=3, hidden=True)
def test_forward_given_weights(sub):
    f = fx()
    sa = sub.new("SelfAttention", 6, 3)
    sa.load_state_dict({n: f[f"given_{n}"] for n in NAMES})
    out = sa(f["x"])
    expect_tensor(out, f["y"], tol="attention", what="output for given weights on a (7, 6) input",
                  mistakes=[Mistake(f["y_unscaled"], "the scores were not scaled by sqrt(d_k)", "分数没有除以 sqrt(d_k)"),
                            Mistake(f["y_by_dk"], "dividing by d_k instead of sqrt(d_k)", "除以了 d_k 而不是 sqrt(d_k)")])


@check(points=2, hidden=True)
def test_batched_input(sub):
    f = fx()
    sa = sub.new("SelfAttention", 6, 3)
    sa.load_state_dict({n: f[f"given_{n}"] for n in NAMES})
    out = sa(f["xb"])
    expect_tensor(out, f["yb"], tol="attention", what="output on a (2, 5, 6) batch (use transpose(-2, -1), not .T)")
