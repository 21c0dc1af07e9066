"""Checks of §1.23, the sequence classifier on the [CLS] position (listings 1.35-1.36).

Given weights are loaded by the book's names (bert.*, classifier.1.*) and the eval logits
compared with bert_reference.classify; other ways of summarising the sequence (mean, last
token, ...) are named. Listing 1.36 is checked through what print(model) shows, rebuilt from
the student's modules: 4 blocks of 4 heads, not the book's unrunnable heads=6 and its printed
6 blocks (ERRATA).
"""

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from grader.checking import Mistake, Msg, check, expect, expect_equal, expect_tensor, fixtures, from_input
from grader.checks import bert_reference as R
from grader.worker.proxy import StudentError

EXERCISE = "s1_23_classifier"
V, PAD, CLS, SEP, MAX_LEN = 50260, 50257, 50258, 50259, 256  # listings 1.25-1.26: the book's vocabulary
D, L, NL, H, FF = 16, 24, 2, 4, 32  # a small model for the weight checks
SEED = 2390  # the given weights: bert_reference.random_state(shapes, SEED)


def make_fixtures(sol):
    sd = _given()
    ids, mask = R.padded_batch([10, 7, 4, 2], 10, V, PAD, CLS, SEP, seed=2391)
    m = sol.BERTForClassification(V, D, L, NL, H, FF)
    m.load_state_dict(sd)
    m.eval()
    with torch.no_grad():
        logits = m(ids, mask)
    return {"ids": ids, "mask": mask, "logits": logits}


def fx():
    return fixtures.load(EXERCISE)


def _given():
    return R.random_state(R.classifier_shapes(V, D, L, NL, FF), seed=SEED)


def _mistakes(ids, mask, sd, heads):
    ref = lambda how: R.classify(ids, mask, sd, heads, how=how)  # noqa: E731
    return [
        Mistake(
            ref("mean"),
            "the mean over all positions was pooled; the book classifies the [CLS] position, `out[:, 0]`",
            "对所有位置取了平均；书中用的是 [CLS] 位置 `out[:, 0]`",
        ),
        Mistake(
            ref("masked_mean"),
            "the mean over the real tokens was pooled; the book classifies the [CLS] position, `out[:, 0]`",
            "对真实词元取了平均；书中用的是 [CLS] 位置 `out[:, 0]`",
        ),
        Mistake(
            ref("last"),
            "the last position was pooled (`out[:, -1]`, often a [PAD]); the book classifies the "
            "[CLS] position, `out[:, 0]`",
            "取了最后一个位置 `out[:, -1]`（常常是 [PAD]）；应取 [CLS] 位置 `out[:, 0]`",
        ),
        Mistake(
            ref("last_real"),
            "the last real token ([SEP]) was pooled; the book classifies the [CLS] position, `out[:, 0]`",
            "取了最后一个真实词元（[SEP]）；应取 [CLS] 位置 `out[:, 0]`",
        ),
        Mistake(
            ref("max"),
            "the maximum over positions was pooled; the book classifies the [CLS] position, `out[:, 0]`",
            "对各位置取了最大值；应取 [CLS] 位置 `out[:, 0]`",
        ),
    ]


def _expect_values(sub, seed: int):
    """Eval logits with other given weights on a fresh padded batch: paired with the checks of the
    layout, so that the right layout around a wrong forward earns nothing."""
    sd = R.random_state(R.classifier_shapes(V, D, L, NL, FF), seed=seed)
    ids, mask = R.padded_batch([6, 3], 6, V, PAD, CLS, SEP, seed=seed + 1)
    expect_tensor(
        _new(sub, sd)(ids, mask),
        R.classify(ids, mask, sd, H),
        tol="encoder",
        what=Msg(
            "eval logits for a padded (2, 6) batch with given weights",
            "给定权重时填充后的 (2, 6) 批次在 eval 模式下的 logits",
        ),
        mistakes=_mistakes(ids, mask, sd, H),
    )


def _new(sub, sd, layers=NL):
    m = sub.new("BERTForClassification", V, D, L, layers, H, FF)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(
    points=2, listings=["1.35"], title="listing 1.35: the classifier's layout", title_zh="代码清单 1.35：分类器的结构"
)
def test_listing_1_35_structure(sub):
    m = sub.new("BERTForClassification", V, D, L, NL, H, FF)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_classifier(V, D, L, NL, FF, PAD)))
    expect(
        not diff,
        Msg(
            "print(BERTForClassification({v}, {d}, {l}, {nl}, {h}, {ff})) differs from the layout of "
            "listing 1.35 (bert, then classifier = Sequential(Dropout(0.1), Linear(dim, 2))): {diff}",
            "print(BERTForClassification({v}, {d}, {l}, {nl}, {h}, {ff})) 与代码清单 1.35 的结构不同（先 bert，再 classifier "
            "= Sequential(Dropout(0.1), Linear(dim, 2))）：{diff}",
            v=V,
            d=D,
            l=L,
            nl=NL,
            h=H,
            ff=FF,
            diff=diff,
        ),
    )
    state = m.state_dict()
    shapes = R.classifier_shapes(V, D, L, NL, FF)
    expect_equal(
        sorted(state),
        sorted(shapes),
        what=Msg("parameter names of BERTForClassification", "BERTForClassification 的参数名"),
    )
    for name, shape in shapes.items():
        expect_equal(tuple(state[name].shape), shape, what=Msg("shape of {name}", "{name} 的形状", name=name))
    _expect_values(sub, seed=2401)


