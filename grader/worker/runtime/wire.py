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


class WireError(Exception):
    """A frame or value that does not follow the wire format."""


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


def decode(doc, tensors: dict[str, torch.Tensor]):
    """Inverse of `encode` on the receiving side: handles come back as `Handle`."""

    def dec(v, depth):
        if depth > MAX_DEPTH:
            raise WireError("value nested too deeply")
        if isinstance(v, list):
            return [dec(x, depth + 1) for x in v]
        if not isinstance(v, dict):
            return v
        if len(v) == 1 and "$tensor" in v:
            try:
                return tensors[v["$tensor"]]
            except (KeyError, TypeError):
                raise WireError("reference to a tensor that is not in the frame") from None
        if len(v) == 1 and "$tuple" in v:
            return tuple(dec(x, depth + 1) for x in v["$tuple"])
        if len(v) == 1 and "$dict" in v:
            return {str(k): dec(x, depth + 1) for k, x in v["$dict"]}
        if len(v) == 1 and "$float" in v:
            return float(v["$float"])
        if len(v) == 1 and "$dtype" in v:
            dt = getattr(torch, str(v["$dtype"]), None)
            if not isinstance(dt, torch.dtype):
                raise WireError("unknown dtype")
            return dt
        if set(v) == {"$handle", "type"}:
            return Handle(int(v["$handle"]), str(v["type"]))
        raise WireError("unknown marker in frame")

    return dec(doc, 0)


# --------------------------------------------------------------------------- framing
def pack(message: dict, tensors: dict[str, torch.Tensor] | None = None) -> bytes:
    body = json.dumps(message, allow_nan=False, separators=(",", ":")).encode()
    blob = _st_save(tensors) if tensors else b""
    return HEADER.pack(len(body), len(blob)) + body + blob


def send(sock: socket.socket, message: dict, tensors=None) -> None:
    sock.sendall(pack(message, tensors))


def _recv_exact(sock: socket.socket, n: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < n:
        chunk = sock.recv(min(n - len(chunks), 1 << 20))
        if not chunk:
            raise EOFError("the other side closed the connection")
        chunks += chunk
    return bytes(chunks)


def recv(sock: socket.socket, max_blob: int = MAX_BLOB) -> tuple[dict, dict[str, torch.Tensor]]:
    jlen, blen = HEADER.unpack(_recv_exact(sock, HEADER.size))
    if jlen > MAX_JSON:
        raise WireError(f"message of {jlen} bytes is larger than the limit of {MAX_JSON}")
    if blen > max_blob:
        raise WireError(f"tensor payload of {blen} bytes is larger than the limit of {max_blob}")
    try:
        message = json.loads(_recv_exact(sock, jlen))
    except (ValueError, RecursionError) as e:  # RecursionError: nested deeper than the parser goes
        raise WireError(f"malformed message: {e}") from None
    if not isinstance(message, dict):
        raise WireError("a message must be a JSON object")
    tensors = {}
    if blen:
        try:
            tensors = _st_load(_recv_exact(sock, blen))
        except EOFError:
            raise
        except Exception as e:  # safetensors raises its own error types
            raise WireError(f"malformed tensor payload: {e}") from None
    return message, tensors
