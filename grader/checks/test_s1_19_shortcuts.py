"""Checks of §1.19, shortcut connections and per-layer gradients (figure 1.123).

Every check loads its weights into the student's network with load_state_dict, so the values
do not depend on how the student initialises the layers. The book prints illustrative
gradients (0.00003, 0.00001 without shortcuts; 0.45, 0.52 with them) without weights, seed,
target or loss: they cannot be reproduced (ERRATA E-1.19-a to E-1.19-d). The checks assert
what torch gives for seeded weights, and the property the figure illustrates.
"""

import torch
import torch.nn as nn

from grader.checking import Mistake, Msg, check, expect, expect_equal, expect_tensor, fixtures, from_input, joined
from grader.checking import module_lists

EXERCISE = "s1_19_shortcuts"
BOOK_INPUT = [[1.0, 0.0, 0.0, -1.0]]  # §1.19: the input vector of figure 1.123
TWO_LAYERS = [4, 4, 4]  # the figure: Linear + GELU twice on a 4-vector
FIVE_LAYERS = [4] * 6  # the kata's deeper version of the same network
NARROW_END = [4, 4, 4, 4, 4, 1]  # last layer changes size: no shortcut around it
PROPERTY_SEEDS = [1, 2, 3, 5, 8]


# ----------------------------------------------------------------------------- reference variants
class _Variant(nn.Module):
    """The reference network with one knob per plausible mistake (used for fixtures only)."""

    def __init__(self, sizes, shortcut, where="after", gelu="none", always_add=False):
        super().__init__()
        blocks = [nn.Sequential(nn.Linear(a, b), nn.GELU(approximate=gelu)) for a, b in zip(sizes[:-1], sizes[1:])]
        self.layers = nn.ModuleList(blocks)  # not a line of the solution's: the students' bundle ships this file
        self.shortcut, self.where, self.always_add = shortcut, where, always_add

    def forward(self, x):
        for layer in self.layers:
            if self.shortcut and self.where == "before":
                z = layer[0](x)
                x = layer[1](x + z) if z.shape == x.shape else layer[1](z)
                continue
            y = layer(x)
            x = x + y if self.shortcut and (y.shape == x.shape or self.always_add) else y
        return x


def _grads(model, x, target, loss="mean", with_bias=False):
    model.zero_grad()
    out = model(x)
    if loss == "mean":
        value = nn.functional.mse_loss(out, target)
    elif loss == "sum":
        value = nn.functional.mse_loss(out, target, reduction="sum")
    else:  # no loss: backward from the output's sum
        value = out.sum()
    value.backward()
    if with_bias:
        return torch.stack([torch.cat([l[0].weight.grad.flatten(), l[0].bias.grad]).abs().mean() for l in model.layers])
    return torch.stack([l[0].weight.grad.abs().mean() for l in model.layers])


def _seeded_state(sol, sizes, seed):
    torch.manual_seed(seed)
    return {k: v.detach().clone() for k, v in sol.ShortcutNet(sizes, False).state_dict().items()}


def _put(out, prefix, state):
    out.update({f"{prefix}/{k}": v for k, v in state.items()})


def _take(f, prefix):
    return {k.split("/", 1)[1]: v for k, v in f.items() if k.startswith(prefix + "/")}


