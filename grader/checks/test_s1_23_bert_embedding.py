"""Checks of §1.23, the BERT embedding layer (listing 1.30).

Reference weights are loaded into the student's module by the book's parameter names and its
eval output compared with a plain re-computation (bert_reference.embedding); dropout is checked
by its properties, never by a seed's mask.
"""
import torch

from grader.checking import Mistake, Msg, check, expect, expect_equal, expect_tensor, fixtures
from grader.checks import bert_reference as R
from grader.worker.proxy import StudentError

EXERCISE = "s1_23_bert_embedding"
V, PAD, CLS, SEP, MAX_LEN = 50260, 50257, 50258, 50259, 256  # listings 1.25-1.26: the book's vocabulary
D, L = 16, 48  # small width and max_len for the weight checks
SEED = 2330  # the given weights: bert_reference.random_state(shapes, SEED)


def _given():
    return R.random_state(R.embedding_shapes(V, D, L), seed=SEED)


def make_fixtures(sol):
    sd = _given()
    ids, _ = R.padded_batch([10, 6, 3], 10, V, PAD, CLS, SEP, seed=2331)
    words = torch.randint(0, 40, (2, 12), generator=torch.Generator().manual_seed(2332))  # ids < max_len
    m = sol.BERTEmbedding(V, D, L)
    m.load_state_dict(sd)
    m.eval()
    with torch.no_grad():
        return {"ids": ids, "out": m(ids), "words": words, "words_out": m(words)}


def fx():
    return fixtures.load(EXERCISE)


def _mistakes(ids, sd):
    by_id = [] if int(ids.max()) >= sd["position.weight"].shape[0] else [
        Mistake(R.embedding(ids, sd, position_from_ids=True),
                "the position table was indexed with the token ids instead of the positions 0..T-1",
                "位置嵌入表用词元 id 取值了，应该用位置 0..T-1")]
    return by_id + [
        Mistake(R.embedding(ids, sd, position=False), "the position embeddings are missing: add position(0..T-1)",
                "缺少位置嵌入：要加上 position(0..T-1)"),
        Mistake(R.embedding(ids, sd, segment=False), "the segment embedding (segment 0 for every token) is missing",
                "缺少片段嵌入（每个词元都是第 0 个片段）"),
        Mistake(R.embedding(ids, sd, norm=False), "the LayerNorm after the sum is missing", "求和之后缺少 LayerNorm"),
    ]


def _expect_values(sub, seed: int, lengths=((2, 9),)):
    """The layer's eval output with other given weights: paired with every structural or
    error-path check, so that the right structure around a wrong (or constant) forward earns nothing."""
    sd = R.random_state(R.embedding_shapes(V, D, L), seed=seed)
    m = _new(sub, sd)
    g = torch.Generator().manual_seed(seed + 1)
    for B, T in lengths:
        ids = torch.randint(0, V, (B, T), generator=g)
        expect_tensor(m(ids), R.embedding(ids, sd), tol="norm", what=Msg(
                f"eval output for a ({B}, {T}) batch with given weights", f"给定权重时 ({B}, {T}) 批次在 eval 模式下的输出"),
                      mistakes=_mistakes(ids, sd))


def _new(sub, sd=None, **kw):
    m = sub.new("BERTEmbedding", V, D, L, **kw)
    if sd is not None:
        m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.30"],
       title="listing 1.30: the embedding layer as the book prints it", title_zh="代码清单 1.30：书中打印的嵌入层")
def test_listing_1_30_book_sizes(sub):
    m = sub.new("BERTEmbedding", V, 256, MAX_LEN)
    expected = repr(R.mirror_embedding(V, 256, MAX_LEN, PAD))
    diff = R.first_difference(R.remote_repr(m), expected)
    expect(not diff, Msg("print(BERTEmbedding(VOCAB_SIZE, 256, MAX_LEN)) differs from what listing 1.36 prints for "
                     f"its embedding (token, position, segment, norm, dropout, in that order): {diff}",
                         f"print(BERTEmbedding(VOCAB_SIZE, 256, MAX_LEN)) 与代码清单 1.36 中打印的嵌入层不同（依次为 token、position、segment、norm、dropout）：{diff}"))
    _expect_values(sub, seed=2341)


@check(points=1, listings=["1.30"],
       title="parameter names and the [PAD] row", title_zh="参数名和 [PAD] 所在的行")
def test_parameter_names_and_padding_row(sub):
    sub.seed(0)
    m = sub.new("BERTEmbedding", V, D, L)
    state = m.state_dict()
    shapes = R.embedding_shapes(V, D, L)
    expect_equal(sorted(state), sorted(shapes), what=Msg(f"parameter names of BERTEmbedding({V}, {D}, {L})",
                                                         f"BERTEmbedding({V}, {D}, {L}) 的参数名"))
    for name, shape in shapes.items():
        expect_equal(tuple(state[name].shape), shape, what=Msg(f"shape of {name}", f"{name} 的形状"))
    expect_tensor(state["token.weight"][PAD], torch.zeros(D), tol="exact",
                  what=Msg(f"the [PAD] row {PAD} of a fresh token table (nn.Embedding(..., padding_idx=PAD_ID) sets it to 0)",
                           f"新建词元表中 [PAD] 的第 {PAD} 行（nn.Embedding(..., padding_idx=PAD_ID) 会把它设为 0）"))
    _expect_values(sub, seed=2343)


