"""Checks of §1.5, one-hot vectors and the embedding lookup table."""

import math

import torch
import torch.nn.functional as F

from grader.checking import CheckFailure, Mistake, Msg, check, code, expect, expect_tensor, fixtures, from_input
from grader.worker.proxy import StudentError

EXERCISE = "s1_05_embeddings"

# §1.5: "cat" is token 3 of a 50,000-token vocabulary; "dog" and "quantum" get two other ids.
BOOK_VOCAB = 50_000
CAT, DOG, QUANTUM = 3, 17, 42


def make_fixtures(sol):
    g = torch.Generator().manual_seed(5)
    weight = torch.randn(10, 4, generator=g)
    ids = torch.tensor([3, 0, 9, 3, 7, 1])
    big_weight = torch.randn(20, 6, generator=g)
    batch_ids = torch.randint(0, 20, (3, 5), generator=g)
    dense = torch.randn(5, 7, generator=g)
    one_hot_ids = torch.randint(0, 11, (2, 5), generator=g)
    return {
        "cat": sol.one_hot(torch.tensor(CAT), BOOK_VOCAB),
        "weight": weight,
        "ids": ids,
        "lookup": sol.embedding_lookup(ids, weight),
        "big_weight": big_weight,
        "batch_ids": batch_ids,
        "lookup_batch": sol.embedding_lookup(batch_ids, big_weight),
        "one_hot_ids": one_hot_ids,
        "one_hot_batch": sol.one_hot(one_hot_ids, 11),
        "dense": dense,
        "dense_cos": sol.cosine_similarity_matrix(dense),
    }


def fx():
    return fixtures.load(EXERCISE)


def _expect_value_error(call, what: Msg):
    try:
        call()
    except StudentError as e:
        expect(e.kind != "not_implemented", Msg.of(e))
        expect(
            e.type == "ValueError",
            Msg(
                "{what} must raise ValueError, not {error}",
                "{what} 必须抛出 ValueError，而不是 {error}",
                what=what,
                error=from_input(e.type or e),
            ),
        )
        return
    raise CheckFailure(Msg("{what} must raise ValueError", "{what} 必须抛出 ValueError", what=what))


def _integer_mistake(out, expected) -> list[Mistake]:
    """The right 0s and 1s in an integer (or boolean) tensor: named only where the answer is one,
    since a Mistake matches values whatever the dtype (a float64 answer is not this mistake)."""
    if isinstance(out, torch.Tensor) and not (out.is_floating_point() or out.is_complex()):
        return [
            Mistake(
                expected.long(),
                "the one-hot vectors must be `float32`, not integers",
                "独热向量必须是 `float32`，而不是整数",
            )
        ]
    return []


@check(
    points=2,
    listings=["1.5/one-hot"],
    title="the one-hot vector of 'cat' in a 50,000-token vocabulary",
    title_zh="50,000 个词元的词表中 'cat' 的独热向量",
)
def test_book_one_hot_cat(sub):
    out = sub.one_hot(torch.tensor(CAT), BOOK_VOCAB)
    expected = fx()["cat"]
    expect_tensor(
        out,
        expected,
        tol="exact",
        what=code("one_hot(tensor({CAT}), {BOOK_VOCAB:,})", CAT=from_input(CAT), BOOK_VOCAB=BOOK_VOCAB),
        mistakes=[
            Mistake(
                torch.roll(expected, -1),
                "the 1 sits at index id - 1: ids count from 0",
                "1 放在了 id - 1 处：id 从 0 开始计数",
            )
        ]
        + _integer_mistake(out, expected),
    )
    expect(
        int((out == 1).sum()) == 1 and int((out == 0).sum()) == BOOK_VOCAB - 1,
        Msg(
            "a one-hot vector of length {BOOK_VOCAB:,} holds one 1 and {zeros:,} zeros",
            "长度为 {BOOK_VOCAB:,} 的独热向量含一个 1 和 {zeros:,} 个 0",
            BOOK_VOCAB=BOOK_VOCAB,
            zeros=BOOK_VOCAB - 1,
        ),
    )


@check(
    points=1, listings=["1.5/one-hot"], title="one-hot vectors are all equally distant", title_zh="独热向量两两距离相等"
)
def test_one_hot_all_equally_distant(sub):
    vectors = sub.one_hot(torch.tensor([CAT, DOG, QUANTUM]), BOOK_VOCAB)
    expect_tensor(
        vectors,
        F.one_hot(torch.tensor([CAT, DOG, QUANTUM]), BOOK_VOCAB).float(),
        tol="exact",
        what=Msg("one-hot vectors of cat, dog, quantum", "cat、dog、quantum 的独热向量"),
    )
    sims = sub.cosine_similarity_matrix(vectors)
    expect_tensor(
        sims,
        torch.eye(3),
        tol="attention",
        what=Msg("cosine similarities of cat, dog, quantum", "cat、dog、quantum 的余弦相似度"),
    )
    distances = torch.cdist(vectors, vectors)
    expect_tensor(
        distances,
        math.sqrt(2) * (1 - torch.eye(3)),
        tol="attention",
        what=Msg(
            "distances between the one-hot vectors of cat, dog and quantum (all sqrt(2))",
            "cat、dog 和 quantum 的独热向量之间的距离（都是 sqrt(2)）",
        ),
    )