def make_fixtures(sol):
    x = torch.tensor(BOOK_INPUT)
    out = {"x": x}
    for name, sizes in (("two", TWO_LAYERS), ("five", FIVE_LAYERS), ("narrow", NARROW_END)):
        state = _seeded_state(sol, sizes, 123)  # the kata's seed: the book gives none
        _put(out, f"{name}_w", state)
        target = torch.zeros(1, sizes[-1])
        for sc in (False, True):
            m = sol.ShortcutNet(sizes, sc)
            m.load_state_dict(state)
            tag = f"{name}_{'sc' if sc else 'no'}"
            out[f"{tag}_grads"] = sol.layer_gradients(m, x, target)
            variants = {"sum": dict(loss="sum"), "outsum": dict(loss="outsum"), "bias": dict(with_bias=True)}
            for key, kw in variants.items():
                v = _Variant(sizes, sc)
                v.load_state_dict(state)
                out[f"{tag}_grads_{key}"] = _grads(v, x, target, **kw)
            for key, kw in {
                "tanh": dict(gelu="tanh"),
                "before": dict(where="before"),
                "always": dict(always_add=True),
            }.items():
                v = _Variant(sizes, sc, **kw)
                v.load_state_dict(state)
                out[f"{tag}_grads_{key}"] = _grads(v, x, target)
    # Forward pass on a fresh batch, with the plausible wrong forwards.
    g = torch.Generator().manual_seed(19)
    xb = torch.randn(6, 4, generator=g)
    out["xb"] = xb
    for name, sizes in (("five", FIVE_LAYERS), ("narrow", NARROW_END)):
        state = _take(out, f"{name}_w")
        for sc in (False, True):
            tag = f"{name}_{'sc' if sc else 'no'}"
            m = sol.ShortcutNet(sizes, sc)
            m.load_state_dict(state)
            with torch.no_grad():
                out[f"{tag}_y"] = m(xb)
                for key, kw in {
                    "tanh": dict(gelu="tanh"),
                    "before": dict(where="before"),
                    "always": dict(always_add=True),
                    "flip": {},
                }.items():
                    v = _Variant(sizes, (not sc) if key == "flip" else sc, **kw)
                    v.load_state_dict(state)
                    out[f"{tag}_y_{key}"] = v(xb)
    # The property: five layers, several seeded weight sets, input and target of the figure.
    for s in PROPERTY_SEEDS:
        state = _seeded_state(sol, FIVE_LAYERS, s)
        _put(out, f"prop{s}_w", state)
        g_no = sol.layer_gradients(_load(sol.ShortcutNet(FIVE_LAYERS, False), state), x, torch.zeros(1, 4))
        g_sc = sol.layer_gradients(_load(sol.ShortcutNet(FIVE_LAYERS, True), state), x, torch.zeros(1, 4))
        assert _property_problems(g_no, g_sc) == [], (s, g_no, g_sc)
    return out


def _load(model, state):
    model.load_state_dict(state)
    return model


def fx():
    return fixtures.load(EXERCISE)


# ----------------------------------------------------------------------------- helpers
BEFORE_GELU = (
    "the shortcut was added before the GELU: add x to the layer's output, x + GELU(Linear(x))",
    "在 GELU 之前加了快捷连接：应把 x 加到该层的输出上，即 x + GELU(Linear(x))",
)
BROADCAST = (
    "x was added to a layer whose output has another size (it broadcast): skip the shortcut there",
    "在输出大小不同的层上也加了 x（发生了广播）：这种层不加快捷连接",
)
TANH_GELU = (
    "GELU with approximate='tanh': use the exact nn.GELU()",
    "用了 approximate='tanh' 的 GELU：应使用精确的 nn.GELU()",
)
FLIPPED = (
    "use_shortcut has the opposite effect: add x when it is True, never when it is False",
    "use_shortcut 的作用反了：为 True 时加上 x，为 False 时不加",
)
ACCUMULATED = (
    "gradients accumulated over the two calls (backward() adds to .grad): call model.zero_grad() before backward()",
    "两次调用的梯度累加了（backward() 会累加到 .grad 上）：backward() 之前先调用 model.zero_grad()",
)


def _accumulated(value) -> list[Mistake]:
    return [Mistake(v, en, zh) for v, en, zh in [(value, *ACCUMULATED)]]


def _forward_mistakes(variants: dict) -> list[Mistake]:
    """variants: the outputs of _Variant's wrong forwards, by knob (tanh, before, always, flip)."""
    table = [("tanh", *TANH_GELU), ("before", *BEFORE_GELU), ("always", *BROADCAST), ("flip", *FLIPPED)]
    return [Mistake(variants[k], en, zh) for k, en, zh in table if k in variants]


def _grad_mistakes(f, tag):
    return [
        Mistake(
            f[f"{tag}_grads_sum"],
            "the loss was summed (`reduction='sum'`): use the mean squared error",
            "损失用了求和（`reduction='sum'`）：应使用均方误差（mean）",
        ),
        Mistake(
            f[f"{tag}_grads_outsum"],
            "backward() from the output's sum instead of the MSE loss",
            "从输出之和而不是 MSE 损失做了 backward()",
        ),
        Mistake(
            f[f"{tag}_grads_bias"],
            "the biases were averaged in with the weights: use the weight matrix only",
            "把偏置和权重一起平均了：只用权重矩阵",
        ),
        *[
            Mistake(value, en, zh)
            for value, en, zh in [
                (f[f"{tag}_grads_tanh"], *TANH_GELU),
                (f[f"{tag}_grads_before"], *BEFORE_GELU),
                (f[f"{tag}_grads_always"], *BROADCAST),
                (f[tag[:-3] + ("_no" if tag.endswith("_sc") else "_sc") + "_grads"], *FLIPPED),
            ]
        ],
    ]  # the other setting


