"""Checks of §1.12, context vectors (listing 1.7 and the 'day' hand example)."""

import torch

from grader.checking import Mistake, Msg, check, expect_tensor, fixtures, from_input
from grader.checking import book

EXERCISE = "s1_12_context"


def make_fixtures(sol):
    import importlib

    qkv = importlib.import_module("s1_10_qkv")
    wq, wk, wv = qkv.init_qkv_weights(8, 4)
    q, k, v = qkv.project_qkv(book.inputs(), wq, wk, wv)
    weights = torch.softmax(q @ k.T / 2, dim=-1)
    g = torch.Generator().manual_seed(15)
    bw = torch.softmax(torch.randn(2, 4, 6, generator=g), dim=-1)
    bv = torch.randn(2, 6, 3, generator=g)
    return {
        "weights": weights,
        "values": v,
        "context": sol.context_vectors(weights, v),
        "context_next": sol.context_vectors(weights[1], v),
        "bw": bw,
        "bv": bv,
        "batch_context": sol.context_vectors(bw, bv),
    }


def fx():
    return fixtures.load(EXERCISE)


@check(
    points=2,
    listings=["1.7"],
    title="listing 1.7: context vectors of all tokens",
    title_zh="代码清单 1.7：所有词元的上下文向量",
)
def test_listing_1_7_context(sub):
    f = fx()
    out = sub.context_vectors(f["weights"], f["values"])
    expect_tensor(
        out,
        f["context"],
        tol="attention",
        what=Msg("context vectors of listing 1.7", "代码清单 1.7 的上下文向量"),
        mistakes=[Mistake(f["weights"].T @ f["values"], "the weights were transposed", "注意力权重被转置了")],
    )
    out = sub.context_vectors(f["weights"][1], f["values"])
    expect_tensor(
        out, f["context_next"], tol="attention", what=Msg("context vector of 'next' alone", "单独 'next' 的上下文向量")
    )


@check(
    points=1,
    listings=["1.12/day"],
    title="the context vectors of 'next' and 'day'",
    title_zh="'next' 和 'day' 的上下文向量",
)
def test_book_day_context(sub):
    out = sub.context_vectors(torch.tensor(book.DAY_WEIGHTS), torch.tensor(book.DAY_VALUES))
    expect_tensor(
        out, torch.tensor(book.DAY_CONTEXT), tol="printed2", what=Msg("context vector of 'day'", "'day' 的上下文向量")
    )


@check(points=2, hidden=True, title="context vectors of a batch", title_zh="一个批次的上下文向量")
def test_batched(sub):
    f = fx()
    out = sub.context_vectors(f["bw"], f["bv"])
    expect_tensor(
        out,
        f["batch_context"],
        tol="attention",
        what=Msg(
            "context vectors of a {shape} batch",
            "形状为 {shape} 的批次的上下文向量",
            shape=from_input(tuple(f["bw"].shape)),
        ),
    )
