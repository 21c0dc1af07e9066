"""Checks of §1.13, causal masking (listings 1.9–1.12 and the two worked examples)."""

import math

import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from grader.checking import Mistake, Msg, check, code, expect, expect_equal, expect_tensor, fixtures, from_input

EXERCISE = "s1_13_causal_mask"
INF = math.inf

# Listing 1.9: the 3x3 matrix and the printed results.
A = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]]
A_MASKED = [[1.0, 0.0, 0.0], [4.0, 5.0, 0.0], [7.0, 8.0, 9.0]]
# Listing 1.10 (and the mask M of figure 1.91): printed causal mask for 5 tokens.
MASK_5 = [
    [True, False, False, False, False],
    [True, True, False, False, False],
    [True, True, True, False, False],
    [True, True, True, True, False],
    [True, True, True, True, True],
]
# §1.13 step 2-3: the masked weights of figure 1.92 (only the lower triangle is printed, through the
# row sums 0.20, 0.23+0.27, ...) and the renormalised matrix of figure 1.93, to 2 decimals.
RENORM_LOWER = [[0.20], [0.23, 0.27], [0.22, 0.25, 0.18], [0.22, 0.24, 0.19, 0.15], [0.22, 0.25, 0.18, 0.15, 0.18]]
RENORM_ROW_SUMS = [0.20, 0.50, 0.65, 0.80, 0.98]
RENORM_PRINTED = [
    [1.00, 0.00, 0.00, 0.00, 0.00],
    [0.46, 0.54, 0.00, 0.00, 0.00],
    [0.34, 0.38, 0.28, 0.00, 0.00],
    [0.28, 0.30, 0.24, 0.19, 0.00],
    [0.22, 0.26, 0.18, 0.15, 0.18],
]
# §1.13 "negative infinity" example: every row of the scores is [2, 3, 5]; causal masking turns the rows
# into [2, -inf, -inf], [2, 3, -inf] and [2, 3, 5], whose softmaxes the book prints.
NEG_INF_SCORES = [[2.0, 3.0, 5.0]] * 3
NEG_INF_MASKED = [[2.0, -INF, -INF], [2.0, 3.0, -INF], [2.0, 3.0, 5.0]]
NEG_INF_PRINTED = [[1.0, 0.0, 0.0], [0.2689, 0.7311, 0.0], [0.0420, 0.1142, 0.8438]]
# Listings 1.11-1.12 as printed (they do not follow from listing 1.5's scores: ERRATA E-1.13-n, E-1.13-p).
BOOK_SCALED = [
    [0.50, 1.00, 1.50, 2.00, 2.50],
    [0.75, 1.25, 1.75, 2.25, 2.75],
    [1.00, 1.50, 2.00, 2.50, 3.00],
    [1.25, 1.75, 2.25, 2.75, 3.25],
    [1.50, 2.00, 2.50, 3.00, 3.50],
]
BOOK_CAUSAL_WEIGHTS = [
    [1.0000, 0.0000, 0.0000, 0.0000, 0.0000],
    [0.3777, 0.6223, 0.0000, 0.0000, 0.0000],
    [0.1863, 0.3072, 0.5065, 0.0000, 0.0000],
    [0.1015, 0.1674, 0.2760, 0.4551, 0.0000],
    [0.0580, 0.0956, 0.1577, 0.2599, 0.4288],
]


def _renorm_input() -> torch.Tensor:
    """The book's masked lower triangle, with arbitrary softmax-like values above the diagonal."""
    w = torch.full((5, 5), 0.2)
    for i, row in enumerate(RENORM_LOWER):
        w[i, : len(row)] = torch.tensor(row)
    return w


