"""Checks of §1.16, multi-head attention (listings 1.14–1.19)."""

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
    matches,
)
from grader.checking import book
from grader.worker.proxy import StudentError

EXERCISE = "s1_16_multihead"

# Listing 1.14: "The", "kid", "smiles", six features each; batch of one.
LISTING_X = [[[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [6.0, 5.0, 4.0, 3.0, 2.0, 1.0], [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]]]
# True values at the book's print precision (3 decimals); the book prints others (ERRATA E-1.16-f..h).
TRUE_WEIGHTS_HEAD0 = [[1.0, 0.0, 0.0], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
TRUE_CONTEXT_HEAD0_ROW = [-2.089, 14.501, -7.853]
TRUE_FINAL_ROW = [-2.089, 14.501, -7.853, -10.743, 11.328, -10.039]

LINEARS = ["W_query", "W_key", "W_value"]


def _split(x, h, transpose=True):
    b, n, d = x.shape
    if transpose:
        return x.view(b, n, h, d // h).transpose(1, 2)
    return x.reshape(b, h, n, d // h)  # the mistake: a view straight to (b, h, n, d)


def _merge(c, transpose=True):
    b, h, n, d = c.shape
    if transpose:
        return c.transpose(1, 2).reshape(b, n, h * d)
    return c.reshape(b, n, h * d)  # the mistake: a view without moving the heads back


def _attend(q, k, v, causal=False, scale=None, dim=-1):
    scores = q @ k.transpose(-2, -1)
    if causal:
        n = scores.shape[-1]
        scores = scores.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), float("-inf"))
    w = torch.softmax(scores / (math.sqrt(q.shape[-1]) if scale is None else scale), dim=dim)
    return w, w @ v


def _reference(sd, x, h, causal=False, split_t=True, merge_t=True, scale="head", out_proj=True):
    """Multi-head attention written out plainly, with switches for the common mistakes."""

    def lin(name, t):
        y = t @ sd[f"{name}.weight"].T
        return y + sd[f"{name}.bias"] if f"{name}.bias" in sd else y

    q, k, v = (_split(lin(n, x), h, split_t) for n in LINEARS)
    d_out = sd["W_query.weight"].shape[0]
    _, ctx = _attend(q, k, v, causal, scale={"head": None, "d_out": math.sqrt(d_out), "none": 1.0}[scale])
    merged = _merge(ctx, merge_t)
    return lin("out_proj", merged) if out_proj else merged


def _mha_mistakes(sd, x, h, causal=False):
    return [
        Mistake(
            _reference(sd, x, h, causal, merge_t=False),
            "the heads were merged with .view(b, n, d_out) without transposing back to (b, n, heads, head_dim)",
            "合并多头时没有先转置回 (b, n, heads, head_dim) 就直接 view(b, n, d_out)",
        ),
        Mistake(
            _reference(sd, x, h, causal, split_t=False),
            "the heads were split with .view(b, heads, n, head_dim) instead of view then `transpose(1, 2)`",
            "拆分多头时直接 view(b, heads, n, head_dim)，而不是先 view 再 `transpose(1, 2)`",
        ),
        Mistake(
            _reference(sd, x, h, causal, scale="d_out"),
            "the scores were scaled by sqrt(d_out) instead of sqrt(head_dim)",
            "分数除以了 sqrt(d_out)，而不是 sqrt(head_dim)",
        ),
        Mistake(
            _reference(sd, x, h, causal, scale="none"),
            "the scores were not scaled by sqrt(head_dim)",
            "分数没有除以 sqrt(head_dim)",
        ),
        Mistake(
            _reference(sd, x, h, causal, out_proj=False),
            "out_proj was not applied to the merged heads",
            "合并后的多头输出没有经过 out_proj",
        ),
        Mistake(
            _reference(sd, x, h, not causal),
            "the causal mask was " + ("ignored" if causal else "applied"),
            "因果掩码" + ("没有生效" if causal else "不该使用"),
        ),
    ]


def _attention_mistakes(q, k, v, causal):
    d = q.shape[-1]
    wrong = [
        Mistake(
            _attend(q, k, v, causal, scale=1.0)[0],
            "the scores were not scaled by sqrt(head_dim)",
            "分数没有除以 sqrt(head_dim)",
        ),
        Mistake(
            _attend(q, k, v, causal, scale=float(d))[0],
            "divided by head_dim instead of sqrt(head_dim)",
            "除以了 head_dim 而不是 sqrt(head_dim)",
        ),
        Mistake(
            _attend(q, k, v, causal, dim=-2)[0],
            "softmax over the queries (`dim=-2`) instead of the keys",
            "在查询维（`dim=-2`）而不是键维上做了 softmax",
        ),
        Mistake(
            _attend(q, k, v, not causal)[0],
            "the causal mask was " + ("ignored" if causal else "applied"),
            "因果掩码" + ("没有生效" if causal else "不该使用"),
        ),
    ]
    if causal:
        n = q.shape[-2]
        cut = _attend(q, k, v)[0].masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1), 0.0)
        wrong.append(
            Mistake(
                cut,
                "future weights were zeroed after the softmax without renormalising the rows",
                "softmax 之后把未来位置置零，却没有重新归一化",
            )
        )
    return wrong


