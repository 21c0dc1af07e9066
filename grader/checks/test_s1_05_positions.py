"""Checks of §1.5, integer, binary and sinusoidal position encodings."""

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

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
from grader.worker.proxy import StudentError

EXERCISE = "s1_05_positions"

# §1.5, binary encoding: positions 64-75 on 8 bits; the prose prints 64-68 (MSB first).
BOOK_BINARY = {
    64: [0, 1, 0, 0, 0, 0, 0, 0],
    65: [0, 1, 0, 0, 0, 0, 0, 1],
    66: [0, 1, 0, 0, 0, 0, 1, 0],
    67: [0, 1, 0, 0, 0, 0, 1, 1],
    68: [0, 1, 0, 0, 0, 1, 0, 0],
}
# §1.5, sinusoidal encoding: GPT-2 sizes and the pairs i plotted in figure 1.33.
BOOK_D_MODEL, BOOK_POSITIONS = 768, 1024
BOOK_PAIRS = (1, 50, 150, 250)
FRESH_SIN = ((50, 16), (7, 6), (1, 2), (300, 64))
# Float32 angles of positions up to ~1000 carry an error of ~1e-4 rad, whichever correct
# formula computes them, so sinusoidal values are compared at the "encoder" tolerance.
SIN_TOL = "positions"  # float32 sin/cos of angles up to ~1000 rad


