"""The wire between the grader and the sandboxed worker.

One frame = an 8-byte header (JSON length, blob length, both big-endian uint32), a JSON
document, and an optional safetensors blob holding every tensor the document refers to.
Only JSON values and plain dense CPU tensors cross; nothing is ever pickled.

Values are encoded with explicit markers so that no student value can be mistaken for one:
    {"$tensor": "t0"}            a tensor stored in the blob under that name
    {"$tuple": [...]}            a tuple (lists stay lists)
    {"$dict": [[key, value]]}    a dict with str keys, order kept
    {"$float": "nan"|"inf"|"-inf"}
    {"$handle": 3, "type": "SelfAttention"}   an object that stays in the worker
This module is shared by both sides and imports nothing but the standard library,
torch and safetensors.
"""

from __future__ import annotations

import itertools
import json
import math
import time
import types
import socket
import struct

import torch
from safetensors.torch import load as _st_load
from safetensors.torch import save as _st_save

HEADER = struct.Struct(">II")
MAX_JSON = 16 * 1024 * 1024  # bytes
# The tensors of one frame. The largest any check receives is a few MB (a state_dict); the trusted
# side holds a frame about three times over while decoding it, so this bounds its memory per call.
MAX_BLOB = 256 * 1024 * 1024  # bytes
MAX_DEPTH = 64
# What one frame may hold, so that decoding it costs the trusted side little, whatever a worker sends:
# tensors (a state_dict holds a few hundred; a million empty ones once took a minute and 1.8 GB to
# decode) and values in the JSON document (every list item, dict entry and marker counts one).
MAX_TENSORS = 4096
MAX_VALUES = 1_000_000
MAX_HEADER = 1024 * 1024  # bytes of the safetensors header (about 100 per tensor)
FLOATS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


class WireError(Exception):
    """A frame or value that does not follow the wire format. Its text is the grader's own: it
    never quotes what the other side sent (a hidden check may show it)."""


class Overtime(WireError):
    """The frame took longer to arrive or decode than the call's time limit left."""


class Handle:
    """A reference to an object that lives in the worker (trusted side view)."""

    __slots__ = ("id", "type")

    def __init__(self, id: int, type: str):
        self.id = id
        self.type = type

    def __repr__(self) -> str:
        return f"<worker object {self.type} #{self.id}>"


# --------------------------------------------------------------------------- encoding
def encode(value, make_handle=None):
    """Turn a value into (json_doc, {name: tensor}). `make_handle(obj) -> (id, type)` is
    used for objects that cannot cross; without it such objects are an error."""
    tensors: dict[str, torch.Tensor] = {}

    def enc(v, depth):
        if depth > MAX_DEPTH:
            raise WireError("value nested too deeply")
        if v is None or isinstance(v, (bool, str)):
            return v
        if isinstance(v, int):
            return int(v)
        if isinstance(v, float):
            if math.isnan(v):
                return {"$float": "nan"}
            if math.isinf(v):
                return {"$float": "inf" if v > 0 else "-inf"}
            return float(v)
        if isinstance(v, torch.Tensor):
            name = f"t{len(tensors)}"
            tensors[name] = plain_tensor(v)
            return {"$tensor": name}
        if isinstance(v, torch.Size):
            return {"$tuple": [int(d) for d in v]}
        if isinstance(v, tuple):
            return {"$tuple": [enc(x, depth + 1) for x in v]}
        if isinstance(v, list):
            return [enc(x, depth + 1) for x in v]
        if isinstance(v, types.GeneratorType):  # e.g. module.named_parameters()
            return [enc(x, depth + 1) for x in itertools.islice(v, 100_000)]
        if isinstance(v, dict):
            if not all(isinstance(k, str) for k in v):
                raise WireError("dict keys must be strings")
            return {"$dict": [[k, enc(x, depth + 1)] for k, x in v.items()]}
        if isinstance(v, Handle):
            return {"$handle": v.id, "type": v.type}
        if isinstance(v, torch.dtype):
            return {"$dtype": str(v).removeprefix("torch.")}
        item = getattr(v, "item", None)  # numpy scalars
        if type(v).__module__ == "numpy" and callable(item):
            return enc(item(), depth)
        if make_handle is not None:
            hid, htype = make_handle(v)
            return {"$handle": hid, "type": htype}
        raise WireError(f"a value of type {type(v).__name__} cannot cross the wire")

    return enc(value, 0), tensors


def plain_tensor(t: torch.Tensor) -> torch.Tensor:
    """A plain, dense, contiguous CPU copy of `t` with no autograd history or subclass."""
    if t.layout != torch.strided:
        raise WireError(f"only dense tensors cross the wire, not {t.layout}")
    if t.is_quantized or t.is_meta:
        raise WireError("quantized or meta tensors cannot cross the wire")
    with torch._C.DisableTorchFunctionSubclass():
        t = torch.Tensor.as_subclass(t.detach(), torch.Tensor)
        return t.to("cpu").contiguous().clone()