def _expect_mha(out, expected, what, sd, x, h, causal):
    """expect_tensor with the named mistakes, built only when the answer is wrong (they cost time)."""
    if not matches(out, expected, "attention"):
        expect_tensor(out, expected, tol="attention", what=what, mistakes=_mha_mistakes(sd, x, h, causal))


def _torch_mha(sd, x, h, causal=False):
    """torch.nn.MultiheadAttention given the same weights (trusted side only)."""
    d = sd["W_query.weight"].shape[0]
    ref = torch.nn.MultiheadAttention(d, h, bias=True, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([sd[f"{n}.weight"] for n in LINEARS]))
        biases = [sd.get(f"{n}.bias", torch.zeros(d)) for n in LINEARS]
        ref.in_proj_bias.copy_(torch.cat(biases))
        ref.out_proj.weight.copy_(sd["out_proj.weight"])
        ref.out_proj.bias.copy_(sd["out_proj.bias"])
        n = x.shape[1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), 1) if causal else None
        out, _ = ref(x, x, x, attn_mask=mask, need_weights=False)
    return out


def _weights(d_in, d_out, bias, g, scale=0.4):
    sd = {f"{n}.weight": torch.randn(d_out, d_in, generator=g) * scale for n in LINEARS}
    if bias:
        sd.update({f"{n}.bias": torch.randn(d_out, generator=g) * scale for n in LINEARS})
    sd["out_proj.weight"] = torch.randn(d_out, d_out, generator=g) * scale
    sd["out_proj.bias"] = torch.randn(d_out, generator=g) * scale
    return sd


