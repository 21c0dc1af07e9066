"""The input classes: every numerical promise an exercise's docstring makes, the input that breaks
the usual shortcut around it, and the mistake a public check names when it meets that shortcut.

A docstring that promises "large inputs give no overflow", "a fully masked row gets zeros" or
"with p = 1 the result is all zeros" is a promise about one class of inputs, and the everyday
shortcut (no maximum subtracted, -inf where the book writes -1e9, x * keep / (1 - p) for every
p) fails only on that class. The rule (tests/test_mistake_census.py): each class below is fed by
a public check, which names the shortcut in `kata check`, so that a student meets it before the
grade does; tests/mistakes.py holds each shortcut as a wrong answer graded for real.

    python -m grader.authoring.census [ROOT]    # prints this table's coverage with the census
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class InputClass:
    exercise: str
    function: str
    inputs: str  # the class of inputs the docstring promises about
    shortcut: str  # the mistake's name, as a public check writes it (census.py reads it there)


INPUT_CLASSES: tuple[InputClass, ...] = (
    InputClass(
        "s1_01_next_token",
        "probability_table",
        "a small temperature: logits / 0.01 near 110, past float32's exp range",
        "exp() overflowed at a small temperature: subtract each row's maximum before "
        "exponentiating (torch.softmax does)",
    ),
    InputClass(
        "s1_01_next_token",
        "sample_next",
        "temperature 0 (greedy), where dividing by it is 0 / 0",
        "temperature 0 not handled: the logits were divided by 0",
    ),
    InputClass(
        "s1_11_softmax",
        "softmax",
        "large inputs such as [1000, 1001]",
        "exp() overflowed: subtract the maximum before exponentiating",
    ),
    InputClass(
        "s1_11_softmax",
        "softmax",
        "a row far below the tensor's maximum",
        "the maximum of the whole tensor was subtracted (x.max()), not each row's along dim: a row far below "
        "it underflows to `0 / 0`; subtract `x.amax(dim=dim, keepdim=True)`",
    ),
    InputClass(
        "s1_11_softmax",
        "softmax",
        "-inf entries (weight 0)",
        "the minimum or the mean was subtracted, not the maximum: a -inf entry then gives NaN; subtract "
        "x.amax(dim=dim, keepdim=True)",
    ),
    InputClass(
        "s1_14_dropout",
        "dropout",
        "p = 1 (everything dropped)",
        "p = 1 was not handled: x * keep / (1 - p) divides 0 by 0; return zeros when p is 1",
    ),
    InputClass(
        "s1_15_attention",
        "attention",
        "a query whose keys are all masked",
        "a query that sees no key gave NaN: its row of -inf was not zeroed after the softmax",
    ),
    InputClass(
        "s1_17_layer_norm",
        "normalize",
        "a constant row (variance 0)",
        "eps was left out: (x - mean) / sqrt(var) divides by 0 for a constant row; use sqrt(var + eps)",
    ),
    InputClass(
        "s1_17_layer_norm",
        "normalize",
        "nearly constant rows (variance below eps)",
        "eps added outside the square root: use sqrt(var + eps)",
    ),
    InputClass(
        "s1_23_evaluation",
        "report",
        "one class only: a class never predicted has precision 0 / 0",
        "labels=[0, 1] left out: the report fails when only one class occurs",
    ),
    InputClass(
        "s1_23_padding_mask",
        "masked_attention_weights",
        "a sequence of padding only",
        "padded keys were filled with -inf: a sequence of padding only becomes 0 / 0 (NaN); fill with "
        "NEG_INF (-1e9), as the book does, and such a row gets uniform weights",
    ),
)


def uncovered(public: dict[str, set[str]]) -> list[InputClass]:
    """The classes whose shortcut no public check names (census(root).public)."""
    return [c for c in INPUT_CLASSES if c.shortcut not in public.get(c.exercise, set())]


def table(public: dict[str, set[str]]) -> str:
    """Per exercise: the input classes its docstrings promise about, and how many a public check feeds."""
    missing = set(uncovered(public))
    per: dict[str, list[InputClass]] = {}
    for c in INPUT_CLASSES:
        per.setdefault(c.exercise, []).append(c)
    rows = [f"{'exercise':<24} {'input classes':>13} {'public':>6}  classes"]
    for ex, classes in per.items():
        fed = [c for c in classes if c not in missing]
        rows.append(
            f"{ex:<24} {len(classes):>13} {len(fed):>6}  "
            + "; ".join(c.inputs + ("" if c in fed else " (no public check)") for c in classes)
        )
    rows.append(f"{'all':<24} {len(INPUT_CLASSES):>13} {len(INPUT_CLASSES) - len(missing):>6}")
    return "\n".join(rows)
