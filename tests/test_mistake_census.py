"""The mistake census (issue 28): every mistake a hidden check names, a public check names too.

grader/authoring/census.py reads the names from the checks themselves (Mistake(value, en, zh),
CheckFailure(..., mistake=...), draws.expect_drawn), so a mistake added to a hidden check alone
fails here. The five mistakes issue 28 found caught by hidden checks only (or by nothing) are
graded for real with --public-only: each fails a public check whose message names it.
"""
import shutil

from grader.authoring.census import DRAWS, census, module_mistakes
from tests.conftest import ROOT, checks_of, grade, make_submission
from tests.mistakes import Variant

# Named by hidden checks only when the census was written; each must leave this table when a
# public check names it (the test asserts the table is exact, so it can only shrink).
KNOWN_GAPS = {
    "s1_05_embeddings": ["the one-hot vectors must be float32, not integers"],
    "s1_05_positions": ["positions count from 0", "the bits are in reverse order: most significant bit first"],
    "s1_07_additive_attention": ["softmax over the batch instead of over the encoder states (dim=-1)"],
    "s1_09_input_embeddings": ["positions looked up by token id instead of by position"],
    "s1_11_softmax": ["softmax over dim {…} instead of dim {…}"],
    "s1_19_shortcuts": ["gradients accumulated over the two calls: call model.zero_grad() before backward()",
                        "the shortcut was added before the GELU: x + GELU(Linear(x))",
                        "use_shortcut has the opposite effect",
                        "x was added to a layer whose output has another size (it broadcast)"],
    "s1_23_encoder_block": [DRAWS, "dropout keyed on the dtype or the size", "dropout not passed on",
                            "dropout of the block's own"],
}


def test_every_mistake_a_hidden_check_names_is_named_by_a_public_check():
    gaps = census(ROOT).hidden_only()
    new = {ex: [n for n in names if n not in KNOWN_GAPS.get(ex, [])] for ex, names in gaps.items()}
    new = {ex: names for ex, names in new.items() if names}
    assert not new, f"named by hidden checks only (name them in a public check of the exercise too): {new}"
    closed = {ex: [n for n in names if n not in gaps.get(ex, [])] for ex, names in KNOWN_GAPS.items()}
    closed = {ex: names for ex, names in closed.items() if names}
    assert not closed, f"a public check names these now: remove them from KNOWN_GAPS: {closed}"


def test_the_five_held_mistakes_are_named_publicly():
    c = census(ROOT)
    assert "the scores were divided by d_k instead of sqrt(d_k)" in c.public["s1_13_causal_mask"]
    assert "LayerNorm.forward ignored self.eps: pass it on, normalize(x, self.eps)" in c.public["s1_17_layer_norm"]
    assert "labels other than 0 and 1 not refused" in c.public["s1_23_dataset"]
    assert "attention dropout left out" in c.public["s1_23_self_attention"]
    assert "survivors not weight / (1 - p) at the training size" in c.public["s1_15_attention"]


CHECKS = '''
from grader.checking import CheckFailure, Mistake, Msg, check, draws, expect_tensor

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
'''


def test_the_census_reads_every_way_a_check_names_a_mistake(tmp_path):
    path = tmp_path / "test_s9_demo.py"
    path.write_text(CHECKS)
    named = module_mistakes(path)
    assert named["test_public"] == {"public and hidden", "an f-string {…}", "from a table", "a shared pair"}
    assert named["test_hidden"] == {"public and hidden", "an f-string {…}", "only hidden"}
    assert named["test_hidden_draws"] == {DRAWS}
    (tmp_path / "grader" / "checks").mkdir(parents=True)
    shutil.move(path, tmp_path / "grader" / "checks" / path.name)
    assert census(tmp_path).hidden_only() == {"s9_demo": sorted(["only hidden", DRAWS])}


FIVE = [  # issue 28's five: (variant, a public check's message names it with)
    (Variant("s1_13_causal_mask", "causal attention divided by d_k",
             (("/ keys.shape[-1] ** 0.5", "/ keys.shape[-1]"),)), "divided by d_k instead of sqrt(d_k)"),
    (Variant("s1_15_attention", "attention dropout not rescaled",
             (("weights = weights * survive / (1 - dropout_p)", "weights = weights * survive"),)),
     "not rescaled by 1 / (1 - p)"),
    (Variant("s1_17_layer_norm", "LayerNorm.forward ignores self.eps", (("normalize(x, self.eps)", "normalize(x)"),)),
     "LayerNorm.forward ignored self.eps"),
    (Variant("s1_23_dataset", "labels other than 0/1 accepted",
             (("            if label not in (0, 1):\n", "            if False:\n"),)), "with a label 2 must raise ValueError"),
    (Variant("s1_23_self_attention", "attention dropout left out",
             (("attn = self.attn_dropout(torch.softmax(scores, dim=-1))", "attn = torch.softmax(scores, dim=-1)"),)),
     "no attention weight was dropped"),
]


def test_the_five_held_mistakes_fail_a_public_check(tmp_path):
    """One submission holding all five, graded --public-only (about 5 s)."""
    sub = make_submission(tmp_path, {v.exercise: v.source() for v, _ in FIVE})
    report = grade(sub, *[a for v, _ in FIVE for a in ("-e", v.exercise)], "--public-only")
    for v, says in FIVE:
        failed = [c for c in checks_of(report, v.exercise) if c["status"] == "failed"]
        assert failed and all(c["visibility"] == "public" for c in failed), (v.name, failed)
        assert any(says in c["message"] for c in failed), (v.name, [c["message"] for c in failed])