def make_fixtures(sol):
    out = {}
    x = torch.tensor(LISTING_X)
    torch.manual_seed(123)  # listing 1.14, then listing 1.15 draws W_q, W_k, W_v in that order
    W_q, W_k, W_v = torch.randn(6, 6), torch.randn(6, 6), torch.randn(6, 6)
    q, k, v = x @ W_q, x @ W_k, x @ W_v
    out.update({"x": x, "q": q, "k": k, "v": v, "q_view": sol.view_heads(q, 2)})
    qs, ks, vs = (sol.split_heads(t, 2) for t in (q, k, v))
    w, ctx = sol.head_attention(qs, ks, vs)
    out.update(
        {"q_split": qs, "k_split": ks, "v_split": vs, "weights": w, "context": ctx, "final": sol.merge_heads(ctx)}
    )

    g = torch.Generator().manual_seed(116)
    xs = torch.randn(2, 5, 12, generator=g)
    out.update({"xs": xs, "xs_view": sol.view_heads(xs, 3), "xs_split": sol.split_heads(xs, 3)})
    hq, hk, hv = (torch.randn(2, 3, 5, 4, generator=g) * 2 for _ in range(3))
    out.update({"hq": hq, "hk": hk, "hv": hv})
    for causal in (False, True):
        w, c = sol.head_attention(hq, hk, hv, causal=causal)
        out[f"h_weights_{causal}"], out[f"h_context_{causal}"] = w, c
    out["h_merged"] = sol.merge_heads(out["h_context_False"])

    xm = torch.randn(2, 5, 8, generator=g)
    out["xm"] = xm
    for bias in (False, True):
        sd = _weights(8, 12, bias, g)
        out.update({f"mha{int(bias)}/{k}": t for k, t in sd.items()})
        for causal in (False, True):
            m = sol.MultiHeadAttention(8, 12, 3, qkv_bias=bias, causal=causal)
            m.load_state_dict(sd)
            with torch.no_grad():
                out[f"mha{int(bias)}_y_{causal}"] = m(xm)

    sd = _weights(12, 12, True, g)
    out.update({f"eq/{k}": t for k, t in sd.items()})
    out["xe"] = torch.randn(3, 6, 12, generator=g)
    return out


def fx():
    return fixtures.load(EXERCISE)


def _state(f, prefix):
    return {k.split("/", 1)[1]: t for k, t in f.items() if k.startswith(prefix + "/")}


def _call(fn, *args, **kwargs):
    """Call student code; turn the classic view-after-transpose crash into a named mistake."""
    try:
        return fn(*args, **kwargs)
    except StudentError as e:
        if e.type == "RuntimeError" and "view size is not compatible" in e.detail:
            raise CheckFailure(
                Msg(
                    "{e}\n.view() needs a contiguous tensor, and transpose() returns one that is not: call "
                    ".contiguous() after the transpose, or use .reshape().",
                    "{e}\nview() 需要连续的张量，而 transpose() 返回的张量不连续：在 transpose 之后调用 "
                    ".contiguous()，或者改用 .reshape()。",
                    e=Msg.of(e),
                )
            ) from None
        raise


def _pair(out, what):
    expect(
        isinstance(out, (tuple, list)) and len(out) == 2,
        Msg(
            "{what}: expected a tuple (weights, context), got {out_type}",
            "{what}：应返回元组 (weights, context)，实际得到 {out_type}",
            what=what,
            out_type=from_input(type(out).__name__),
        ),
    )
    return out


@check(
    points=2,
    listings=["1.14", "1.15", "1.16"],
    title="listings 1.14-1.16: the input and its heads",
    title_zh="代码清单 1.14-1.16：输入及其拆出的头",
)
def test_listings_1_14_to_1_16_view_heads(sub):
    f = fx()
    expect_equal(tuple(f["x"].shape), (1, 3, 6), what=Msg("listing 1.14: x.shape", "代码清单 1.14：x.shape"))
    expect_equal(sub.head_dim(6, 2), 3, what=Msg("listing 1.15: head_dim(6, 2)", "代码清单 1.15：head_dim(6, 2)"))
    expect_equal(tuple(f["q"].shape), (1, 3, 6), what=Msg("listing 1.15: q.shape", "代码清单 1.15：q.shape"))
    for name in ("q", "k", "v"):
        out = sub.view_heads(f[name], 2)
        expect_tensor(
            out,
            f[name].view(1, 3, 2, 3),
            tol="exact",
            what=Msg(
                "listing 1.16: {name} after view_heads(.., 2)",
                "代码清单 1.16：view_heads(.., 2) 之后的 {name}",
                name=name,
            ),
            mistakes=[
                Mistake(
                    f[name].view(1, 3, 3, 2),
                    "the last dimension was cut as (head_dim, num_heads)",
                    "最后一维被切成了 (head_dim, num_heads)",
                )
            ],
        )
    expect_tensor(
        sub.view_heads(f["xs"], 3),
        f["xs_view"],
        tol="exact",
        what=Msg("view_heads of a (2, 5, 12) tensor, 3 heads", "对 (2, 5, 12) 的张量做 3 个头的 view_heads"),
    )