@check(points=3, listings=["1.30"],
       title="listing 1.30: output with given weights", title_zh="代码清单 1.30：给定权重时的输出")
def test_listing_1_30_given_weights(sub):
    f = fx()
    sd = _given()
    m = _new(sub, sd)
    expect_tensor(m(f["words"]), f["words_out"], tol="norm", what=Msg(f"eval output on a (2, 12) batch of word ids "
                  f"with given weights (dim {D}, max_len {L})",
                                                                      f"给定权重（dim {D}，max_len {L}）时，(2, 12) 单词 id 批次在 eval 模式下的输出"), mistakes=_mistakes(f["words"], sd))
    expect_tensor(m(f["ids"]), f["out"], tol="norm", what=Msg("eval output on a (3, 10) batch laid out like listing "
                  "1.26 ([CLS] words [SEP] [PAD]...)",
                                                              "按代码清单 1.26 排列的 (3, 10) 批次（[CLS] 单词 [SEP] [PAD]...）在 eval 模式下的输出"), mistakes=_mistakes(f["ids"], sd))


@check(points=2, hidden=True,
       title="other weights and lengths", title_zh="其他权重和长度")
def test_fresh_weights_and_lengths(sub):
    sd = R.random_state(R.embedding_shapes(V, D, L), seed=2332)
    m = _new(sub, sd)
    g = torch.Generator().manual_seed(2333)
    for B, T in ((1, 1), (5, 7), (2, L)):
        ids = torch.randint(0, 40 if B == 5 else V, (B, T), generator=g)
        expect_tensor(m(ids), R.embedding(ids, sd), tol="norm", what=Msg(
                f"eval output for a ({B}, {T}) batch", f"({B}, {T}) 批次在 eval 模式下的输出"),
                      mistakes=_mistakes(ids, sd))
    # One token id repeated: only the position makes the vectors differ.
    same = torch.full((1, 6), 5)
    out = m(same)
    expect(bool((out[0, 1:] - out[0, :1]).abs().amax(dim=-1).gt(1e-3).all()),
           Msg("the same token at different positions must give different vectors (position embeddings)",
               "同一个词元在不同位置必须得到不同的向量（位置嵌入）"))


@check(points=1, hidden=True,
       title="a sequence longer than max_len is refused", title_zh="拒绝长度超过 max_len 的序列")
def test_too_long_is_refused(sub):
    m = _new(sub)
    try:
        m(torch.zeros(1, L + 1, dtype=torch.int64))
    except StudentError as e:
        if e.kind != "exception":
            raise
        expect(e.type == "ValueError", Msg(f"a sequence of max_len + 1 tokens must raise ValueError, not {e.type or e}",
                                           f"长度为 max_len + 1 的序列必须抛出 ValueError，而不是 {e.type or e}"))
    else:
        expect(False, Msg("a sequence longer than max_len must raise ValueError (the position table has no row for it)",
                          "长度超过 max_len 的序列必须抛出 ValueError（位置表中没有对应的行）"))
    _expect_values(sub, seed=2345, lengths=((2, L),))  # max_len tokens must work: refusing everything is not the answer


@check(points=2, hidden=True,
       title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.embedding_shapes(V, D, L), seed=2334)
    ids = torch.randint(0, V, (4, 12), generator=torch.Generator().manual_seed(2335))
    sub.seed(7)
    m = _new(sub, sd, dropout=0.5)
    first, second = m(ids), m(ids)
    expect_tensor(first, second, tol="exact", what=Msg("two calls in eval mode (dropout must be off)",
                                                       "eval 模式下的两次调用（dropout 必须关闭）"))
    expect_tensor(first, R.embedding(ids, sd), tol="norm", what=Msg(
            "eval output with dropout=0.5", "dropout=0.5 时 eval 模式下的输出"))
    m.train()
    noisy = m(ids)
    expect(isinstance(noisy, torch.Tensor) and noisy.shape == first.shape, Msg(
            "train-mode output must keep its shape", "训练模式下的输出必须保持形状"))
    zero = noisy == 0
    frac = float(zero.float().mean())
    expect(0.35 < frac < 0.65, Msg(f"with dropout=0.5 in train mode about half of the values must be 0 (got {frac:.2f})",
                                   f"dropout=0.5 时，训练模式下大约一半的值必须为 0（实际为 {frac:.2f}）"))
    expect_tensor(noisy[~zero], 2 * first[~zero], tol="norm",
                  what=Msg("the values dropout keeps in train mode (scaled by 1 / (1 - p) = 2)",
                           "训练模式下 dropout 保留的值（按 1 / (1 - p) = 2 放大）"))
    plain = _new(sub, sd, dropout=0.0)
    plain.train()
    expect_tensor(plain(ids), first, tol="norm", what=Msg("train-mode output with dropout=0.0 (equal to eval mode)",
                                                          "dropout=0.0 时训练模式下的输出（与 eval 模式相同）"))
