"""Checks of §1.9, the input embedding matrix (listing 1.1)."""
import torch

from grader.checking import Mistake, Msg, check, code, expect_tensor, fixtures
from grader.checking import book

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
        "token_table": token_table, "position_table": position_table, "ids": ids, "batch_ids": batch_ids,
        "words": torch.tensor(words), "positions": positions,
        "listing_1_1": sol.input_embedding_matrix(book.INPUT_VECTORS),
        "with_positions": sol.input_embedding_matrix(words, positions.tolist()),
        "embedded": sol.embed_tokens(ids, token_table, position_table),
        "embedded_batch": sol.embed_tokens(batch_ids, token_table, position_table),
    }


def fx():
    return fixtures.load(EXERCISE)


@check(points=2, listings=["1.1"],
       title="listing 1.1: the input embedding matrix", title_zh="代码清单 1.1：输入嵌入矩阵")
def test_listing_1_1_matrix(sub):
    out = sub.input_embedding_matrix(book.INPUT_VECTORS)
    expect_tensor(out, fx()["listing_1_1"], tol="exact", what=Msg(
            "input embedding matrix of listing 1.1", "代码清单 1.1 的输入嵌入矩阵"))


@check(points=1,
       title="word vectors plus position vectors", title_zh="词向量加上位置向量")
def test_adds_positions(sub):
    f = fx()
    out = sub.input_embedding_matrix(f["words"].tolist(), f["positions"].tolist())
    expect_tensor(out, f["with_positions"], tol="exact", what=Msg("word + position vectors", "词向量 + 位置向量"),
                  mistakes=[Mistake(f["words"], "the positions were not added", "没有加上位置向量")])


@check(points=2, hidden=True,
       title="embedding a sentence of token ids", title_zh="对一个句子的词元 id 做嵌入")
def test_embed_tokens(sub):
    f = fx()
    out = sub.embed_tokens(f["ids"], f["token_table"], f["position_table"])
    expect_tensor(out, f["embedded"], tol="exact", what=code("embed_tokens"),
                  mistakes=[Mistake(f["token_table"][f["ids"]], "the positions were not added", "没有加上位置向量"),
                            Mistake(f["token_table"][f["ids"]] + f["position_table"][f["ids"] % 12],
                                    "positions looked up by token id instead of by position",
                                    "按词元 id 而不是按位置查找位置向量")])


@check(points=1, hidden=True,
       title="embedding a batch of sequences", title_zh="对一批序列做嵌入")
def test_embed_tokens_batch(sub):
    f = fx()
    out = sub.embed_tokens(f["batch_ids"], f["token_table"], f["position_table"])
    expect_tensor(out, f["embedded_batch"], tol="exact", what=Msg(
            "embed_tokens on a batch of 3 sequences", "对 3 个序列组成的批次做 embed_tokens"))