@check(
    points=2,
    listings=["1.17"],
    title="listing 1.17: grouping by head with transpose",
    title_zh="代码清单 1.17：用 transpose 按头分组",
)
def test_listing_1_17_split_heads(sub):
    f = fx()
    for name in ("q", "k", "v"):
        out = sub.split_heads(f[name], 2)
        expect_tensor(
            out,
            f[f"{name}_split"],
            tol="exact",
            what=Msg("listing 1.17: split_heads({name}, 2)", "代码清单 1.17：split_heads({name}, 2)", name=name),
            mistakes=[
                Mistake(
                    _split(f[name], 2, transpose=False),
                    "a view straight to (b, heads, n, head_dim): view as (b, n, heads, head_dim) "
                    "first, then transpose(1, 2)",
                    "直接 view 成 (b, heads, n, head_dim)：应先 view 成 (b, n, heads, head_dim) 再 transpose(1, 2)",
                )
            ],
        )
    out = sub.split_heads(f["xs"], 3)
    expect_tensor(
        out,
        f["xs_split"],
        tol="exact",
        what=Msg("split_heads of a (2, 5, 12) tensor, 3 heads", "对 (2, 5, 12) 的张量做 3 个头的 split_heads"),
        mistakes=[
            Mistake(
                _split(f["xs"], 3, transpose=False),
                "a view straight to (b, heads, n, head_dim) without the transpose",
                "直接 view 成 (b, heads, n, head_dim)，缺少 transpose",
            )
        ],
    )


@check(
    points=2,
    listings=["1.18"],
    title="listing 1.18: per-head weights and context",
    title_zh="代码清单 1.18：每个头的权重和上下文",
)
def test_listing_1_18_head_attention(sub):
    f = fx()
    w, ctx = _pair(sub.head_attention(f["q_split"], f["k_split"], f["v_split"]), code("head_attention(q, k, v)"))
    expect_tensor(
        w,
        f["weights"],
        tol="attention",
        what=Msg("listing 1.18: weights (1, 2, 3, 3)", "代码清单 1.18：权重 (1, 2, 3, 3)"),
        mistakes=[
            Mistake(
                _attend(f["q_split"], f["k_split"], f["v_split"], scale=math.sqrt(6))[0],
                "scaled by sqrt(d_out) = sqrt(6) instead of sqrt(head_dim) = sqrt(3)",
                "除以了 sqrt(d_out)=sqrt(6)，而不是 sqrt(head_dim)=sqrt(3)",
            )
        ],
    )
    # The book prints [[0.59, 0.24, 0.17], ...]; with these seeded weights head 0 is one-hot (E-1.16-f).
    expect_tensor(
        w[0, 0],
        torch.tensor(TRUE_WEIGHTS_HEAD0),
        tol="printed3",
        what=Msg("weights[0, 0] to 3 decimals", "weights[0, 0]，保留 3 位小数"),
    )
    expect_tensor(
        ctx,
        f["context"],
        tol="attention",
        what=Msg("listing 1.18: context (1, 2, 3, 3)", "代码清单 1.18：上下文 (1, 2, 3, 3)"),
    )
    expect_tensor(
        ctx[0, 0],
        torch.tensor([TRUE_CONTEXT_HEAD0_ROW] * 3),
        tol="printed3",
        what=Msg("context[0, 0] to 3 decimals", "context[0, 0]，保留 3 位小数"),
    )
    # The listing's weights are saturated (one-hot), so fresh inputs are what show the scaling.
    q, k, v = f["hq"], f["hk"], f["hv"]
    w, ctx = _pair(
        sub.head_attention(q, k, v),
        Msg("head_attention on (2, 3, 5, 4) tensors", "在 (2, 3, 5, 4) 张量上的 head_attention"),
    )
    expect_tensor(
        w,
        f["h_weights_False"],
        tol="attention",
        what=Msg("weights for (2, 3, 5, 4) queries and keys", "(2, 3, 5, 4) 的查询和键对应的权重"),
        mistakes=_attention_mistakes(q, k, v, causal=False),
    )
    expect_tensor(
        ctx,
        f["h_context_False"],
        tol="attention",
        what=Msg("context for (2, 3, 5, 4) values", "(2, 3, 5, 4) 的值对应的上下文"),
    )


