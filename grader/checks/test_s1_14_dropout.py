"""Checks of §1.14, dropout written by hand (listing 1.13 and the scaling example).

A correct dropout may draw its mask in many ways, so no check compares a seed's mask: they test
properties over many elements with bounds of at least 5 standard deviations (and every check
seeds the worker first, so a verdict never changes between runs).
"""
import math

import torch

from grader.checking import Mistake, check, expect, expect_tensor, fixtures

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
    return {"weights": weights, "values": v, "x": x, "keep": keep, "x_dropped": sol.dropout_with_mask(x, keep, 0.2),
            "causal_batch": causal.causal_attention_weights(fresh_scores)}


def fx():
    return fixtures.load(EXERCISE)


def _survivor_mistakes(kept_x, p):
    return [Mistake(kept_x, "the kept values were not rescaled: divide them by (1 - p)",
                    "保留下来的值没有放大：应除以 (1 - p)"),
            Mistake(kept_x * (1 - p), "the kept values were multiplied by (1 - p); divide by (1 - p) instead",
                    "保留下来的值乘了 (1 - p)，应当除以 (1 - p)")]


def _zero_fraction(out: torch.Tensor) -> float:
    return float((out == 0).double().mean())


@check(points=1, listings=["1.14/scaling"])
def test_book_scaling_example(sub):
    x = torch.tensor(SCALING_WEIGHTS)
    keep = torch.tensor(SCALING_KEEP)
    out = sub.dropout_with_mask(x, keep, 0.5)
    expect_tensor(out, torch.tensor(SCALING_PRINTED), tol="printed2",
                  what="dropout_with_mask([0.25, 0.26, 0.25, 0.24], keep=[T, F, T, F], p=0.5)",
                  mistakes=_survivor_mistakes(x * keep, 0.5)
                  + [Mistake(x * ~keep * 2, "the mask was inverted: True in keep means the element survives",
                             "掩码用反了：keep 中的 True 表示该元素被保留")])


@check(points=2, listings=["1.13"])
def test_listing_1_13_dropout(sub):
    f = fx()
    w = f["weights"]
    sub.seed(0)
    m = sub.new("Dropout", p=0.5)
    out = m(w)
    expect(isinstance(out, torch.Tensor) and tuple(out.shape) == (5, 5),
           "Dropout(p=0.5) applied to the (5, 5) causal weights must return a (5, 5) tensor")
    kept = out != 0
    # Whatever the mask, each weight is either dropped (0) or doubled (1 / (1 - 0.5) = 2).
    expect_tensor(out, w * kept * 2, tol="attention",
                  what="listing 1.13: causal weights after Dropout(p=0.5) (each entry 0 or 2 x the weight)",
                  mistakes=[Mistake(w * kept, "the kept weights were not rescaled: divide them by (1 - p)",
                                    "保留下来的权重没有放大：应除以 (1 - p)")])
    expect(bool((out[w == 0] == 0).all()), "weights hidden by the causal mask (0) must stay 0 after dropout")
    expect(not bool(kept[w != 0].all()),
           "Dropout(p=0.5) in training mode kept all 15 visible weights: is the mask drawn at all? "
           "(a new module is in training mode)")
    m.eval()
    expect_tensor(m(w), w, tol="exact", what="Dropout(p=0.5) after .eval() (must return its input unchanged)",
                  mistakes=[Mistake(w * 0.5, "in evaluation mode the input was scaled by (1 - p): inverted dropout "
                                             "scales only during training",
                                    "评估模式下输入被乘了 (1 - p)：倒置 dropout 只在训练时缩放")])


@check(points=2)
def test_zero_fraction(sub):
    x = torch.ones(400, 500)
    sub.seed(1)
    for p in (0.2, 0.5, 0.7):
        out = sub.dropout(x, p)
        expect(isinstance(out, torch.Tensor) and tuple(out.shape) == (400, 500),
               f"dropout(x, p={p}) must return a tensor of the same shape as x, (400, 500)")
        frac = _zero_fraction(out)
        if frac == 0:
            expect(False, f"dropout(x, p={p}) in training mode dropped nothing (training=True is the default)")
        if p != 0.5 and abs(frac - (1 - p)) < 0.01:
            expect(False, f"dropout(x, p={p}) zeroed {frac:.3f} of the elements: it kept each element with "
                          f"probability p instead of 1 - p (p is the probability of dropping)")
        # 200,000 elements: the standard deviation of the fraction is at most 0.0012; 0.01 is > 8 of them.
        expect(abs(frac - p) < 0.01,
               f"dropout(x, p={p}) zeroed {frac:.4f} of 200,000 elements; about {p} (±0.01) should be zero")


@check(points=2)
def test_survivors_scaled(sub):
    g = torch.Generator().manual_seed(21)
    x = torch.rand(300, 400, generator=g) + 0.5
    sub.seed(2)
    p = 0.3
    out = sub.dropout(x, p)
    expect(isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(x.shape),
           "dropout(x, p) must return a tensor of the same shape as x")
    kept = out != 0
    expect(bool(kept.any()), "dropout(x, p=0.3) zeroed every element")
    expect_tensor(out[kept], x[kept] / (1 - p), tol="attention",
                  what="the elements that survive dropout(x, p=0.3) (x / (1 - p))",
                  mistakes=_survivor_mistakes(x[kept], p))


