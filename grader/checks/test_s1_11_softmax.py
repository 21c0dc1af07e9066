"""Checks of §1.11, simple normalisation and a numerically stable softmax."""

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checking import Mistake, Msg, check, code, expect, expect_tensor, fixtures, from_input
from grader.checking import book

EXERCISE = "s1_11_softmax"


def make_fixtures(sol):
    g = torch.Generator().manual_seed(13)
    x = torch.randn(3, 4, 5, generator=g) * 4
    out = {"x": x, "x64": x.double()}
    for dim in (0, 1, 2, -1):
        out[f"softmax_dim{dim}"] = sol.softmax(x, dim=dim)
    out["softmax64"] = sol.softmax(x.double(), dim=1)
    out["large"] = sol.softmax(torch.tensor([1000.0, 1001.0]))
    out["large_neg"] = sol.softmax(torch.tensor([-1000.0, -1001.0]))
    out["neg_inf"] = sol.softmax(torch.tensor([2.0, 3.0, -math.inf]))
    out["neg_inf2"] = sol.softmax(torch.tensor([2.0, -math.inf, -math.inf]))
    # The public 2-D input, and the wrong answers of a softmax summed over the whole tensor.
    rows = torch.tensor([[1.0, 2.0, 3.0, 6.0], [0.5, -1.0, 2.5, 0.0], [-2.0, 4.0, 1.0, 1.0]])
    out["rows"] = rows
    for dim in (-1, 0):
        out[f"rows_dim{dim}"] = sol.softmax(rows, dim=dim)
        e = torch.exp(rows - rows.amax(dim=dim, keepdim=True))
        out[f"rows_dim{dim}_whole_sum"] = e / e.sum()
    out["rows_whole"] = torch.exp(rows - rows.max()) / torch.exp(rows - rows.max()).sum()
    return out


def fx():
    return fixtures.load(EXERCISE)


def _naive(x, dim=-1):
    e = torch.exp(x)
    return e / e.sum(dim=dim, keepdim=True)


@check(points=3, listings=["1.11/softmax"], title="softmax of the book's examples", title_zh="书中示例的 softmax")
def test_book_softmax_examples(sub):
    for scores, printed, tol in book.SOFTMAX_EXAMPLES:
        x = torch.tensor(scores)
        out = sub.softmax(x)
        expect_tensor(
            out,
            torch.tensor(printed),
            tol=tol,
            what=code("softmax({scores})", scores=from_input(scores)),
            mistakes=[Mistake(x / x.sum(), "simple normalisation, not softmax", "简单归一化，而不是 softmax")],
        )
        if scores[0] == 1.0 and scores[3] == 6.0:  # the weight of 6 is e^5 = 148.4 times that of 1 (ERRATA E-1.11-q)
            expect(
                abs(float(out[3] / out[0]) / math.exp(5) - 1) < 1e-4,
                Msg(
                    "softmax([1, 2, 3, 6]): the weight of 6 must be e^5 (about 148.4) times the weight of 1",
                    "softmax([1, 2, 3, 6])：6 的权重必须是 1 的权重的 e^5 倍（约 148.4 倍）",
                ),
            )


@check(
    points=2,
    listings=["1.11/normalize"],
    title="simple normalisation of the book's examples",
    title_zh="书中示例的简单归一化",
)
def test_book_simple_normalization(sub):
    for scores, expected in book.NORMALIZE_EXAMPLES:
        out = sub.simple_normalize(torch.tensor(scores))
        expect_tensor(
            out,
            torch.tensor(expected),
            tol="softmax",
            what=code("simple_normalize({scores})", scores=from_input(scores)),
        )


def _global_max(x: torch.Tensor, dim: int) -> Mistake:
    """The usual shortcut: the maximum of the whole tensor subtracted, not each slice's along dim.
    A slice far below the tensor's maximum then underflows to 0 / 0 (NaN)."""
    e = torch.exp(x - x.max())
    return Mistake(
        e / e.sum(dim=dim, keepdim=True),
        "the maximum of the whole tensor was subtracted (x.max()), not each row's along dim: a row far "
        "below it underflows to `0 / 0`; subtract `x.amax(dim=dim, keepdim=True)`",
        "减去的是整个张量的最大值（x.max()），而不是沿 dim 每一行自己的最大值：远低于它的行会下溢成 `0 / 0`；"
        "应减去 `x.amax(dim=dim, keepdim=True)`",
    )


