"""The one comparison helper all checks use, and the failures it raises.

A failing tensor check says, in order: type, shape, dtype, then values (NaN/Inf first, then
the worst index with expected vs actual, max abs and rel error). In a hidden check the message
never contains expected values. Known mistakes (`mistakes={...}`) are recognised and named.

Every text a check passes (`what=`, `expect`'s message, `CheckFailure`) is a `Msg(en, zh)` or a
`code(...)`: a plain string is refused, so no check can forget the Chinese.
"""

from __future__ import annotations

import contextvars
import functools
from dataclasses import dataclass

import torch

from ..course.messages import CONCEAL, Msg, from_input, t
from ..worker.proxy import returned_where
from . import tolerances

# Set by the runner for the check being run; decides how much a message may reveal. The same flag
# as messages.CONCEAL: while it is set, a message field marked `from_input` renders as "…".
HIDDEN: contextvars.ContextVar[bool] = CONCEAL
# Set by the runner: whether this run grades (hidden checks too: `kata grade`) or only shows the
# public checks to the student (`kata check`, `kata watch`, `kata submit`, `--public-only`).
GRADING: contextvars.ContextVar[bool] = contextvars.ContextVar("kata_grading", default=True)
# Set by the runner for the check being run: a box that grading() marks when it answers False, so
# that `kata check` can say which checks read more when graded (`kata check --full` runs them so).
SKIPPED_READS: contextvars.ContextVar[list | None] = contextvars.ContextVar("kata_skipped_reads", default=None)


def grading() -> bool:
    """True when the run grades. The dropout and masking checks read the rule where `kata train`
    runs (8M-element reads, seconds each) only then: they catch a rule keyed on the training
    size or regime, which no honest mistake is, and `kata check` stays quick."""
    on = GRADING.get()
    box = SKIPPED_READS.get()
    if not on and box is not None:
        box[0] = True
    return on


class CheckFailure(AssertionError):
    """A check failed; the message (a `Msg`, rendered in the student's language) is meant for
    the student."""

    def __init__(self, message: "Msg | str", mistake: "Msg | str" = ""):
        super().__init__(message)
        self.text = message  # not `msg`: pytest reads an AssertionError's `msg` as a str
        # the name of a recognised mistake: the class summary counts it by its English and shows it
        # in the instructor's language where the check gave a Msg (en, zh)
        self.mistake = mistake.en if isinstance(mistake, Msg) else mistake
        self.mistake_zh = mistake.zh if isinstance(mistake, Msg) else ""

    def __str__(self) -> str:
        return str(self.text)


class ImportFailure(CheckFailure):
    """The exercise's file could not be imported: a fact known before any input is given, so a
    hidden check shows it whole (runner.conceal_values leaves it alone)."""


def _text(value, role: str) -> Msg:
    """`value` if it is a Msg; a plain string is a check written without its Chinese text."""
    if isinstance(value, Msg):
        return value
    raise TypeError(f"{role} must be Msg(english, chinese) or code(text), not {type(value).__name__} {value!r}")


@dataclass(frozen=True)
class Mistake:
    """A plausible wrong answer: if the student's value matches `value`, say `en` / `zh`."""

    value: torch.Tensor
    en: str
    zh: str

    @property
    def message(self) -> Msg:
        return Msg(self.en, self.zh)


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _index(flat: int, shape) -> tuple:
    idx = []
    for dim in reversed(list(shape)):
        idx.append(flat % dim if dim else 0)
        flat = flat // dim if dim else 0
    return tuple(reversed(idx))


def close_mask(actual: torch.Tensor, expected: torch.Tensor, tol: tolerances.Tol) -> torch.Tensor:
    a = actual.to(torch.float64)
    e = expected.to(torch.float64)
    both_nan = torch.isnan(a) & torch.isnan(e)
    same_inf = torch.isinf(a) & torch.isinf(e) & (torch.sign(a) == torch.sign(e))
    ok = (a - e).abs() <= tol.atol + tol.rtol * e.abs()
    return ok | both_nan | same_inf


def matches(actual, expected: torch.Tensor, tol: str | tolerances.Tol) -> bool:
    tol = tolerances.get(tol) if isinstance(tol, str) else tol
    return (
        isinstance(actual, torch.Tensor)
        and tuple(actual.shape) == tuple(expected.shape)
        and bool(close_mask(actual, expected, tol).all())
    )


