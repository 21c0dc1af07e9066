"""Checks of §1.11, raw attention scores (listing 1.5)."""

import torch

from grader.checking import Mistake, Msg, check, expect_tensor, fixtures, from_input

EXERCISE = "s1_11_attention_scores"


def make_fixtures(sol):
    import importlib

    qkv = importlib.import_module("s1_10_qkv")
    from grader.checking import book

    wq, wk, wv = qkv.init_qkv_weights(8, 4)
    q, k, _ = qkv.project_qkv(book.inputs(), wq, wk, wv)
    g = torch.Generator().manual_seed(12)
    bq, bk = torch.randn(2, 3, 6, 4, generator=g), torch.randn(2, 3, 7, 4, generator=g)
    rq, rk = torch.randn(3, 4, generator=g), torch.randn(6, 4, generator=g)
    small = torch.Generator().manual_seed(115)  # the public batch: smaller than the hidden one, and 3-D
    sq, sk = torch.randn(2, 3, 4, generator=small), torch.randn(2, 5, 4, generator=small)
    return {
        "queries": q,
        "keys": k,
        "scores": sol.attention_scores(q, k),
        "scores_next": sol.attention_scores(q[1], k),
        "bq": bq,
        "bk": bk,
        "batch_scores": sol.attention_scores(bq, bk),
        "rq": rq,
        "rk": rk,
        "rect_scores": sol.attention_scores(rq, rk),
        "small_q": sq,
        "small_k": sk,
        "small_scores": sol.attention_scores(sq, sk),
    }


def fx():
    return fixtures.load(EXERCISE)


@check(
    points=2,
    listings=["1.5"],
    title="listing 1.5: attention scores of all tokens",
    title_zh="代码清单 1.5：所有词元的注意力分数",
)
def test_listing_1_5_scores(sub):
    f = fx()
    out = sub.attention_scores(f["queries"], f["keys"])
    expect_tensor(
        out,
        f["scores"],
        tol="attention",
        what=Msg("attention scores of listing 1.5", "代码清单 1.5 的注意力分数"),
        mistakes=[
            Mistake(
                f["scores"].T,
                "keys @ queries.T: rows must be queries, columns keys",
                "keys @ queries.T：行应为查询、列应为键",
            )
        ],
    )


@check(
    points=1,
    listings=["1.5"],
    title="listing 1.5: the scores of 'next' alone",
    title_zh="代码清单 1.5：单独 'next' 的分数",
)
def test_listing_1_5_single_query(sub):
    f = fx()
    out = sub.attention_scores(f["queries"][1], f["keys"])
    expect_tensor(
        out, f["scores_next"], tol="attention", what=Msg("scores of the single query 'next'", "单个查询 'next' 的分数")
    )


def _batched(fn, *args, what: Msg):
    """Call student code on a batch. The book's `keys.T` failing on it is explained for every
    exercise alike (grader/worker/proxy.py, _batched_T)."""
    return fn(*args)


@check(
    points=1,
    title="scores of a small batch: transpose only the last two dimensions",
    title_zh="小批次的分数：只交换最后两个维度",
)
def test_small_batch_scores(sub):
    f = fx()
    what = Msg(
        "scores for a batch of (2, 3, 4) queries and (2, 5, 4) keys",
        "形状为 (2, 3, 4) 的查询和 (2, 5, 4) 的键（一个批次）的分数",
    )
    out = _batched(sub.attention_scores, f["small_q"], f["small_k"], what=what)
    expect_tensor(
        out,
        f["small_scores"],
        tol="attention",
        what=what,
        mistakes=[
            Mistake(
                f["small_scores"].transpose(-2, -1),
                "keys @ queries.T: rows must be queries, columns keys",
                "keys @ queries.T：行应为查询、列应为键",
            )
        ],
    )


@check(points=2, hidden=True, title="scores of batched, multi-head inputs", title_zh="批量、多头输入的分数")
def test_batched_scores(sub):
    f = fx()
    out = sub.attention_scores(f["bq"], f["bk"])
    expect_tensor(
        out,
        f["batch_scores"],
        tol="attention",
        what=Msg(
            "scores for {q_shape} queries and {k_shape} keys",
            "形状为 {q_shape} 的查询和 {k_shape} 的键的分数",
            q_shape=from_input(tuple(f["bq"].shape)),
            k_shape=from_input(tuple(f["bk"].shape)),
        ),
    )


@check(
    points=1, hidden=True, title="scores for different numbers of queries and keys", title_zh="查询和键数目不同时的分数"
)
def test_rectangular(sub):
    f = fx()
    out = sub.attention_scores(f["rq"], f["rk"])
    expect_tensor(
        out,
        f["rect_scores"],
        tol="attention",
        what=Msg(
            "scores for {n_q} queries and {n_k} keys",
            "{n_q} 个查询和 {n_k} 个键的分数",
            n_q=from_input(f["rq"].shape[-2]),
            n_k=from_input(f["rk"].shape[-2]),
        ),
    )
