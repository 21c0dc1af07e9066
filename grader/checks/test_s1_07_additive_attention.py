"""Checks of §1.7-1.8, Bahdanau (additive) attention and cross- vs self-attention shapes."""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checking import (
    Mistake,
    Msg,
    check,
    code,
    expect,
    expect_equal,
    expect_tensor,
    fixtures,
    from_input,
    tolerances,
)

EXERCISE = "s1_07_additive_attention"

# §1.7, "I will eat" -> "Je vais manger": the kata's own numbers for the book's example (the book
# prints none). Encoder states h1, h2, h3 (d_h = 4), attention size d_a = 3, decoder states d_s = 3.
# W_h lifts feature j of h_j by 2; each decoder state puts the tanh of one feature at its steepest
# (-1 -> +1) and saturates the others, so one source word gets nearly all the weight.
SOURCE = ["I", "will", "eat"]
TARGET = ["Je", "vais", "manger"]
EXAMPLE_H = [[1.0, 0.0, 0.0, 1.0], [0.0, 1.0, 0.0, 1.0], [0.0, 0.0, 1.0, 1.0]]
EXAMPLE_W_S = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]
EXAMPLE_W_H = [[2.0, 0.0, 0.0, 0.0], [0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0]]
EXAMPLE_V = [3.0, 3.0, 3.0]
EXAMPLE_S = [[-1.0, 3.0, 3.0], [3.0, -1.0, 3.0], [3.0, 3.0, -1.0]]  # decoder state before Je, vais, manger

# §1.8: self-attention over the book's sentence; cross-attention from a French translation to it.
ENGLISH = ["The", "next", "day", "is", "bright"]
FRENCH = ["Le", "lendemain", "est", "radieux"]


def example():
    """(H, W_s, W_h, v, S) of the "I will eat" example as float32 tensors."""
    return tuple(torch.tensor(x) for x in (EXAMPLE_H, EXAMPLE_W_S, EXAMPLE_W_H, EXAMPLE_V, EXAMPLE_S))


def _random_problem(g, batch=None, T=9, d_s=5, d_h=6, d_a=7):
    lead = () if batch is None else (batch,)
    return {
        "s": torch.randn(*lead, d_s, generator=g),
        "H": torch.randn(*lead, T, d_h, generator=g),
        "W_s": torch.randn(d_a, d_s, generator=g),
        "W_h": torch.randn(d_a, d_h, generator=g),
        "v": torch.randn(d_a, generator=g),
    }


def make_fixtures(sol):
    H, W_s, W_h, v, S = example()
    out = {}
    for t in range(3):
        out[f"ex_scores{t}"] = sol.additive_scores(S[t], H, W_s, W_h, v)
        out[f"ex_context{t}"], out[f"ex_weights{t}"] = sol.additive_attention(S[t], H, W_s, W_h, v)
    g = torch.Generator().manual_seed(7)
    for name, batch in (("one", None), ("batch", 4)):
        p = _random_problem(g, batch)
        out.update({f"{name}_{k}": x for k, x in p.items()})
        out[f"{name}_scores"] = sol.additive_scores(p["s"], p["H"], p["W_s"], p["W_h"], p["v"])
        out[f"{name}_context"], out[f"{name}_weights"] = sol.additive_attention(
            p["s"], p["H"], p["W_s"], p["W_h"], p["v"]
        )
    return out


def fx():
    return fixtures.load(EXERCISE)


def _args(f, name):
    return tuple(f[f"{name}_{k}"] for k in ("s", "H", "W_s", "W_h", "v"))


def _score_mistakes(s, H, W_s, W_h, v):
    ps = (s @ W_s.T).unsqueeze(-2)
    ph = H @ W_h.T
    return [
        Mistake(
            (ps + ph) @ v,
            "tanh is missing: without it v^T W_s s adds the same number to every score, so the "
            "decoder state could not move the attention",
            "缺少 tanh：没有它，v^T W_s s 给每个分数加同一个数，解码器状态就无法改变注意力",
        ),
        Mistake(
            torch.tanh(ph) @ v,
            "the decoder state s was left out: score = `v^T tanh(W_s s + W_h h_j)`",
            "漏掉了解码器状态 s：分数 = `v^T tanh(W_s s + W_h h_j)`",
        ),
        Mistake(torch.tanh(ps.expand_as(ph)) @ v, "the encoder states h_j were left out", "漏掉了编码器状态 h_j"),
    ]


