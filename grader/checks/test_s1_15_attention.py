"""Checks of §1.15, attention in one function, against torch's scaled_dot_product_attention.

The reference here is torch.nn.functional.scaled_dot_product_attention (SDPA), run in the trusted
process; the fixtures are the solution's outputs, and make_fixtures refuses to store them unless
they equal SDPA's. A padding mask is True for the tokens to keep.
"""

import math

import torch
import torch.nn.functional as F
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from grader.checking import draws, grading
from grader.checking import CheckFailure, Mistake, Msg, check, code, expect, expect_tensor, fixtures, from_input
from grader.checking.tolerances import TOLERANCES
from grader.worker.proxy import StudentError

EXERCISE = "s1_15_attention"
INF = math.inf


def _keep(n_q, n_k, causal, padding_mask, q_dim):
    """Which keys each query may see (True), or None for all: written apart from the solution, since
    the public checks that use it ship in the student bundle."""
    allowed = torch.tril(torch.ones(n_q, n_k, dtype=torch.bool)) if causal else None
    if padding_mask is None:
        return allowed
    cols = padding_mask.reshape(*padding_mask.shape[:-1], *[1] * (q_dim - padding_mask.dim()), n_k)
    return cols if allowed is None else allowed & cols


def _one_mask_ignored(q, k, v, pad):
    """causal=True with a padding mask: one of the two masks left out."""
    return [
        Mistake(
            sdpa(q, k, v, causal=True),
            "the padding mask was ignored when the causal mask was on",
            "使用因果掩码时忽略了填充掩码",
        ),
        Mistake(
            sdpa(q, k, v, padding_mask=pad),
            "the causal mask was ignored when a padding mask was given",
            "给了 填充掩码时忽略了因果掩码",
        ),
    ]


def sdpa(q, k, v, causal=False, padding_mask=None):
    """The reference: SDPA with one boolean attn_mask (True = take part), as documented by torch."""
    keep = _keep(q.shape[-2], k.shape[-2], causal, padding_mask, q.dim())
    return F.scaled_dot_product_attention(q, k, v, attn_mask=keep)


def _inputs(g, *lead, n_q=6, n_k=6, d=8, d_v=5, dtype=torch.float32):
    return (
        torch.randn(*lead, n_q, d, generator=g, dtype=dtype),
        torch.randn(*lead, n_k, d, generator=g, dtype=dtype),
        torch.randn(*lead, n_k, d_v, generator=g, dtype=dtype),
    )


def make_fixtures(sol):
    g = torch.Generator().manual_seed(1515)
    out = {}
    q, k, v = _inputs(g, n_q=5, n_k=7, d=4, d_v=3)
    out.update(q=q, k=k, v=v, plain=sol.attention(q, k, v))
    cq, ck, cv = _inputs(g, 2)
    out.update(cq=cq, ck=ck, cv=cv, causal=sol.attention(cq, ck, cv, causal=True))
    pq, pk, pv = _inputs(g, 3, n_q=5, n_k=5)
    pad = torch.tensor([[True] * 5, [True, True, True, False, False], [True, False, False, False, False]])
    out.update(pq=pq, pk=pk, pv=pv, pad=pad, padded=sol.attention(pq, pk, pv, padding_mask=pad))
    hq, hk, hv = _inputs(g, 2, 3, n_q=6, n_k=6)
    hpad = torch.tensor([[True] * 6, [True, True, True, True, False, False]])
    out.update(hq=hq, hk=hk, hv=hv, hpad=hpad, heads=sol.attention(hq, hk, hv, causal=True, padding_mask=hpad))
    lpad = torch.tensor([[True] * 6, [False, False, True, True, True, True]])  # left padding: rows 0-1 see nothing
    out.update(lpad=lpad, left=sol.attention(hq[:, 0], hk[:, 0], hv[:, 0], causal=True, padding_mask=lpad))
    # The public example of a query that sees no key: one sentence of 3 tokens, the first one padding.
    nq, nk, nv = _inputs(torch.Generator().manual_seed(151), 1, n_q=3, n_k=3)
    npad = torch.tensor([[False, True, True]])
    out.update(nq=nq, nk=nk, nv=nv, npad=npad, nokey=sol.attention(nq, nk, nv, causal=True, padding_mask=npad))
    checks = [
        ("plain", (q, k, v), {}),
        ("causal", (cq, ck, cv), {"causal": True}),
        ("nokey", (nq, nk, nv), {"causal": True, "padding_mask": npad}),
        ("padded", (pq, pk, pv), {"padding_mask": pad}),
        ("heads", (hq, hk, hv), {"causal": True, "padding_mask": hpad}),
        ("left", (hq[:, 0], hk[:, 0], hv[:, 0]), {"causal": True, "padding_mask": lpad}),
    ]
    for name, args, kw in checks:
        diff = float((out[name] - sdpa(*args, **kw)).abs().max())
        assert diff < 1e-5, f"solution differs from scaled_dot_product_attention on {name}: {diff}"
    return out