@check(points=2, title="stable for large inputs", title_zh="大输入下数值稳定")
def test_large_inputs_stable(sub):
    f = fx()
    # float32 cannot hold 1000 + log-sum more precisely than ~6e-5, so equal to 4 decimals is right.
    out = sub.softmax(torch.tensor([1000.0, 1001.0]))
    expect_tensor(
        out,
        f["large"],
        tol="printed4",
        what=code("softmax([1000, 1001])"),
        mistakes=[
            Mistake(
                _naive(torch.tensor([1000.0, 1001.0])),
                "exp() overflowed: subtract the maximum before exponentiating",
                "exp() 溢出：先减去最大值再求指数",
            )
        ],
    )
    out = sub.softmax(torch.tensor([-1000.0, -1001.0]))
    expect_tensor(out, f["large_neg"], tol="printed4", what=code("softmax([-1000, -1001])"))
    # each row is shifted by its own maximum: a row far below the tensor's maximum stays a distribution
    rows = torch.tensor([[1000.0, 1001.0], [0.0, 1.0]])
    expect_tensor(
        sub.softmax(rows, dim=-1),
        torch.softmax(rows.double(), dim=-1).float(),
        tol="printed4",
        what=code("softmax([[1000, 1001], [0, 1]], dim=-1)"),
        mistakes=[_global_max(rows, -1)],
    )
    # a -inf entry gets weight 0: shifting by anything but the maximum (the minimum, the mean) turns it into NaN
    with_inf = torch.tensor([2.0, 3.0, -math.inf])
    low = torch.exp(with_inf - with_inf.min())
    expect_tensor(
        sub.softmax(with_inf),
        f["neg_inf"],
        tol="softmax",
        what=code("softmax([2, 3, -inf])"),
        mistakes=[
            Mistake(
                low / low.sum(),
                "the minimum or the mean was subtracted, not the maximum: a -inf "
                "entry then gives NaN; subtract x.amax(dim=dim, keepdim=True)",
                "减去的是最小值或平均值而不是最大值：遇到 -inf 就得到 NaN；应减去 x.amax(dim=dim, keepdim=True)",
            )
        ],
    )


def _other_dim(value) -> Mistake:
    """Softmax over another dimension than `dim`: named without the dimensions, which a hidden
    check's input chooses."""
    return Mistake(
        value,
        "softmax over another dimension than the one dim names: use the dim argument",
        "在 dim 所指定的维度之外的另一个维度上做了 softmax：请使用 dim 参数",
    )


@check(
    points=1,
    title="softmax of a matrix: each row (dim=-1) or each column (dim=0) sums to 1",
    title_zh="矩阵的 softmax：每一行（dim=-1）或每一列（dim=0）之和为 1",
)
def test_rows_and_columns(sub):
    f = fx()
    x = f["rows"]
    cases = (
        (
            -1,
            0,
            Msg(
                "softmax of a (3, 4) matrix with dim=-1 (each row sums to 1)",
                "(3, 4) 矩阵在 dim=-1 上的 softmax（每一行之和为 1）",
            ),
            Msg(
                "summed over the whole tensor instead of along dim=-1: keep the other dimension in the sum "
                "(e.sum(dim=dim, keepdim=True)) so that each row sums to 1",
                "对整个张量求和，而不是沿 dim=-1 求和：求和时要保留另一个维度（e.sum(dim=dim, keepdim=True)），"
                "这样每一行之和才为 1",
            ),
        ),
        (
            0,
            -1,
            Msg(
                "softmax of a (3, 4) matrix with dim=0 (each column sums to 1)",
                "(3, 4) 矩阵在 dim=0 上的 softmax（每一列之和为 1）",
            ),
            Msg(
                "summed over the whole tensor instead of along dim=0: keep the other dimension in the sum "
                "(e.sum(dim=dim, keepdim=True)) so that each column sums to 1",
                "对整个张量求和，而不是沿 dim=0 求和：求和时要保留另一个维度（e.sum(dim=dim, keepdim=True)），"
                "这样每一列之和才为 1",
            ),
        ),
    )
    for dim, other, what, whole in cases:
        wrong = [
            Mistake(f[f"rows_dim{dim}_whole_sum"], whole.en, whole.zh),
            Mistake(f["rows_whole"], whole.en, whole.zh),
            _other_dim(f[f"rows_dim{other}"]),
        ]
        expect_tensor(sub.softmax(x, dim=dim), f[f"rows_dim{dim}"], tol="softmax", what=what, mistakes=wrong)