@check(points=2, listings=["1.19"], title="listing 1.19: merging the heads", title_zh="代码清单 1.19：合并各个头")
def test_listing_1_19_merge_heads(sub):
    f = fx()
    out = _call(sub.merge_heads, f["context"])
    expect_tensor(
        out,
        f["final"],
        tol="exact",
        what=Msg("listing 1.19: merge_heads(context), (1, 3, 6)", "代码清单 1.19：merge_heads(context)，(1, 3, 6)"),
        mistakes=[
            Mistake(
                _merge(f["context"], transpose=False),
                "merged with .view(b, n, d_out) without transposing back (the layout the book prints)",
                "没有先转置回来就 view(b, n, d_out)（书中打印的正是这种排列）",
            )
        ],
    )
    expect_tensor(
        out[0],
        torch.tensor([TRUE_FINAL_ROW] * 3),
        tol="printed3",
        what=Msg("final context to 3 decimals", "最终的上下文，保留 3 位小数"),
    )
    out = _call(sub.merge_heads, f["h_context_False"])
    expect_tensor(
        out,
        f["h_merged"],
        tol="exact",
        what=Msg("merge_heads of a (2, 3, 5, 4) context", "对 (2, 3, 5, 4) 的上下文做 merge_heads"),
        mistakes=[
            Mistake(
                _merge(f["h_context_False"], transpose=False),
                "merged with .view(b, n, d_out) without transposing back to (b, n, heads, head_dim)",
                "没有先转置回 (b, n, heads, head_dim) 就 view(b, n, d_out)",
            )
        ],
    )


@check(
    points=1,
    listings=["1.16/two-heads"],
    title="figures 1.106-1.114: two heads of width 2",
    title_zh="图 1.106-1.114：两个宽度为 2 的头",
)
def test_two_heads_of_the_figures(sub):
    # Figures 1.106-1.114: 5 tokens x 8 features, d_out = 4, 2 heads of width 2.
    g = torch.Generator().manual_seed(1106)
    x = book.inputs().unsqueeze(0)
    q, k, v = (x @ torch.randn(8, 4, generator=g) for _ in range(3))
    expect_equal(sub.head_dim(4, 2), 2, what=code("head_dim(4, 2)"))
    qs, ks, vs = (sub.split_heads(t, 2) for t in (q, k, v))
    expect_equal(
        tuple(qs.shape),
        (1, 2, 5, 2),
        what=Msg("Q1 and Q2 stacked: split_heads shape", "Q1 和 Q2 堆叠后 split_heads 的形状"),
    )
    w, ctx = _pair(sub.head_attention(qs, ks, vs), code("head_attention"))
    expect_equal(tuple(w.shape), (1, 2, 5, 5), what=Msg("two (5, 5) weight matrices", "两个 (5, 5) 的权重矩阵"))
    expect_equal(tuple(ctx.shape), (1, 2, 5, 2), what=Msg("two (5, 2) context matrices", "两个 (5, 2) 的上下文矩阵"))
    merged = _call(sub.merge_heads, ctx)
    expect_equal(tuple(merged.shape), (1, 5, 4), what=Msg("the concatenated (5, 4) context", "拼接后的 (5, 4) 上下文"))
    expect_tensor(
        merged[0, :, :2],
        ctx[0, 0],
        tol="exact",
        what=Msg("columns 0-1 of the merged context (head 1)", "合并后上下文的第 0-1 列（头 1）"),
    )
    expect_tensor(
        merged[0, :, 2:],
        ctx[0, 1],
        tol="exact",
        what=Msg("columns 2-3 of the merged context (head 2)", "合并后上下文的第 2-3 列（头 2）"),
    )