def fx():
    return fixtures.load(EXERCISE)


def _mistakes(q, k, v, keep=None):
    d = q.shape[-1]
    s = q @ k.transpose(-2, -1)

    def run(scores, fill=-INF, dim=-1):
        if keep is not None:
            scores = scores.masked_fill(~keep, fill)
        return torch.softmax(scores, dim=dim) @ v

    out = [
        Mistake(run(s), "the scores were not scaled by sqrt(d_k)", "分数没有除以 sqrt(d_k)"),
        Mistake(run(s / d), "dividing by d_k instead of sqrt(d_k)", "除以了 d_k 而不是 sqrt(d_k)"),
    ]
    if keep is not None:
        out += [
            Mistake(
                run(s / math.sqrt(d), fill=0.0),
                "masked scores set to `0` instead of `-inf`",
                "被掩码的分数设成了 `0`，而不是 `-inf`",
            ),
            Mistake(torch.softmax(s / math.sqrt(d), -1) @ v, "the mask was ignored", "掩码被忽略了"),
        ]
    return out


@check(points=2, title="attention without a mask", title_zh="不带掩码的注意力")
def test_plain_matches_sdpa(sub):
    f = fx()
    out = sub.attention(f["q"], f["k"], f["v"])
    expect_tensor(
        out,
        f["plain"],
        tol="attention",
        what=Msg(
            "attention(q, k, v) with 5 queries, 7 keys, d_k = 4, d_v = 3 (no mask)",
            "5 个查询、7 个键、d_k = 4、d_v = 3 时的 attention(q, k, v)（无掩码）",
        ),
        mistakes=_mistakes(f["q"], f["k"], f["v"]),
    )


@check(points=2, title="attention with the causal mask", title_zh="带因果掩码的注意力")
def test_causal_matches_sdpa(sub):
    f = fx()
    q, k, v = f["cq"], f["ck"], f["cv"]
    out = sub.attention(q, k, v, causal=True)
    tril = torch.tril(torch.ones(6, 6, dtype=torch.bool))
    expect_tensor(
        out,
        f["causal"],
        tol="attention",
        what=Msg(
            "attention(q, k, v, causal=True) on a (2, 6, 8) batch",
            "在 (2, 6, 8) 批次上的 attention(q, k, v, causal=True)",
        ),
        mistakes=_mistakes(q, k, v, tril)
        + [
            Mistake(
                torch.softmax((q @ k.transpose(-2, -1) / math.sqrt(8)).masked_fill(tril.tril(-1), -INF), -1) @ v,
                "the upper triangle was kept instead of the lower one (torch.triu instead of torch.tril)",
                "保留了上三角而不是下三角（torch.triu 而不是 torch.tril）",
            ),
            Mistake(
                torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(8), -1) * tril @ v,
                "the mask was applied after softmax without renormalising",
                "在 softmax 之后才做掩码，且没有重新归一化",
            ),
        ],
    )


@check(points=2, title="attention with a padding mask", title_zh="带填充掩码的注意力")
def test_padding_mask_matches_sdpa(sub):
    f = fx()
    q, k, v, pad = f["pq"], f["pk"], f["pv"], f["pad"]
    out = sub.attention(q, k, v, padding_mask=pad)
    keep = pad[:, None, :]
    scaled = q @ k.transpose(-2, -1) / math.sqrt(8)
    inverted = torch.softmax(scaled.masked_fill(pad[:, None, :], -INF), -1) @ v
    on_queries = torch.softmax(scaled.masked_fill(~pad[:, :, None], -INF), -1) @ v
    expect_tensor(
        out,
        f["padded"],
        tol="attention",
        what=Msg(
            "attention(q, k, v, padding_mask=pad) on a (3, 5, 8) batch, pad of shape (3, 5), True = keep",
            "在 (3, 5, 8) 批次上的 attention(q, k, v, padding_mask=pad)，pad 的形状为 (3, 5)，True = 保留",
        ),
        mistakes=_mistakes(q, k, v, keep)
        + [
            Mistake(
                m,
                "the padding mask was read the wrong way round: True means keep (a real token), False means padding",
                "填充掩码的含义弄反了：True 表示保留（真实词元），False 表示填充",
            )
            for m in (inverted, inverted.nan_to_num(0.0))
        ]
        + [
            Mistake(
                m,
                "the padding mask was applied to the queries (rows) instead of the keys (columns)",
                "填充掩码作用在了查询（行）上，而不是键（列）上",
            )
            for m in (on_queries, on_queries.nan_to_num(0.0))
        ],
    )


