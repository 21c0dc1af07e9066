"""Checks of §1.9, the input embedding matrix (listing 1.1)."""

import torch

from grader.checking import CheckFailure, Mistake, Msg, check, code, expect_tensor, fixtures, from_input
from grader.checking import book
from grader.worker.proxy import StudentError

EXERCISE = "s1_09_input_embeddings"


def make_fixtures(sol):
    g = torch.Generator().manual_seed(9)
    token_table = torch.randn(50, 6, generator=g)
    position_table = torch.randn(12, 6, generator=g)
    ids = torch.randint(0, 50, (7,), generator=g)
    batch_ids = torch.randint(0, 50, (3, 5), generator=g)
    words = torch.randn(4, 3, generator=g).tolist()
    positions = torch.randn(4, 3, generator=g)
    return {
        "token_table": token_table,
        "position_table": position_table,
        "ids": ids,
        "batch_ids": batch_ids,
        "words": torch.tensor(words),
        "positions": positions,
        "listing_1_1": sol.input_embedding_matrix(book.INPUT_VECTORS),
        "with_positions": sol.input_embedding_matrix(words, positions.tolist()),
        "embedded": sol.embed_tokens(ids, token_table, position_table),
        "embedded_batch": sol.embed_tokens(batch_ids, token_table, position_table),
        **_small(sol),
    }


def _small(sol):
    """The public example: small tables, a repeated id, and a batch of two."""
    g = torch.Generator().manual_seed(143)
    tokens, positions = torch.randn(10, 4, generator=g), torch.randn(6, 4, generator=g)
    ids = torch.tensor([7, 2, 2, 9])
    batch = torch.tensor([[7, 2, 2, 9], [0, 5, 1, 3]])
    return {
        "small_tokens": tokens,
        "small_positions": positions,
        "small_ids": ids,
        "small_batch": batch,
        "small_embedded": sol.embed_tokens(ids, tokens, positions),
        "small_embedded_batch": sol.embed_tokens(batch, tokens, positions),
    }


def fx():
    return fixtures.load(EXERCISE)


@check(
    points=2, listings=["1.1"], title="listing 1.1: the input embedding matrix", title_zh="代码清单 1.1：输入嵌入矩阵"
)
def test_listing_1_1_matrix(sub):
    out = sub.input_embedding_matrix(book.INPUT_VECTORS)
    expect_tensor(
        out,
        fx()["listing_1_1"],
        tol="exact",
        what=Msg("input embedding matrix of listing 1.1", "代码清单 1.1 的输入嵌入矩阵"),
    )


@check(points=1, title="word vectors plus position vectors", title_zh="词向量加上位置向量")
def test_adds_positions(sub):
    f = fx()
    out = sub.input_embedding_matrix(f["words"].tolist(), f["positions"].tolist())
    expect_tensor(
        out,
        f["with_positions"],
        tol="exact",
        what=Msg("word + position vectors", "词向量 + 位置向量"),
        mistakes=[Mistake(f["words"], "the positions were not added", "没有加上位置向量")],
    )


def _embed_mistakes(ids, tokens, positions):
    return [
        Mistake(tokens[ids], "the positions were not added", "没有加上位置向量"),
        Mistake(
            tokens[ids] + positions[ids % positions.shape[0]],
            "positions looked up by token id instead of by "
            "position: the token at position t gets position_table[t], whatever its id",
            "按词元 id 而不是按位置查找位置向量：位置 t 上的词元加上 position_table[t]，与它的 id 无关",
        ),
    ]


@check(
    points=1,
    title="token ids to embeddings: token vector + position vector",
    title_zh="词元 id 到嵌入：词元向量 + 位置向量",
)
def test_embed_small_example(sub):
    f = fx()
    tokens, positions = f["small_tokens"], f["small_positions"]
    for key, shape in (("small_ids", "(4,)"), ("small_batch", "(2, 4)")):
        ids = f[key]
        what = Msg(
            "embed_tokens of ids {id_list} {shape}, a (10, 4) token table and a (6, 4) position table",
            "ids 为 {id_list} {shape}、词元表 (10, 4)、位置表 (6, 4) 时的 embed_tokens",
            id_list=from_input(ids.tolist()),
            shape=from_input(shape),
        )
        try:
            out = sub.embed_tokens(ids, tokens, positions)
        except StudentError as e:
            if e.type != "RuntimeError":
                raise
            raise CheckFailure(
                Msg(
                    "{e}\n{what}: row t gets position_table[t] for t < seq_len, where seq_len = "
                    "token_ids.shape[-1] (with a batch, len(token_ids) is the batch size)",
                    "{e}\n{what}：第 t 行加上 position_table[t]（t < seq_len），其中 seq_len = "
                    "token_ids.shape[-1]（有批次时，len(token_ids) 是批次大小）",
                    e=Msg.of(e),
                    what=what,
                )
            ) from None
        expect_tensor(
            out,
            f["small_embedded_batch" if key == "small_batch" else "small_embedded"],
            tol="exact",
            what=what,
            mistakes=_embed_mistakes(ids, tokens, positions),
        )


@check(points=2, hidden=True, title="embedding a sentence of token ids", title_zh="对一个句子的词元 id 做嵌入")
def test_embed_tokens(sub):
    f = fx()
    out = sub.embed_tokens(f["ids"], f["token_table"], f["position_table"])
    expect_tensor(
        out,
        f["embedded"],
        tol="exact",
        what=code("embed_tokens"),
        mistakes=_embed_mistakes(f["ids"], f["token_table"], f["position_table"]),
    )


@check(points=1, hidden=True, title="embedding a batch of sequences", title_zh="对一批序列做嵌入")
def test_embed_tokens_batch(sub):
    f = fx()
    out = sub.embed_tokens(f["batch_ids"], f["token_table"], f["position_table"])
    expect_tensor(
        out,
        f["embedded_batch"],
        tol="exact",
        what=Msg(
            "embed_tokens on a batch of {batch} sequences",
            "对 {batch} 个序列组成的批次做 embed_tokens",
            batch=from_input(f["batch_ids"].shape[0]),
        ),
    )
