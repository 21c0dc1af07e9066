"""Checks of §1.12, scaled attention weights (listing 1.6 and the hand example)."""

import torch

from grader.checking import Mistake, Msg, check, expect, expect_tensor, fixtures, from_input
from grader.checking import book

EXERCISE = "s1_12_scaled_attention"


def make_fixtures(sol):
    import importlib

    qkv = importlib.import_module("s1_10_qkv")
    wq, wk, wv = qkv.init_qkv_weights(8, 4)
    q, k, _ = qkv.project_qkv(book.inputs(), wq, wk, wv)
    scores = q @ k.T
    g = torch.Generator().manual_seed(14)
    fresh = torch.randn(2, 6, 6, generator=g) * 8
    raw = torch.randn(3, 5, generator=g) * 5
    small = torch.randn(2, 3, 4, generator=torch.Generator().manual_seed(116)) * 6  # the public batch
    return {
        "scores": scores,
        "weights": sol.attention_weights(scores, 4),
        "weights_next": sol.attention_weights(scores[1], 4),
        "fresh": fresh,
        "fresh_weights": sol.attention_weights(fresh, 16),
        "raw": raw,
        "raw_scaled": sol.scale_scores(raw, 9),
        "small": small,
        "small_weights": sol.attention_weights(small, 9),
    }


def fx():
    return fixtures.load(EXERCISE)


def _mistakes(scores, d_k):
    z = scores / d_k**0.5
    out = [
        Mistake(
            torch.softmax(scores / d_k, dim=-1), "dividing by d_k instead of sqrt(d_k)", "除以了 d_k 而不是 sqrt(d_k)"
        ),
        Mistake(torch.softmax(scores, dim=-1), "the scores were not scaled", "分数没有缩放"),
        Mistake(
            torch.softmax(z, dim=0) if scores.dim() > 1 else scores,
            "softmax over the wrong dimension (queries instead of keys)",
            "在错误的维度上做了 softmax",
        ),
    ]
    if scores.dim() > 1:
        out.append(
            Mistake(
                torch.exp(z) / torch.exp(z).sum(),
                "summed over the whole tensor instead of along `dim=-1`: each row must sum to `1` "
                "(`e.sum(dim=-1, keepdim=True)`)",
                "对整个张量求和，而不是沿 `dim=-1` 求和：每一行之和必须为 `1`（`e.sum(dim=-1, keepdim=True)`）",
            )
        )
    if scores.dim() > 2:
        out.append(
            Mistake(
                torch.softmax(z, dim=1),
                "softmax over dim `1`, which is right only without a batch: the keys are the last dimension, `dim=-1`",
                "在第 `1` 维上做了 softmax，这只在没有批次维度时才对：键是最后一维，`dim=-1`",
            )
        )
    return out


@check(
    points=1,
    listings=["1.12/scaled"],
    title="the score matrix divided by sqrt(d_k) = 2",
    title_zh="分数矩阵除以 sqrt(d_k) = 2",
)
def test_book_scaled_scores(sub):
    out = sub.scale_scores(torch.tensor(book.HAND_SCORES), 4)
    expect_tensor(
        out,
        torch.tensor(book.HAND_SCALED),
        tol="printed2",
        what=Msg("hand score matrix / sqrt(4)", "手算分数矩阵 / sqrt(4)"),
        mistakes=[
            Mistake(
                torch.tensor(book.HAND_SCORES) / 4,
                "dividing by d_k instead of sqrt(d_k)",
                "除以了 d_k 而不是 sqrt(d_k)",
            )
        ],
    )


@check(
    points=2,
    listings=["1.6"],
    title="listing 1.6: scaled attention weights",
    title_zh="代码清单 1.6：缩放后的注意力权重",
)
def test_listing_1_6_weights(sub):
    f = fx()
    out = sub.attention_weights(f["scores"], 4)
    expect_tensor(
        out,
        f["weights"],
        tol="softmax",
        what=Msg("attention weights of listing 1.6", "代码清单 1.6 的注意力权重"),
        mistakes=_mistakes(f["scores"], 4),
    )
    expect(
        bool(torch.allclose(out.sum(-1), torch.ones(5), atol=1e-6)),
        Msg("each row of attention weights must sum to 1", "注意力权重的每一行之和必须为 1"),
    )
    row = sub.attention_weights(f["scores"][1], 4)
    expect_tensor(
        row, f["weights_next"], tol="softmax", what=Msg("attention weights of 'next' alone", "单独 'next' 的注意力权重")
    )


@check(
    points=1,
    title="weights of a small batch: softmax over the keys, dim=-1",
    title_zh="小批次的权重：在键上（dim=-1）做 softmax",
)
def test_small_batch(sub):
    f = fx()
    out = sub.attention_weights(f["small"], 9)
    expect_tensor(
        out,
        f["small_weights"],
        tol="softmax",
        what=Msg(
            "weights of a (2, 3, 4) batch of scores with d_k = 9 (each row sums to 1)",
            "d_k = 9 时形状为 (2, 3, 4) 的一批分数的权重（每一行之和为 1）",
        ),
        mistakes=_mistakes(f["small"], 9),
    )


@check(
    points=2,
    hidden=True,
    title="attention weights of a batch with another d_k",
    title_zh="另一个 d_k 下一个批次的注意力权重",
)
def test_fresh_dims(sub):
    f = fx()
    d_k = 16
    out = sub.attention_weights(f["fresh"], d_k)
    expect_tensor(
        out,
        f["fresh_weights"],
        tol="softmax",
        what=Msg(
            "weights of a {shape} batch with d_k = {d_k}",
            "d_k 为 {d_k} 时形状为 {shape} 的批次的权重",
            shape=from_input(tuple(f["fresh"].shape)),
            d_k=from_input(d_k),
        ),
        mistakes=_mistakes(f["fresh"], d_k),
    )


@check(points=1, hidden=True, title="scaling for another d_k", title_zh="另一个 d_k 下的缩放")
def test_scale_fresh(sub):
    f = fx()
    d_k = 9
    expect_tensor(
        sub.scale_scores(f["raw"], d_k),
        f["raw_scaled"],
        tol="attention",
        what=Msg("scores scaled for d_k = {d_k}", "d_k 为 {d_k} 时缩放后的分数", d_k=from_input(d_k)),
    )