WITH, WITHOUT = Msg("with", "有"), Msg("without", "无")


def _expect_grads(actual, expected, what, mistakes):
    """Gradients range from 1e-6 to 1: compare them absolutely and relative to the reference."""
    expect_tensor(actual, expected, tol="norm", what=what, mistakes=mistakes)
    ratio = [Mistake(m.value / expected, m.en, m.zh) for m in mistakes]
    expect_tensor(
        actual / expected,
        torch.ones_like(expected),
        tol="norm",
        what=Msg("{what}, divided by the reference (`1` = equal)", "{what}，除以参照值（`1` = 相等）", what=what),
        mistakes=ratio,
    )


def _property_problems(g_no, g_sc):
    problems = []
    r_no = float(g_no[0] / g_no[-1])
    r_sc = float(g_sc[0] / g_sc[-1])
    if not r_no < 0.1:
        problems.append(
            Msg(
                "without shortcuts the first layer's gradient should be under a tenth of the last layer's "
                "(vanishing gradients); it is {r_no:.3g} times it",
                "没有快捷连接时，第一层的梯度应小于最后一层的十分之一（梯度消失）；实际是它的 {r_no:.3g} 倍",
                r_no=from_input(r_no),
            )
        )
    if not float(g_sc[0]) > 10 * float(g_no[0]):
        problems.append(
            Msg(
                "with shortcuts the first layer's gradient should be over 10 times larger than without; it "
                "is {g_sc:.3g} against {g_no:.3g}",
                "有快捷连接时，第一层的梯度应是没有快捷连接时的 10 倍以上；实际是 {g_sc:.3g} 对 {g_no:.3g}",
                g_sc=from_input(float(g_sc[0])),
                g_no=from_input(float(g_no[0])),
            )
        )
    if not r_sc > 4 * r_no:
        problems.append(
            Msg(
                "the ratio first/last layer gradient should be over 4 times larger with shortcuts ({r_sc:.3g}) "
                "than without ({r_no:.3g})",
                "第一层与最后一层梯度之比，有快捷连接时（{r_sc:.3g}）应是没有时（{r_no:.3g}）的 4 倍以上",
                r_sc=from_input(r_sc),
                r_no=from_input(r_no),
            )
        )
    return problems


def _net(sub, sizes, shortcut, state):
    m = sub.new("ShortcutNet", sizes, shortcut)
    m.load_state_dict(state)
    return m


# ----------------------------------------------------------------------------- checks
@check(points=1, title="ShortcutNet's parameter names and shapes", title_zh="ShortcutNet 的参数名和形状")
def test_parameter_names(sub):
    m = sub.new("ShortcutNet", [4, 3, 3, 2], True)
    module_lists.expect_module_list(m, "layers", "ShortcutNet([4, 3, 3, 2], True)")
    state = m.state_dict()
    expected = {
        "layers.0.0.weight": (3, 4),
        "layers.0.0.bias": (3,),
        "layers.1.0.weight": (3, 3),
        "layers.1.0.bias": (3,),
        "layers.2.0.weight": (2, 3),
        "layers.2.0.bias": (2,),
    }
    expect_equal(
        sorted(state),
        sorted(expected),
        what=Msg(
            "state_dict keys of ShortcutNet([4, 3, 3, 2], True)", "ShortcutNet([4, 3, 3, 2], True) 的 state_dict 键"
        ),
    )
    for key, shape in expected.items():
        expect_equal(tuple(state[key].shape), shape, what=Msg("shape of {key}", "{key} 的形状", key=key))
    # The right names around a wrong forward earn nothing: the output with these weights must match too.
    g = torch.Generator().manual_seed(1901)
    weights = {k: torch.randn(*shape, generator=g) for k, shape in expected.items()}
    x = torch.randn(5, 4, generator=g)
    m.load_state_dict(weights)
    ref = _Variant([4, 3, 3, 2], True)
    ref.load_state_dict(weights)
    with torch.no_grad():
        want = ref(x)
    expect_tensor(
        m(x),
        want,
        tol="norm",
        what=Msg(
            "ShortcutNet([4, 3, 3, 2], True) output on a (5, 4) input with these weights",
            "使用这些权重时 ShortcutNet([4, 3, 3, 2], True) 在 (5, 4) 输入上的输出",
        ),
    )