@check(
    points=4,
    listings=["1.35"],
    title="listing 1.35: logits with given weights",
    title_zh="代码清单 1.35：给定权重时的 logits",
)
def test_listing_1_35_given_weights(sub):
    f = fx()
    sd = _given()
    logits = _new(sub, sd)(f["ids"], f["mask"])
    expect_tensor(
        logits,
        f["logits"],
        tol="encoder",
        what=Msg(
            "eval logits for a padded (4, 10) batch with given weights (vocab {v}, dim {d}, {nl} layers, {h} heads)",
            "给定权重（vocab {v}，dim {d}，{nl} 层，{h} 个头）时，填充后的 (4, 10) 批次在 eval 模式下的 logits",
            v=V,
            d=D,
            nl=NL,
            h=H,
        ),
        mistakes=_mistakes(f["ids"], f["mask"], sd, H),
    )


@check(
    points=3,
    listings=["1.36"],
    title="listing 1.36: the book's model with 4 heads",
    title_zh="代码清单 1.36：书中使用 4 个头的模型",
)
def test_listing_1_36_book_model(sub):
    try:
        sub.new("BERTForClassification", vocab_size=V, dim=256, max_len=MAX_LEN, layers=4, heads=6, ff_dim=1024)
    except StudentError as e:
        if e.kind != "exception":
            raise
        expect(
            e.type in ("ValueError", "AssertionError"),
            Msg(
                "listing 1.36 as printed (heads=6, dim=256) must stop with a ValueError, not {raised}",
                "照书中打印的代码清单 1.36（heads=6，dim=256）必须以 ValueError 终止，而不是 {raised}",
                raised=e.type or e,
            ),
        )
    else:
        expect(
            False,
            Msg(
                "listing 1.36 as printed (heads=6 with dim=256) must fail: 256 is not a multiple of 6",
                "照书中打印的代码清单 1.36（heads=6，dim=256）必须失败：256 不是 6 的倍数",
            ),
        )
    model = sub.book_model()
    expect(
        model.type_name == "BERTForClassification",
        Msg(
            "book_model() must return a BERTForClassification, not {type_name}",
            "book_model() 必须返回 BERTForClassification，而不是 {type_name}",
            type_name=from_input(model.type_name),
        ),
    )
    diff = R.first_difference(R.remote_repr(model), repr(R.mirror_classifier(V, 256, MAX_LEN, 4, 1024, PAD)))
    expect(
        not diff,
        Msg(
            "print(book_model()) differs from listing 1.36's model with layers=4 (the book prints 6 blocks, "
            "'(0-5): 6 x TransformerBlock'; 4 layers print '(0-3): 4 x TransformerBlock'): {diff}",
            "print(book_model()) 与代码清单 1.36 中 layers=4 的模型不同（书中打印了 6 个块，'(0-5): 6 x TransformerBlock'；4 "
            "层应打印 '(0-3): 4 x TransformerBlock'）：{diff}",
            diff=diff,
        ),
    )
    heads = [block.attr("attn").attr("heads") for _, block in model.attr("bert").attr("layers").named_children()]
    expect_equal(
        heads,
        [4, 4, 4, 4],
        what=Msg(
            "heads of each of book_model()'s blocks (4 blocks, 4 heads of 64 features)",
            "book_model() 每个块的头数（4 个块，每个 4 个头、每头 64 个特征）",
        ),
    )
    _expect_values(sub, seed=2403)


