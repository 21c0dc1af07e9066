"""Graded submissions of s1_19_shortcuts: plausible wrong answers lose points with a named mistake."""

import pytest

from tests.conftest import SOLUTIONS, checks_of, grade, score_of
from tests.mistakes import expect_named_publicly, variant

EX = "s1_19_shortcuts"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
MAX = 12


def _replace(old, new):
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def _failed(report):
    return {c["name"]: c["message"] for c in checks_of(report, EX) if c["status"] != "passed"}


def test_shortcut_before_gelu_is_named(submission):
    wrong = _replace(
        "            y = layer(x)\n            x = x + y if self.use_shortcut and y.shape == x.shape else y",
        "            z = layer[0](x)\n"
        "            x = layer[1](x + z) if self.use_shortcut and z.shape == x.shape else layer[1](z)",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) < MAX / 2
    assert "added before the GELU" in failed["test_figure_1_123_two_layers"]
    assert "added before the GELU" in failed["test_forward_given_weights"]


def test_gradients_not_zeroed_and_summed_loss(submission):
    wrong = _replace(
        "    model.zero_grad()\n    loss = nn.functional.mse_loss(model(x), target)",
        "    loss = nn.functional.mse_loss(model(x), target, reduction='sum')",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "the loss was summed" in failed["test_figure_1_123_two_layers"]
    assert "test_five_layers_vanishing_gradients" not in failed  # the property still holds: only the scale is off
    # (with one output and a batch of one, as in the narrow net, sum and mean agree)
    assert set(failed) == {
        "test_figure_1_123_two_layers",
        "test_five_layers_values",
        "test_gradients_do_not_accumulate",
        "test_same_gradients_twice",
    }


def test_accumulated_gradients_are_named(submission):
    wrong = _replace("    model.zero_grad()\n", "")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_same_gradients_twice", "test_gradients_do_not_accumulate"}  # public, and hidden
    for message in failed.values():
        assert "zero_grad" in message


def test_broadcast_shortcut_on_resized_layer(submission):
    wrong = _replace(
        "x = x + y if self.use_shortcut and y.shape == x.shape else y", "x = x + y if self.use_shortcut else y"
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    # test_parameter_names also compares the output: the right parameters around a wrong forward earn nothing.
    assert set(failed) == {
        "test_forward_given_weights",
        "test_narrow_last_layer_gradients",
        "test_parameter_names",
        "test_forward_on_and_off",
    }
    assert "another size" in failed["test_forward_given_weights"]
    assert "another size" in failed["test_forward_on_and_off"]


def test_other_correct_answer_scores_full_marks(submission):
    other = _replace(
        "    model.zero_grad()\n    loss = nn.functional.mse_loss(model(x), target)\n    loss.backward()\n"
        "    return torch.stack([layer[0].weight.grad.abs().mean() for layer in model.layers])",
        "    weights = [layer[0].weight for layer in model.layers]\n"
        "    loss = ((model(x) - target) ** 2).mean()\n"
        "    grads = torch.autograd.grad(loss, weights)\n"
        "    return torch.tensor([float(g.abs().sum() / g.numel()) for g in grads])",
    )
    other = other.replace(
        "        for layer in self.layers:\n            y = layer(x)\n"
        "            x = x + y if self.use_shortcut and y.shape == x.shape else y\n        return x",
        "        for layer in self.layers:\n            y = nn.functional.gelu(layer[0](x))\n"
        "            if self.use_shortcut and y.shape == x.shape:\n                y = y + x\n            x = y\n        return x",
    )
    assert "autograd.grad" in other and "functional.gelu" in other
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)


@pytest.mark.parametrize(
    "name, says",
    [
        ("gradients not zeroed", "gradients accumulated over the two calls"),
        ("shortcut added before the GELU", "the shortcut was added before the GELU"),
        ("use_shortcut inverted", "use_shortcut has the opposite effect"),
        ("shortcut broadcast onto a resized layer", "x was added to a layer whose output has another size"),
    ],
)
def test_shortcut_mistakes_are_named_by_a_public_check(submission, name, says):
    """Issue 28: the hidden test_forward_given_weights and test_gradients_do_not_accumulate named
    these, in other words than kata check or not at all there: a broadcast shortcut raised a bare
    RuntimeError, an inverted use_shortcut was named nowhere public. test_forward_on_and_off reads
    [4, 4, 4] and [4, 4, 1] nets with shortcuts on and off."""
    r = grade(submission({EX: variant(EX, name).source()}), "-e", EX)
    expect_named_publicly(r, EX, says)