def make_fixtures(sol):
    import importlib

    qkv = importlib.import_module("s1_10_qkv")
    from grader.checking import book

    wq, wk, wv = qkv.init_qkv_weights(8, 4)
    q, k, v = qkv.project_qkv(book.inputs(), wq, wk, wv)
    scaled = q @ k.T / math.sqrt(4)
    g = torch.Generator().manual_seed(1313)
    fresh = torch.randn(2, 3, 6, 6, generator=g) * 3
    fq, fk, fv = torch.randn(2, 7, 5, generator=g), torch.randn(2, 7, 5, generator=g), torch.randn(2, 7, 3, generator=g)
    return {
        "scaled": scaled,
        "masked": sol.mask_future(scaled),
        "weights": sol.causal_attention_weights(scaled),
        "q": q,
        "k": k,
        "v": v,
        "context": sol.causal_attention(q, k, v),
        "book_weights_true": sol.causal_attention_weights(torch.tensor(BOOK_SCALED)),
        "renorm": sol.renormalize_masked(_renorm_input(), sol.causal_mask(5)),
        "fresh": fresh,
        "fresh_masked": sol.mask_future(fresh),
        "fresh_weights": sol.causal_attention_weights(fresh),
        "mask7": sol.causal_mask(7),
        "fq": fq,
        "fk": fk,
        "fv": fv,
        "fresh_context": sol.causal_attention(fq, fk, fv),
    }


def fx():
    return fixtures.load(EXERCISE)


def _tril(n, dtype=torch.bool):
    return torch.tril(torch.ones(n, n, dtype=dtype))


def _mask_mistakes(n, dtype=torch.bool):
    return [
        Mistake(
            torch.triu(torch.ones(n, n, dtype=dtype)),
            "upper triangle instead of lower (torch.triu, not torch.tril)",
            "用了上三角而不是下三角（应当用 torch.tril，而不是 torch.triu）",
        ),
        Mistake(
            torch.tril(torch.ones(n, n, dtype=dtype), diagonal=-1),
            "the diagonal is masked: every token must be allowed to attend to itself",
            "对角线被掩码了：每个词元必须能关注它自己",
        ),
        Mistake(
            ~_tril(n) if dtype == torch.bool else 1 - _tril(n, dtype),
            "the mask is inverted: `True` (`1`) must mean 'may attend', for `j <= i`",
            "掩码反了：`True`（`1`）应表示“可以关注”，即 `j <= i`",
        ),
    ]


def _masked_mistakes(scores):
    n = scores.shape[-1]
    return [
        Mistake(
            scores.masked_fill(~_tril(n), 0.0),
            "future scores set to `0` instead of -inf",
            "未来位置的分数被设成了 `0`，而不是 -inf",
        ),
        Mistake(
            scores.masked_fill(torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1), -INF),
            "the past was masked instead of the future (upper instead of lower triangle)",
            "掩码了过去而不是未来（上三角与下三角弄反了）",
        ),
        _diagonal_masked(scores),
    ]


def _diagonal_masked(scores, then=lambda masked: masked) -> Mistake:
    """torch.triu(ones) as the mask of the future, without diagonal=1: each token's own score is
    hidden too, so the first row has no key left (NaN after the softmax)."""
    n = scores.shape[-1]
    return Mistake(
        then(scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool)), -INF)),
        "the diagonal was masked too: `torch.triu(ones)` needs `diagonal=1` to mask only the future; "
        "without it each token cannot attend to itself and the first row sees no key at all",
        "对角线也被掩码了：`torch.triu(ones)` 需要 `diagonal=1` 才只对未来位置做掩码；否则每个词元都不能关注自己，"
        "第一行一个键也看不到",
    )


def _weights_mistakes(scaled):
    n = scaled.shape[-1]
    keep = _tril(n)
    after = torch.softmax(scaled, dim=-1) * keep
    return [
        Mistake(
            torch.softmax(scaled.masked_fill(~keep, 0.0), dim=-1),
            "masked with `0` instead of -inf before softmax: `exp(0) = 1` still gets a share",
            "softmax 之前用 `0` 而不是 -inf 做掩码：`exp(0) = 1` 仍会分走权重",
        ),
        Mistake(
            after,
            "the mask was applied after softmax without renormalising the rows",
            "在 softmax 之后才做掩码，且没有重新归一化每一行",
        ),
        Mistake(
            torch.softmax(
                scaled.masked_fill(torch.tril(torch.ones(n, n, dtype=torch.bool), diagonal=-1), -INF), dim=-1
            ),
            "the upper triangle was kept instead of the lower one (torch.triu instead of torch.tril)",
            "保留了上三角而不是下三角（torch.triu 而不是 torch.tril）",
        ),
        Mistake(torch.softmax(scaled, dim=-1), "no causal mask was applied", "没有应用因果掩码"),
        _diagonal_masked(scaled, lambda masked: torch.softmax(masked, dim=-1)),
    ]


