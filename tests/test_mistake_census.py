"""The mistake census (issue 28): every mistake a hidden check names, a public check names too.

grader/authoring/census.py reads the names from the checks themselves (Mistake(value, en, zh),
CheckFailure(..., mistake=...), draws.expect_drawn), so a mistake added to a hidden check alone
fails here. The five mistakes issue 28 found caught by hidden checks only (or by nothing) are
graded for real with --public-only: each fails a public check whose message names it.
"""

import shutil

from grader.authoring.census import DRAWS, census, module_mistakes, module_reads
from grader.authoring.input_classes import INPUT_CLASSES, InputClass, uncovered
from tests.conftest import ROOT, checks_of, grade, make_submission
from tests.mistakes import Variant, rounds, variant


def test_every_mistake_a_hidden_check_names_is_named_by_a_public_check():
    """Issue 28: the 14 names once listed here as known gaps (s1_05 to s1_23_encoder_block) are each
    named by a public check of their exercise now; the table is gone, so a new one fails here."""
    gaps = census(ROOT).hidden_only()
    assert not gaps, f"named by hidden checks only (name them in a public check of the exercise too): {gaps}"


def test_a_read_kata_check_skips_is_not_counted_as_public():
    """A public check's `if grading():` block runs when grading only, not in `kata check`: its
    names are grading-time reads (the book's and the training size), not names kata check shows."""
    c = census(ROOT)
    for ex in ("s1_23_encoder_block", "s1_23_feed_forward", "s1_23_self_attention", "s1_23_bert_embedding"):
        assert "dropout keyed on the dtype or the size" in c.grading[ex], ex
        assert "dropout keyed on the dtype or the size" not in c.public[ex], ex
    assert "survivors not `weight / (1 - p)` at the training size" in c.grading["s1_15_attention"]


def test_the_five_held_mistakes_are_named_publicly():
    c = census(ROOT)
    assert "the scores were divided by d_k instead of sqrt(d_k)" in c.public["s1_13_causal_mask"]
    assert "LayerNorm.forward ignored self.eps: pass it on, normalize(x, self.eps)" in c.public["s1_17_layer_norm"]
    assert "labels other than `0` and `1` not refused" in c.public["s1_23_dataset"]
    assert "attention dropout left out" in c.public["s1_23_self_attention"]
    assert any(n.startswith("the kept weights were not rescaled by `1 / (1 - p)`") for n in c.public["s1_15_attention"])


CHECKS = """
from grader.checking import CheckFailure, Mistake, Msg, check, draws, expect_tensor, grading

PAIR = ("a shared pair", "共用的一对")


def _named(x):
    return [Mistake(x, "public and hidden", "公开和隐藏"), Mistake(x, f"an f-string {1}", "格式化字符串")]


def _table(x):
    return [Mistake(v, en, zh) for v, en, zh in [(x, "from a table", "来自表格"), (x, *PAIR)]]


@check(points=1, title="a", title_zh="甲")
def test_public(sub):
    expect_tensor(sub.f(), 0, mistakes=_named(1) + _table(1))


@check(points=1, hidden=True, title="b", title_zh="乙")
def test_hidden(sub):
    expect_tensor(sub.f(), 0, mistakes=_named(1))
    raise CheckFailure(Msg("x", "x"), mistake="only hidden")


@check(points=1, hidden=True, title="c", title_zh="丙")
def test_hidden_draws(sub):
    draws.expect_drawn([], Msg("x", "x"), Msg("x", "x"), Msg("x", "x"))


def _big_read(sub):
    raise CheckFailure(Msg("x", "x"), mistake="keyed on the size")


@check(points=1, title="d", title_zh="丁")
def test_public_grading(sub):
    expect_tensor(sub.f(), 0, mistakes=[Mistake(1, "in every run", "每次都跑")])
    if grading():
        _big_read(sub)
        raise CheckFailure(Msg("x", "x"), mistake="only when grading")
    else:
        raise CheckFailure(Msg("x", "x"), mistake="in kata check")


@check(points=1, hidden=True, title="e", title_zh="戊")
def test_hidden_big(sub):
    _big_read(sub)
"""


def test_the_census_reads_every_way_a_check_names_a_mistake(tmp_path):
    path = tmp_path / "test_s9_demo.py"
    path.write_text(CHECKS)
    named = module_mistakes(path)
    assert named["test_public"] == {"public and hidden", "an f-string {…}", "from a table", "a shared pair"}
    assert named["test_hidden"] == {"public and hidden", "an f-string {…}", "only hidden"}
    assert named["test_hidden_draws"] == {DRAWS}
    reads = module_reads(path)
    assert reads["test_public_grading"] == (
        {"in every run", "in kata check"},
        {"keyed on the size", "only when grading"},
    )
    assert named["test_public_grading"] == {"in every run", "in kata check", "keyed on the size", "only when grading"}
    (tmp_path / "grader" / "checks").mkdir(parents=True)
    shutil.move(path, tmp_path / "grader" / "checks" / path.name)
    c = census(tmp_path)
    assert c.grading["s9_demo"] == {"keyed on the size", "only when grading"}
    assert "keyed on the size" not in c.public["s9_demo"]
    # a hidden check's read that a public check makes when grading is no gap; one made by no public check is
    assert c.hidden_only() == {"s9_demo": sorted(["only hidden", DRAWS])}


