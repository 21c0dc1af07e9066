"""Checks of §1.10, queries, keys and values (listings 1.2–1.4)."""

import torch

from grader.checking import Mistake, Msg, check, code, expect, expect_tensor, fixtures, from_input
from grader.checking import book

EXERCISE = "s1_10_qkv"


def make_fixtures(sol):
    wq, wk, wv = sol.init_qkv_weights(8, 4)
    q, k, v = sol.project_qkv(book.inputs(), wq, wk, wv)
    oq, ok, ov = sol.init_qkv_weights(6, 3, seed=7)
    g = torch.Generator().manual_seed(10)
    batch = torch.randn(2, 5, 8, generator=g)
    bq, bk, bv = sol.project_qkv(batch, wq, wk, wv)
    return {
        "W_query": wq,
        "W_key": wk,
        "W_value": wv,
        "queries": q,
        "keys": k,
        "values": v,
        "other_query": oq,
        "other_key": ok,
        "other_value": ov,
        "batch": batch,
        "batch_queries": bq,
        "batch_keys": bk,
        "batch_values": bv,
    }


def fx():
    return fixtures.load(EXERCISE)


def _triple(out, what):
    expect(
        isinstance(out, (tuple, list)) and len(out) == 3,
        Msg(
            "{what}: expected a tuple of three tensors (queries, keys, values), got {out_type}",
            "{what}：应返回三个张量组成的元组 (queries, keys, values)，实际得到 {out_type}",
            what=what,
            out_type=from_input(type(out).__name__),
        ),
    )
    return out


@check(
    points=1,
    listings=["1.2"],
    title="listing 1.2: query, key and value of 'next'",
    title_zh="代码清单 1.2：'next' 的查询、键和值",
)
def test_listing_1_2_single_token(sub):
    f = fx()
    x_2 = book.inputs()[1]  # "next"; d_in = 8, d_out = 4
    q, k, v = _triple(sub.project_qkv(x_2, f["W_query"], f["W_key"], f["W_value"]), code("project_qkv(x_2, ...)"))
    expect_tensor(q, f["queries"][1], tol="matmul", what=Msg("query of 'next'", "'next' 的查询向量"))
    expect_tensor(k, f["keys"][1], tol="matmul", what=Msg("key of 'next'", "'next' 的键向量"))
    expect_tensor(v, f["values"][1], tol="matmul", what=Msg("value of 'next'", "'next' 的值向量"))


@check(
    points=2,
    listings=["1.3"],
    title="listing 1.3: weights after torch.manual_seed(123)",
    title_zh="代码清单 1.3：torch.manual_seed(123) 之后的权重",
)
def test_listing_1_3_seeded_weights(sub):
    f = fx()
    out = _triple(sub.init_qkv_weights(8, 4), code("init_qkv_weights(8, 4)"))
    names = ["W_query", "W_key", "W_value"]
    for name, got in zip(names, out):
        others = [
            Mistake(f[o], f"{o} (the matrices were drawn in another order)", f"{o}（抽取顺序不对）")
            for o in names
            if o != name
        ]
        expect_tensor(
            got,
            f[name],
            tol="exact",
            what=Msg("{name} after torch.manual_seed(123)", "torch.manual_seed(123) 之后的 {name}", name=name),
            mistakes=others,
        )


@check(
    points=2,
    listings=["1.4"],
    title="listing 1.4: queries, keys and values of the sentence",
    title_zh="代码清单 1.4：整个句子的查询、键和值",
)
def test_listing_1_4_projections(sub):
    f = fx()
    out = _triple(sub.project_qkv(book.inputs(), f["W_query"], f["W_key"], f["W_value"]), code("project_qkv"))
    for name, got in zip(["queries", "keys", "values"], out):
        expect_tensor(got, f[name], tol="matmul", what=code(name))


@check(points=1, hidden=True, title="weights for another seed and size", title_zh="另一个种子和尺寸下的权重")
def test_weights_other_seed_and_dims(sub):
    f = fx()
    d_in, d_out, seed = 6, 3, 7
    out = _triple(
        sub.init_qkv_weights(d_in, d_out, seed=seed),
        code(
            "init_qkv_weights({d_in}, {d_out}, seed={seed})",
            d_in=from_input(d_in),
            d_out=from_input(d_out),
            seed=from_input(seed),
        ),
    )
    for name, got in zip(["other_query", "other_key", "other_value"], out):
        expect_tensor(
            got,
            f[name],
            tol="exact",
            what=Msg(
                "weights for d_in={d_in}, d_out={d_out}, seed={seed}",
                "d_in 为 {d_in}、d_out 为 {d_out}、seed 为 {seed} 时的权重",
                d_in=from_input(d_in),
                d_out=from_input(d_out),
                seed=from_input(seed),
            ),
        )


@check(points=2, hidden=True, title="projections of a batch", title_zh="一个批次的投影")
def test_projections_batched(sub):
    f = fx()
    out = _triple(
        sub.project_qkv(f["batch"], f["W_query"], f["W_key"], f["W_value"]),
        Msg("project_qkv on a batch", "对一个批次做 project_qkv"),
    )
    for name, got in zip(["batch_queries", "batch_keys", "batch_values"], out):
        expect_tensor(
            got,
            f[name],
            tol="matmul",
            what=Msg(
                "projections of a {shape} batch",
                "形状为 {shape} 的批次的投影",
                shape=from_input(tuple(f["batch"].shape)),
            ),
        )