@check(
    points=1,
    listings=["1.9"],
    title="listing 1.9: torch.tril and a mask of ones",
    title_zh="代码清单 1.9：torch.tril 和全 1 掩码",
)
def test_listing_1_9_mask_of_ones(sub):
    mask = sub.causal_mask(3, dtype=torch.float32)
    expect_tensor(
        mask,
        _tril(3, torch.float32),
        tol="exact",
        what=code("causal_mask(3, dtype=torch.float32)"),
        mistakes=_mask_mistakes(3, torch.float32),
    )
    a = torch.tensor(A)
    expect_tensor(a * mask, torch.tensor(A_MASKED), tol="exact", what=code("A * causal_mask(3, dtype=torch.float32)"))


@check(
    points=1,
    listings=["1.10"],
    title="listing 1.10: a 5x5 boolean causal mask",
    title_zh="代码清单 1.10：5x5 的布尔因果掩码",
)
def test_listing_1_10_causal_mask(sub):
    mask = sub.causal_mask(5)
    expect_tensor(
        mask,
        torch.tensor(MASK_5),
        tol="exact",
        what=Msg("causal_mask(5) (True = may attend)", "causal_mask(5)（True = 可以关注）"),
        mistakes=_mask_mistakes(5),
    )


@check(
    points=2,
    listings=["1.13/neg-inf"],
    title="mask_future, then the softmax of rows with -inf",
    title_zh="mask_future，以及含 -inf 的行的 softmax",
)
def test_book_neg_inf_examples(sub):
    scores = torch.tensor(NEG_INF_SCORES)
    masked = sub.mask_future(scores)
    expect_tensor(
        masked,
        torch.tensor(NEG_INF_MASKED),
        tol="exact",
        what=Msg("mask_future of three rows [2, 3, 5]", "三行 [2, 3, 5] 的 mask_future"),
        mistakes=_masked_mistakes(scores),
        nonfinite=True,
    )
    weights = sub.causal_attention_weights(scores)
    expect_tensor(
        weights,
        torch.tensor(NEG_INF_PRINTED),
        tol="printed4",
        what=Msg(
            "softmax of [2, -inf, -inf], [2, 3, -inf] and [2, 3, 5]",
            "[2, -inf, -inf]、[2, 3, -inf] 和 [2, 3, 5] 的 softmax",
        ),
        mistakes=_weights_mistakes(scores),
    )
    expect(
        bool((weights[0, 1:] == 0).all() and (weights[1, 2] == 0)),
        Msg(
            "softmax of -inf must be exactly 0: set the future to -inf before softmax",
            "-inf 的 softmax 必须恰好为 0：在 softmax 之前把未来位置设为 -inf",
        ),
    )


