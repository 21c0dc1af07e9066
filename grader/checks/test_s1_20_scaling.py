"""Checks of §1.20 (sequential steps, receptive fields) and §1.22 (quadratic attention cost).

The sections print no numbers; the claims are checked instead: an RNN needs seq_len
sequential steps and a self-attention layer one (§1.20), and attention's FLOPs and score
memory grow with the square of the sequence length (§1.22, ERRATA E-1.22-a).
"""

import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checking import Msg, check, code, expect, expect_equal, fixtures, from_input

EXERCISE = "s1_20_scaling"
STEPS_LENS = [1, 2, 7, 512, 4096]
CNN_CASES = [(2, 2), (2, 3), (3, 3), (5, 3), (512, 3), (512, 5), (1000, 7), (4096, 2), (4097, 9)]
FLOP_CASES = [(1, 12, 512, 64), (2, 8, 1024, 64), (3, 5, 7, 11), (8, 16, 4096, 128), (1, 1, 1, 1)]
MEM_CASES = [(1, 12, 512, 4), (1, 12, 512, 2), (4, 16, 2048, 4), (3, 5, 7, 1), (8, 32, 32768, 2)]
ISQRT_N = 10**8 + 1  # n^2 > 2^53: a float square root of n^2 - 1 rounds up to n


def _int(x):
    return torch.tensor(x, dtype=torch.int64)


# A budget one byte short of (10**8 + 7)**2 scores of 2 heads x 2 bytes: the float square root rounds up.
LARGE_BUDGET = (4 * (10**8 + 7) ** 2 - 1, 1, 2, 2)


def max_len_cases():
    """(memory, batch, heads, bytes): budgets around exact fits and ones a float sqrt gets wrong."""
    cases = [
        (2**30, 1, 12, 4),
        (80 * 10**9, 1, 12, 4),
        (80 * 10**9, 8, 32, 2),
        (16 * 2**30, 4, 16, 4),
        (1, 1, 1, 4),
        (0, 2, 2, 4),
        (48, 1, 12, 4),
        (47, 1, 12, 4),
    ]
    for b, h, e in ((1, 1, 1), (2, 3, 4)):
        c = b * h * e
        cases += [(c * 512**2, b, h, e), (c * 512**2 - 1, b, h, e), (c * ISQRT_N**2 - 1, b, h, e)]
    return cases