@check(points=1, title="one_hot rejects ids outside the vocabulary", title_zh="one_hot 拒绝词表之外的 id")
def test_one_hot_rejects_bad_ids(sub):
    _expect_value_error(
        lambda: sub.one_hot(torch.tensor([2, 5]), 5),
        Msg("one_hot with id 5 and vocab_size 5", "id 为 5、vocab_size 为 5 时的 one_hot"),
    )
    _expect_value_error(
        lambda: sub.one_hot(torch.tensor([-1, 2]), 5), Msg("one_hot with id -1", "id 为 -1 时的 one_hot")
    )
    # Valid ids must work too: raising for every input is not the answer (the dtype is another check's).
    out = sub.one_hot(torch.tensor([4, 0, 2]), 5)
    expect_tensor(
        out.float() if isinstance(out, torch.Tensor) else out,
        torch.eye(5)[[4, 0, 2]],
        tol="exact",
        what=code("one_hot(tensor([4, 0, 2]), 5)"),
    )


@check(points=1, hidden=True, title="one_hot of a batch of ids", title_zh="对一批 id 做 one_hot")
def test_one_hot_batch(sub):
    f = fx()
    expected = f["one_hot_batch"]
    out = sub.one_hot(f["one_hot_ids"], 11)
    expect_tensor(
        out,
        expected,
        tol="exact",
        what=Msg(
            "one_hot of a {shape} batch of ids",
            "形状为 {shape} 的一批 id 的 one_hot",
            shape=from_input(tuple(f["one_hot_ids"].shape)),
        ),
        mistakes=_integer_mistake(out, expected),
    )


def _lookup_mistakes(ids, weight):
    return [
        Mistake(
            weight[ids.clamp(max=weight.shape[0] - 2) + 1],
            "rows looked up at `id + 1`: ids count from `0`",
            "查找了第 `id + 1` 行：id 从 `0` 开始计数",
        )
    ]


@check(points=2, title="lookup equals one-hot times the weight matrix", title_zh="查表等于独热向量乘以权重矩阵")
def test_lookup_equals_one_hot_times_weight(sub):
    f = fx()
    ids, weight = f["ids"], f["weight"]
    expected = F.embedding(ids, weight)
    expect_tensor(
        sub.embedding_lookup(ids, weight),
        f["lookup"],
        tol="exact",
        what=Msg("embedding_lookup of 6 ids in a (10, 4) table", "在 (10, 4) 的表中查 6 个 id 的 embedding_lookup"),
        mistakes=_lookup_mistakes(ids, weight),
    )
    expect_tensor(
        sub.one_hot_embedding(ids, weight),
        expected,
        tol="matmul",
        what=Msg("one-hot vectors times the (10, 4) weight matrix", "独热向量乘以 (10, 4) 的权重矩阵"),
    )


@check(points=1, hidden=True, title="embedding lookup of a batch of ids", title_zh="对一批 id 查嵌入")
def test_lookup_batch(sub):
    f = fx()
    ids, weight = f["batch_ids"], f["big_weight"]
    expect_tensor(
        sub.embedding_lookup(ids, weight),
        f["lookup_batch"],
        tol="exact",
        what=Msg(
            "embedding_lookup of a {shape} batch of ids",
            "形状为 {shape} 的一批 id 的 embedding_lookup",
            shape=from_input(tuple(ids.shape)),
        ),
        mistakes=_lookup_mistakes(ids, weight),
    )
    expect_tensor(
        sub.one_hot_embedding(ids, weight),
        f["lookup_batch"],
        tol="matmul",
        what=Msg(
            "one_hot_embedding of a {shape} batch of ids",
            "形状为 {shape} 的一批 id 的 one_hot_embedding",
            shape=from_input(tuple(ids.shape)),
        ),
    )


def _cos_mistakes(x):
    return [
        Mistake(x @ x.T, "dot products without dividing by the lengths", "只算了点积，没有除以向量长度"),
        Mistake(
            (x / x.norm(dim=0, keepdim=True)) @ (x / x.norm(dim=0, keepdim=True)).T,
            "each column was normalised instead of each row",
            "归一化了每一列而不是每一行",
        ),
    ]


@check(points=1, title="cosine similarity of dense vectors", title_zh="稠密向量的余弦相似度")
def test_dense_cosine_similarity(sub):
    x = torch.tensor([[1.0, 2.0, 0.0], [2.0, 4.0, 0.0], [0.0, 0.0, 3.0], [1.0, 0.0, 1.0]])
    expected = F.cosine_similarity(x.unsqueeze(1), x.unsqueeze(0), dim=-1)
    expect_tensor(
        sub.cosine_similarity_matrix(x),
        expected,
        tol="attention",
        what=Msg("cosine similarities of 4 dense vectors", "4 个稠密向量的余弦相似度"),
        mistakes=_cos_mistakes(x),
    )


@check(
    points=1,
    hidden=True,
    title="cosine similarity of random and scaled vectors",
    title_zh="随机向量和缩放后向量的余弦相似度",
)
def test_dense_cosine_fresh(sub):
    f = fx()
    x = f["dense"]
    out = sub.cosine_similarity_matrix(x)
    expect_tensor(
        out,
        f["dense_cos"],
        tol="attention",
        what=Msg("cosine similarities of {n} random vectors", "{n} 个随机向量的余弦相似度", n=from_input(x.shape[0])),
        mistakes=_cos_mistakes(x),
    )
    scaled = sub.cosine_similarity_matrix(x * torch.tensor([[2.0], [0.5], [3.0], [1.0], [7.0]]))
    expect_tensor(
        scaled,
        f["dense_cos"],
        tol="attention",
        what=Msg(
            "cosine similarities after scaling each vector (the lengths must not matter)",
            "把每个向量缩放之后的余弦相似度（向量长度不应有影响）",
        ),
    )