@check(points=1, title="head_dim requires d_out divisible by the heads", title_zh="head_dim 要求 d_out 能被头数整除")
def test_head_dim_must_divide(sub):
    expect_equal(sub.head_dim(12, 3), 4, what=code("head_dim(12, 3)"))
    expect_equal(sub.head_dim(768, 12), 64, what=code("head_dim(768, 12)"))
    for d_out, heads in ((256, 6), (10, 4)):
        try:
            got = sub.head_dim(d_out, heads)
        except StudentError as e:
            expect(
                e.type == "ValueError",
                Msg(
                    "head_dim({d_out}, {heads}) must raise ValueError, not {error}",
                    "head_dim({d_out}, {heads}) 必须抛出 ValueError，而不是 {error}",
                    d_out=from_input(d_out),
                    heads=from_input(heads),
                    error=from_input(e.type or e.kind),
                ),
            )
            continue
        raise CheckFailure(
            Msg(
                "head_dim({d_out}, {heads}) returned {got!r}: {d_out} is not divisible by {heads}, raise ValueError",
                "head_dim({d_out}, {heads}) 返回了 {got!r}：{d_out} 不能被 {heads} 整除，应抛出 ValueError",
                d_out=from_input(d_out),
                heads=from_input(heads),
                got=from_input(got),
            )
        )


@check(points=2, title="MultiHeadAttention's parameters", title_zh="MultiHeadAttention 的参数")
def test_mha_parameters(sub):
    for bias in (False, True):
        m = sub.new("MultiHeadAttention", 8, 12, 3, qkv_bias=bias)
        state = m.state_dict()
        want = {f"{n}.weight": (12, 8) for n in LINEARS} | {"out_proj.weight": (12, 12), "out_proj.bias": (12,)}
        if bias:
            want |= {f"{n}.bias": (12,) for n in LINEARS}
        expect_equal(
            sorted(state),
            sorted(want),
            what=Msg(
                "parameter names of MultiHeadAttention(8, 12, 3, qkv_bias={bias})",
                "MultiHeadAttention(8, 12, 3, qkv_bias={bias}) 的参数名",
                bias=from_input(bias),
            ),
        )
        for name, shape in want.items():
            expect_equal(tuple(state[name].shape), shape, what=Msg("shape of {name}", "{name} 的形状", name=name))
        # The right names around a wrong forward earn nothing: the output with these weights must match too.
        g = torch.Generator().manual_seed(1623 + bias)
        sd, x = _weights(8, 12, bias, g), torch.randn(2, 4, 8, generator=g)
        m.load_state_dict(sd)
        _expect_mha(
            _call(m, x),
            _reference(sd, x, 3),
            Msg(
                "MultiHeadAttention(8, 12, 3, qkv_bias={bias}) on a (2, 4, 8) input with these weights",
                "使用这些权重时 MultiHeadAttention(8, 12, 3, qkv_bias={bias}) 在 (2, 4, 8) 输入上的结果",
                bias=from_input(bias),
            ),
            sd,
            x,
            3,
            False,
        )
    try:
        sub.new("MultiHeadAttention", 8, 10, 3)
    except StudentError as e:
        expect(
            e.type == "ValueError",
            Msg(
                "MultiHeadAttention(8, 10, 3) must raise ValueError, not {error}",
                "MultiHeadAttention(8, 10, 3) 必须抛出 ValueError，而不是 {error}",
                error=from_input(e.type or e.kind),
            ),
        )
    else:
        raise CheckFailure(
            Msg(
                "MultiHeadAttention(8, 10, 3) must raise ValueError: 10 is not divisible by 3 heads",
                "MultiHeadAttention(8, 10, 3) 必须抛出 ValueError：10 不能被 3 个头整除",
            )
        )