def _attention_mistakes(s, H, W_s, W_h, v):
    scores = torch.tanh((s @ W_s.T).unsqueeze(-2) + H @ W_h.T) @ v
    return {
        "weights": [
            Mistake(
                scores,
                "the raw scores were returned: softmax turns them into weights that sum to `1`",
                "返回了原始分数：softmax 才把它们变成和为 `1` 的权重",
            )
        ]
        + [Mistake(torch.softmax(m.value, dim=-1), m.en, m.zh) for m in _score_mistakes(s, H, W_s, W_h, v)],
        "context": [
            Mistake(
                (scores.unsqueeze(-1) * H).sum(-2),
                "the context used the scores, not the softmax weights",
                "上下文向量用了分数而不是 softmax 之后的权重",
            ),
            Mistake(
                H.mean(-2),
                "the context is a plain mean: weight each h_j by its attention weight",
                "上下文向量是简单平均：应当用注意力权重给每个 h_j 加权",
            ),
        ],
    }


@check(
    points=3,
    listings=["1.7/bahdanau"],
    title="figures 1.36-1.37: attention over 'I will eat'",
    title_zh="图 1.36-1.37：对 'I will eat' 的注意力",
)
def test_i_will_eat(sub):
    f = fx()
    H, W_s, W_h, v, S = example()
    for t, word in enumerate(TARGET):
        scores = sub.additive_scores(S[t], H, W_s, W_h, v)
        expect_tensor(
            scores,
            f[f"ex_scores{t}"],
            tol="attention",
            what=Msg("scores before writing {word!r}", "写出 {word!r} 之前的分数", word=from_input(word)),
            mistakes=_score_mistakes(S[t], H, W_s, W_h, v),
        )
        m = _attention_mistakes(S[t], H, W_s, W_h, v)
        context, weights = _pair(sub.additive_attention(S[t], H, W_s, W_h, v), code("additive_attention"))
        expect_tensor(
            weights,
            f[f"ex_weights{t}"],
            tol="attention",
            what=Msg(
                "attention weights before writing {word!r}", "写出 {word!r} 之前的注意力权重", word=from_input(word)
            ),
            mistakes=m["weights"],
        )
        expect_tensor(
            weights.sum(),
            torch.tensor(1.0),
            tol="softmax",
            what=Msg("the sum of the attention weights", "注意力权重之和"),
        )
        expect(
            float(weights[t]) > 0.97,
            Msg(
                "before writing {word!r} the decoder must attend almost only to {source_word!r} (h{j}), weight 0.9794",
                "写出 {word!r} 之前，解码器必须几乎只关注 {source_word!r}（h{j}），权重为 0.9794",
                word=from_input(word),
                source_word=from_input(SOURCE[t]),
                j=from_input(t + 1),
            ),
        )
        expect_tensor(
            context,
            f[f"ex_context{t}"],
            tol="attention",
            what=Msg("context vector before writing {word!r}", "写出 {word!r} 之前的上下文向量", word=from_input(word)),
            mistakes=m["context"],
        )
    # The same steps as a batch of two sentences (the decoder before 'Je' and before 'vais', each over
    # "I will eat"): the softmax runs over the encoder states of each sentence, never over the batch.
    # (All three steps would not tell: their scores form a symmetric matrix.)
    batch = (S[:2], H.expand(2, *H.shape), W_s, W_h, v)
    context, weights = _pair(sub.additive_attention(*batch), code("additive_attention"))
    expect_tensor(
        weights,
        torch.stack([f["ex_weights0"], f["ex_weights1"]]),
        tol="attention",
        what=Msg(
            "attention weights of a batch of 2 (the steps before 'Je' and 'vais', each over 'I will "
            "eat'): decoder states (2, 3), encoder states (2, 3, 4)",
            "大小为 2 的批次的注意力权重（写出 'Je' 和 'vais' 之前的两步，各自对 'I will eat'）：解码器状态 "
            "(2, 3)，编码器状态 (2, 3, 4)",
        ),
        mistakes=_batch_mistakes(torch.stack([f["ex_scores0"], f["ex_scores1"]])),
    )
    expect_tensor(
        context,
        torch.stack([f["ex_context0"], f["ex_context1"]]),
        tol="attention",
        what=Msg("context vectors of that batch of 2", "这个大小为 2 的批次的上下文向量"),
    )


