"""The comparison helper's messages: type, shape, dtype, then values; hidden checks reveal nothing."""

import math

import pytest
import torch

from grader.checking import compare, tolerances
from grader.checking.compare import CheckFailure, Mistake, expect_tensor
from grader.course.messages import Msg

WEIGHTS = Msg("weights", "权重")


@pytest.fixture(params=[False, True], ids=["public", "hidden"])
def visibility(request):
    token = compare.HIDDEN.set(request.param)
    yield request.param
    compare.HIDDEN.reset(token)


def fail_message(*args, **kwargs) -> str:
    with pytest.raises(CheckFailure) as e:
        expect_tensor(*args, **kwargs)
    return str(e.value)


def test_passes_within_tolerance(visibility):
    expect_tensor(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0 + 1e-7]), tol="softmax")
    # NaN and inf match only where a check's trusted expected value holds them on purpose
    expect_tensor(torch.tensor([math.nan, -math.inf]), torch.tensor([math.nan, -math.inf]), tol="exact", nonfinite=True)


def test_nan_or_inf_never_matches_by_default(visibility):
    """`expected` may be the student's own output (an invariance): NaN everywhere must fail."""
    for bad in (math.nan, math.inf, -math.inf):
        same = torch.full((2, 3), bad)
        msg = fail_message(same, same.clone(), tol="attention", what=WEIGHTS)
        if visibility:  # where and how many can follow a hidden input
            assert msg == "weights: NaN or infinite values where finite numbers were expected", msg
        else:
            assert "6 value(s) are NaN or infinite where a finite number was expected" in msg, msg
    msg = fail_message(torch.tensor([-math.inf, 1.0]), torch.tensor([-math.inf, 2.0]), nonfinite=True)
    assert "NaN or infinite" not in msg and "differ" in msg  # the -inf matched; 1 vs 2 did not
    assert "differ" in fail_message(torch.tensor([math.inf, 2.0]), torch.tensor([-math.inf, 2.0]), nonfinite=True)


def test_order_type_shape_dtype_values(visibility):
    # the type returned, the shapes and the dtypes can follow the input: only public checks name them
    got = "list" if not visibility else "…"
    assert f"expected a torch.Tensor, got {got}" in fail_message([1.0], torch.ones(1), what=WEIGHTS)
    msg = fail_message(torch.ones(2, 3), torch.ones(3, 2), what=WEIGHTS)
    assert "wrong shape" in msg
    assert ("(2, 3)" in msg) is ("(3, 2)" in msg) is (not visibility)
    dtypes = "expected torch.float32, got torch.float64" if not visibility else "expected …, got …"
    assert f"wrong dtype: {dtypes}" in fail_message(torch.ones(2, dtype=torch.float64), torch.ones(2))
    msg = fail_message(torch.tensor([1.0, math.nan, 3.0]), torch.tensor([1.0, 2.0, 3.0]))
    assert "NaN or infinite" in msg and ("(1,)" in msg) is (not visibility)


def test_public_message_gives_worst_index_expected_actual_and_errors():
    exp = torch.tensor([[0.1, 0.2], [0.3, 0.4]])
    got = exp.clone()
    got[1, 0] = 0.35
    got[0, 1] = 0.2001
    msg = fail_message(got, exp, tol="softmax", what=Msg("attention weights", "注意力权重"))
    assert msg.startswith("attention weights: 2 of 4 values differ")
    assert "index (1, 0)" in msg and "expected 0.3" in msg and "got 0.35" in msg
    assert "max abs error 0.05" in msg and "max rel error 0.167" in msg


def test_hidden_message_never_reveals_expected_values():
    exp = torch.tensor([0.123456, 0.654321])
    got = torch.tensor([0.5, 0.5])
    token = compare.HIDDEN.set(True)
    try:
        msg = fail_message(got, exp, tol="softmax", what=WEIGHTS)
    finally:
        compare.HIDDEN.reset(token)
    assert msg == "weights: values differ from the expected ones beyond the tolerance", msg
    for secret in ("0.123", "0.654", "0.376", "0.154"):  # values and errors both leak the answer
        assert secret not in msg


def test_a_hidden_check_s_message_carries_no_number():
    """Checks describe their calls with the values they used; in a hidden check those values are
    the hidden input, so the runner masks every number of a hidden check's message (the book's
    section and listing numbers aside), whatever the check wrote."""
    from grader.checking.runner import _message

    said = (
        "gelu(x) must never exceed relu(x) (x = [6.082871234372721]) in listing 1.16 (§1.18), dim=-1, "
        "a (3, 4, 5) tensor, softmax(x + 0.5), scale 1e-05; softmax over dim 0"
    )
    hidden, _ = _message(AssertionError(said), hidden=True)
    assert hidden == (
        "gelu(x) must never exceed relu(x) (x = […]) in listing 1.16 (§1.18), dim=…, "
        "a (…) tensor, softmax(…), scale …; softmax over dim 0"
    ), hidden
    public, _ = _message(AssertionError(said), hidden=False)
    assert public == said
    counted, _ = _message(
        AssertionError("the counts spread 0.4 times the spread over 8192 rows (8,192 in all) of 8 calls"), hidden=True
    )
    assert counted == "the counts spread … times the spread over … rows (… in all) of 8 calls", counted
    failure, _ = _message(
        CheckFailure("softmax([2, 3, -inf]): the result is not correct for this hidden input"), hidden=True
    )
    assert failure == "softmax([…]): the result is not correct for this hidden input", failure
    from grader.checking.compare import ImportFailure

    imported, _ = _message(ImportFailure("importing ch01/x.py failed: sys.exit(3) was called"), hidden=True)
    assert imported.endswith("sys.exit(3) was called")  # known before any input: shown whole


def test_known_mistake_is_named(visibility):
    x = torch.tensor([[1.0, 2.0], [3.0, 5.0]])
    right = torch.softmax(x, dim=-1)
    wrong = torch.softmax(x, dim=0)
    msg = fail_message(
        wrong, right, tol="softmax", mistakes=[Mistake(torch.softmax(x, dim=0), "softmax over dim 0", "在第 0 维")]
    )
    assert "This looks like softmax over dim 0." in msg


def test_chinese_messages(monkeypatch):
    monkeypatch.setenv("KATA_LANG", "zh")
    assert "形状错误" in fail_message(torch.ones(2), torch.ones(3))


def test_tolerance_table_is_the_single_source():
    assert tolerances.get("exact").atol == 0 and str(tolerances.get("exact")) == "exact"
    assert tolerances.get("printed4").atol > 5e-5
    with pytest.raises(KeyError, match="unknown tolerance"):
        tolerances.get("loose")