@check(
    points=2,
    listings=["1.19/gradients"],
    title="figure 1.123: gradients with and without shortcuts",
    title_zh="图 1.123：有无快捷连接时的梯度",
)
def test_figure_1_123_two_layers(sub):
    f = fx()
    state = _take(f, "two_w")
    for sc in (False, True):
        tag = f"two_{'sc' if sc else 'no'}"
        got = sub.layer_gradients(_net(sub, TWO_LAYERS, sc, state), f["x"], torch.zeros(1, 4))
        _expect_grads(
            got,
            f[f"{tag}_grads"],
            mistakes=_grad_mistakes(f, tag),
            what=Msg(
                "layer_gradients of the two-layer net of figure 1.123 ({with_or_without} shortcuts, weights of torch.manual_seed(123), "
                "input [1, 0, 0, -1], target 0)",
                "图 1.123 中两层网络的 layer_gradients（{with_or_without}快捷连接，torch.manual_seed(123) 的权重，输入 [1, 0, 0, -1]，目标 0）",
                with_or_without=WITH if sc else WITHOUT,
            ),
        )


@check(points=2, title="without shortcuts the gradients vanish", title_zh="没有快捷连接时梯度消失")
def test_five_layers_vanishing_gradients(sub):
    f = fx()
    x, target = f["x"], torch.zeros(1, 4)
    for s in PROPERTY_SEEDS:
        state = _take(f, f"prop{s}_w")
        g_no = sub.layer_gradients(_net(sub, FIVE_LAYERS, False, state), x, target)
        g_sc = sub.layer_gradients(_net(sub, FIVE_LAYERS, True, state), x, target)
        for g, label in ((g_no, WITHOUT), (g_sc, WITH)):
            expect(
                isinstance(g, torch.Tensor) and tuple(g.shape) == (5,),
                Msg(
                    "layer_gradients of a five-layer net must return a tensor of shape (5,), got {got} ({label} "
                    "shortcuts)",
                    "五层网络的 layer_gradients 必须返回形状为 (5,) 的张量，实际为 {got}（{label}快捷连接）",
                    got=from_input(tuple(g.shape) if isinstance(g, torch.Tensor) else type(g).__name__),
                    label=label,
                ),
            )
            expect(
                bool(torch.isfinite(g).all() and (g > 0).all()),
                Msg(
                    "the mean absolute gradients must be finite and positive ({label} shortcuts): {g}",
                    "平均绝对梯度必须是有限的正数（{label}快捷连接）：{g}",
                    label=label,
                    g=from_input(g.tolist()),
                ),
            )
        problems = _property_problems(g_no, g_sc)
        expect(
            not problems,
            Msg(
                "five layers of 4 units, weight set {s}: {problems}",
                "5 层、每层 4 个单元，权重组 {s}：{problems}",
                s=s,
                problems=joined(problems),
            ),
        )


@check(
    points=1,
    title="layer_gradients twice on one model: the same gradients",
    title_zh="在同一个模型上两次调用 layer_gradients：梯度相同",
)
def test_same_gradients_twice(sub):
    f = fx()
    m = _net(sub, TWO_LAYERS, True, _take(f, "two_w"))
    sub.layer_gradients(m, f["x"], torch.zeros(1, 4))
    second = sub.layer_gradients(m, f["x"], torch.zeros(1, 4))
    _expect_grads(
        second,
        f["two_sc_grads"],
        what=Msg(
            "layer_gradients called a second time on the same two-layer net of figure 1.123 (with shortcuts)",
            "在图 1.123 的同一个两层网络（有快捷连接）上第二次调用 layer_gradients",
        ),
        mistakes=_accumulated(2 * f["two_sc_grads"]),
    )


@check(
    points=1,
    title="forward with shortcuts on and off, and around a layer that changes size",
    title_zh="开启和关闭快捷连接时的前向计算，以及改变大小的层周围",
)
def test_forward_on_and_off(sub):
    g = torch.Generator().manual_seed(1902)
    x = torch.randn(5, 4, generator=g)
    for sizes in ([4, 4, 4], [4, 4, 1]):  # [4, 4, 1]: no shortcut around the last layer (4 -> 1)
        state = {}
        for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
            state[f"layers.{i}.0.weight"] = torch.randn(b, a, generator=g)
            state[f"layers.{i}.0.bias"] = torch.randn(b, generator=g)
        for sc in (False, True):
            with torch.no_grad():
                want = _load(_Variant(sizes, sc), state)(x)
                wrong = {
                    k: _load(_Variant(sizes, (not sc) if k == "flip" else sc, **kw), state)(x)
                    for k, kw in {
                        "tanh": dict(gelu="tanh"),
                        "before": dict(where="before"),
                        "always": dict(always_add=True),
                        "flip": {},
                    }.items()
                }
            expect_tensor(
                _net(sub, sizes, sc, state)(x),
                want,
                tol="norm",
                mistakes=_forward_mistakes(wrong),
                what=Msg(
                    "ShortcutNet({sizes}, use_shortcut={sc}) on a (5, 4) input with given weights",
                    "给定权重时 ShortcutNet({sizes}, use_shortcut={sc}) 在 (5, 4) 输入上的输出",
                    sizes=from_input(sizes),
                    sc=from_input(sc),
                ),
            )