@check(
    points=1,
    listings=["1.13/renormalize"],
    title="zeroing the future and renormalising each row",
    title_zh="把未来位置置零并对每行重新归一化",
)
def test_book_renormalize_example(sub):
    w = _renorm_input()
    # The book's row sums of the masked weights (0.20, 0.50, 0.65, 0.80, 0.98) are exact sums of its values.
    expect(
        bool(torch.allclose((w * _tril(5)).sum(-1), torch.tensor(RENORM_ROW_SUMS), atol=1e-6)),
        Msg(
            "internal: the book's masked weights no longer add up to its row sums",
            "内部错误：书中加掩码后的权重与其行和对不上了",
        ),
    )
    out = sub.renormalize_masked(w, _tril(5))
    expect_tensor(
        out,
        torch.tensor(RENORM_PRINTED),
        tol="printed2",
        what=Msg("the masked weights of §1.13 renormalised", "§1.13 中加掩码的权重重新归一化后的结果"),
        mistakes=[
            Mistake(
                w * _tril(5) / w.sum(-1, keepdim=True),
                "divided by the sum of the whole row: zero the masked weights before summing",
                "除以了整行的和：应先把被掩码的权重置零再求和",
            ),
            Mistake(
                w * _tril(5), "the masked weights were not divided by their row sums", "掩码后的权重没有除以各行的和"
            ),
        ],
    )
    expect_tensor(
        out,
        fx()["renorm"],
        tol="softmax",
        what=Msg("the masked weights of §1.13 renormalised", "§1.13 中加掩码的权重重新归一化后的结果"),
    )


@check(
    points=2, listings=["1.11"], title="listing 1.11: masked scaled scores", title_zh="代码清单 1.11：加掩码的缩放分数"
)
def test_listing_1_11_masked_scores(sub):
    f = fx()
    out = sub.mask_future(f["scaled"])
    expect_tensor(
        out,
        f["masked"],
        tol="exact",
        what=Msg("listing 1.11: the scaled scores with the causal mask", "代码清单 1.11：加上因果掩码的缩放分数"),
        mistakes=_masked_mistakes(f["scaled"]),
        nonfinite=True,
    )
    book_scaled = torch.tensor(BOOK_SCALED)
    expect_tensor(
        sub.mask_future(book_scaled),
        book_scaled.masked_fill(~_tril(5), -INF),
        tol="exact",
        what=Msg(
            "listing 1.11's printed scaled scores with the causal mask", "代码清单 1.11 中打印的加因果掩码的缩放分数"
        ),
        mistakes=_masked_mistakes(book_scaled),
        nonfinite=True,
    )


@check(
    points=2,
    listings=["1.12"],
    title="listing 1.12: causal attention weights",
    title_zh="代码清单 1.12：因果注意力权重",
)
def test_listing_1_12_causal_weights(sub):
    f = fx()
    w = sub.causal_attention_weights(f["scaled"])
    expect_tensor(
        w,
        f["weights"],
        tol="softmax",
        what=Msg("listing 1.12: causal attention weights", "代码清单 1.12：因果注意力权重"),
        mistakes=_weights_mistakes(f["scaled"]),
    )
    expect(
        bool((w.triu(1) == 0).all()),
        Msg("every weight above the diagonal must be exactly 0", "对角线以上的每个权重都必须恰好为 0"),
    )
    expect(
        bool(torch.allclose(w.sum(-1), torch.ones(5), atol=1e-6)),
        Msg("each row of causal weights must sum to 1", "因果权重的每一行之和必须为 1"),
    )
    # From the book's printed scaled scores, the printed weights reproduce to 2e-4 (ERRATA E-1.13-p).
    book_scaled = torch.tensor(BOOK_SCALED)
    wb = sub.causal_attention_weights(book_scaled)
    expect_tensor(
        wb,
        torch.tensor(BOOK_CAUSAL_WEIGHTS),
        tol="printed3",
        what=Msg("causal weights of listing 1.11's printed scores", "代码清单 1.11 中打印的分数对应的因果权重"),
        mistakes=_weights_mistakes(book_scaled),
    )
    expect_tensor(
        wb,
        f["book_weights_true"],
        tol="softmax",
        what=Msg("causal weights of listing 1.11's printed scores", "代码清单 1.11 中打印的分数对应的因果权重"),
    )