FIVE = [  # issue 28's five: (variant, a public check's message names it with)
    (
        Variant(
            "s1_13_causal_mask", "causal attention divided by d_k", (("/ keys.shape[-1] ** 0.5", "/ keys.shape[-1]"),)
        ),
        "divided by d_k instead of sqrt(d_k)",
    ),
    (
        Variant(
            "s1_15_attention",
            "attention dropout not rescaled",
            (("weights = weights * survive / (1 - dropout_p)", "weights = weights * survive"),),
        ),
        "not rescaled by `1 / (1 - p)`",
    ),
    (
        Variant(
            "s1_17_layer_norm", "LayerNorm.forward ignores self.eps", (("normalize(x, self.eps)", "normalize(x)"),)
        ),
        "LayerNorm.forward ignored self.eps",
    ),
    (
        Variant(
            "s1_23_dataset",
            "labels other than 0/1 accepted",
            (("            if label not in (0, 1):\n", "            if False:\n"),),
        ),
        "with a label 2 must raise ValueError",
    ),
    (
        Variant(
            "s1_23_self_attention",
            "attention dropout left out",
            (("attn = self.attn_dropout(torch.softmax(scores, dim=-1))", "attn = torch.softmax(scores, dim=-1)"),),
        ),
        "no attention weight was dropped",
    ),
]


def test_the_five_held_mistakes_fail_a_public_check(tmp_path):
    """One submission holding all five, graded --public-only (about 5 s)."""
    sub = make_submission(tmp_path, {v.exercise: v.source() for v, _ in FIVE})
    report = grade(sub, *[a for v, _ in FIVE for a in ("-e", v.exercise)], "--public-only")
    for v, says in FIVE:
        failed = [c for c in checks_of(report, v.exercise) if c["status"] == "failed"]
        assert failed and all(c["visibility"] == "public" for c in failed), (v.name, failed)
        assert any(says in c["message"] for c in failed), (v.name, [c["message"] for c in failed])


# ------------------------------------------------------------------ input classes (issue 36)
# each input class's shortcut, as a wrong answer of tests/mistakes.py
SHORTCUTS = {
    ("s1_01_next_token", "probability_table"): "softmax written without subtracting the maximum",
    ("s1_01_next_token", "sample_next"): "temperature 0 divides by 0",
    ("s1_11_softmax", "large inputs such as [1000, 1001]"): "maximum not subtracted",
    ("s1_11_softmax", "a row far below the tensor's maximum"): "maximum of the whole tensor, not along dim",
    ("s1_11_softmax", "-inf entries (weight 0)"): "minimum subtracted, not the maximum",
    ("s1_14_dropout", "dropout"): "p = 1 not handled",
    ("s1_15_attention", "attention"): "NaN for a query that sees no key",
    ("s1_17_layer_norm", "a constant row (variance 0)"): "eps left out",
    ("s1_17_layer_norm", "nearly constant rows (variance below eps)"): "eps outside the square root",
    ("s1_23_evaluation", "report"): "report without labels=[0, 1]",
    ("s1_23_padding_mask", "masked_attention_weights"): "padded keys filled with -inf, not NEG_INF",
}


def _shortcut(c: InputClass) -> Variant:
    key = (c.exercise, c.function) if (c.exercise, c.function) in SHORTCUTS else (c.exercise, c.inputs)
    return variant(c.exercise, SHORTCUTS[key])


def test_every_input_class_a_docstring_promises_is_fed_by_a_public_check():
    """Issue 36: a stability promise (no overflow, a fully masked row, p = 1) is kept only if a public
    check feeds the input that breaks the usual shortcut and names the shortcut. Before the issue,
    2 of these 11 classes were."""
    assert not uncovered(census(ROOT).public), [c.inputs for c in uncovered(census(ROOT).public)]
    assert len({_shortcut(c) for c in INPUT_CLASSES}) == len(INPUT_CLASSES)


def test_each_shortcut_fails_a_public_check_that_names_it(tmp_path):
    """Every class's shortcut, graded for real: the public check fails with the class's mistake
    name (three submissions: one shortcut per exercise in each, --public-only)."""
    pending = list(INPUT_CLASSES)
    for n, batch in enumerate(rounds([_shortcut(c) for c in pending])):
        (tmp_path / f"round{n}").mkdir()
        sub = make_submission(tmp_path / f"round{n}", {ex: v.source() for ex, v in batch.items()})
        report = grade(sub, *[a for ex in batch for a in ("-e", ex)], "--public-only")
        for ex, v in batch.items():
            c = next(c for c in INPUT_CLASSES if _shortcut(c) == v)
            failed = [r for r in checks_of(report, ex) if r["status"] == "failed"]
            assert any(r["mistake"] == c.shortcut for r in failed), (
                v.name,
                [(r["name"], r["mistake"], r["message"][:160]) for r in failed],
            )


def test_a_plain_list_of_blocks_is_named_with_why_it_matters(tmp_path):
    """Issue 36: blocks in a Python list instead of an nn.ModuleList were shown as a difference of
    printed layouts; the public check now says their parameters are not registered."""
    plain = [variant("s1_19_shortcuts", "layers in a plain list"), variant("s1_23_encoder", "blocks in a plain list")]
    sub = make_submission(tmp_path, {v.exercise: v.source() for v in plain})
    report = grade(sub, *[a for v in plain for a in ("-e", v.exercise)], "--public-only")
    for v in plain:
        failed = [c for c in checks_of(report, v.exercise) if c["status"] == "failed"]
        assert any(
            "not an nn.ModuleList" in c["message"]
            and "optimizer never trains them" in c["message"]
            and c["mistake"].startswith("the blocks were kept in a plain list")
            for c in failed
        ), (v.name, [(c["name"], c["message"][:200]) for c in failed])
