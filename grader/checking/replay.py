"""Recorded calls of trusted reference helpers, for the student bundle (`kata release`).

Some public checks compute expected values or the common wrong answers they name ("post-LN
instead of pre-LN") with helpers that are plain re-implementations of the exercises: the
checks' §1.23 reference model, a float64 sinusoidal encoding, multi-head attention written
out, ... Those embody the solutions, so the student bundle does not ship them: `kata release`
runs the public checks on the solutions, records every call they make to such a helper (the
inputs are fixed: fixture tensors, seeded weights, book texts) with its result, and ships a
table keyed by `call_key(helper, arguments)`. In the bundle each helper keeps its signature
and docstring, and its body becomes `return replay.lookup(module, name, locals())`.

Results may be tensors, numbers, strings, bytes, lists, tuples, dicts and `Mistake`s; the
tensors are stored in grader/fixtures/replay.safetensors, the rest as JSON in its metadata.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
from pathlib import Path

import torch

from .compare import Mistake

FIXTURES_DIR = Path(__file__).resolve().parent.parent / "fixtures"
TABLE = "replay"
_RAISE = object()


class NotRecorded(LookupError):
    """A call the public checks did not make when the bundle was built."""


def _feed(h, value) -> None:
    if hasattr(value, "_seen"):  # release_record's fixture reader: a whole fixture cannot be keyed
        raise TypeError("a whole fixture was passed; pass the tensors it holds instead")
    if isinstance(value, torch.Tensor):
        t = value.detach().cpu().contiguous()
        h.update(f"T{t.dtype}{tuple(t.shape)}|".encode())
        if t.numel():
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    elif isinstance(value, dict):
        h.update(b"{")
        for k in sorted(value, key=repr):
            _feed(h, k)
            _feed(h, value[k])
        h.update(b"}")
    elif isinstance(value, (list, tuple)):
        h.update(b"[" if isinstance(value, list) else b"(")
        for v in value:
            _feed(h, v)
        h.update(b"]")
    elif isinstance(value, (bytes, bytearray)):
        h.update(b"B" + len(value).to_bytes(8, "big") + bytes(value))
    elif value is None or isinstance(value, (bool, int, float, str)):
        h.update(f"{type(value).__name__}:{value!r}|".encode())
    elif isinstance(value, torch.dtype):
        h.update(f"dtype:{value}|".encode())
    elif type(value).__module__.split(".")[0] == "tiktoken":  # an Encoding: its name and size say which
        h.update(f"tiktoken:{value.name}:{value.n_vocab}|".encode())
    elif callable(value) and hasattr(value, "__qualname__"):  # torch.relu, F.gelu: by name
        h.update(f"fn:{getattr(value, '__module__', '')}.{value.__qualname__}|".encode())
    else:
        raise TypeError(f"cannot key an argument of type {type(value).__name__}")


def call_key(function: str, arguments: dict) -> str:
    """A digest of a call: the helper's name and every argument by name (defaults included)."""
    h = hashlib.sha256(function.encode() + b"(")
    _feed(h, dict(arguments))
    return h.hexdigest()


def encode(value, tensors: dict[str, torch.Tensor]):
    """`value` as JSON, its tensors moved into `tensors`."""
    if isinstance(value, torch.Tensor):
        key = str(len(tensors))
        tensors[key] = value.detach().cpu().contiguous().clone()
        return {"T": key}
    if isinstance(value, Mistake):
        return {"M": [encode(value.value, tensors), value.en, value.zh]}
    if isinstance(value, tuple):
        return {"t": [encode(v, tensors) for v in value]}
    if isinstance(value, list):
        return [encode(v, tensors) for v in value]
    if isinstance(value, dict):
        return {"d": [[encode(k, tensors), encode(v, tensors)] for k, v in value.items()]}
    if isinstance(value, (bytes, bytearray)):
        return {"b": bytes(value).hex()}
    if isinstance(value, float) and not math.isfinite(value):
        return {"f": repr(value)}
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TypeError(f"cannot record a result of type {type(value).__name__}")


def decode(value, tensors: dict[str, torch.Tensor]):
    if isinstance(value, list):
        return [decode(v, tensors) for v in value]
    if isinstance(value, dict):
        ((tag, inner),) = value.items()
        if tag == "T":
            return tensors[inner].clone()
        if tag == "M":
            return Mistake(decode(inner[0], tensors), inner[1], inner[2])
        if tag == "t":
            return tuple(decode(v, tensors) for v in inner)
        if tag == "d":
            return {decode(k, tensors): decode(v, tensors) for k, v in inner}
        if tag == "b":
            return bytes.fromhex(inner)
        if tag == "f":
            return float(inner)
        raise ValueError(f"unknown tag {tag!r} in the replay table")
    return value


def save(calls: dict[str, object], path: str | Path) -> None:
    """Write recorded results (call key -> result) as one replay table."""
    from safetensors.torch import save_file

    tensors: dict[str, torch.Tensor] = {}
    table = {key: encode(calls[key], tensors) for key in sorted(calls)}
    save_file(
        tensors,
        str(path),
        metadata={
            "calls": json.dumps(table, separators=(",", ":")),
            "edition": "student: results of the reference calls the public checks make",
        },
    )


@functools.lru_cache(maxsize=None)
def _table() -> tuple[dict, dict]:
    from safetensors import safe_open

    path = FIXTURES_DIR / f"{TABLE}.safetensors"
    if not path.is_file():
        return {}, {}
    with safe_open(str(path), framework="pt") as f:
        tensors = {k: f.get_tensor(k) for k in f.keys()}
        calls = json.loads((f.metadata() or {}).get("calls", "{}"))
    return calls, tensors


def lookup(module: str, function: str, arguments: dict, default=_RAISE):
    """The recorded result of `module.function(**arguments)`. A call that was not recorded
    gives `default` (helpers that name wrong answers: none then), or raises NotRecorded."""
    calls, tensors = _table()
    found = calls.get(call_key(f"{module}.{function}", arguments))
    if found is None:
        if default is not _RAISE:
            return default
        raise NotRecorded(
            f"{function}(...) with these arguments is computed only by the instructor's grader "
            "(the student bundle holds the values its public checks use)"
        )
    return decode(found, tensors)