@check(points=2, title="masking after softmax equals -inf before it", title_zh="softmax 之后掩码等价于之前填 -inf")
def test_mask_after_softmax_equals_neg_inf(sub):
    """The book's "data leakage" (ERRATA E-1.13-j): zeroing the future after softmax and renormalising
    gives the same weights as -inf before softmax; the common denominator cancels."""
    f = fx()
    for scaled, expected, what in (
        (f["scaled"], f["weights"], Msg("listing 1.11's scores", "代码清单 1.11 的分数")),
        (f["fresh"], f["fresh_weights"], Msg("a (2, 3, 6, 6) batch of scores", "形状为 (2, 3, 6, 6) 的一批分数")),
    ):
        keep = _tril(scaled.shape[-1])
        before = sub.causal_attention_weights(scaled)
        expect_tensor(
            before,
            expected,
            tol="softmax",
            what=Msg("causal_attention_weights on {what}", "在{what}上的 causal_attention_weights", what=what),
            mistakes=_weights_mistakes(scaled),
        )
        after = sub.renormalize_masked(torch.softmax(scaled, dim=-1), keep)
        expect_tensor(
            after,
            expected,
            tol="softmax",
            what=Msg(
                "renormalize_masked(softmax(scores), causal_mask) on {what}",
                "在{what}上的 renormalize_masked(softmax(scores), causal_mask)",
                what=what,
            ),
            mistakes=[
                Mistake(
                    torch.softmax(scaled, dim=-1) * keep,
                    "the masked weights were not divided by their row sums",
                    "掩码后的权重没有除以各行的和",
                )
            ],
        )
        expect_tensor(
            after,
            before,
            tol="softmax",
            what=Msg(
                "masking after softmax and renormalising vs -inf before softmax, on {what} "
                "(the two routes give the same weights)",
                "在{what}上，softmax 之后掩码再重新归一化与 softmax 之前填 -inf 的对比（两种做法得到相同的权重）",
                what=what,
            ),
        )


@check(points=2, hidden=True, title="causal masks and weights of other shapes", title_zh="其他形状的因果掩码和权重")
def test_fresh_shapes(sub):
    f = fx()
    n = 7
    expect_tensor(
        sub.causal_mask(n),
        f["mask7"],
        tol="exact",
        what=code("causal_mask({n})", n=from_input(n)),
        mistakes=_mask_mistakes(n),
    )
    n = 1
    expect_tensor(
        sub.causal_mask(n),
        torch.ones(n, n, dtype=torch.bool),
        tol="exact",
        what=code("causal_mask({n})", n=from_input(n)),
    )
    shape = from_input(tuple(f["fresh"].shape))
    expect_tensor(
        sub.mask_future(f["fresh"]),
        f["fresh_masked"],
        tol="exact",
        what=Msg("mask_future of a {shape} batch", "形状为 {shape} 的批次的 mask_future", shape=shape),
        mistakes=_masked_mistakes(f["fresh"]),
        nonfinite=True,
    )
    expect_tensor(
        sub.causal_attention_weights(f["fresh"]),
        f["fresh_weights"],
        tol="softmax",
        what=Msg("causal weights of a {shape} batch", "形状为 {shape} 的批次的因果权重", shape=shape),
        mistakes=_weights_mistakes(f["fresh"]),
    )
    x64 = f["fresh"][0, 0].double()
    expect_tensor(
        sub.causal_attention_weights(x64),
        f["fresh_weights"][0, 0].double(),
        tol="softmax",
        what=Msg(
            "causal weights of {dtype} scores",
            "{dtype} 分数的因果权重",
            dtype=from_input(str(x64.dtype).removeprefix("torch.")),
        ),
    )


def _context_mistakes(q, k, v):
    """The causal context's plausible wrong answers: the scale (none, d_k for sqrt(d_k)), the fill, no mask."""
    scores = torch.einsum("...id,...jd->...ij", q, k)  # q k^T over the last two dimensions
    d_k = k.shape[-1]
    keep = _tril(scores.shape[-1])
    return [
        Mistake(
            torch.softmax(scores.masked_fill(~keep, -INF), -1) @ v,
            "the scores were not scaled by sqrt(d_k)",
            "分数没有除以 sqrt(d_k)",
        ),
        Mistake(
            torch.softmax((scores / d_k).masked_fill(~keep, -INF), -1) @ v,
            "the scores were divided by d_k instead of sqrt(d_k)",
            "分数除以了 d_k，而不是 sqrt(d_k)",
        ),
        Mistake(
            torch.softmax((scores / d_k**0.5).masked_fill(~keep, 0.0), -1) @ v,
            "future scores set to `0` instead of -inf before softmax",
            "softmax 之前未来位置的分数被设成了 `0`，而不是 -inf",
        ),
        Mistake(torch.softmax(scores / d_k**0.5, -1) @ v, "no causal mask was applied", "没有应用因果掩码"),
    ]