@check(points=3, title="MultiHeadAttention equals torch's", title_zh="MultiHeadAttention 与 torch 的结果一致")
def test_mha_matches_torch_multihead_attention(sub):
    f = fx()
    sd, x = _state(f, "eq"), f["xe"]
    for heads in (3, 4):
        for causal in (False, True):
            m = sub.new("MultiHeadAttention", 12, 12, heads, qkv_bias=True, causal=causal)
            m.load_state_dict(sd)
            out = _call(m, x)
            _expect_mha(
                out,
                _torch_mha(sd, x, heads, causal),
                Msg(
                    "MultiHeadAttention(12, 12, {heads}, causal={causal}) against "
                    "torch.nn.MultiheadAttention with the same weights",
                    "使用相同权重时 MultiHeadAttention(12, 12, {heads}, causal={causal}) 与 torch.nn.MultiheadAttention 的对比",
                    heads=from_input(heads),
                    causal=from_input(causal),
                ),
                sd,
                x,
                heads,
                causal,
            )


@check(points=2, hidden=True, title="split and merge are inverses", title_zh="拆分与合并互为逆运算")
def test_split_merge_invariants(sub):
    @settings(max_examples=15, derandomize=True, database=None, deadline=None)
    @given(st.integers(1, 3), st.integers(1, 6), st.integers(1, 4), st.integers(1, 5))
    def invariants(b, n, h, d):
        x = torch.arange(b * n * h * d, dtype=torch.float32).reshape(b, n, h * d)
        s = sub.split_heads(x, h)
        expect_tensor(
            s,
            _split(x, h),
            tol="exact",
            what=Msg(
                "split_heads of a {x_shape} tensor, {h} heads",
                "对 {x_shape} 的张量做 {h} 个头的 split_heads",
                x_shape=from_input((b, n, h * d)),
                h=from_input(h),
            ),
        )
        for i in range(h):
            expect_tensor(
                s[:, i],
                x[..., i * d : (i + 1) * d],
                tol="exact",
                what=Msg(
                    "head {i} must hold features {first}..{last} of every token",
                    "头 {i} 必须包含每个词元的第 {first}..{last} 个特征",
                    i=from_input(i),
                    first=from_input(i * d),
                    last=from_input((i + 1) * d - 1),
                ),
            )
        expect_tensor(
            _call(sub.merge_heads, s),
            x,
            tol="exact",
            what=Msg("merge_heads(split_heads(x)) must give x back", "merge_heads(split_heads(x)) 必须还原出 x"),
        )

    invariants()


@check(points=2, hidden=True, title="per-head attention of other shapes", title_zh="其他形状的逐头注意力")
def test_head_attention_fresh(sub):
    f = fx()
    q, k, v = f["hq"], f["hk"], f["hv"]
    for causal in (False, True):
        w, ctx = _pair(
            sub.head_attention(q, k, v, causal=causal),
            code("head_attention(causal={causal})", causal=from_input(causal)),
        )
        expect_tensor(
            w,
            f[f"h_weights_{causal}"],
            tol="attention",
            what=Msg(
                "weights, {shape}, causal={causal}",
                "权重，{shape}，causal={causal}",
                shape=from_input(tuple(f[f"h_weights_{causal}"].shape)),
                causal=from_input(causal),
            ),
            mistakes=_attention_mistakes(q, k, v, causal),
        )
        expect_tensor(
            ctx,
            f[f"h_context_{causal}"],
            tol="attention",
            what=Msg(
                "context, {shape}, causal={causal}",
                "上下文，{shape}，causal={causal}",
                shape=from_input(tuple(f[f"h_context_{causal}"].shape)),
                causal=from_input(causal),
            ),
        )