RESULT = Msg("result", "结果")


def expect_tensor(
    actual,
    expected: torch.Tensor,
    tol: str = "exact",
    what: Msg = RESULT,
    dtype: bool = True,
    mistakes: list[Mistake] | None = None,
    nonfinite: bool = False,
    specials: "dict[int, str] | None" = None,
) -> None:
    """Fail with a teaching message unless `actual` equals `expected` within tolerance `tol`.

    A NaN or infinity in `actual` fails, even where `expected` holds one too: `expected` may be
    the student's own output (an invariance: "the same output after changing the padding"), and
    a submission answering NaN everywhere would pass every such check. A check whose trusted
    expected value holds NaN or ±inf on purpose (masked scores: -inf) says `nonfinite=True`;
    then a non-finite value matches the same non-finite value there.

    Integer and boolean tensors (token ids, masks, labels) are sequences: a public check names the
    first index that differs, not the one with the largest difference, and `specials` (id -> name,
    e.g. {cls_id: "[CLS]"}) names a special token missing or extra there."""
    what = _text(what, "expect_tensor(what=...)")
    hidden = HIDDEN.get()
    tolv = tolerances.get(tol)
    if not isinstance(actual, torch.Tensor):
        # the type the code returned can follow the hidden input: a hidden check does not name it
        raise CheckFailure(_at(actual, t("not_a_tensor", what=what, got=from_input(type(actual).__name__))))
    named = _mistake(actual, mistakes, tolv)
    hint = t("mistake", mistake=named.message) if named else ""
    fail = functools.partial(CheckFailure, mistake=Msg(named.en, named.zh) if named else "")
    if tuple(actual.shape) != tuple(expected.shape):
        key = "shape_hidden" if hidden else "shape"  # hidden: not even the shape (it can follow the input)
        raise fail(
            _join(_at(actual, t(key, what=what, expected=tuple(expected.shape), actual=tuple(actual.shape))), hint)
        )
    if dtype and actual.dtype != expected.dtype:
        # both follow the hidden input's dtype where the answer keeps it: a hidden check names neither
        dtypes = {"expected": from_input(expected.dtype), "actual": from_input(actual.dtype)}
        raise fail(_join(_at(actual, t("dtype", what=what, **dtypes)), hint))
    if actual.numel() == 0:
        return
    a = actual.detach().to(torch.float64)
    e = expected.detach().to(torch.float64)
    bad_finite = ~torch.isfinite(a) & torch.isfinite(e) if nonfinite else ~torch.isfinite(a)
    if bad_finite.any():
        if hidden:  # where and how many can follow the input: a hidden check says neither
            raise fail(_join(t("nonfinite_hidden", what=what), hint))
        first = _index(int(bad_finite.flatten().nonzero()[0]), a.shape)
        raise fail(_join(_at(actual, t("nonfinite", what=what, count=int(bad_finite.sum()), index=first)), hint))
    ok = close_mask(a, e, tolv)
    if bool(ok.all()):
        return
    bad = int((~ok).sum())
    if hidden:
        raise fail(_join(t("values_hidden", what=what, bad=bad, total=a.numel(), tol=tolv), hint))
    if not (expected.is_floating_point() or expected.is_complex()):  # ids, masks, labels: a sequence
        first = int((~ok).flatten().nonzero()[0])
        text = t(
            "values_first",
            what=what,
            bad=bad,
            total=a.numel(),
            tol=tolv,
            index=_index(first, a.shape),
            expected=_int(expected.flatten()[first]),
            actual=_int(actual.flatten()[first]),
        )
        raise fail(_join(_at(actual, _join_named(text, _special_at(actual, expected, first, specials))), hint))
    err = (a - e).abs()
    err = torch.where(ok, torch.zeros_like(err), torch.where(torch.isnan(err), float("inf"), err))
    worst = int(err.flatten().argmax())
    idx = _index(worst, a.shape)
    # a relative error only where the expected value is not 0 (err / 0 read "8.5e+13") nor infinite
    nonzero = ~ok & (e != 0) & torch.isfinite(e)
    fields = dict(
        what=what,
        bad=bad,
        total=a.numel(),
        tol=tolv,
        index=idx,
        expected=_fmt(float(e.flatten()[worst])),
        actual=_fmt(float(a.flatten()[worst])),
        abs_err=float(err.max()),
    )
    if bool(nonzero.any()):
        rel = (err[nonzero] / e.abs()[nonzero]).max()
        raise fail(_join(_at(actual, t("values", rel_err=float(rel), **fields)), hint))
    raise fail(_join(_at(actual, t("values_abs", **fields)), hint))