def make_fixtures(sol):
    out = {}
    out["steps_lens"] = _int(STEPS_LENS)
    out["rnn_steps"] = _int([sol.rnn_sequential_steps(n) for n in STEPS_LENS])
    out["attn_steps"] = _int([sol.attention_sequential_steps(n) for n in STEPS_LENS])
    out["cnn"] = _int([sol.cnn_layers_to_span(n, k) for n, k in CNN_CASES])
    out["flops"] = _int([sol.attention_flops(*c) for c in FLOP_CASES])
    out["mem"] = _int([sol.score_matrix_bytes(*c) for c in MEM_CASES])
    cases = max_len_cases()
    out["max_len"] = _int([sol.max_seq_len(*c) for c in cases])
    out["max_len_large"] = _int([sol.max_seq_len(*LARGE_BUDGET)])
    m, b, h, e = LARGE_BUDGET  # the public large budget: a float square root gets it wrong too
    assert int(math.sqrt(m / (b * h * e))) == int(math.sqrt(m // (b * h * e))) == int(out["max_len_large"][0]) + 1
    # The float square root really is wrong on the large cases (else they would test nothing).
    m, b, h, e = cases[-1]
    assert int(math.sqrt(m // (b * h * e))) == ISQRT_N and sol.max_seq_len(m, b, h, e) == ISQRT_N - 1
    return out


def fx():
    return fixtures.load(EXERCISE)


KERNEL_3 = Msg(
    "one layer of kernel 3 adds 2 tokens of receptive field, not 3",
    "卷积核为 3 的一层让感受野增加 2 个词元，而不是 3 个",
)


def _name(got, expected, known, what):
    """expect_equal, naming a known mistake when the answer matches one."""
    if got != expected:
        for value, why in known:
            if got == value:
                expect(False, Msg("{what}: {why}", "{what}：{why}", what=what, why=why))
    expect_equal(got, expected, what=what)


@check(
    points=1,
    listings=["1.20/parallel"],
    title="sequential steps of an RNN and of attention",
    title_zh="RNN 与注意力的顺序步数",
)
def test_sequential_steps(sub):
    f = fx()
    for i, n in enumerate(STEPS_LENS):
        expect_equal(
            sub.rnn_sequential_steps(n),
            int(f["rnn_steps"][i]),
            what=Msg(
                "rnn_sequential_steps({n}) (each hidden state waits for the previous one)",
                "rnn_sequential_steps({n})（每个隐藏状态都要等前一个）",
                n=from_input(n),
            ),
        )
        expect_equal(
            sub.attention_sequential_steps(n),
            int(f["attn_steps"][i]),
            what=Msg(
                "attention_sequential_steps({n}) (all positions at once)",
                "attention_sequential_steps({n})（所有位置同时计算）",
                n=from_input(n),
            ),
        )
    _name(
        sub.cnn_layers_to_span(512, 3),
        int(f["cnn"][CNN_CASES.index((512, 3))]),
        [
            (512 // 3, KERNEL_3),
            (-(-512 // 3), KERNEL_3),
            (
                511 // 2,
                Msg(
                    "round up: 255 layers see 511 tokens, one short of 512",
                    "应向上取整：255 层只能看到 511 个词元，比 512 少一个",
                ),
            ),
        ],
        code("cnn_layers_to_span(512, kernel_size=3)"),
    )


@check(points=1, hidden=True, title="CNN layers needed to span a sequence", title_zh="覆盖整个序列所需的 CNN 层数")
def test_cnn_layers(sub):
    f = fx()
    for i, (n, k) in enumerate(CNN_CASES):
        _name(
            sub.cnn_layers_to_span(n, k),
            int(f["cnn"][i]),
            [
                (
                    math.ceil(n / k),
                    Msg(
                        "one layer adds `k - 1` tokens of receptive field, not k",
                        "每一层让感受野增加 `k - 1` 个词元，而不是 k 个",
                    ),
                ),
                ((n - 1) // (k - 1), Msg("round up, not down", "应向上取整，而不是向下取整")),
                (
                    math.ceil(n / (k - 1)),
                    Msg(
                        "the first layer sees k tokens: `1 + L * (k - 1) >= seq_len`",
                        "第一层能看到 k 个词元：`1 + L * (k - 1) >= seq_len`",
                    ),
                ),
            ],
            code("cnn_layers_to_span({n}, kernel_size={k})", n=from_input(n), k=from_input(k)),
        )


@check(points=2, title="the FLOPs of attention", title_zh="注意力的 FLOP 数")
def test_attention_flops(sub):
    f = fx()
    for i, (b, h, n, d) in enumerate(FLOP_CASES):
        _name(
            sub.attention_flops(b, h, n, d),
            int(f["flops"][i]),
            [
                (
                    2 * b * h * n * n * d,
                    Msg(
                        "half the count: two products (Q K^T and A V), and 2 FLOPs per multiply-add",
                        "只有一半：有两次矩阵乘积（Q K^T 和 A V），每次乘加算 2 个 FLOP",
                    ),
                ),
                (
                    b * h * n * n * d,
                    Msg(
                        "a quarter of the count: two products, 2 FLOPs per multiply-add each",
                        "只有四分之一：有两次矩阵乘积，每次乘加算 2 个 FLOP",
                    ),
                ),
                (4 * b * n * n * d, Msg("the count must be multiplied by the number of heads", "计数必须乘以头数")),
                (
                    4 * b * h * n * d * d,
                    Msg(
                        "Q K^T is (n, d) @ (d, n): n * n * d multiply-adds, not n * d * d",
                        "Q K^T 是 (n, d) @ (d, n)：n * n * d 次乘加，而不是 n * d * d",
                    ),
                ),
            ],
            code(
                "attention_flops(batch={b}, heads={h}, seq_len={n}, head_dim={d})",
                b=from_input(b),
                h=from_input(h),
                n=from_input(n),
                d=from_input(d),
            ),
        )


@check(points=1, title="the memory of the score matrices", title_zh="分数矩阵占用的内存")
def test_score_matrix_bytes(sub):
    f = fx()
    for i, (b, h, n, e) in enumerate(MEM_CASES):
        _name(
            sub.score_matrix_bytes(b, h, n, e),
            int(f["mem"][i]),
            [
                (b * h * n * n, Msg("multiply by bytes_per_element", "要乘以 bytes_per_element")),
                (b * n * n * e, Msg("one matrix per head: multiply by heads", "每个头一个矩阵：要乘以头数")),
            ],
            code(
                "score_matrix_bytes(batch={b}, heads={h}, seq_len={n}, bytes_per_element={e})",
                b=from_input(b),
                h=from_input(h),
                n=from_input(n),
                e=from_input(e),
            ),
        )
    expect_equal(
        sub.score_matrix_bytes(1, 12, 512),
        int(f["mem"][0]),
        what=Msg(
            "score_matrix_bytes(1, 12, 512) with the default of 4 bytes (float32)",
            "使用默认每元素 4 字节（float32）时的 score_matrix_bytes(1, 12, 512)",
        ),
    )


@check(
    points=1,
    listings=["1.22/quadratic"],
    title="cost grows quadratically with the sequence length",
    title_zh="开销随序列长度呈平方增长",
)
def test_quadratic_cost(sub):
    for n in (128, 512, 1000):
        for factor in (2, 3, 8):
            flops = sub.attention_flops(2, 12, n * factor, 64) / sub.attention_flops(2, 12, n, 64)
            mem = sub.score_matrix_bytes(2, 12, n * factor) / sub.score_matrix_bytes(2, 12, n)
            expect(
                flops == factor**2,
                Msg(
                    "a {factor}x longer sequence must cost {factor2}x the attention FLOPs (quadratic), got {flops:g}x "
                    "(from seq_len {n})",
                    "序列长 {factor} 倍，注意力的 FLOP 数必须是 {factor2} 倍（平方），实际为 {flops:g} 倍（从 seq_len {n} 开始）",
                    factor=from_input(factor),
                    factor2=from_input(factor**2),
                    flops=from_input(flops),
                    n=from_input(n),
                ),
            )
            expect(
                mem == factor**2,
                Msg(
                    "a {factor}x longer sequence must need {factor2}x the score memory (quadratic), got {mem:g}x "
                    "(from seq_len {n})",
                    "序列长 {factor} 倍，分数所需内存必须是 {factor2} 倍（平方），实际为 {mem:g} 倍（从 seq_len {n} 开始）",
                    factor=from_input(factor),
                    factor2=from_input(factor**2),
                    mem=from_input(mem),
                    n=from_input(n),
                ),
            )
    for factor in (2, 5):
        expect(
            sub.attention_flops(2 * factor, 12, 256, 64) == factor * sub.attention_flops(2, 12, 256, 64),
            Msg(
                "a {factor}x larger batch must cost {factor}x the FLOPs (linear)",
                "批次扩大 {factor} 倍，FLOP 数必须也是 {factor} 倍（线性）",
                factor=from_input(factor),
            ),
        )
        expect(
            sub.score_matrix_bytes(2, 12 * factor, 256) == factor * sub.score_matrix_bytes(2, 12, 256),
            Msg(
                "{factor}x the heads must need {factor}x the score memory (linear)",
                "头数扩大 {factor} 倍，分数所需内存必须也是 {factor} 倍（线性）",
                factor=from_input(factor),
            ),
        )


@check(points=1, title="the longest sequence a memory budget allows", title_zh="内存预算允许的最长序列")
def test_max_seq_len(sub):
    f = fx()
    cases = max_len_cases()
    for i, (m, b, h, e) in enumerate(cases[:8]):
        expected = int(f["max_len"][i])
        _name(
            sub.max_seq_len(m, b, h, e),
            expected,
            [
                (
                    expected + 1,
                    Msg(
                        "one too long: the answer must fit in the budget (round down)",
                        "多了一个：答案必须放得进预算（向下取整）",
                    ),
                )
            ],
            code(
                "max_seq_len(memory_bytes={m}, batch={b}, heads={h}, bytes_per_element={e})",
                m=from_input(m),
                b=from_input(b),
                h=from_input(h),
                e=from_input(e),
            ),
        )
    m, b, h, e = LARGE_BUDGET
    expected = int(f["max_len_large"][0])
    _name(
        sub.max_seq_len(m, b, h, e),
        expected,
        [
            (
                expected + 1,
                Msg(
                    "one too long: a float square root rounds up for large budgets (the float cannot hold "
                    "n * n - 1 exactly); use math.isqrt on integers",
                    "多了一个：预算很大时浮点平方根会向上舍入（浮点数无法精确表示 n * n - 1）；请对整数使用 math.isqrt",
                ),
            )
        ],
        code(
            "max_seq_len(memory_bytes={m}, batch={b}, heads={h}, bytes_per_element={e})",
            m=from_input(m),
            b=from_input(b),
            h=from_input(h),
            e=from_input(e),
        ),
    )


@check(
    points=1, hidden=True, title="the longest sequence, exactly, for large budgets", title_zh="大预算下精确的最长序列"
)
def test_max_seq_len_exact(sub):
    f = fx()
    cases = max_len_cases()
    for i, (m, b, h, e) in enumerate(cases):
        expected = int(f["max_len"][i])
        _name(
            sub.max_seq_len(m, b, h, e),
            expected,
            [
                (
                    expected + 1,
                    Msg(
                        "one too long: a float square root rounds up for large budgets; use math.isqrt",
                        "多了一个：预算很大时浮点平方根会向上舍入；请用 math.isqrt",
                    ),
                )
            ],
            code(
                "max_seq_len(memory_bytes={m}, batch={b}, heads={h}, bytes_per_element={e})",
                m=from_input(m),
                b=from_input(b),
                h=from_input(h),
                e=from_input(e),
            ),
        )

    @settings(max_examples=25, derandomize=True, database=None, deadline=None)
    @given(st.integers(0, 10**15), st.integers(1, 64), st.integers(1, 64), st.sampled_from([1, 2, 4, 8]))
    def fits(m, b, h, e):
        n = sub.max_seq_len(m, b, h, e)
        expect(
            isinstance(n, int) and b * h * e * n * n <= m < b * h * e * (n + 1) ** 2,
            Msg(
                "max_seq_len({m}, {b}, {h}, {e}) = {n!r}: the scores of that length must fit and one more must not",
                "max_seq_len({m}, {b}, {h}, {e}) = {n!r}：这个长度的分数必须放得下，再多一个就放不下",
                m=from_input(m),
                b=from_input(b),
                h=from_input(h),
                e=from_input(e),
                n=from_input(n),
            ),
        )

    fits()