@check(points=1)
def test_eval_is_identity(sub):
    g = torch.Generator().manual_seed(22)
    x = torch.randn(8, 9, generator=g)
    for p in (0.5, 0.1):
        expect_tensor(sub.dropout(x, p, training=False), x, tol="exact",
                      what=f"dropout(x, p={p}, training=False) (must return x unchanged)",
                      mistakes=[Mistake(x * (1 - p), "in evaluation mode x was scaled by (1 - p): inverted dropout "
                                                     "scales only during training",
                                        "评估模式下 x 被乘了 (1 - p)：倒置 dropout 只在训练时缩放")])
    m = sub.new("Dropout", p=0.3)
    m.eval()
    expect_tensor(m(x), x, tol="exact", what="Dropout(p=0.3) after .eval() (must return its input unchanged)")


@check(points=2, hidden=True)
def test_expectation_preserved(sub):
    f = fx()
    w = f["weights"]
    p = 0.3
    batch = w.expand(4000, 5, 5).contiguous()
    sub.seed(4)
    out = sub.dropout(batch, p)
    expect(isinstance(out, torch.Tensor) and tuple(out.shape) == (4000, 5, 5),
           "dropout must return a tensor of the same shape as its input")
    visible = w > 0
    ratio = float(out.double().sum() / batch.double().sum())
    for value, what in ((1 - p, "the kept weights were not rescaled by 1 / (1 - p)"),
                        ((1 - p) ** 2, "the kept weights were multiplied by (1 - p) instead of divided"),
                        (p / (1 - p), "each weight was kept with probability p instead of 1 - p"),
                        (p, "each weight was kept with probability p instead of 1 - p, and not rescaled")):
        expect(abs(ratio - value) > 0.02, f"on average dropout changed the weights by a factor {ratio:.3f}: {what}")
    # Each of the 15 visible weights averaged over 4000 draws: standard deviation w * 0.0104; bound 0.06 w.
    mean = out.double().mean(0)
    ok = ((mean - w.double()).abs() <= 0.06 * w.double() + 1e-9) | ~visible
    expect(bool(ok.all()), "the average of dropout(w, p=0.3) over 4000 draws must stay close to w for every "
                           "weight (inverted dropout preserves the expected value of each element)")
    # The book's "each row is still a probability distribution" is wrong (ERRATA E-1.14-e): only on average.
    sums = out.double().sum(-1)
    expect(bool((sums - 1).abs().max() > 0.1), "rows of dropped weights must not be renormalised to sum to 1")
    expect(abs(float(sums.mean()) - 1) < 0.02, "the row sums of dropped causal weights must be 1 on average")


@check(points=1, hidden=True)
def test_masked_zeros_stay_zero(sub):
    f = fx()
    w = f["causal_batch"]
    sub.seed(5)
    out = sub.dropout(w, 0.4)
    expect(isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(w.shape),
           "dropout must return a tensor of the same shape as its input")
    expect(bool(torch.isfinite(out).all()), "dropout produced NaN or inf")
    expect(bool((out[w == 0] == 0).all()), "weights hidden by the causal mask (0) must stay exactly 0 after dropout")
    expect(bool((out >= 0).all()), "dropout of non-negative weights must stay non-negative")


@check(points=1, hidden=True)
def test_new_mask_each_call_and_seeded(sub):
    x = torch.ones(100, 100)
    sub.seed(3)
    a = sub.dropout(x, 0.5)
    b = sub.dropout(x, 0.5)
    expect(isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor), "dropout must return a tensor")
    expect(not torch.equal(a, b), "two calls in a row dropped the same elements: draw a new random mask on every "
                                  "call (do not call torch.manual_seed inside dropout)")
    sub.seed(3)
    c = sub.dropout(x, 0.5)
    expect(torch.equal(a, c), "after the same torch.manual_seed the mask must repeat: draw it from torch's generator "
                              "(torch.rand, torch.bernoulli), not from Python's random or numpy")


@check(points=1, hidden=True)
def test_elements_independent(sub):
    x = torch.ones(400, 400)
    sub.seed(6)
    out = sub.dropout(x, 0.5)
    expect(isinstance(out, torch.Tensor) and tuple(out.shape) == (400, 400),
           "dropout must return a tensor of the same shape as its input")
    zero = (out == 0).double()
    # 400 elements per row or column: standard deviation 0.025, bound 0.15 (6 of them).
    for frac, what in ((zero.mean(1), "rows"), (zero.mean(0), "columns")):
        expect(bool(((frac - 0.5).abs() < 0.15).all()),
               f"some {what} lose far more or far fewer elements than p: every element must be dropped "
               "independently (one random draw per element, not per row or column)")


@check(points=1, hidden=True)
def test_edge_cases(sub):
    f = fx()
    x = torch.randn(20, 30, generator=torch.Generator().manual_seed(23))
    sub.seed(7)
    expect_tensor(sub.dropout(x, 0.0), x, tol="exact", what="dropout(x, p=0) in training mode (nothing to drop)")
    out = sub.dropout(x, 1.0)
    expect_tensor(out, torch.zeros_like(x), tol="exact", what="dropout(x, p=1) (everything dropped, no NaN)")
    out64 = sub.dropout(x.double(), 0.5)
    expect(isinstance(out64, torch.Tensor) and out64.dtype == torch.float64,
           "dropout of a float64 tensor must return float64")
    expect_tensor(sub.dropout_with_mask(f["x"], f["keep"], 0.2), f["x_dropped"], tol="attention",
                  what="dropout_with_mask of a (6, 7) tensor with p = 0.2",
                  mistakes=_survivor_mistakes(f["x"] * f["keep"], 0.2))
