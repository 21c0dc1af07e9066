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

from grader.checking import Mistake, check, expect, expect_equal, expect_tensor, fixtures
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
        Mistake(ref("mean"), "the mean over all positions was pooled; the book classifies the [CLS] position, "
                "out[:, 0]", "对所有位置取了平均；书中用的是 [CLS] 位置 out[:, 0]"),
        Mistake(ref("masked_mean"), "the mean over the real tokens was pooled; the book classifies the [CLS] "
                "position, out[:, 0]", "对真实 token 取了平均；书中用的是 [CLS] 位置 out[:, 0]"),
        Mistake(ref("last"), "the last position was pooled (out[:, -1], often a [PAD]); the book classifies the "
                "[CLS] position, out[:, 0]", "取了最后一个位置 out[:, -1]（常常是 [PAD]）；应取 [CLS] 位置 out[:, 0]"),
        Mistake(ref("last_real"), "the last real token ([SEP]) was pooled; the book classifies the [CLS] position, "
                "out[:, 0]", "取了最后一个真实 token（[SEP]）；应取 [CLS] 位置 out[:, 0]"),
        Mistake(ref("max"), "the maximum over positions was pooled; the book classifies the [CLS] position, out[:, 0]",
                "对各位置取了最大值；应取 [CLS] 位置 out[:, 0]"),
    ]


def _new(sub, sd, layers=NL):
    m = sub.new("BERTForClassification", V, D, L, layers, H, FF)
    m.load_state_dict(sd)
    m.eval()
    return m


@check(points=2, listings=["1.35"])
def test_listing_1_35_structure(sub):
    m = sub.new("BERTForClassification", V, D, L, NL, H, FF)
    diff = R.first_difference(R.remote_repr(m), repr(R.mirror_classifier(V, D, L, NL, FF, PAD)))
    expect(not diff, f"print(BERTForClassification({V}, {D}, {L}, {NL}, {H}, {FF})) differs from "
                     f"the layout of listing 1.35 (bert, then classifier = Sequential(Dropout(0.1), Linear(dim, 2))): {diff}")
    state = m.state_dict()
    shapes = R.classifier_shapes(V, D, L, NL, FF)
    expect_equal(sorted(state), sorted(shapes), what="parameter names of BERTForClassification")
    for name, shape in shapes.items():
        expect_equal(tuple(state[name].shape), shape, what=f"shape of {name}")


@check(points=4, listings=["1.35"])
def test_listing_1_35_given_weights(sub):
    f = fx()
    sd = _given()
    logits = _new(sub, sd)(f["ids"], f["mask"])
    expect_tensor(logits, f["logits"], tol="encoder", what="eval logits for a padded (4, 10) batch with given weights "
                  f"(vocab {V}, dim {D}, {NL} layers, {H} heads)", mistakes=_mistakes(f["ids"], f["mask"], sd, H))


@check(points=3, listings=["1.36"])
def test_listing_1_36_book_model(sub):
    try:
        sub.new("BERTForClassification", vocab_size=V, dim=256, max_len=MAX_LEN, layers=4, heads=6,
                ff_dim=1024)
    except StudentError as e:
        if e.kind != "exception":
            raise
        expect(e.type in ("ValueError", "AssertionError"),
               f"listing 1.36 as printed (heads=6, dim=256) must stop with a ValueError, not {e.type or e}")
    else:
        expect(False, "listing 1.36 as printed (heads=6 with dim=256) must fail: 256 is not a multiple of 6")
    model = sub.book_model()
    expect(model.type_name == "BERTForClassification",
           f"book_model() must return a BERTForClassification, not {model.type_name}")
    diff = R.first_difference(R.remote_repr(model), repr(R.mirror_classifier(V, 256, MAX_LEN, 4, 1024, PAD)))
    expect(not diff, "print(book_model()) differs from listing 1.36's model with layers=4 (the book prints 6 blocks, "
                     f"'(0-5): 6 x TransformerBlock'; 4 layers print '(0-3): 4 x TransformerBlock'): {diff}")
    heads = [block.attr("attn").attr("heads") for _, block in model.attr("bert").attr("layers").named_children()]
    expect_equal(heads, [4, 4, 4, 4], what="heads of each of book_model()'s blocks (4 blocks, 4 heads of 64 features)")