def _batch_mistakes(scores):
    return [
        Mistake(
            torch.softmax(scores, dim=0),
            "softmax over the batch instead of over the encoder states (`dim=-1`)",
            "在批次维而不是编码器状态维 (`dim=-1`) 上做了 softmax",
        )
    ]


def _pair(out, what):
    expect(
        isinstance(out, (tuple, list)) and len(out) == 2,
        Msg(
            "{what} must return a pair (context, weights), not {out_type}",
            "{what} 必须返回一对值 (context, weights)，而不是 {out_type}",
            what=what,
            out_type=from_input(type(out).__name__),
        ),
    )
    return out


@check(points=2, hidden=True, title="additive scores of other sizes", title_zh="其他尺寸的加性分数")
def test_scores_fresh(sub):
    f = fx()
    args = _args(f, "one")
    expect_tensor(
        sub.additive_scores(*args),
        f["one_scores"],
        tol="attention",
        what=Msg(
            "scores of {n} encoder states (d_s {d_s}, d_h {d_h}, d_a {d_a})",
            "{n} 个编码器状态的分数（d_s {d_s}，d_h {d_h}，d_a {d_a}）",
            n=from_input(args[1].shape[-2]),
            d_s=from_input(args[0].shape[-1]),
            d_h=from_input(args[1].shape[-1]),
            d_a=from_input(args[2].shape[0]),
        ),
        mistakes=_score_mistakes(*args),
    )


@check(points=2, hidden=True, title="additive attention of other sizes", title_zh="其他尺寸的加性注意力")
def test_attention_fresh(sub):
    f = fx()
    args = _args(f, "one")
    m = _attention_mistakes(*args)
    context, weights = _pair(sub.additive_attention(*args), code("additive_attention"))
    expect_tensor(
        weights,
        f["one_weights"],
        tol="attention",
        what=Msg("weights over {n} encoder states", "{n} 个编码器状态上的权重", n=from_input(args[1].shape[-2])),
        mistakes=m["weights"],
    )
    expect_tensor(
        context,
        f["one_context"],
        tol="attention",
        what=Msg("context over {n} encoder states", "{n} 个编码器状态上的上下文向量", n=from_input(args[1].shape[-2])),
        mistakes=m["context"],
    )


@check(points=1, hidden=True, title="additive attention on a batch", title_zh="批次上的加性注意力")
def test_batch(sub):
    f = fx()
    args = _args(f, "batch")
    expect_tensor(
        sub.additive_scores(*args),
        f["batch_scores"],
        tol="attention",
        what=Msg("scores of a batch of {batch}", "大小为 {batch} 的批次的分数", batch=from_input(args[1].shape[0])),
    )
    context, weights = _pair(sub.additive_attention(*args), code("additive_attention"))
    expect_tensor(
        weights,
        f["batch_weights"],
        tol="attention",
        what=Msg("weights of a batch of {batch}", "大小为 {batch} 的批次的权重", batch=from_input(args[1].shape[0])),
        mistakes=_batch_mistakes(f["batch_scores"]),
    )
    expect_tensor(
        context,
        f["batch_context"],
        tol="attention",
        what=Msg(
            "context vectors of a batch of {batch}",
            "大小为 {batch} 的批次的上下文向量",
            batch=from_input(args[1].shape[0]),
        ),
    )