def _at(actual, message: str) -> str:
    """`message` with where the student's code returned `actual` ("returned at ch01/x.py:14"),
    where the worker saw it: public checks only (a hidden check's calls note no line)."""
    where = "" if HIDDEN.get() else returned_where(actual)
    return t("returned_at", message=message, where=where) if where else message


def _int(x: torch.Tensor) -> str:
    if x.dtype == torch.bool:
        return str(bool(x))
    return _fmt(float(x)) if x.is_floating_point() or x.is_complex() else str(int(x))


def _special_at(actual: torch.Tensor, expected: torch.Tensor, first: int, specials) -> str:
    """ "[CLS] missing at position 0" / "an extra [SEP] at position 5" where the first difference of
    an id sequence is a special token the check names (`specials`: id -> name); else ""."""
    if not specials or expected.dtype == torch.bool or actual.is_floating_point() or actual.is_complex():
        return ""
    position = first % expected.shape[-1] if expected.dim() else 0  # along the sequence (the last dimension)
    return _special(int(expected.flatten()[first]), int(actual.flatten()[first]), position, specials)


def _special(want: int, got: int, position: int, specials) -> str:
    if not specials:
        return ""
    if want in specials and got in specials:
        return t("special_instead", token=specials[want], id=want, position=position, other=specials[got])
    if want in specials:
        return t("special_missing", token=specials[want], id=want, position=position)
    if got in specials:
        return t("special_extra", token=specials[got], id=got, position=position)
    return ""


def _join_named(message: str, named: str) -> str:
    return t("with_special", message=message, named=named) if named else message


def expect_equal(actual, expected, what: Msg = RESULT, specials: "dict[int, str] | None" = None) -> None:
    """Plain values (ints, strings, tuples of them) compared exactly. Two sequences of ints (token
    ids) name their first difference, and `specials` (id -> name) a special token missing or extra there."""
    what = _text(what, "expect_equal(what=...)")
    if (
        actual != expected
        or type(actual) is not type(expected)
        and not (isinstance(actual, (int, float)) and isinstance(expected, (int, float)))
    ):
        if HIDDEN.get():
            raise CheckFailure(t("hidden_failed", what=what))
        text = t("not_equal", what=what, expected=repr(expected), actual=repr(actual))
        if _int_sequence(actual) and _int_sequence(expected) and len(actual) and len(expected):
            a, e = list(actual), list(expected)
            first = next((i for i, (x, y) in enumerate(zip(a, e)) if x != y), min(len(a), len(e)))
            if first < min(len(a), len(e)):
                text = t(
                    "with_first_difference",
                    message=text,
                    first=t("first_difference", index=first, expected=e[first], actual=a[first]),
                )
                text = _join_named(text, _special(e[first], a[first], first, specials))
            else:
                text = t(
                    "with_first_difference",
                    message=text,
                    first=t("length_difference", expected=len(e), actual=len(a), index=first),
                )
        raise CheckFailure(_at(actual, text))


def _int_sequence(value) -> bool:
    return isinstance(value, (list, tuple)) and len(value) <= 1_000_000 and all(type(x) is int for x in value)


def expect(condition: bool, message: Msg) -> None:
    message = _text(message, "expect(condition, message)")
    if not condition:
        raise CheckFailure(message)


def _mistake(actual: torch.Tensor, mistakes, tol) -> "Mistake | None":
    for m in mistakes or []:
        if tuple(actual.shape) == tuple(m.value.shape) and bool(close_mask(actual, m.value, tol).all()):
            return m
    return None


def _join(message: str, hint: str) -> str:
    return t("with_hint", message=message, hint=hint) if hint else message