def _sinusoid(seq_len, d_model, base=10000.0, sin_first=True, exponent="2i", layout="interleaved"):
    """The encoding and its plausible wrong variants, in float64 (trusted side only)."""
    pos = torch.arange(seq_len, dtype=torch.float64).unsqueeze(1)
    pair = torch.arange(d_model // 2, dtype=torch.float64)
    if exponent == "2i":
        angles = pos / base ** (2 * pair / d_model)
    elif exponent == "i":
        angles = pos / base ** (pair / d_model)
    else:  # "column": every column uses its own index, cos columns 2i + 1
        cols = torch.arange(d_model, dtype=torch.float64)
        a = pos / base ** (cols / d_model)
        s, c = torch.sin(a[:, 0::2]), torch.cos(a[:, 1::2])
        out = torch.empty(seq_len, d_model, dtype=torch.float64)
        out[:, 0::2], out[:, 1::2] = s, c
        return out.float()
    first, second = (torch.sin(angles), torch.cos(angles)) if sin_first else (torch.cos(angles), torch.sin(angles))
    if layout == "halves":
        return torch.cat([first, second], dim=1).float()
    out = torch.empty(seq_len, d_model, dtype=torch.float64)
    out[:, 0::2], out[:, 1::2] = first, second
    return out.float()


SIN_SWAPPED = (
    {"sin_first": False},
    "sin and cos are swapped: sin goes in the even columns `2i`, cos in the odd columns `2i + 1`",
    "sin 和 cos 放反了：sin 在偶数列 `2i`，cos 在奇数列 `2i + 1`",
)
SIN_MISTAKES = [
    SIN_SWAPPED,
    (
        {"exponent": "i"},
        "the exponent uses i instead of `2i`: pair i divides by `10000**(2i / d_model)`",
        "指数用了 i 而不是 `2i`：第 i 对除以 `10000**(2i / d_model)`",
    ),
    (
        {"exponent": "column"},
        "each column used its own index; both columns of pair i use the same angle, with exponent `2i / d_model`",
        "每一列用了自己的下标；同一对的两列用同一个角度，指数为 `2i / d_model`",
    ),
    ({"base": 1000.0}, "the base is `1000` instead of `10000`", "底数用了 `1000` 而不是 `10000`"),
    (
        {"layout": "halves"},
        "all sines first, then all cosines: they must alternate, sin in column `2i` and cos in column `2i + 1`",
        "先放了全部 sin 再放全部 cos：应当交替，sin 在第 `2i` 列，cos 在第 `2i + 1` 列",
    ),
]


def _sin_mistakes(seq_len, d_model):
    # With a single pair (d_model = 2) the other variants coincide with the right answer.
    table = [SIN_SWAPPED] if d_model < 4 else SIN_MISTAKES
    return [Mistake(_sinusoid(seq_len, d_model, **kw), en, zh) for kw, en, zh in table]


def make_fixtures(sol):
    g = torch.Generator().manual_seed(55)
    out = {
        "integer_fresh": sol.integer_position_encoding(7, 5),
        "binary_book": sol.binary_position_encoding(torch.arange(64, 76), 8),
        "sin_book": sol.sinusoidal_position_encoding(BOOK_POSITIONS, BOOK_D_MODEL),
        "wavelengths": torch.tensor([sol.wavelength(i, BOOK_D_MODEL) for i in (0, *BOOK_PAIRS)], dtype=torch.float64),
        "add_x": torch.randn(5, 8, generator=g),
        "add_pe": torch.randn(12, 8, generator=g),
        "add_xb": torch.randn(2, 5, 8, generator=g),
    }
    fresh_positions = torch.randint(0, 1024, (2, 6), generator=g)
    out["binary_positions"] = fresh_positions
    out["binary_fresh"] = sol.binary_position_encoding(fresh_positions, 10)
    for n, d in FRESH_SIN:
        out[f"sin_{n}_{d}"] = sol.sinusoidal_position_encoding(n, d)
    out["add_y"] = sol.add_position_encoding(out["add_x"], out["add_pe"])
    out["add_yb"] = sol.add_position_encoding(out["add_xb"], out["add_pe"])
    return out


def fx():
    return fixtures.load(EXERCISE)


def _expect_value_error(call, what: Msg):
    try:
        call()
    except StudentError as e:
        expect(e.kind != "not_implemented", Msg.of(e))
        expect(
            e.type == "ValueError",
            Msg(
                "{what} must raise ValueError, not {error}",
                "{what} 必须抛出 ValueError，而不是 {error}",
                what=what,
                error=from_input(e.type or e),
            ),
        )
        return
    raise CheckFailure(Msg("{what} must raise ValueError", "{what} 必须抛出 ValueError", what=what))


def _number(value, what: Msg) -> float:
    if isinstance(value, torch.Tensor) and value.numel() == 1:
        return float(value)
    expect(
        isinstance(value, (int, float)) and not isinstance(value, bool),
        Msg(
            "{what} must return a number, not {value_type}",
            "{what} 必须返回一个数，而不是 {value_type}",
            what=what,
            value_type=from_input(type(value).__name__),
        ),
    )
    return float(value)


# ------------------------------------------------------------------------------------ integer
def _integer_mistakes(expected):
    return [
        Mistake(
            expected + 1,
            "positions count from `0`: row p holds p, not `p + 1`",
            "位置从 `0` 开始：第 p 行的值是 p，而不是 `p + 1`",
        )
    ]


@check(
    points=1,
    listings=["1.5/integer"],
    title="integer encoding: position 300 is [300] * 8",
    title_zh="整数编码：位置 300 是 [300] * 8",
)
def test_book_integer_position_300(sub):
    pe = sub.integer_position_encoding(301, 8)
    expected = torch.arange(301.0).unsqueeze(1).expand(301, 8)
    expect_tensor(
        pe, expected, tol="exact", what=code("integer_position_encoding(301, 8)"), mistakes=_integer_mistakes(expected)
    )
    expect_tensor(
        pe[300],
        torch.full((8,), 300.0),
        tol="exact",
        what=Msg("row 300 (the token at position 300)", "第 300 行（位置 300 上的词元）"),
    )
    # the scale mismatch: position 500 added to a token embedding [0.23, -0.15, 0.08]
    tokens = torch.zeros(501, 3)
    tokens[500] = torch.tensor([0.23, -0.15, 0.08])
    total = tokens + sub.integer_position_encoding(501, 3)
    expect_tensor(
        total[500],
        torch.tensor([500.23, 499.85, 500.08]),
        tol="printed2",
        what=Msg(
            "[0.23, -0.15, 0.08] plus the integer encoding of position 500",
            "[0.23, -0.15, 0.08] 加上位置 500 的整数编码",
        ),
    )


@check(points=1, hidden=True, title="integer encoding of other sizes", title_zh="其他尺寸的整数编码")
def test_integer_fresh(sub):
    seq_len, d_model = 7, 5
    expect_tensor(
        sub.integer_position_encoding(seq_len, d_model),
        fx()["integer_fresh"],
        tol="exact",
        what=code(
            "integer_position_encoding({seq_len}, {d_model})",
            seq_len=from_input(seq_len),
            d_model=from_input(d_model),
        ),
        mistakes=_integer_mistakes(fx()["integer_fresh"]),
    )


# ------------------------------------------------------------------------------------- binary
def _reversed_bits(expected):
    return Mistake(
        expected.flip(-1),
        "the bits are in reverse order: the most significant bit (`i = n_bits`) comes first, "
        "the least significant (`i = 1`) last",
        "位的顺序反了：最高位 (`i = n_bits`) 在前，最低位 (`i = 1`) 在后",
    )


@check(
    points=2,
    listings=["1.5/binary"],
    title="binary encoding of positions 64-75 (figure 1.31)",
    title_zh="位置 64-75 的二进制编码（图 1.31）",
)
def test_book_binary_64_to_75(sub):
    expected = fx()["binary_book"]
    out = sub.binary_position_encoding(torch.arange(64, 76), 8)
    expect_tensor(
        out,
        expected,
        tol="exact",
        what=Msg("binary_position_encoding(positions 64..75, 8 bits)", "binary_position_encoding（位置 64..75，8 位）"),
        mistakes=[
            _reversed_bits(expected),
            Mistake(expected.long(), "the bits must be float32, not integers", "各位必须是 float32，而不是整数"),
        ],
    )
    for p, bits in BOOK_BINARY.items():
        expect_tensor(
            out[p - 64],
            torch.tensor(bits, dtype=torch.float32),
            tol="exact",
            what=Msg("the 8 bits of position {p}", "位置 {p} 的 8 个二进制位", p=from_input(p)),
        )
    expect(
        bool((out[:, 0] == 0).all()),
        Msg("positions 64-75 all share the most significant bit 0 (i = 8)", "位置 64-75 的最高位（i = 8）都是 0"),
    )


@check(points=1, listings=["1.5/binary"], title="each bit flips at its own period", title_zh="每一位按自己的周期翻转")
def test_bit_periods(sub):
    bits = sub.binary_position_encoding(torch.arange(256), 8)
    expect_equal(
        tuple(bits.shape),
        (256, 8),
        what=Msg(
            "shape of binary_position_encoding(positions 0..255, 8 bits)",
            "binary_position_encoding（位置 0..255，8 位）的形状",
        ),
    )
    for i in range(1, 9):  # i = 1 is the least significant bit: the last column
        column = bits[:, 8 - i]
        run = 2 ** (i - 1)
        expected = ((torch.arange(256) // run) % 2).float()
        expect_tensor(
            column,
            expected,
            tol="exact",
            what=Msg(
                "bit i = {i} over positions 0..255 (it must flip every {run} positions)",
                "第 i = {i} 位在位置 0..255 上的取值（它必须每 {run} 个位置翻转一次）",
                i=from_input(i),
                run=from_input(run),
            ),
        )


@check(points=1, title="binary encoding rejects positions that do not fit", title_zh="二进制编码拒绝放不下的位置")
def test_binary_out_of_range(sub):
    _expect_value_error(
        lambda: sub.binary_position_encoding(torch.tensor([3, 256]), 8),
        Msg("position 256 on 8 bits (it needs 9)", "8 位上的位置 256（它需要 9 位）"),
    )
    _expect_value_error(lambda: sub.binary_position_encoding(torch.tensor([-1]), 8), Msg("position -1", "位置 -1"))
    # Positions that fit must work too: raising for every input is not the answer.
    expect_tensor(
        sub.binary_position_encoding(torch.arange(64, 76), 8),
        fx()["binary_book"],
        tol="exact",
        what=Msg("binary_position_encoding(positions 64..75, 8 bits)", "binary_position_encoding（位置 64..75，8 位）"),
    )


@check(points=1, hidden=True, title="binary encoding of a batch of positions", title_zh="一批位置的二进制编码")
def test_binary_fresh(sub):
    f = fx()
    expected = f["binary_fresh"]
    n_bits = 10
    expect_tensor(
        sub.binary_position_encoding(f["binary_positions"], n_bits),
        expected,
        tol="exact",
        what=Msg(
            "binary_position_encoding of a {shape} batch of positions, {n_bits} bits",
            "形状为 {shape} 的一批位置、{n_bits} 位的 binary_position_encoding",
            shape=from_input(tuple(f["binary_positions"].shape)),
            n_bits=from_input(n_bits),
        ),
        mistakes=[_reversed_bits(expected)],
    )


# --------------------------------------------------------------------------------- sinusoidal
@check(
    points=3,
    listings=["1.5/sinusoidal"],
    title="sinusoidal encoding, d_model 768 and 1024 positions",
    title_zh="正弦编码，d_model 768，1024 个位置",
)
def test_book_sinusoidal_768_1024(sub):
    f = fx()
    pe = sub.sinusoidal_position_encoding(BOOK_POSITIONS, BOOK_D_MODEL)
    expect_tensor(
        pe,
        f["sin_book"],
        tol=SIN_TOL,
        what=code("sinusoidal_position_encoding(1024, 768)"),
        mistakes=_sin_mistakes(BOOK_POSITIONS, BOOK_D_MODEL),
    )
    pos = torch.arange(BOOK_POSITIONS, dtype=torch.float64)
    expect_tensor(
        pe[:, 0],
        torch.sin(pos).float(),
        tol=SIN_TOL,
        what=Msg("column 0 (pair i = 0): sin(pos / 1)", "第 0 列（第 i = 0 对）：sin(pos / 1)"),
    )
    expect_tensor(
        pe[:, 1],
        torch.cos(pos).float(),
        tol=SIN_TOL,
        what=Msg("column 1 (pair i = 0): cos(pos / 1)", "第 1 列（第 i = 0 对）：cos(pos / 1)"),
    )
    expect(
        bool((pe.abs() <= 1).all()),
        Msg("every value of the sinusoidal encoding lies in [-1, 1]", "正弦编码的每个值都在 [-1, 1] 之间"),
    )
    # figure 1.33, pair i = 250: at position 1023 the angle is 2.5451 rad, far from "cos ~ 1, sin ~ 0"
    expect_tensor(
        pe[1023, 500:502],
        torch.tensor([0.5617, -0.8273]),
        tol="printed4",
        what=Msg("pair i = 250 (columns 500, 501) at position 1023", "位置 1023 上的第 i = 250 对（第 500、501 列）"),
    )
    expect_tensor(
        pe[:, 500].max(),
        torch.tensor(1.0),
        tol="printed4",
        what=Msg(
            "the largest sine of pair i = 250 over positions 0..1023 (reached near position 631)",
            "第 i = 250 对的正弦在位置 0..1023 上的最大值（在位置 631 附近取到）",
        ),
    )


@check(
    points=1,
    listings=["1.5/sinusoidal"],
    title="every position gets its own encoding",
    title_zh="每个位置的编码都不相同",
)
def test_every_position_unique(sub):
    pe = sub.sinusoidal_position_encoding(BOOK_POSITIONS, BOOK_D_MODEL)
    expect_equal(
        tuple(pe.shape),
        (BOOK_POSITIONS, BOOK_D_MODEL),
        what=Msg("shape of sinusoidal_position_encoding(1024, 768)", "sinusoidal_position_encoding(1024, 768) 的形状"),
    )
    dist = torch.cdist(pe.double(), pe.double())
    dist.fill_diagonal_(math.inf)
    expect_tensor(
        dist.min(),
        torch.tensor(4.5232, dtype=torch.float64),
        tol="printed4",
        what=Msg(
            "the smallest distance between the encodings of two different positions (0..1023)",
            "两个不同位置（0..1023）的编码之间的最小距离",
        ),
    )


@check(
    points=2,
    listings=["1.5/sinusoidal"],
    title="wavelengths of the pairs of figure 1.33",
    title_zh="图 1.33 中各维度对的波长",
)
def test_wavelengths_of_figure_pairs(sub):
    f = fx()
    pairs = (0, *BOOK_PAIRS)
    got = torch.tensor(
        [_number(sub.wavelength(i, BOOK_D_MODEL), code("wavelength({i}, 768)", i=i)) for i in pairs],
        dtype=torch.float64,
    )
    denominators = torch.tensor([10000 ** (2 * i / BOOK_D_MODEL) for i in pairs], dtype=torch.float64)
    expect_tensor(
        got,
        f["wavelengths"],
        tol="attention",
        what=Msg(
            "wavelength(i, 768) for i = {pairs}",
            "i = {pairs} 时的 wavelength(i, 768)",
            pairs=list(pairs),
        ),
        mistakes=[
            Mistake(
                denominators,
                "that is the denominator 10000**(2i / d_model); one cycle of the angle is 2*pi of it",
                "这是分母 10000**(2i / d_model)；一个周期是它的 2*pi 倍",
            ),
            Mistake(
                torch.tensor([2 * math.pi * 10000 ** (i / BOOK_D_MODEL) for i in pairs], dtype=torch.float64),
                "the exponent uses i instead of 2i",
                "指数用了 i 而不是 2i",
            ),
        ],
    )
    # figure 1.33 in numbers: pair 50 repeats every ~20.85 positions; pair 150 fits ~4.46 cycles in 1024
    # positions (the book says 2-3); pair 250 does not complete half a cycle.
    expect_tensor(got[2], torch.tensor(20.8455, dtype=torch.float64), tol="printed4", what=code("wavelength(50, 768)"))
    cycles = BOOK_POSITIONS / got
    expect_tensor(
        cycles[3:],
        torch.tensor([4.4629, 0.4055], dtype=torch.float64),
        tol="printed4",
        what=Msg(
            "full cycles of pairs 150 and 250 over 1024 positions",
            "第 150 对和第 250 对在 1024 个位置上经历的完整周期数",
        ),
    )


@check(points=2, hidden=True, title="sinusoidal encoding of other sizes", title_zh="其他尺寸的正弦编码")
def test_sinusoidal_fresh_sizes(sub):
    f = fx()
    for n, d in FRESH_SIN:
        expect_tensor(
            sub.sinusoidal_position_encoding(n, d),
            f[f"sin_{n}_{d}"],
            tol=SIN_TOL,
            what=code("sinusoidal_position_encoding({n}, {d})", n=from_input(n), d=from_input(d)),
            mistakes=_sin_mistakes(n, d),
        )


@check(points=1, hidden=True, title="sinusoidal encoding properties", title_zh="正弦编码的性质")
def test_sinusoidal_invariants(sub):
    @settings(max_examples=20, derandomize=True, database=None, deadline=None)
    @given(st.integers(1, 120), st.integers(1, 32), st.integers(1, 40))
    def invariants(seq_len, half, extra):
        d_model = 2 * half
        pe = sub.sinusoidal_position_encoding(seq_len, d_model)
        expect_equal(
            tuple(pe.shape),
            (seq_len, d_model),
            what=Msg(
                "shape of sinusoidal_position_encoding({seq_len}, {d_model})",
                "sinusoidal_position_encoding({seq_len}, {d_model}) 的形状",
                seq_len=from_input(seq_len),
                d_model=from_input(d_model),
            ),
        )
        expect(bool((pe.abs() <= 1).all()), Msg("every value must lie in `[-1, 1]`", "每个值都必须在 `[-1, 1]` 之间"))
        pairs = pe[:, 0::2].double() ** 2 + pe[:, 1::2].double() ** 2
        expect_tensor(
            pairs,
            torch.ones_like(pairs),
            tol=SIN_TOL,
            what=Msg(
                "`sin^2 + cos^2` of each pair (seq_len {seq_len}, d_model {d_model}): one angle per pair",
                "每一对的 `sin^2 + cos^2`（seq_len {seq_len}，d_model {d_model}）：每一对只用一个角度",
                seq_len=from_input(seq_len),
                d_model=from_input(d_model),
            ),
        )
        first = torch.tensor([0.0, 1.0] * half)
        expect_tensor(
            pe[0],
            first,
            tol=SIN_TOL,
            what=Msg(
                "position `0`: `sin(0) = 0` and `cos(0) = 1` in every pair",
                "位置 `0`：每一对中都是 `sin(0) = 0` 和 `cos(0) = 1`",
            ),
        )
        longer = sub.sinusoidal_position_encoding(seq_len + extra, d_model)
        expect_tensor(
            longer[:seq_len],
            pe,
            tol=SIN_TOL,
            what=Msg(
                "the first {seq_len} rows of a longer encoding (a position's vector must not depend on seq_len)",
                "更长编码的前 {seq_len} 行（一个位置的向量不应依赖于 seq_len）",
                seq_len=from_input(seq_len),
            ),
        )

    invariants()


# ---------------------------------------------------------------------------------- adding
@check(points=1, title="adding the position encoding to a sentence", title_zh="把位置编码加到一个句子上")
def test_add_position_encoding(sub):
    f = fx()
    x, pe = f["add_x"], f["add_pe"]
    expect_tensor(
        sub.add_position_encoding(x, pe),
        f["add_y"],
        tol="exact",
        what=Msg(
            "a (5, 8) sentence plus the first 5 rows of a (12, 8) encoding",
            "形状为 (5, 8) 的句子加上 (12, 8) 编码的前 5 行",
        ),
        mistakes=[
            Mistake(x, "the positions were not added", "没有加上位置编码"),
            Mistake(
                x + pe[-5:],
                "the last rows of pe were used: token t gets row t",
                "用了 pe 的最后几行：第 t 个词元加第 t 行",
            ),
        ],
    )


@check(points=1, hidden=True, title="adding the position encoding to a batch", title_zh="把位置编码加到一个批次上")
def test_add_position_encoding_batch(sub):
    f = fx()
    expect_tensor(
        sub.add_position_encoding(f["add_xb"], f["add_pe"]),
        f["add_yb"],
        tol="exact",
        what=Msg(
            "a {shape} batch plus the position encoding (the same rows for every sentence)",
            "形状为 {shape} 的批次加上位置编码（每个句子用相同的行）",
            shape=from_input(tuple(f["add_xb"].shape)),
        ),
    )