@check(
    points=2,
    hidden=True,
    title="attention properties: weights sum to 1, context inside the states",
    title_zh="注意力的性质：权重之和为 1，上下文在各状态的取值范围内",
)
def test_invariants(sub):
    @settings(max_examples=15, derandomize=True, database=None, deadline=None)
    @given(st.integers(1, 7), st.integers(1, 5), st.integers(1, 5), st.integers(1, 5), st.integers(0, 2**31 - 1))
    def invariants(T, d_s, d_h, d_a, seed):
        g = torch.Generator().manual_seed(seed)
        s, H = torch.randn(d_s, generator=g, dtype=torch.float64), torch.randn(T, d_h, generator=g, dtype=torch.float64)
        W_s = torch.randn(d_a, d_s, generator=g, dtype=torch.float64)
        W_h = torch.randn(d_a, d_h, generator=g, dtype=torch.float64)
        v = torch.randn(d_a, generator=g, dtype=torch.float64) * 3
        context, weights = _pair(sub.additive_attention(s, H, W_s, W_h, v), code("additive_attention"))
        what = code(
            "T={T}, d_s={d_s}, d_h={d_h}, d_a={d_a}",
            T=from_input(T),
            d_s=from_input(d_s),
            d_h=from_input(d_h),
            d_a=from_input(d_a),
        )
        expect_equal(
            tuple(weights.shape),
            (T,),
            what=Msg("shape of the weights ({what})", "权重的形状（{what}）", what=what),
        )
        expect_equal(
            tuple(context.shape),
            (d_h,),
            what=Msg("shape of the context ({what})", "上下文向量的形状（{what}）", what=what),
        )
        expect(
            bool((weights >= 0).all()),
            Msg("attention weights must not be negative ({what})", "注意力权重不能为负（{what}）", what=what),
        )
        expect_tensor(
            weights.sum(),
            torch.tensor(1.0, dtype=torch.float64),
            tol="softmax",
            what=Msg("the sum of the attention weights ({what})", "注意力权重之和（{what}）", what=what),
        )
        slack = tolerances.get("attention").atol
        lo, hi = H.min(0).values - slack, H.max(0).values + slack
        expect(
            bool(((context >= lo) & (context <= hi)).all()),
            Msg(
                "the context is a weighted average of the encoder states: each entry lies between their smallest "
                "and largest value ({what})",
                "上下文向量是编码器状态的加权平均：每个分量都在这些状态的最小值和最大值之间（{what}）",
                what=what,
            ),
        )
        perm = torch.randperm(T, generator=g)
        context_p, weights_p = _pair(sub.additive_attention(s, H[perm], W_s, W_h, v), code("additive_attention"))
        expect_tensor(
            weights_p,
            weights[perm],
            tol="attention",
            what=Msg(
                "weights after reordering the encoder states (they must be reordered the same way; {what})",
                "打乱编码器状态顺序之后的权重（它们必须以同样的方式重排；{what}）",
                what=what,
            ),
        )
        expect_tensor(
            context_p,
            context,
            tol="attention",
            what=Msg(
                "context after reordering the encoder states (it must not change; {what})",
                "打乱编码器状态顺序之后的上下文向量（它不应改变；{what}）",
                what=what,
            ),
        )

    invariants()


@check(
    points=2,
    listings=["1.8/cross-self"],
    title="figures 1.39-1.41: cross- and self-attention matrix shapes",
    title_zh="图 1.39-1.41：交叉注意力和自注意力矩阵的形状",
)
def test_cross_vs_self_shapes(sub):
    expect_equal(
        _shape(sub.attention_matrix_shape(ENGLISH)),
        (5, 5),
        what=Msg('self-attention weights of "The next day is bright"', '"The next day is bright" 的自注意力权重'),
    )
    got = _shape(sub.attention_matrix_shape(FRENCH, ENGLISH))
    expect(
        got != (5, 4),
        Msg(
            "cross-attention shape (5, 4) is transposed: one row per query token (the 4 French words), "
            "one column per key token (the 5 English words)",
            "交叉注意力的形状 (5, 4) 转置了：每个查询词元（4 个法语单词）一行，每个键词元（5 个英语单词）一列",
        ),
    )
    expect_equal(
        got,
        (4, 5),
        what=Msg("cross-attention weights, French queries over English keys", "交叉注意力权重：法语查询对英语键"),
    )
    expect_equal(
        _shape(sub.attention_matrix_shape(TARGET, SOURCE + ["<eos>"])),
        (3, 4),
        what=Msg(
            "Bahdanau weights for 3 target words over 4 source tokens", "3 个目标词在 4 个源词元上的 Bahdanau 权重"
        ),
    )
    # The rows Bahdanau attention produces for every decoder step form exactly that matrix.
    H, W_s, W_h, v, S = example()
    rows = [
        _pair(sub.additive_attention(S[t], H, W_s, W_h, v), code("additive_attention"))[1] for t in range(len(TARGET))
    ]
    expect_equal(
        tuple(torch.stack(rows).shape),
        _shape(sub.attention_matrix_shape(TARGET, SOURCE)),
        what=Msg(
            "the stacked Bahdanau weights of 'Je vais manger' over 'I will eat' vs attention_matrix_shape",
            "'Je vais manger' 对 'I will eat' 的 Bahdanau 权重堆叠起来的形状与 attention_matrix_shape",
        ),
    )


def _shape(value):
    if isinstance(value, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        return tuple(value)
    return value
