"""Checks of §1.2, the anatomy of a decoder-only transformer: the shape at each stage and the
output stage (figures 1.10–1.11)."""

import torch
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from grader.checking import CheckFailure, Mistake, Msg, check, code, expect, expect_tensor, fixtures, from_input
from grader.checking.compare import HIDDEN

EXERCISE = "s1_02_anatomy"
# The worked configuration: a batch of 2 sequences of 4 tokens through a GPT-2-small-sized
# model (vocabulary 50,257 and d_model 768 as in §1.4–1.5; 12 blocks).
BOOK_CONFIG = {"batch": 2, "seq_len": 4, "vocab_size": 50257, "d_model": 768, "n_layers": 12}


def expected_shapes(batch, seq_len, vocab_size, d_model, n_layers) -> dict:
    shapes = {
        "token_ids": (batch, seq_len),
        "token_embeddings": (batch, seq_len, d_model),
        "position_embeddings": (seq_len, d_model),
        "block_input": (batch, seq_len, d_model),
    }
    shapes.update({f"block_{i}": (batch, seq_len, d_model) for i in range(1, n_layers + 1)})
    shapes.update({"logits": (batch, seq_len, vocab_size), "next_token_probs": (batch, vocab_size)})
    return shapes


def _why(stage: str, got, c: dict) -> Msg | None:
    b, t, v, d = c["batch"], c["seq_len"], c["vocab_size"], c["d_model"]
    known = {
        ("logits", (b, t, d)): Msg(
            "the output layer maps each d_model vector to vocab_size logits",
            "输出层把每个 d_model 维向量映射为 vocab_size 个 logits",
        ),
        ("logits", (b, v)): Msg(
            "every position gets logits; only next_token_probs keeps the last one alone",
            "每个位置都有 logits；只有 next_token_probs 才只保留最后一个位置",
        ),
        ("next_token_probs", (b, t, v)): Msg(
            "only the last position predicts the next token: (batch, vocab_size)",
            "只有最后一个位置预测下一个词元：(batch, vocab_size)",
        ),
        ("next_token_probs", (v,)): Msg(
            "there is one distribution per sequence of the batch", "批次中的每个序列都有一个分布"
        ),
        ("position_embeddings", (b, t, d)): Msg(
            "one vector per position, shared by every sequence: (seq_len, d_model)",
            "每个位置一个向量，所有序列共享：(seq_len, d_model)",
        ),
        ("position_embeddings", (1, t, d)): Msg(
            "the table of positions has no batch dimension: (seq_len, d_model)",
            "位置表没有批次维度：(seq_len, d_model)",
        ),
        ("token_ids", (b, t, d)): Msg(
            "token ids are integers, one per token: (batch, seq_len)", "词元 id 是整数，每个词元一个：(batch, seq_len)"
        ),
        ("token_embeddings", (b, t, v)): Msg(
            "an embedding has d_model numbers, not vocab_size", "一个嵌入有 d_model 个数，而不是 vocab_size 个"
        ),
    }
    return known.get((stage, tuple(got) if isinstance(got, (tuple, list)) else got))


def compare_shapes(actual, config: dict) -> None:
    expected = expected_shapes(**config)
    hidden = HIDDEN.get()
    what = code("stage_shapes({args})", args=from_input(", ".join(f"{k}={v}" for k, v in config.items())))
    expect(
        isinstance(actual, dict),
        Msg(
            "{what} must return a dict, got {actual_type}",
            "{what} 必须返回 dict，实际返回了 {actual_type}",
            what=what,
            actual_type=from_input(type(actual).__name__),
        ),
    )
    missing = [k for k in expected if k not in actual]
    extra = [k for k in actual if k not in expected]
    expect(
        not missing and not extra,
        Msg(
            "{what}: wrong stage names{detail}",
            "{what}：阶段名称不对{detail}",
            what=what,
            detail=code("")
            if hidden
            else Msg(
                "; missing {missing}, unexpected {extra}",
                "；缺少 {missing}，多出 {extra}",
                missing=missing,
                extra=extra,
            ),
        ),
    )
    expect(
        list(actual) == list(expected),
        Msg(
            "{what}: the stages must come in pipeline order{order}",
            "{what}：各阶段必须按流水线顺序排列{order}",
            what=what,
            order=code("") if hidden else code(" {order}", order=list(expected)),
        ),
    )
    for stage, shape in expected.items():
        got = actual[stage]
        expect(
            isinstance(got, tuple) and all(isinstance(n, int) and not isinstance(n, bool) for n in got),
            Msg(
                "{what}[{stage!r}] must be a tuple of ints, got {got_type}",
                "{what}[{stage!r}] 必须是整数元组，实际为 {got_type}",
                what=what,
                stage=from_input(stage),
                got_type=from_input(type(got).__name__),
            ),
        )
        if got != shape:
            why = _why(stage, got, config)
            raise CheckFailure(
                Msg(
                    "{what}[{stage!r}] is wrong{detail}{why}",
                    "{what}[{stage!r}] 不对{detail}{why}",
                    what=what,
                    stage=from_input(stage),
                    detail=code("")
                    if hidden
                    else Msg(": expected {shape}, got {got}", "：应为 {shape}，实际为 {got}", shape=shape, got=got),
                    why=Msg(". {why}.", "。{why}。", why=why) if why else code(""),
                )
            )