@check(
    points=2,
    hidden=True,
    title="MultiHeadAttention with other shapes and bias",
    title_zh="其他形状和偏置下的 MultiHeadAttention",
)
def test_mha_fresh_shapes_and_bias(sub):
    f = fx()
    x = f["xm"]
    d_in, d_out, h = 8, 12, 3
    for bias in (0, 1):
        sd = _state(f, f"mha{bias}")
        for causal in (False, True):
            m = sub.new("MultiHeadAttention", d_in, d_out, h, qkv_bias=bool(bias), causal=causal)
            m.load_state_dict(sd)
            _expect_mha(
                _call(m, x),
                f[f"mha{bias}_y_{causal}"],
                Msg(
                    "MultiHeadAttention({d_in}, {d_out}, {h}, qkv_bias={has_bias}, causal={causal}) on {x_shape}",
                    "MultiHeadAttention({d_in}, {d_out}, {h}, qkv_bias={has_bias}, causal={causal}) 在 {x_shape} 上的结果",
                    d_in=from_input(d_in),
                    d_out=from_input(d_out),
                    h=from_input(h),
                    has_bias=from_input(bool(bias)),
                    causal=from_input(causal),
                    x_shape=from_input(tuple(x.shape)),
                ),
                sd,
                x,
                h,
                causal,
            )


@check(
    points=2,
    hidden=True,
    title="MultiHeadAttention equals torch's on random sizes",
    title_zh="随机尺寸下 MultiHeadAttention 与 torch 一致",
)
def test_mha_matches_torch_random(sub):
    @settings(max_examples=10, derandomize=True, database=None, deadline=None)
    @given(
        st.integers(1, 3),
        st.integers(1, 7),
        st.sampled_from([1, 2, 3, 4]),
        st.integers(1, 4),
        st.booleans(),
        st.booleans(),
        st.integers(0, 2**16),
    )
    def matches(b, n, h, d, bias, causal, seed):
        g = torch.Generator().manual_seed(seed)
        sd = _weights(h * d, h * d, bias, g)
        x = torch.randn(b, n, h * d, generator=g)
        m = sub.new("MultiHeadAttention", h * d, h * d, h, qkv_bias=bias, causal=causal)
        m.load_state_dict(sd)
        _expect_mha(
            _call(m, x),
            _torch_mha(sd, x, h, causal),
            Msg(
                "MultiHeadAttention({d_model}, {d_model}, {h}, qkv_bias={bias}, causal={causal}) on "
                "{x_shape} against torch.nn.MultiheadAttention",
                "MultiHeadAttention({d_model}, {d_model}, {h}, qkv_bias={bias}, causal={causal}) 在 {x_shape} 上与 torch.nn.MultiheadAttention 的对比",
                d_model=from_input(h * d),
                h=from_input(h),
                bias=from_input(bias),
                causal=from_input(causal),
                x_shape=from_input((b, n, h * d)),
            ),
            sd,
            x,
            h,
            causal,
        )

    matches()


@check(
    points=1,
    hidden=True,
    title="causal MultiHeadAttention ignores the future",
    title_zh="因果 MultiHeadAttention 忽略未来",
)
def test_mha_causal_ignores_future(sub):
    f = fx()
    x = f["xm"].clone()
    m = sub.new("MultiHeadAttention", 8, 12, 3, qkv_bias=True, causal=True)
    m.load_state_dict(_state(f, "mha1"))
    before = _call(m, x)
    cut = 3
    x[:, cut:] = torch.randn(2, 2, 8, generator=torch.Generator().manual_seed(3)) * 5
    after = _call(m, x)
    kept, changed = from_input(f"0-{cut - 1}"), from_input(f"{cut}-{x.shape[1] - 1}")
    expect_tensor(
        after[:, :cut],
        before[:, :cut],
        tol="attention",
        what=Msg(
            "outputs of tokens {kept} after changing tokens {changed} (a causal model must not see the future)",
            "改变词元 {changed} 之后词元 {kept} 的输出（因果模型不应看到未来）",
            kept=kept,
            changed=changed,
        ),
    )
    expect(
        not torch.allclose(after[:, cut:], before[:, cut:]),
        Msg(
            "changing tokens {changed} must change their own outputs",
            "改变词元 {changed} 必须改变它们自己的输出",
            changed=changed,
        ),
    )