@check(points=3, hidden=True)
def test_padding_invariance(sub):
    sd = R.random_state(R.classifier_shapes(V, D, L, NL, FF), seed=2392)
    m = _new(sub, sd)

    @settings(max_examples=10, derandomize=True, database=None, deadline=None)
    @given(st.lists(st.integers(2, 9), min_size=1, max_size=3), st.integers(1, 6), st.integers(0, 2**31 - 1))
    def invariants(lengths, extra, seed):
        T = max(lengths)
        ids, mask = R.padded_batch(lengths, T, V, PAD, CLS, SEP, seed=seed)
        logits = m(ids, mask)
        longer = torch.cat([ids, torch.full((len(lengths), extra), PAD)], dim=1)
        expect_tensor(m(longer, (longer != PAD).long()), logits, tol="encoder",
                      what=f"eval logits after appending {extra} [PAD] tokens (lengths {lengths})")
        junk = torch.randint(0, PAD, longer.shape, generator=torch.Generator().manual_seed(seed))
        hidden_junk = torch.where(longer == PAD, junk, longer)
        expect_tensor(m(hidden_junk, (longer != PAD).long()), logits, tol="encoder",
                      what=f"eval logits after writing other token ids at the padded positions, mask unchanged "
                           f"(lengths {lengths})")

    invariants()


@check(points=2, hidden=True)
def test_cls_pooling(sub):
    for layers, lengths, T, seed in ((1, [6, 3, 2], 6, 1), (3, [5, 5], 8, 2)):
        sd = R.random_state(R.classifier_shapes(V, D, L, layers, FF), seed=2393 + seed)
        ids, mask = R.padded_batch(lengths, T, V, PAD, CLS, SEP, seed=2395 + seed)
        expect_tensor(_new(sub, sd, layers)(ids, mask), R.classify(ids, mask, sd, H), tol="encoder",
                      what=f"eval logits of a {layers}-layer classifier, real lengths {lengths} of {T}",
                      mistakes=_mistakes(ids, mask, sd, H))


@check(points=1, hidden=True)
def test_shapes(sub):
    sd = R.random_state(R.classifier_shapes(V, D, L, NL, FF), seed=2398)
    m = _new(sub, sd)
    for B, T in ((1, 2), (5, 3), (2, L)):
        ids, mask = R.padded_batch([T] * B, T, V, PAD, CLS, SEP, seed=B * 100 + T)
        out = m(ids, mask)
        expect(isinstance(out, torch.Tensor), f"the classifier must return a tensor, not {type(out).__name__}")
        expect_equal(tuple(out.shape), (B, 2), what=f"logits shape for a ({B}, {T}) batch")


@check(points=2, hidden=True)
def test_dropout_only_in_training(sub):
    sd = R.random_state(R.classifier_shapes(V, D, L, NL, FF), seed=2399)
    ids, mask = R.padded_batch([8, 5, 3, 2], 8, V, PAD, CLS, SEP, seed=2400)
    sub.seed(17)
    m = _new(sub, sd)
    first = m(ids, mask)
    expect_tensor(m(ids, mask), first, tol="exact", what="two calls in eval mode (dropout must be off)")
    m.train()
    a, b = m(ids, mask), m(ids, mask)
    expect(isinstance(a, torch.Tensor) and not torch.equal(a, first) and not torch.equal(a, b),
           "in train mode dropout (p = 0.1) must make the logits change from call to call")
    m.eval()
    expect_tensor(m(ids, mask), first, tol="exact", what="eval logits again after a round in train mode")
