"""Runtime guard against "implement it yourself" violations (runs inside the worker).

While a student's function runs, a TorchFunctionMode sees every torch call made from Python
and refuses the ones the exercise forbids, with a message that says what to write instead.
The guard teaches; it is not a security boundary (the student's process could remove it).
The verdict on forbidden APIs comes from the static scan on the trusted side.
"""

from __future__ import annotations

import importlib

from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode


class ForbiddenAPI(RuntimeError):
    """Raised inside the worker when student code calls a forbidden torch function. The student's
    code can catch it, change it, or build one of its own, so what the trusted side is told comes
    from the guard's record of its own refusals (`Refusals`), never from this object's attributes."""


class Refusals:
    """The refusals a guard made during the current request: (the exception it raised, the catalog
    code and fields it raised it with). The runtime confirms a ForbiddenAPI by identity against this
    record (serve.Session.error); a forged one, or one the student's code built, is not in it."""

    KEEP = 32  # a loop that catches refusals keeps only the last few (each holds its traceback)

    def __init__(self):
        self.made: list[tuple[BaseException, str, dict]] = []

    def refuse(self, message: str, code: str, **fields) -> ForbiddenAPI:
        exc = ForbiddenAPI(message)
        self.made = [*self.made[-(self.KEEP - 1) :], (exc, code, dict(fields))]
        return exc

    def of(self, exc: BaseException) -> tuple[str, dict] | None:
        """(code, fields) when `exc` is a refusal this guard raised, else None."""
        for made, code, fields in self.made:
            if made is exc:
                return code, fields
        return None

    def clear(self) -> None:
        self.made = []


def resolve(dotted: str):
    """'torch.nn.functional.softmax' -> the function object, or None if it does not exist."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        try:
            for attr in parts[cut:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return None
        return obj
    return None


class Guard(TorchFunctionMode):
    def __init__(self, exercise: str, forbidden: list[str], hint: str = ""):
        super().__init__()
        self.exercise = exercise
        self.hint = hint
        self.refusals = Refusals()
        self.banned: dict[int, str] = {}
        self.banned_names: set[str] = set()
        for name in forbidden:
            if not name.startswith("torch.") or name.endswith(".*"):
                continue  # only torch functions pass through a TorchFunctionMode; the scan sees the rest
            obj = resolve(name)
            if obj is not None:
                self.banned[id(obj)] = name
            self.banned_names.add(name)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = self.banned.get(id(func))
        if name is None:
            # nn.Module classes such as torch.nn.Softmax reach us through their functional call.
            qual = getattr(func, "__qualname__", None)
            if qual and f"torch.Tensor.{qual.split('.')[-1]}" in self.banned_names and qual.startswith("Tensor."):
                name = f"torch.Tensor.{qual.split('.')[-1]}"
        if name is not None:
            extra = f" {self.hint}" if self.hint else ""
            raise self.refusals.refuse(
                f"{name} is not allowed in exercise {self.exercise}: this exercise asks you to write it yourself.{extra}",
                "worker_forbidden",
                name=name,
                exercise=self.exercise,
                hint=self.hint,
            )
        return func(*args, **(kwargs or {}))


class OpGuard(TorchDispatchMode):
    """The same guard one level down: operators reached without the Python API
    (torch.ops.aten._softmax, torch._C functions) still arrive here by their schema name."""

    def __init__(self, exercise: str, ops: list[str], hint: str = ""):
        super().__init__()
        self.exercise = exercise
        self.hint = hint
        self.refusals = Refusals()
        self.ops = set(ops)

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        # Otherwise torch wraps __torch_dispatch__ with torch._disable_dynamo, whose first call
        # imports torch._dynamo: a second per worker. Nothing here is compiled.
        return False

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        name = func._schema.name
        if name in self.ops:
            extra = f" {self.hint}" if self.hint else ""
            raise self.refusals.refuse(
                f"the operator {name} is not allowed in exercise {self.exercise}: "
                f"this exercise asks you to write it yourself.{extra}",
                "worker_forbidden_op",
                name=name,
                exercise=self.exercise,
                hint=self.hint,
            )
        return func(*args, **(kwargs or {}))