@check(points=2, hidden=True, title="gradients of the five-layer net", title_zh="五层网络的梯度")
def test_five_layers_values(sub):
    f = fx()
    state = _take(f, "five_w")
    for sc in (False, True):
        tag = f"five_{'sc' if sc else 'no'}"
        got = sub.layer_gradients(_net(sub, FIVE_LAYERS, sc, state), f["x"], torch.zeros(1, 4))
        _expect_grads(
            got,
            f[f"{tag}_grads"],
            mistakes=_grad_mistakes(f, tag),
            what=Msg(
                "layer_gradients of the {n}-layer net ({with_or_without} shortcuts)",
                "{n} 层网络的 layer_gradients（{with_or_without}快捷连接）",
                n=from_input(len(FIVE_LAYERS) - 1),
                with_or_without=from_input(WITH if sc else WITHOUT),
            ),
        )


@check(points=1, hidden=True, title="forward with given weights", title_zh="给定权重时的前向计算")
def test_forward_given_weights(sub):
    f = fx()
    for name, sizes in (("five", FIVE_LAYERS), ("narrow", NARROW_END)):
        state = _take(f, f"{name}_w")
        for sc in (False, True):
            tag = f"{name}_{'sc' if sc else 'no'}"
            mistakes = _forward_mistakes({k: f[f"{tag}_y_{k}"] for k in ("tanh", "before", "always", "flip")})
            y = _net(sub, sizes, sc, state)(f["xb"])
            expect_tensor(
                y,
                f[f"{tag}_y"],
                tol="norm",
                mistakes=mistakes,
                what=Msg(
                    "ShortcutNet({sizes}, use_shortcut={sc}) on a {shape} batch",
                    "ShortcutNet({sizes}, use_shortcut={sc}) 在 {shape} 批次上的输出",
                    sizes=from_input(sizes),
                    sc=from_input(sc),
                    shape=from_input(tuple(f["xb"].shape)),
                ),
            )


@check(points=1, hidden=True, title="no shortcut where the sizes differ", title_zh="尺寸不同的层不加快捷连接")
def test_narrow_last_layer_gradients(sub):
    f = fx()
    state = _take(f, "narrow_w")
    for sc in (False, True):
        tag = f"narrow_{'sc' if sc else 'no'}"
        got = sub.layer_gradients(_net(sub, NARROW_END, sc, state), f["x"], torch.zeros(1, 1))
        _expect_grads(
            got,
            f[f"{tag}_grads"],
            mistakes=_grad_mistakes(f, tag),
            what=Msg(
                "layer_gradients of ShortcutNet({narrow_end}, use_shortcut={sc})",
                "ShortcutNet({narrow_end}, use_shortcut={sc}) 的 layer_gradients",
                narrow_end=from_input(NARROW_END),
                sc=from_input(sc),
            ),
        )


@check(points=1, hidden=True, title="gradients do not accumulate between calls", title_zh="多次调用之间梯度不累加")
def test_gradients_do_not_accumulate(sub):
    f = fx()
    m = _net(sub, FIVE_LAYERS, True, _take(f, "five_w"))
    first = sub.layer_gradients(m, f["x"], torch.zeros(1, 4))
    second = sub.layer_gradients(m, f["x"], torch.zeros(1, 4))
    expect_tensor(
        second,
        f["five_sc_grads"],
        tol="norm",
        what=Msg("layer_gradients called a second time on the same model", "在同一个模型上第二次调用 layer_gradients"),
        mistakes=_accumulated(2 * f["five_sc_grads"]),
    )
    expect_tensor(
        first, f["five_sc_grads"], tol="norm", what=Msg("layer_gradients called once", "第一次调用 layer_gradients")
    )