@check(points=3, hidden=True, title="padding does not change the logits", title_zh="填充不改变 logits")
def test_padding_invariance(sub):
    sd = R.random_state(R.classifier_shapes(V, D, L, NL, FF), seed=2392)
    m = _new(sub, sd)

    @settings(max_examples=10, derandomize=True, database=None, deadline=None)
    @given(st.lists(st.integers(2, 9), min_size=1, max_size=3), st.integers(1, 6), st.integers(0, 2**31 - 1))
    def invariants(lengths, extra, seed):
        T = max(lengths)
        ids, mask = R.padded_batch(lengths, T, V, PAD, CLS, SEP, seed=seed)
        logits = m(ids, mask)
        expect_tensor(
            logits,
            R.classify(ids, mask, sd, H),
            tol="encoder",  # the property alone: a constant has it
            what=Msg(
                "eval logits for real lengths {lengths}",
                "真实长度为 {lengths} 时的 eval logits",
                lengths=from_input(lengths),
            ),
        )
        longer = torch.cat([ids, torch.full((len(lengths), extra), PAD)], dim=1)
        expect_tensor(
            m(longer, (longer != PAD).long()),
            logits,
            tol="encoder",
            what=Msg(
                "eval logits after appending {extra} [PAD] tokens (lengths {lengths})",
                "追加 {extra} 个 [PAD] 词元之后的 eval logits（长度 {lengths}）",
                extra=from_input(extra),
                lengths=from_input(lengths),
            ),
        )
        junk = torch.randint(0, PAD, longer.shape, generator=torch.Generator().manual_seed(seed))
        hidden_junk = torch.where(longer == PAD, junk, longer)
        expect_tensor(
            m(hidden_junk, (longer != PAD).long()),
            logits,
            tol="encoder",
            what=Msg(
                "eval logits after writing other token ids at the padded positions, mask unchanged (lengths {lengths})",
                "在填充位置写入其他词元 id、掩码不变时的 eval logits（长度 {lengths}）",
                lengths=from_input(lengths),
            ),
        )

    invariants()


@check(points=2, hidden=True, title="the logits come from the [CLS] position", title_zh="logits 来自 [CLS] 位置")
def test_cls_pooling(sub):
    for layers, lengths, T, seed in ((1, [6, 3, 2], 6, 1), (3, [5, 5], 8, 2)):
        sd = R.random_state(R.classifier_shapes(V, D, L, layers, FF), seed=2393 + seed)
        ids, mask = R.padded_batch(lengths, T, V, PAD, CLS, SEP, seed=2395 + seed)
        expect_tensor(
            _new(sub, sd, layers)(ids, mask),
            R.classify(ids, mask, sd, H),
            tol="encoder",
            what=Msg(
                "eval logits of a {layers}-layer classifier, real lengths {lengths} of {t}",
                "{layers} 层分类器的 eval logits，真实长度 {lengths}，共 {t}",
                layers=from_input(layers),
                lengths=from_input(lengths),
                t=from_input(T),
            ),
            mistakes=_mistakes(ids, mask, sd, H),
        )


@check(points=1, hidden=True, title="logits shape and parameter shapes", title_zh="logits 的形状和参数的形状")
def test_shapes(sub):
    sd = R.random_state(R.classifier_shapes(V, D, L, NL, FF), seed=2398)
    m = _new(sub, sd)
    for B, T in ((1, 2), (5, 3), (2, L)):
        ids, mask = R.padded_batch([T] * B, T, V, PAD, CLS, SEP, seed=B * 100 + T)
        out = m(ids, mask)
        expect(
            isinstance(out, torch.Tensor),
            Msg(
                "the classifier must return a tensor, not {type_out}",
                "分类器必须返回张量，而不是 {type_out}",
                type_out=from_input(type(out).__name__),
            ),
        )
        expect_equal(
            tuple(out.shape),
            (B, 2),
            what=Msg(
                "logits shape for a ({b}, {t}) batch", "({b}, {t}) 批次的 logits 形状", b=from_input(B), t=from_input(T)
            ),
        )
        expect_tensor(
            out,
            R.classify(ids, mask, sd, H),
            tol="encoder",
            what=Msg(
                "eval logits for a ({b}, {t}) batch", "({b}, {t}) 批次的 eval logits", b=from_input(B), t=from_input(T)
            ),
        )


@check(points=2, hidden=True, title="dropout only in training", title_zh="只在训练时做 dropout")
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.classifier_shapes(V, D, L, NL, FF), seed=2399)
    ids, mask = R.padded_batch([8, 5, 3, 2], 8, V, PAD, CLS, SEP, seed=2400)
    sub.seed(17)
    m = _new(sub, sd)
    first = m(ids, mask)
    expect_tensor(
        m(ids, mask),
        first,
        tol="exact",
        what=Msg("two calls in eval mode (dropout must be off)", "eval 模式下的两次调用（dropout 必须关闭）"),
    )
    m.train()
    a, b = m(ids, mask), m(ids, mask)
    expect(
        isinstance(a, torch.Tensor) and not torch.equal(a, first) and not torch.equal(a, b),
        Msg(
            "in train mode dropout (the default `p = 0.1`) must make the logits change from call to call",
            "训练模式下 dropout（默认 `p = 0.1`）必须让每次调用的 logits 都不同",
        ),
    )
    m.eval()
    expect_tensor(
        m(ids, mask),
        first,
        tol="exact",
        what=Msg("eval logits again after a round in train mode", "在训练模式下运行一轮之后再次得到的 eval logits"),
    )