@check(points=1, title="no dropout outside training", title_zh="不在训练时不做 dropout")
def test_dropout_ignored_when_not_training(sub):
    f = fx()
    out = sub.attention(f["cq"], f["ck"], f["cv"], causal=True, dropout_p=0.5, training=False)
    expect_tensor(
        out,
        f["causal"],
        tol="attention",
        what=Msg(
            "attention(..., causal=True, dropout_p=0.5, training=False) (no dropout outside training)",
            "attention(..., causal=True, dropout_p=0.5, training=False)（不在训练时不做 dropout）",
        ),
    )


DROPOUT_CALLS = 12  # calls per dropout check: the number dropped must vary across them as Binomial(n, p) does
DROPOUT_HINT = Msg(
    "dropout draws once for each weight, after the softmax: keep = torch.rand(weights.shape) >= "
    "dropout_p, a new draw on every call, in every row and head; then weights * keep / (1 - dropout_p)",
    "dropout 在 softmax 之后对每个权重独立抽样一次：keep = torch.rand(weights.shape) >= dropout_p，"
    "每次调用、每一行、每个头都重新抽样；然后 weights * keep / (1 - dropout_p)",
)


def dropout_findings(outs, weights, p: float) -> list:
    """What in the outputs of attention(q, k, I, ..., training=True) breaks "each weight a query
    may see (weights > 0) dropped independently with probability p". With V = I each output is
    the weights after dropout, so the dropped weights are the zeros where `weights` > 0."""
    eligible = weights > 0
    return draws.heads_findings([((o == 0) & eligible, eligible) for o in outs], p)


def _survivor_mistakes(w, p) -> list:
    """The survivors not rescaled, or multiplied by `1 - p`."""
    return [
        Mistake(
            w,
            "the kept weights were not rescaled by `1 / (1 - p)`: inverted dropout "
            "divides the survivors by `1 - p`, so that each weight keeps its expected "
            "value",
            "保留的权重没有乘以 `1 / (1 - p)`：倒置 dropout 要把保留下来的权重除以 `1 - p`，使每个权重的期望值不变",
        ),
        Mistake(
            w * (1 - p),
            "the kept weights were multiplied by `1 - p`; divide them by `1 - p` instead",
            "保留的权重乘了 `1 - p`，应当除以 `1 - p`",
        ),
    ]


def expect_dropout(outs, weights, p: float, what: Msg):
    """The outputs of attention(q, k, I, ..., dropout_p=p, training=True): each visible weight
    dropped (0) or divided by 1 - p, nothing given to a hidden position, and the dropped ones
    drawn by the rule (dropout_findings)."""
    shape = tuple(weights.shape)
    for out in outs:
        expect(
            isinstance(out, torch.Tensor) and tuple(out.shape) == shape and bool(torch.isfinite(out).all()),
            Msg(
                "{what} must return a tensor of shape {shape}, without NaN",
                "{what} 必须返回形状为 {shape}、不含 NaN 的张量",
                what=what,
                shape=from_input(str(shape)),
            ),
        )
    visible = weights > 0
    for out in outs:
        expect(
            bool((out[~visible] == 0).all()),
            Msg(
                "{what}: dropout gave weight to a position the masks hide: drop only after the masked softmax, "
                "and never raise a `0`",
                "{what}：dropout 给被掩码隐藏的位置分配了权重：只在带掩码的 softmax 之后做 dropout，`0` 不能变成非零",
                what=what,
            ),
        )
    stacked = torch.stack(outs)
    dropped = (stacked == 0) & visible
    expect(
        bool(dropped.any()),
        Msg(
            "{what}: over {n} calls no attention weight was dropped. With `training=True` and `dropout_p > 0` each "
            "weight is dropped (set to `0`) with probability dropout_p after the softmax; only with `training=False` "
            "is nothing dropped",
            "{what}：在 {n} 次调用中没有任何注意力权重被丢弃。`training=True` 且 `dropout_p > 0` 时，"
            "每个权重在 softmax 之后以概率 dropout_p 被丢弃（置为 `0`）；只有 `training=False` 时才什么都不丢弃",
            what=what,
            n=from_input(len(outs)),
        ),
    )
    kept = (stacked != 0) & visible
    w = weights.expand_as(stacked)
    expect_tensor(
        stacked[kept],
        w[kept] / (1 - p),
        tol="attention",
        what=Msg(
            "{what}: the attention weights that survive dropout (`weight / (1 - p)`)",
            "{what}：dropout 之后保留下来的注意力权重（`weight / (1 - p)`）",
            what=what,
        ),
        mistakes=_survivor_mistakes(w[kept], p),
    )
    draws.expect_drawn(
        dropout_findings(outs, weights, p),
        Msg("{what}, {n} calls in a row", "{what}，连续调用 {n} 次", what=what, n=from_input(len(outs))),
        Msg("dropped", "丢弃"),
        DROPOUT_HINT,
    )


