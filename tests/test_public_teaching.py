"""The public checks teach: a mistake that costs points shows in `kata check` first.

Every wrong answer of tests/mistakes.py is graded twice, fully and with --public-only. Each must
lose points in the full grade (else the corpus has rotted: the edit no longer makes a mistake),
and then at least one public check of its exercise must fail, every public failure with a
message. Hidden checks stay for generalisation (other shapes, seeds, inputs); they never catch a
realistic mistake alone. A new exercise joins the rule by adding its wrong answers to the corpus.

The variants are graded in rounds, one submission folder per round holding at most one variant
of each exercise (a few `kata grade` calls, not one per variant).
"""

import pytest

from tests.conftest import checks_of, grade, make_submission
from tests.mistakes import MISTAKES, Variant, rounds
from tests.test_hidden_messages import stated_numbers


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[Variant, tuple[list[dict], list[dict]]]:
    """variant -> (its exercise's checks in the full grade, in the --public-only grade)."""
    out = {}
    for n, batch in enumerate(rounds()):
        sub = make_submission(tmp_path_factory.mktemp(f"round{n}"), {ex: v.source() for ex, v in batch.items()})
        args = [a for ex in batch for a in ("-e", ex)]
        full = grade(sub, *args)
        public = grade(sub, *args, "--public-only")
        for ex, v in batch.items():
            out[v] = (checks_of(full, ex), checks_of(public, ex))
    return out


def _ran(checks: list[dict]) -> list[dict]:
    return [c for c in checks if c["status"] != "skipped"]


def test_corpus_is_sound():
    assert len(MISTAKES) >= 40
    assert len({(v.exercise, v.name) for v in MISTAKES}) == len(MISTAKES), "two variants share a name"
    for v in MISTAKES:
        compile(v.source(), f"{v.exercise}: {v.name}", "exec")  # every edit applies and leaves valid Python


@pytest.mark.slow  # 84 variants in 5 rounds, each graded twice: about 3 minutes on two cores
@pytest.mark.parametrize("variant", MISTAKES, ids=[f"{v.exercise}:{v.name}" for v in MISTAKES])
def test_a_mistake_that_costs_points_fails_a_public_check(graded, variant):
    full, public = graded[variant]
    ran = _ran(full)
    assert ran, f"{variant.exercise}: no check ran"
    lost = sum(c["max_score"] - c["score"] for c in ran)
    assert lost > 0, f"{variant.name!r} no longer loses points: the corpus entry is not a mistake any more"
    assert all(c["visibility"] == "public" for c in public), "--public-only ran a hidden check"
    failed = [c for c in _ran(public) if c["status"] != "passed"]
    hidden_only = sorted(c["name"] for c in ran if c["status"] != "passed")
    assert failed, (
        f"{variant.name!r} loses {lost:g} points in {variant.exercise} but no public check fails: "
        f"only {hidden_only} catch it"
    )
    for c in failed:
        assert c["message"].strip(), f"{c['name']} fails with no message"
    # The same public checks fail in the full grade: --public-only shows what the grade will count.
    assert {c["name"] for c in failed} == {
        c["name"] for c in ran if c["visibility"] == "public" and c["status"] != "passed"
    }


@pytest.mark.slow
@pytest.mark.parametrize("variant", MISTAKES, ids=[f"{v.exercise}:{v.name}" for v in MISTAKES])
def test_a_failing_hidden_check_states_no_number_of_its_input(graded, variant):
    """Whatever path a hidden check's text takes (its own Msg, a helper's, the comparison's catalog
    text, a named mistake), the student reads no number outside the course's own text: a size,
    shape, dtype or option of the hidden input is something code can be keyed to."""
    full, _ = graded[variant]
    for c in full:
        if c["visibility"] == "hidden" and c["status"] not in ("passed", "skipped"):
            assert not stated_numbers(c["message"]), (c["name"], c["message"])
