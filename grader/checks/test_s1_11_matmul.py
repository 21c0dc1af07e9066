"""Checks of §1.11, matrix multiplication by hand (the 27 / 61 worked example)."""

import torch

from grader.checking import CheckFailure, Msg, check, code, expect, expect_tensor, fixtures, from_input
from grader.checking import book
from grader.worker.proxy import StudentError

EXERCISE = "s1_11_matmul"
SHAPES = [((4, 3), (3, 5)), ((1, 7), (7, 1)), ((6, 2), (2, 6)), ((3, 1), (1, 4))]


def make_fixtures(sol):
    g = torch.Generator().manual_seed(11)
    out = {}
    for i, (sa, sb) in enumerate(SHAPES):
        a, b = torch.randn(*sa, generator=g), torch.randn(*sb, generator=g)
        out[f"A{i}"], out[f"B{i}"], out[f"C{i}"] = a, b, sol.matmul(a, b)
    out["book"] = sol.matmul(torch.tensor(book.MATMUL_A), torch.tensor(book.MATMUL_B))
    return out


def fx():
    return fixtures.load(EXERCISE)


@check(
    points=2,
    listings=["1.11/matmul"],
    title="the book's example: entries 27 and 61",
    title_zh="书中的示例：元素 27 和 61",
)
def test_book_example_27_61(sub):
    out = sub.matmul(torch.tensor(book.MATMUL_A), torch.tensor(book.MATMUL_B))
    expect_tensor(out, fx()["book"], tol="exact", what=code("A (3x2) @ B (2x3)"))
    expect(
        float(out[0, 0]) == 27.0 and float(out[1, 0]) == 61.0,
        Msg("entries (1,1) and (2,1) must be 27 and 61", "元素 (1,1) 和 (2,1) 必须是 27 和 61"),
    )


@check(points=2, hidden=True, title="products of random shapes", title_zh="随机形状的矩阵乘积")
def test_random_shapes(sub):
    f = fx()
    for i, (sa, sb) in enumerate(SHAPES):
        expect_tensor(
            sub.matmul(f[f"A{i}"], f[f"B{i}"]),
            f[f"C{i}"],
            tol="matmul",
            what=Msg("matmul of {sa} and {sb}", "{sa} 与 {sb} 的矩阵乘积", sa=from_input(sa), sb=from_input(sb)),
        )


@check(points=1, title="mismatched shapes raise ValueError", title_zh="形状不匹配时抛出 ValueError")
def test_shape_mismatch_raises(sub):
    try:
        sub.matmul(torch.ones(2, 3), torch.ones(2, 3))
    except StudentError as e:
        expect(e.kind != "not_implemented", Msg.of(e))
        expect(
            e.type == "ValueError",
            Msg(
                "multiplying (2, 3) by (2, 3) must raise ValueError, not {error}",
                "(2, 3) 乘以 (2, 3) 必须抛出 ValueError，而不是 {error}",
                error=from_input(e.type or e),
            ),
        )
    else:
        raise CheckFailure(
            Msg(
                "multiplying (2, 3) by (2, 3) must raise ValueError: the inner dimensions 3 and 2 differ",
                "(2, 3) 乘以 (2, 3) 必须抛出 ValueError：内侧维度 3 和 2 不相等",
            ),
            mistake=Msg("mismatched shapes not refused", "不匹配的形状没有被拒绝"),
        )
    # Shapes that fit must work too: raising for every input is not the answer (the book's example:
    # this check is public, and the random shapes' products stay with the hidden check).
    expect_tensor(
        sub.matmul(torch.tensor(book.MATMUL_A), torch.tensor(book.MATMUL_B)),
        fx()["book"],
        tol="exact",
        what=code("A (3x2) @ B (2x3)"),
    )
