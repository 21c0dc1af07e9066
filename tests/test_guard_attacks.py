"""The third outside attack on the "write it yourself" exercises, graded for real.

tests/hostile/forbidden_api/ holds the attacker's files as written (each one exercise file; the rest of
the submission is the reference solutions). Every attack got marks on the main it was aimed at,
with the forbidden function or operator doing the work:

- code in a string annotation, run by functools.singledispatch(method).register (sm_sd, sm_sdm,
  bpe_tt: the guards switched off from there, or tiktoken imported);
- a callback in a special method (`_Key(0) in tensor` calls __eq__ with torch's function guard
  paused) building torch's own attention or an encoder layer whose fused kernel computes GELU
  (sa_cb, ff_cb);
- fused or sibling operators no list named: flash attention's softmax, sparse softmax,
  embedding_bag and cosine_embedding_loss, instance norm, bilinear (sm_sdpa8, sm_sparse, emb_alt,
  ln_inorm, mm_bil);
- hidden checks that quoted their inputs (sm_echo, ff_leak).

A fourth attack (qm_*, ul_sa, mm_ebag, mm_convtbc, mm_hspmm, ln_rms) used a subclass of a
forbidden class (torch.ao's quantizable MultiheadAttention), a collections.UserList base whose
__len__ torch calls, and more unlisted operators. Each attack now scores 0 and no hidden message
carries an input value; the attackers' honest variants (a heap in the BPE loop, dataclasses,
private attributes, `__constants__`, a `__repr__`, ...) keep full marks.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from grader.capstone import gpt2
from grader.course.manifest import load
from grader.course.messages import t
from tests.conftest import ROOT, checks_of, grade, score_of

FILES = Path(__file__).resolve().parent / "hostile" / "forbidden_api"
COURSE = load(ROOT)
HAS_ASSET = gpt2.have_asset()

ATTACKS = {  # exercise -> the attack graded in the one shared submission
    "s1_11_softmax": "sm_sd",
    "s1_23_self_attention": "sa_cb",
    "s1_18_feed_forward": "ff_cb",
    "s1_05_embeddings": "emb_alt",
    "s1_17_layer_norm": "ln_inorm",
    "s1_11_matmul": "mm_bil",
    **({"s1_04_byte_bpe": "bpe_tt"} if HAS_ASSET else {}),
}
MORE_SOFTMAX = ["sm_sdm", "sm_sdpa8", "sm_sparse"]
# The fourth attack: torch's quantizable MultiheadAttention (a subclass of the forbidden class, its
# forward plain Python), a collections.UserList whose __len__ (called by torch.tensor) reads a
# property that runs torch's attention, and operators still missing from the lists.
FOURTH = {
    "s1_23_self_attention": "qm_sa",
    "s1_16_multihead": "qm_mh",
    "s1_11_matmul": "mm_ebag",
    "s1_17_layer_norm": "ln_rms",
}
MORE_FOURTH = [("s1_23_self_attention", "ul_sa"), ("s1_11_matmul", "mm_convtbc"), ("s1_11_matmul", "mm_hspmm")]
HONEST = {
    "s1_17_layer_norm": "ln_fp",
    "s1_14_dropout": "do_fp",
    "s1_18_feed_forward": "ff_fp",
    "s1_11_matmul": "mm_fp",
    "s1_11_softmax": "sm_fp",
    **({"s1_04_byte_bpe": "bpe_heapq"} if HAS_ASSET else {}),
}
A_NUMBER = re.compile(r"(?<![\w.§])\d|\binf\b|\bnan\b")


def _graded(submission, files: dict[str, str]) -> dict:
    sub = submission({ex: (FILES / f"{name}.py").read_text() for ex, name in files.items()})
    return grade(sub, *[a for ex in files for a in ("-e", ex)])


def _hidden_numbers(report: dict) -> list[str]:
    """Hidden messages holding a number, the grader's one-line scan verdict aside."""
    out = []
    for c in report["checks"]:
        said = c["message"].replace(t("scan_hidden", lang="en"), "")  # the grader's own one-line verdict
        said = said.replace(COURSE.get(c["exercise"]).forbidden_hint, "")  # the course's own text
        if c["visibility"] == "hidden" and A_NUMBER.search(said):
            out.append(f"{c['exercise']}::{c['name']}: {c['message']}")
    return out


@pytest.mark.slow
def test_each_attack_scores_zero(submission):
    report = _graded(submission, ATTACKS)
    for ex, name in ATTACKS.items():
        assert score_of(report, ex) == 0, (name, [(c["name"], c["score"], c["message"]) for c in checks_of(report, ex)])
    assert not _hidden_numbers(report)


@pytest.mark.slow
@pytest.mark.parametrize("name", MORE_SOFTMAX)
def test_each_softmax_attack_scores_zero(submission, name):
    report = _graded(submission, {"s1_11_softmax": name})
    assert score_of(report, "s1_11_softmax") == 0, checks_of(report, "s1_11_softmax")


@pytest.mark.slow
def test_each_attack_of_the_fourth_round_scores_zero(submission):
    report = _graded(submission, FOURTH)
    for ex, name in FOURTH.items():
        assert score_of(report, ex) == 0, (name, [(c["name"], c["score"], c["message"]) for c in checks_of(report, ex)])


@pytest.mark.slow
@pytest.mark.parametrize("ex, name", MORE_FOURTH, ids=[n for _, n in MORE_FOURTH])
def test_each_other_attack_of_the_fourth_round_scores_zero(submission, ex, name):
    report = _graded(submission, {ex: name})
    assert score_of(report, ex) == 0, checks_of(report, ex)


@pytest.mark.parametrize("honest", [HONEST, {"s1_17_layer_norm": "ln_repr"}], ids=["third", "fourth"])
def test_the_attacker_s_honest_variants_keep_full_marks(submission, honest):
    report = _graded(submission, honest)
    for ex, name in honest.items():
        lost = [(c["name"], c["message"]) for c in checks_of(report, ex) if c["score"] < c["max_score"]]
        assert not lost, (name, lost)


@pytest.mark.slow
def test_hidden_checks_quote_no_input(submission):
    """A constant softmax and a GELU nudged past relu at the input's maximum: both fail hidden
    checks whose messages described their call with the hidden values; now no number shows."""
    report = _graded(submission, {"s1_11_softmax": "sm_echo", "s1_18_feed_forward": "ff_leak"})
    failed_hidden = [c for c in report["checks"] if c["visibility"] == "hidden" and c["status"] == "failed"]
    assert {c["exercise"] for c in failed_hidden} == {"s1_11_softmax", "s1_18_feed_forward"}
    assert not _hidden_numbers(report)
    public = [
        c["message"]
        for c in checks_of(report, "s1_11_softmax")
        if c["visibility"] == "public" and c["status"] == "failed"
    ]
    assert any(A_NUMBER.search(m) for m in public)  # public checks still show their values