@check(points=2, hidden=True, title="softmax over any dimension", title_zh="在任意维度上做 softmax")
def test_matches_reference_any_dim(sub):
    f = fx()
    x = f["x"]
    for dim in (0, 1, 2, -1):
        wrong = [_other_dim(f[f"softmax_dim{d}"]) for d in (0, 1, 2) if d % 3 != dim % 3]
        expect_tensor(
            sub.softmax(x, dim=dim),
            f[f"softmax_dim{dim}"],
            tol="softmax",
            what=Msg(
                "softmax of a {shape} tensor over dim {dim}",
                "形状为 {shape} 的张量在 dim {dim} 上的 softmax",
                shape=from_input(tuple(x.shape)),
                dim=from_input(dim),
            ),
            mistakes=wrong,
        )
    expect_tensor(
        sub.softmax(f["x64"], dim=1),
        f["softmax64"],
        tol="softmax",
        what=Msg(
            "softmax of a {dtype} tensor",
            "{dtype} 张量的 softmax",
            dtype=from_input(str(f["x64"].dtype).removeprefix("torch.")),
        ),
    )
    far = x.clone()
    # one slice far below the others: each slice's own maximum keeps it finite. 200 below: exp
    # underflows there, and float32 still holds the scores to 1.5e-5 (a logsumexp answer is right
    # to the book's 4 decimals, not to the softmax tolerance, at 2000 below)
    gap, dim = 200.0, 2
    far[1] -= gap
    expect_tensor(
        sub.softmax(far, dim=dim),
        torch.softmax(far.double(), dim=dim).float(),
        tol="printed4",
        what=Msg(
            "softmax over dim {dim} of a {shape} tensor whose slice at index {i} lies {gap:g} below the others",
            "形状为 {shape}、下标为 {i} 的切片比其余低 {gap:g} 的张量在 dim {dim} 上的 softmax",
            dim=from_input(dim),
            shape=from_input(tuple(far.shape)),
            i=from_input(1),
            gap=from_input(gap),
        ),
        mistakes=[_global_max(far, dim)],
    )


@check(
    points=2,
    hidden=True,
    title="softmax properties: range, sum, shift invariance",
    title_zh="softmax 的性质：取值范围、和为 1、平移不变",
)
def test_invariants(sub):
    rows = st.lists(st.floats(-60, 60, allow_nan=False, width=32), min_size=1, max_size=8)

    @settings(max_examples=25, derandomize=True, database=None, deadline=None)
    @given(rows, st.floats(-30, 30, allow_nan=False, width=32))
    def invariants(values, shift):
        x = torch.tensor(values, dtype=torch.float64)
        out = sub.softmax(x)
        expect_tensor(
            out, torch.softmax(x, dim=-1), tol="softmax", what=code("softmax({values})", values=from_input(values))
        )
        expect(
            bool((out >= 0).all() and (out <= 1).all()),
            Msg("softmax values must lie in `[0, 1]`", "softmax 的值必须在 `[0, 1]` 之间"),
        )
        expect(abs(float(out.sum()) - 1.0) < 1e-9, Msg("softmax values must sum to `1`", "softmax 的值之和必须为 `1`"))
        expect_tensor(
            sub.softmax(x + shift),
            out,
            tol="softmax",
            what=Msg(
                "softmax(x + {shift:g}) (adding a constant must not change softmax)",
                "softmax(x + {shift:g})（加上一个常数不应改变 softmax）",
                shift=from_input(shift),
            ),
        )

    invariants()


@check(points=1, hidden=True, title="softmax with -inf scores", title_zh="含 -inf 分数的 softmax")
def test_negative_infinity(sub):
    f = fx()
    expect_tensor(
        sub.softmax(torch.tensor([2.0, 3.0, -math.inf])),
        f["neg_inf"],
        tol="softmax",
        what=code("softmax({values})", values=from_input([2, 3, -math.inf])),
    )
    expect_tensor(
        sub.softmax(torch.tensor([2.0, -math.inf, -math.inf])),
        f["neg_inf2"],
        tol="softmax",
        what=code("softmax({values})", values=from_input([2, -math.inf, -math.inf])),
    )
