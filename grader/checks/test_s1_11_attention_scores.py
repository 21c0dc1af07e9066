"""Checks of §1.11, raw attention scores (listing 1.5)."""
import torch

from grader.checking import Mistake, check, expect_tensor, fixtures

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
    return {"queries": q, "keys": k, "scores": sol.attention_scores(q, k),
            "scores_next": sol.attention_scores(q[1], k),
            "bq": bq, "bk": bk, "batch_scores": sol.attention_scores(bq, bk),
            "rq": rq, "rk": rk, "rect_scores": sol.attention_scores(rq, rk)}


def fx():
    return fixtures.load(EXERCISE)


@check(points=2, listings=["1.5"])
def test_listing_1_5_scores(sub):
    f = fx()
    out = sub.attention_scores(f["queries"], f["keys"])
    expect_tensor(out, f["scores"], tol="attention", what="attention scores of listing 1.5",
                  mistakes=[Mistake(f["scores"].T, "keys @ queries.T: rows must be queries, columns keys",
                                    "keys @ queries.T：行应为查询、列应为键")])


@check(points=1, listings=["1.5"])
def test_listing_1_5_single_query(sub):
    f = fx()
    out = sub.attention_scores(f["queries"][1], f["keys"])
    expect_tensor(out, f["scores_next"], tol="attention", what="scores of the single query 'next'")


@check(points=2, hidden=True)
def test_batched_scores(sub):
    f = fx()
    out = sub.attention_scores(f["bq"], f["bk"])
    expect_tensor(out, f["batch_scores"], tol="attention", what="scores for (2, 3, 6, 4) queries and (2, 3, 7, 4) keys")


@check(points=1, hidden=True)
def test_rectangular(sub):
    f = fx()
    out = sub.attention_scores(f["rq"], f["rk"])
    expect_tensor(out, f["rect_scores"], tol="attention", what="scores for 3 queries and 6 keys")