@check(
    points=1,
    title="causal context vectors of listing 1.4's queries, keys and values",
    title_zh="代码清单 1.4 的查询、键和值的因果上下文向量",
)
def test_causal_context_of_the_listing(sub):
    """causal_attention on the listing's (6, 4) queries and keys, d_k = 4: sqrt(d_k) = 2 and
    d_k = 4 give different context vectors, so dividing by d_k is named here, publicly."""
    f = fx()
    expect_tensor(
        sub.causal_attention(f["q"], f["k"], f["v"]),
        f["context"],
        tol="attention",
        what=Msg(
            "causal context vectors of listing 1.4's queries, keys and values",
            "代码清单 1.4 的查询、键和值的因果上下文向量",
        ),
        mistakes=_context_mistakes(f["q"], f["k"], f["v"]),
    )


@check(points=1, hidden=True, title="causal context vectors of a batch", title_zh="一批输入的因果上下文向量")
def test_causal_context(sub):
    f = fx()
    q, k, v = f["fq"], f["fk"], f["fv"]
    expect_tensor(
        sub.causal_attention(q, k, v),
        f["fresh_context"],
        tol="attention",
        what=Msg(
            "causal context of a {shape} batch",
            "形状为 {shape} 的批次的因果上下文",
            shape=from_input(tuple(q.shape)),
        ),
        mistakes=_context_mistakes(q, k, v),
    )


@check(
    points=2,
    hidden=True,
    title="future tokens do not change earlier context vectors",
    title_zh="未来的词元不改变前面的上下文向量",
)
def test_future_tokens_do_not_matter(sub):
    @settings(
        max_examples=20, derandomize=True, database=None, deadline=None, phases=(Phase.explicit, Phase.generate)
    )  # no shrinking: a wrong answer fails fast
    @given(st.integers(2, 7), st.integers(0, 6), st.integers(1, 6), st.integers(0, 2**31 - 1))
    def independent(n, i, d, seed):
        i = i % (n - 1)  # a position with at least one token after it
        g = torch.Generator().manual_seed(seed)
        x = torch.randn(n, d, generator=g, dtype=torch.float64)
        wq, wk, wv = (torch.randn(d, d, generator=g, dtype=torch.float64) for _ in range(3))
        changed = x.clone()
        changed[i + 1 :] = torch.randn(n - i - 1, d, generator=g, dtype=torch.float64) * 3
        out = sub.causal_attention(x @ wq, x @ wk, x @ wv)
        out2 = sub.causal_attention(changed @ wq, changed @ wk, changed @ wv)
        expect_equal(
            tuple(out.shape),
            (n, d),
            what=Msg(
                "shape of causal_attention for {n} tokens", "{n} 个词元时 causal_attention 的形状", n=from_input(n)
            ),
        )
        expect_tensor(
            out2[: i + 1],
            out[: i + 1],
            tol="attention",
            what=Msg(
                "context vectors up to position {i} after changing the tokens after it "
                "(they must not depend on future tokens)",
                "改变位置 {i} 之后的词元后，位置 {i} 及之前的上下文向量（它们不应依赖未来的词元）",
                i=from_input(i),
            ),
        )
        scores = (x @ wq) @ (x @ wk).T / d**0.5
        ref = torch.softmax(scores.masked_fill(~_tril(n), -INF), -1) @ (x @ wv)
        expect_tensor(
            out,
            ref,
            tol="attention",
            what=Msg("causal context vectors of {n} random tokens", "{n} 个随机词元的因果上下文向量", n=from_input(n)),
        )

    independent()