def make_fixtures(sol):
    g = torch.Generator().manual_seed(12)
    hidden = torch.randn(2, 5, 8, generator=g)
    W, b = torch.randn(8, 11, generator=g), torch.randn(11, generator=g)
    hidden2, W2 = torch.randn(3, 1, 4, generator=g).double(), torch.randn(4, 6, generator=g).double()
    hidden3, W3 = torch.randn(4, 3, 5, generator=g), torch.randn(5, 9, generator=g)
    return {
        "hidden": hidden,
        "W": W,
        "b": b,
        "probs": sol.next_token_probs(hidden, W, b),
        "hidden2": hidden2,
        "W2": W2,
        "probs2": sol.next_token_probs(hidden2, W2),
        "hidden3": hidden3,
        "W3": W3,
        "probs3": sol.next_token_probs(hidden3, W3),
    }


def fx():
    return fixtures.load(EXERCISE)


def _output_mistakes(hidden, W, b=None):
    b = 0 if b is None else b
    return [
        Mistake(
            torch.softmax(hidden[:, 0] @ W + b, dim=-1),
            "the first position instead of the last",
            "用了第一个位置而不是最后一个位置",
        ),
        Mistake(
            torch.softmax(hidden.mean(1) @ W + b, dim=-1),
            "the mean over positions instead of the last position",
            "对位置取了平均，而不是取最后一个位置",
        ),
        Mistake(hidden[:, -1] @ W + b, "the logits without softmax", "只有 logits，没有做 softmax"),
        Mistake(
            torch.softmax(hidden[:, -1] @ W + b, dim=0),
            "softmax over the batch instead of the vocabulary",
            "在 batch 维而不是词表维上做了 softmax",
        ),
    ]


@check(
    points=2,
    listings=["1.2/stages"],
    title="figures 1.10-1.11: the shape of the data at each stage",
    title_zh="图 1.10-1.11：每个阶段数据的形状",
)
def test_listing_stage_shapes(sub):
    compare_shapes(sub.stage_shapes(**BOOK_CONFIG), BOOK_CONFIG)


@check(
    points=2,
    listings=["1.2/stages"],
    title="the output stage: next-token probabilities",
    title_zh="输出阶段：下一个词元的概率",
)
def test_output_stage(sub):
    f = fx()
    out = sub.next_token_probs(f["hidden"], f["W"], f["b"])
    expect_tensor(
        out,
        f["probs"],
        tol="attention",
        what=Msg(
            "next_token_probs of a (2, 5, 8) output with an (8, 11) layer",
            "形状为 (2, 5, 8) 的输出经过 (8, 11) 的层后的 next_token_probs",
        ),
        mistakes=_output_mistakes(f["hidden"], f["W"], f["b"]),
    )
    expect(
        bool(torch.allclose(out.sum(-1), torch.ones(2), atol=1e-5)),
        Msg("each row of next_token_probs must sum to 1", "next_token_probs 的每一行之和必须为 1"),
    )


@check(points=2, hidden=True, title="stage shapes for other model sizes", title_zh="其他模型规模下各阶段的形状")
def test_stage_shapes_other_configs(sub):
    # No shrinking: the first failing configuration already says what is wrong, and grading stays fast.
    @settings(max_examples=20, derandomize=True, database=None, deadline=None, phases=[Phase.explicit, Phase.generate])
    @given(st.integers(1, 9), st.integers(1, 2048), st.integers(2, 100_000), st.integers(1, 4096), st.integers(0, 48))
    def configs(batch, seq_len, vocab_size, d_model, n_layers):
        config = {
            "batch": batch,
            "seq_len": seq_len,
            "vocab_size": vocab_size,
            "d_model": d_model,
            "n_layers": n_layers,
        }
        compare_shapes(sub.stage_shapes(**config), config)

    configs()
    config = {"batch": 3, "seq_len": 7, "vocab_size": 11, "d_model": 5, "n_layers": 0}  # no blocks at all
    compare_shapes(sub.stage_shapes(3, 7, 11, 5, 0), config)


@check(
    points=2,
    hidden=True,
    title="the output stage on other shapes and dtypes",
    title_zh="输出阶段在其他形状和数据类型下的结果",
)
def test_output_stage_fresh(sub):
    f = fx()
    expect_tensor(
        sub.next_token_probs(f["hidden2"], f["W2"]),
        f["probs2"],
        tol="attention",
        what=Msg(
            "next_token_probs of a {dtype} {shape} output, {bias}",
            "形状为 {shape} 的 {dtype} 输出、{bias}时的 next_token_probs",
            dtype=from_input(str(f["hidden2"].dtype).removeprefix("torch.")),
            shape=from_input(tuple(f["hidden2"].shape)),
            bias=from_input(Msg("no bias", "无偏置")),
        ),
        mistakes=_output_mistakes(f["hidden2"], f["W2"]),
    )
    out = sub.next_token_probs(f["hidden3"], f["W3"], None)
    expect_tensor(
        out,
        f["probs3"],
        tol="attention",
        what=Msg(
            "next_token_probs of a {shape} output, bias {bias}",
            "形状为 {shape} 的输出、bias 为 {bias} 时的 next_token_probs",
            shape=from_input(tuple(f["hidden3"].shape)),
            bias=from_input(None),
        ),
        mistakes=_output_mistakes(f["hidden3"], f["W3"]),
    )
