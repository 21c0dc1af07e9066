"""Checks of §1.12, context vectors (listing 1.7 and the 'day' hand example)."""
import torch

from grader.checking import Mistake, check, expect_tensor, fixtures
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
    return {"weights": weights, "values": v, "context": sol.context_vectors(weights, v),
            "context_next": sol.context_vectors(weights[1], v),
            "bw": bw, "bv": bv, "batch_context": sol.context_vectors(bw, bv)}


def fx():
    return fixtures.load(EXERCISE)


@check(points=2, listings=["1.7"])
def test_listing_1_7_context(sub):
    f = fx()
    out = sub.context_vectors(f["weights"], f["values"])
    expect_tensor(out, f["context"], tol="attention", what="context vectors of listing 1.7",
                  mistakes=[Mistake(f["weights"].T @ f["values"], "the weights were transposed",
                                    "注意力权重被转置了")])
    out = sub.context_vectors(f["weights"][1], f["values"])
    expect_tensor(out, f["context_next"], tol="attention", what="context vector of 'next' alone")


@check(points=1, listings=["1.12/day"])
def test_book_day_context(sub):
    out = sub.context_vectors(torch.tensor(book.DAY_WEIGHTS), torch.tensor(book.DAY_VALUES))
    expect_tensor(out, torch.tensor(book.DAY_CONTEXT), tol="printed2", what="context vector of 'day'")


@check(points=2, hidden=True)
def test_batched(sub):
    f = fx()
    out = sub.context_vectors(f["bw"], f["bv"])
    expect_tensor(out, f["batch_context"], tol="attention", what="context vectors of a (2, 4, 6) batch")