def decode(doc, tensors: dict[str, torch.Tensor], deadline: float | None = None):
    """Inverse of `encode` on the receiving side: handles come back as `Handle`. At most
    MAX_VALUES values, nested at most MAX_DEPTH, and done by `deadline` (time.monotonic()) when
    one is given; anything that is not the wire format is a WireError whose text quotes nothing
    of `doc`."""
    count = 0

    def dec(v, depth):
        nonlocal count
        count += 1
        if count > MAX_VALUES:
            raise WireError(f"the answer holds more than {MAX_VALUES} values")
        if deadline is not None and count % 4096 == 0 and time.monotonic() > deadline:
            raise Overtime("decoding the answer took longer than the time limit")
        if depth > MAX_DEPTH:
            raise WireError("value nested too deeply")
        if isinstance(v, list):
            return [dec(x, depth + 1) for x in v]
        if not isinstance(v, dict):
            return v
        if len(v) == 1 and "$tensor" in v:
            name = v["$tensor"]
            if not isinstance(name, str) or name not in tensors:
                raise WireError("reference to a tensor that is not in the frame")
            return tensors[name]
        if len(v) == 1 and "$tuple" in v:
            if not isinstance(v["$tuple"], list):
                raise WireError("a tuple that is not a list of values")
            return tuple(dec(x, depth + 1) for x in v["$tuple"])
        if len(v) == 1 and "$dict" in v:
            items = v["$dict"]
            if not isinstance(items, list) or not all(
                isinstance(p, list) and len(p) == 2 and isinstance(p[0], str) for p in items
            ):
                raise WireError("a dict that is not a list of [text key, value] pairs")
            return {k: dec(x, depth + 1) for k, x in items}
        if len(v) == 1 and "$float" in v:
            if not isinstance(v["$float"], str) or v["$float"] not in FLOATS:
                raise WireError("a special float that is not nan, inf or -inf")
            return FLOATS[v["$float"]]
        if len(v) == 1 and "$dtype" in v:
            dt = getattr(torch, v["$dtype"], None) if isinstance(v["$dtype"], str) else None
            if not isinstance(dt, torch.dtype):
                raise WireError("unknown dtype")
            return dt
        if set(v) == {"$handle", "type"}:
            hid, htype = v["$handle"], v["type"]
            if type(hid) is not int or not isinstance(htype, str) or len(htype) > 200:
                raise WireError("a handle that is not a number and a type name")
            return Handle(hid, htype)
        raise WireError("unknown marker in frame")

    return dec(doc, 0)


# --------------------------------------------------------------------------- framing
def pack(message: dict, tensors: dict[str, torch.Tensor] | None = None) -> bytes:
    body = json.dumps(message, allow_nan=False, separators=(",", ":")).encode()
    blob = _st_save(tensors) if tensors else b""
    return HEADER.pack(len(body), len(blob)) + body + blob


def send(sock: socket.socket, message: dict, tensors=None) -> None:
    sock.sendall(pack(message, tensors))


def _recv_exact(sock: socket.socket, n: int, deadline: float | None = None) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        if deadline is not None:  # the whole frame within the call's limit, not each chunk
            left = deadline - time.monotonic()
            if left <= 0:
                raise Overtime("the answer took longer than the time limit to arrive")
            sock.settimeout(left)
        try:
            chunk = sock.recv(min(n - len(chunks), 1 << 20))
        except (socket.timeout, TimeoutError):
            if deadline is None:
                raise
            raise Overtime("the answer took longer than the time limit to arrive") from None
        if not chunk:
            raise EOFError("the other side closed the connection")
        chunks += chunk
    return bytes(chunks)


def tensor_count(blob: bytes) -> int:
    """The number of tensors a safetensors blob declares, read from its header alone (cheap)
    before anything is built from it. WireError if the header is not one."""
    if len(blob) < 8:
        raise WireError("malformed tensor payload")
    n = int.from_bytes(blob[:8], "little")
    if n > MAX_HEADER or n > len(blob) - 8:
        raise WireError("malformed tensor payload (its header is too large)")
    try:
        header = json.loads(blob[8 : 8 + n])
    except (ValueError, RecursionError):
        raise WireError("malformed tensor payload") from None
    if not isinstance(header, dict):
        raise WireError("malformed tensor payload")
    return len(header) - ("__metadata__" in header)


def load_tensors(blob: bytes) -> dict[str, torch.Tensor]:
    """The tensors of a frame's blob: at most MAX_TENSORS, and never more bytes than the blob."""
    if tensor_count(blob) > MAX_TENSORS:
        raise WireError(f"the answer holds more than {MAX_TENSORS} tensors")
    try:
        return _st_load(blob)
    except Exception:  # safetensors raises its own error types, quoting the header: keep none of it
        raise WireError("malformed tensor payload") from None


def recv(
    sock: socket.socket, max_blob: int = MAX_BLOB, deadline: float | None = None
) -> tuple[dict, dict[str, torch.Tensor]]:
    """One frame. With `deadline` (time.monotonic()), all of it arrives and its tensors are built
    by then, or Overtime."""
    jlen, blen = HEADER.unpack(_recv_exact(sock, HEADER.size, deadline))
    if jlen > MAX_JSON:
        raise WireError(f"a message larger than the limit of {MAX_JSON} bytes")
    if blen > max_blob:
        raise WireError(f"a tensor payload larger than the limit of {max_blob} bytes")
    try:
        message = json.loads(_recv_exact(sock, jlen, deadline))
    except (ValueError, RecursionError):  # RecursionError: nested deeper than the parser goes
        raise WireError("malformed message") from None
    if not isinstance(message, dict):
        raise WireError("a message must be a JSON object")
    tensors = {}
    if blen:
        tensors = load_tensors(_recv_exact(sock, blen, deadline))
        if deadline is not None and time.monotonic() > deadline:
            raise Overtime("decoding the answer took longer than the time limit")
    return message, tensors