# The book's sizes (listing 1.36: dim 256 in 4 heads of 64, sequences of 128 tokens), so that a
# rule keyed on size meets the real ones: fewer calls there, the statistics pool them. The public
# check reads 128 tokens, the hidden one 256.
BIG_B, BIG_H, BIG_T, BIG_DH, BIG_CALLS = 1, 4, 128, 64, 4


def books_size_inputs(seed: int, padded: bool, t: int = BIG_T):
    """q, k, padding mask (or None; the last fifth of the tokens hidden), V = I for attention
    weights at the book's sizes: (BIG_B, BIG_H, t, t)."""
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(BIG_B, BIG_H, t, BIG_DH, generator=g) for _ in range(2))
    pad = None
    if padded:
        pad = torch.ones(BIG_B, t, dtype=torch.bool)
        pad[0, t - t // 5 :] = False
    return q, k, pad, torch.eye(t).expand(BIG_B, BIG_H, t, t).contiguous()


def expect_dropout_at_the_books_size(sub, seed: int, padded: bool, t: int = BIG_T, calls: int = BIG_CALLS):
    """attention on (batch 1, heads 4, t, t) weights (head dim 64), V = I, `calls` calls,
    causal and, with padded, a padding mask: the same reading as at the small sizes."""
    p = 0.4
    q, k, pad, eye = books_size_inputs(seed, padded, t)
    sub.seed(seed)
    outs = [sub.attention(q, k, eye, causal=True, padding_mask=pad, dropout_p=p, training=True) for _ in range(calls)]
    expect_dropout(
        outs,
        sdpa(q, k, eye, causal=True, padding_mask=pad),
        p,
        Msg(
            "attention on (batch {b}, heads {h}, {t}, {t}) weights, head dim {d} (the book's sizes), with "
            "causal={causal}, {pad}, dropout_p={p}, training={training}",
            "在 (batch {b}, heads {h}, {t}, {t}) 的权重上（头维度 {d}，书中的规模）调用 attention（causal={causal}、{pad}、"
            "dropout_p={p}、training={training}）",
            b=from_input(BIG_B),
            h=from_input(BIG_H),
            t=from_input(t),
            d=from_input(BIG_DH),
            causal=from_input(True),
            p=from_input(p),
            training=from_input(True),
            pad=from_input(Msg("a padding mask", "填充掩码") if padded else Msg("no padding mask", "无填充掩码")),
        ),
    )


# The course's training configuration (`kata train`: 4 heads of 64, max_len 256, batch 32, padded
# sequences, no causal mask in BERT's encoder): a rule honest at the sizes above and keyed on the
# batch, the number of keys or the dtype (batch elements past 0 with 128+ keys, float64 or
# bfloat16) meets it here. With V = I a call returns (batch, 4, 256, 256) weights, 8.4M elements
# at batch 32: few calls, and only sums are read (the rate, draws.region_findings: every index of
# every axis drawn at rate p) and the survivors' scale; the pair and triple statistics stay at the
# sizes above.
TRAIN_P, TRAIN_H, TRAIN_T, TRAIN_DH = 0.1, 4, 256, 64
TRAIN_AXES = [Msg("sequence", "序列"), Msg("head", "头"), Msg("query", "查询"), Msg("key", "键")]
# a kept weight over the reference's: 1 / (1 - p) within this, each and on average (bf16: 8 bits of
# mantissa in the scores, the softmax and the product; an honest bf16 attention is off by up to ~5%)
# bfloat16 holds 0.9 as 0.8984375: an honest rule forming 1 - p in the weights' dtype
# (torch.bernoulli(torch.full_like(weights, 1 - p))) drops 0.1016. p = 1/8 and 7/8 are exact.
BF16_P = 0.125
SCALE_TOL = {torch.float32: (1e-3, 1e-4), torch.float64: (1e-9, 1e-10), torch.bfloat16: (0.15, 0.02)}


def training_inputs(seed: int, batch: int, dtype=torch.float32, padded: bool = True):
    """q, k (batch, 4, 256, 64), a padding mask (every other sequence padded from a drawn length on;
    with padded False, every token real), V = I, in `dtype`."""
    g = torch.Generator().manual_seed(seed)
    q, k = (torch.randn(batch, TRAIN_H, TRAIN_T, TRAIN_DH, generator=g).to(dtype) for _ in range(2))
    lengths = torch.randint(TRAIN_T // 4, TRAIN_T, (batch,), generator=g)
    pad = torch.arange(TRAIN_T) < lengths[:, None]
    pad[0::2] = True
    if not padded:
        pad[:] = True
    return q, k, pad, torch.eye(TRAIN_T, dtype=dtype).expand(batch, TRAIN_H, TRAIN_T, TRAIN_T)


def expect_dropout_at_training_size(
    sub, seed: int, batch: int, calls: int, dtype=torch.float32, p: float = TRAIN_P, padded: bool = True
):
    """attention(q, k, I, padding_mask=pad, dropout_p=p, training=True) at the training size,
    `calls` calls: every visible weight dropped (0) or divided by 1 - p, hidden ones 0, the dropped
    ones at rate p over all and at every index of every axis."""
    q, k, pad, eye = training_inputs(seed, batch, dtype, padded)
    visible = pad[:, None, None, :].expand(batch, TRAIN_H, TRAIN_T, TRAIN_T)
    # the reference weights (what sdpa returns with V = I), in float64 from the same q and k
    ref = torch.softmax(
        (q.double() @ k.double().transpose(-2, -1) / math.sqrt(TRAIN_DH)).masked_fill(~visible, -INF), -1
    )
    what = Msg(
        "attention on (batch {b}, heads {h}, {t}, {t}) weights, head dim {d}, {dtype}, {pad}, "
        "dropout_p={p}, training={training}, at the course's training size (q, k and v require grad{amp})",
        "在 (batch {b}, heads {h}, {t}, {t}) 的权重上（头维度 {d}，{dtype}）调用 attention（{pad}、dropout_p={p}、"
        "training={training}；课程训练时的规模；q、k、v 需要梯度{amp}）",
        b=from_input(batch),
        h=from_input(TRAIN_H),
        t=from_input(TRAIN_T),
        pad=from_input(Msg("with a padding mask", "填充掩码") if padded else Msg("no padding mask", "无填充掩码")),
        d=from_input(TRAIN_DH),
        p=from_input(p),
        training=from_input(True),
        dtype=from_input(str(dtype)),
        amp=Msg(", under {dt} autocast", "，在 {dt} 自动混合精度（autocast）下", dt=from_input("bf16"))
        if dtype == torch.bfloat16
        else "",
    )
    each, mean = SCALE_TOL[dtype]
    sub.seed(seed)
    drawn = []
    fn = sub.get("attention")
    for _ in range(calls):  # as in a model being trained: q, k, v require grad; bf16 under autocast
        out = sub.in_training(
            fn,
            q,
            k,
            eye.contiguous(),
            padding_mask=pad if padded else None,
            dropout_p=p,
            training=True,
            bf16_autocast=dtype == torch.bfloat16,
            label=code("attention"),
        )
        expect(
            isinstance(out, torch.Tensor)
            and tuple(out.shape) == tuple(eye.shape)
            and out.is_floating_point()
            and bool(torch.isfinite(out).all()),
            Msg(
                "{what} must return a floating tensor of shape {shape}, without NaN",
                "{what} 必须返回形状为 {shape}、不含 NaN 的浮点张量",
                what=what,
                shape=from_input(str(tuple(eye.shape))),
            ),
        )
        out = out.double()
        expect(
            not bool(((out != 0) & ~visible).any()),
            Msg(
                "{what}: dropout gave weight to a padded key: drop only after the masked softmax, and never raise a `0`",
                "{what}：dropout 给填充的键分配了权重：只在带掩码的 softmax 之后做 dropout，`0` 不能变成非零",
                what=what,
            ),
        )
        dropped = (out == 0) & visible
        kept = ~dropped & visible
        # each survivor over its weight, computed over the whole tensor and read where kept (a gather of
        # 8M elements costs half a second)
        ratio = out / ref * (1 - p)
        n_kept = draws.ones(kept)
        if not (
            n_kept
            and float(torch.where(kept, ratio - 1, 0.0).abs().max()) <= each
            and abs(float(torch.where(kept, ratio, 0.0).sum()) / n_kept - 1) <= mean
        ):
            r = float(ratio[kept].median()) if n_kept else 1.0
            hint = (
                Msg(
                    "they were not rescaled: inverted dropout divides the survivors by `1 - p`",
                    "它们没有放大：倒置 dropout 要把保留下来的权重除以 `1 - p`",
                )
                if abs(r - (1 - p)) < 0.03
                else Msg(
                    "they were multiplied by `1 - p`; divide them by `1 - p` instead",
                    "它们乘了 `1 - p`，应当除以 `1 - p`",
                )
                if abs(r - (1 - p) ** 2) < 0.03
                else Msg(
                    "in every dtype each visible weight is dropped (`0`) or kept and divided by `1 - p`",
                    "在任何数据类型下，每个可见的权重要么被丢弃（`0`），要么保留并除以 `1 - p`",
                )
            )
            raise CheckFailure(
                Msg(
                    "{what}: the weights that survive dropout must be `weight / (1 - p)`: {hint}",
                    "{what}：dropout 之后保留下来的权重必须是 `weight / (1 - p)`：{hint}",
                    what=what,
                    hint=hint,
                ),
                mistake=Msg(
                    "survivors not `weight / (1 - p)` at the training size",
                    "在训练规模下保留的权重不是 `weight / (1 - p)`",
                ),
            )
        drawn.append(dropped)
    n = calls * draws.ones(visible)
    got = sum(draws.ones(d) for d in drawn)
    found = []
    if abs(got - n * p) > draws.Z * math.sqrt(n * p * (1 - p)):
        found = [draws.Finding("rate", got / n, p, {"n": n})]
    else:
        found = draws.region_findings([(d, visible) for d in drawn], p, TRAIN_AXES)
    draws.expect_drawn(
        found,
        Msg("{what}, {n} call(s) in a row", "{what}，连续调用 {n} 次", what=what, n=from_input(calls)),
        Msg("dropped", "丢弃"),
        DROPOUT_HINT,
    )


TOL = TOLERANCES["attention"]


def pads_like_sdpa(sub) -> bool:
    """Whether attention with a padding mask, no dropout, gives sdpa's output on the padding check's
    batch. A padding mistake is that public check's to show: the dropout check reads at the training
    size with a padding mask only when the mask is right, so the mistake does not also cost the
    dropout point in the grade, where `kata check` (which skips those reads) said it passed."""
    f = fx()
    try:
        out = sub.attention(f["pq"], f["pk"], f["pv"], padding_mask=f["pad"])
    except StudentError:
        return False
    return (
        isinstance(out, torch.Tensor)
        and tuple(out.shape) == tuple(f["padded"].shape)
        and bool(torch.allclose(out.double(), f["padded"].double(), rtol=TOL.rtol, atol=TOL.atol))
    )


def expect_dropout_in_training(sub, seed: int):
    """float32 at batch 32, then float64 and bfloat16 (p = 1/8) at batch 4: one call each (8.4M
    weights at batch 32: the region's statistics need no more, and the grading budget is shared)."""
    padded = pads_like_sdpa(sub)
    expect_dropout_at_training_size(sub, seed, 32, 1, padded=padded)
    expect_dropout_at_training_size(sub, seed + 1, 4, 1, torch.float64, padded=padded)
    expect_dropout_at_training_size(sub, seed + 2, 4, 1, torch.bfloat16, p=BF16_P, padded=padded)


@check(points=1, title="dropout on the attention weights in training", title_zh="训练时对注意力权重做 dropout")
def test_dropout_on_the_weights(sub):
    g = torch.Generator().manual_seed(1516)
    p = 0.4
    q, k = torch.randn(64, 8, 4, generator=g), torch.randn(64, 8, 4, generator=g)
    eye = torch.eye(8).expand(64, 8, 8).contiguous()  # with V = I the output is the weights themselves
    sub.seed(9)
    outs = [sub.attention(q, k, eye, causal=True, dropout_p=p, training=True) for _ in range(DROPOUT_CALLS)]
    expect_dropout(
        outs,
        sdpa(q, k, eye, causal=True),
        p,
        code("attention(q, k, torch.eye(8), causal=True, dropout_p=0.4, training=True)"),
    )
    if grading():  # not in `kata check`: seconds of reads that only a rule keyed on the size fails
        expect_dropout_at_the_books_size(sub, 1517, padded=False)
        expect_dropout_in_training(sub, 1518)


@check(
    points=2,
    hidden=True,
    title="heads with causal and padding masks together",
    title_zh="多头同时使用因果掩码和填充掩码",
)
def test_heads_causal_and_padding(sub):
    f = fx()
    q, k, v, pad = f["hq"], f["hk"], f["hv"], f["hpad"]
    out = sub.attention(q, k, v, causal=True, padding_mask=pad)
    keep = _keep(6, 6, True, pad, 4)
    expect_tensor(
        out,
        f["heads"],
        tol="attention",
        what=Msg(
            "attention on q of shape {q_shape} (batch, heads, tokens, d_k), causal={causal}, with a padding mask "
            "of shape {pad_shape}",
            "在形状为 {q_shape}（batch、heads、词元、d_k）的 q 上、causal={causal}、带形状为 {pad_shape} 的填充掩码的 attention",
            q_shape=from_input(tuple(q.shape)),
            causal=from_input(True),
            pad_shape=from_input(tuple(pad.shape)),
        ),
        mistakes=_mistakes(q, k, v, keep) + _one_mask_ignored(q, k, v, pad),
    )


@check(points=1, title="a query that sees no key: zeros, not NaN", title_zh="看不到任何键的查询：得到零，而不是 NaN")
def test_query_that_sees_no_key(sub):
    f = fx()
    out = sub.attention(f["nq"], f["nk"], f["nv"], causal=True, padding_mask=f["npad"])
    what = Msg(
        "attention(q, k, v, causal=True, padding_mask=[[False, True, True]]) on a (1, 3, 8) batch: query 0 "
        "may see only key 0, which is padding",
        "在 (1, 3, 8) 批次上的 attention(q, k, v, causal=True, padding_mask=[[False, True, True]])："
        "查询 0 只能看到键 0，而它是填充",
    )
    if isinstance(out, torch.Tensor) and bool(torch.isnan(out).any()):
        raise CheckFailure(
            Msg(
                "{what}: NaN. Softmax of a row that is all -inf is NaN (0 / 0); give such a row "
                "all-zero weights (weights.masked_fill(~keep, 0.0) after the softmax), as "
                "scaled_dot_product_attention does",
                "{what}：得到 NaN。全是 -inf 的一行做 softmax 得到 NaN（0 / 0）；应像 "
                "scaled_dot_product_attention 那样给这样的行全零权重（softmax 之后 "
                "weights.masked_fill(~keep, 0.0)）",
                what=what,
            ),
            mistake=Msg(
                "a query that sees no key gave NaN: its row of -inf was not zeroed after the softmax",
                "看不到任何键的查询得到了 NaN：softmax 之后没有把全是 -inf 的那一行置零",
            ),
        )
    expect_tensor(
        out, f["nokey"], tol="attention", what=what, mistakes=_one_mask_ignored(f["nq"], f["nk"], f["nv"], f["npad"])
    )


@check(
    points=1,
    hidden=True,
    title="a query that sees no key gets zero weights, not NaN",
    title_zh="看不到任何键的查询得到全零权重，而不是 NaN",
)
def test_fully_masked_rows_are_zero(sub):
    f = fx()
    q, k, v, pad = f["hq"][:, 0], f["hk"][:, 0], f["hv"][:, 0], f["lpad"]
    out = sub.attention(q, k, v, causal=True, padding_mask=pad)
    shape = (*q.shape[:-1], v.shape[-1])
    expect(
        isinstance(out, torch.Tensor) and tuple(out.shape) == shape,
        Msg(
            "attention on a {q_shape} batch with d_v {d_v} must return a {shape} tensor",
            "在 {q_shape} 批次上 d_v 为 {d_v} 的 attention 必须返回 {shape} 的张量",
            q_shape=from_input(tuple(q.shape)),
            d_v=from_input(v.shape[-1]),
            shape=from_input(shape),
        ),
    )
    expect(
        not bool(torch.isnan(out).any()),
        Msg(
            "a query that may attend to no key (causal mask and left padding) gave NaN: softmax of a row of -inf "
            "is NaN; give such rows all-zero weights, as scaled_dot_product_attention does",
            "一个不能关注任何键的查询（因果掩码加左侧填充）得到了 NaN：全是 -inf 的一行做 softmax 得到 NaN；应像 scaled_dot_product_attention 那样给这样的行全零权重",
        ),
    )
    expect_tensor(
        out,
        f["left"],
        tol="attention",
        what=Msg(
            "attention with left padding, causal={causal}: the first queries of a left-padded sentence see no key",
            "attention（左侧填充，causal={causal}）：左侧填充的句子里最前面的查询看不到任何键",
            causal=from_input(True),
        ),
    )


@check(
    points=1, hidden=True, title="dropout on the attention weights in training", title_zh="训练时对注意力权重做 dropout"
)
def test_dropout_in_training(sub):
    """Heads and padding: (batch 16, heads 4, 8, 8) weights under a causal and a padding mask, 12
    calls; only the weights a query may see are drawn, and the heads draw apart."""
    g = torch.Generator().manual_seed(31)
    p = 0.4
    q, k = torch.randn(16, 4, 8, 4, generator=g), torch.randn(16, 4, 8, 4, generator=g)
    pad = torch.ones(16, 8, dtype=torch.bool)
    pad[8:, 5:] = False
    eye = torch.eye(8).expand(16, 4, 8, 8).contiguous()
    sub.seed(8)
    outs = [
        sub.attention(q, k, eye, causal=True, padding_mask=pad, dropout_p=p, training=True)
        for _ in range(DROPOUT_CALLS)
    ]
    expect_dropout(
        outs,
        sdpa(q, k, eye, causal=True, padding_mask=pad),
        p,
        Msg(
            "attention on (batch {b}, heads {h}, {t}, {t}) with causal={causal}, a padding mask, dropout_p={p}, "
            "training={training}",
            "在 (batch {b}, heads {h}, {t}, {t}) 上调用 attention（causal={causal}、填充掩码、dropout_p={p}、"
            "training={training}）",
            b=from_input(eye.shape[0]),
            h=from_input(eye.shape[1]),
            t=from_input(eye.shape[-1]),
            causal=from_input(True),
            p=from_input(p),
            training=from_input(True),
        ),
    )
    expect_dropout_at_the_books_size(sub, 32, padded=True, t=2 * BIG_T, calls=BIG_CALLS // 2)
    expect_dropout_in_training(sub, 33)


@check(points=2, hidden=True, title="random shapes and masks", title_zh="随机的形状和掩码")
def test_random_shapes_match_sdpa(sub):
    @settings(
        max_examples=20, derandomize=True, database=None, deadline=None, phases=(Phase.explicit, Phase.generate)
    )  # no shrinking: a wrong answer fails fast
    @given(
        st.lists(st.integers(1, 3), min_size=0, max_size=2),
        st.integers(1, 6),
        st.integers(1, 6),
        st.integers(1, 8),
        st.integers(1, 5),
        st.booleans(),
        st.booleans(),
        st.integers(0, 2**31 - 1),
    )
    def matches(lead, n_q, n_k, d, d_v, causal, padded, seed):
        g = torch.Generator().manual_seed(seed)
        if causal:
            n_k = n_q
        q, k, v = _inputs(g, *lead, n_q=n_q, n_k=n_k, d=d, d_v=d_v, dtype=torch.float64)
        pad = None
        if padded:
            pad = torch.rand(*lead[:1], n_k, generator=g) < 0.75
            pad[..., 0] = True
        kwargs = {"causal": causal} if causal else {}
        if pad is not None:
            kwargs["padding_mask"] = pad
        out = sub.attention(q, k, v, **kwargs)
        expected = sdpa(q, k, v, causal=causal, padding_mask=pad)
        expect_tensor(
            out,
            expected,
            tol="attention",
            what=Msg(
                "attention on q {q_shape}, k {k_shape}, v {v_shape}, causal={causal}, padding mask {pad_shape}",
                "在 q {q_shape}、k {k_shape}、v {v_shape}、causal={causal}、填充掩码 {pad_shape} 上的 attention",
                q_shape=from_input(tuple(q.shape)),
                k_shape=from_input(tuple(k.shape)),
                v_shape=from_input(tuple(v.shape)),
                causal=from_input(causal),
                pad_shape=from_input(None if pad is None else tuple(pad.shape)),
            ),
            mistakes=_mistakes(q, k, v, _keep(n_q, n_k, causal, pad, q.dim())),
        )

    matches()
