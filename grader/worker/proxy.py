"""Proxies through which trusted checks use a submission living in a worker process.

    out = sub.softmax(x)                         # call a function
    m = sub.new("SelfAttention", d_in=8, d_out=4)  # construct an object: a handle
    m.load_state_dict(weights); y = m(x)         # call its methods
    w = m.attr("W_query")                        # read an attribute (tensor or handle)

Values come back decoded from the wire: tensors, plain values, or `RemoteObject`s.
Errors in the student's code raise `StudentError` with a message in the student's terms.
"""
from __future__ import annotations

from ..messages import CATALOG, Msg, t
from .client import Worker
from .runtime import wire


class StudentError(Exception):
    """The student's code raised, is missing something, or has the wrong signature."""

    def __init__(self, kind: str, message: str, where: str = "", trace: str = "", type: str = ""):
        super().__init__(message)
        self.kind = kind
        self.type = type  # the exception class name raised in the worker, e.g. "ValueError"
        self.where = where
        self.trace = trace


def _worded(err: dict) -> str:
    """The worker's own error in the student's language when it came with a catalog code (only
    the worker_* keys: the worker is untrusted), else its English message."""
    code, fields = err.get("code"), err.get("fields")
    if not (isinstance(code, str) and code.startswith("worker_") and code in CATALOG and isinstance(fields, dict)):
        return err.get("message", "")
    fields = {str(k): str(v) for k, v in fields.items()}
    if "hint" in fields:
        fields["hint"] = Msg.key("forbidden_hint", hint=fields["hint"]) if fields["hint"] else ""
    return t(code, **fields)


def student_error(label: str, err: dict) -> StudentError:
    kind = err.get("kind", "exception")
    message = _worded(err)
    where = err.get("where", "")
    if kind == "not_implemented":
        text = t("not_implemented", message=message or label)
    elif kind == "missing":
        text = t("missing", message=message)
    elif kind == "signature":
        text = t("signature", message=message)
    elif kind == "forbidden":
        text = t("forbidden", message=message)
    elif kind == "syntax":
        text = t("syntax", where=where, message=message)
    else:
        at = Msg.key("at_where", where=where) if where else ""
        text = t("raised", label=label, type=err.get("type", "Exception"), message=message, at=at)
    return StudentError(kind, text, where, err.get("trace", ""), err.get("type", ""))


class Remote:
    """The submission's exercise module as seen from a check."""

    def __init__(self, worker: Worker, exercise: str, time_limit: float, assets: str | None = None):
        self._worker = worker
        self._exercise = exercise
        self._time_limit = time_limit
        self.assets = assets  # read-only data folder as the worker sees it (None: there is none)

    # -- plumbing
    def _request(self, msg: dict, label: str, args=(), kwargs=None):
        doc_args, tensors = wire.encode([_unwrap(a) for a in args])
        doc_kwargs, more = wire.encode({k: _unwrap(v) for k, v in (kwargs or {}).items()})
        for name, tensor in more.items():  # keep tensor names unique across args and kwargs
            tensors[f"k{name}"] = tensor
        doc_kwargs = _rename(doc_kwargs, "k")
        reply, out = self._worker.request(dict(msg, args=doc_args, kwargs=doc_kwargs), tensors,
                                          timeout=self._time_limit)
        if not reply.get("ok"):
            raise student_error(label, reply.get("error") or {})
        return self._wrap(wire.decode(reply.get("value"), out))

    def _wrap(self, value):
        if isinstance(value, wire.Handle):
            return RemoteObject(self, value)
        if isinstance(value, list):
            return [self._wrap(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._wrap(v) for v in value)
        if isinstance(value, dict):
            return {k: self._wrap(v) for k, v in value.items()}
        return value

    def _import(self, path: str, forbidden: list[str], hint: str, forbidden_ops: list[str] = ()) -> None:
        reply, _ = self._worker.request({"op": "import", "module": self._exercise, "path": path,
                                         "forbidden": forbidden, "forbidden_ops": list(forbidden_ops),
                                         "hint": hint}, timeout=self._time_limit)
        if not reply.get("ok"):
            raise student_error(f"importing {path}", reply.get("error") or {})

    # -- what checks use
    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return RemoteCallable(self, {"name": name}, name)

    def new(self, cls: str, *args, **kwargs) -> "RemoteObject":
        return self._request({"op": "call", "target": {"name": cls}}, cls, args, kwargs)

    def get(self, name: str):
        return self._request({"op": "getattr", "target": {"name": name}}, name)

    def seed(self, seed: int) -> None:
        self._request({"op": "seed", "seed": int(seed)}, "torch.manual_seed")


class RemoteCallable:
    def __init__(self, remote: Remote, target: dict, label: str):
        self._remote = remote
        self._target = target
        self._label = label

    def __call__(self, *args, **kwargs):
        return self._remote._request({"op": "call", "target": self._target}, self._label, args, kwargs)

    def __repr__(self) -> str:
        return f"<remote {self._label}>"


class RemoteObject:
    def __init__(self, remote: Remote, handle: wire.Handle):
        self._remote = remote
        self._handle = handle

    @property
    def type_name(self) -> str:
        return self._handle.type

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return RemoteCallable(self._remote, {"handle": self._handle.id, "name": name},
                              f"{self._handle.type}.{name}")

    def __call__(self, *args, **kwargs):
        return self._remote._request({"op": "call", "target": {"handle": self._handle.id, "name": "__call__"}},
                                     f"{self._handle.type}(...)", args, kwargs)

    def attr(self, name: str):
        return self._remote._request({"op": "getattr", "target": {"handle": self._handle.id, "name": name}},
                                     f"{self._handle.type}.{name}")

    def __repr__(self) -> str:
        return f"<remote {self._handle.type} object>"


def _unwrap(value):
    return value._handle if isinstance(value, RemoteObject) else value


def _rename(doc, prefix: str):
    if isinstance(doc, list):
        return [_rename(d, prefix) for d in doc]
    if isinstance(doc, dict):
        if set(doc) == {"$tensor"}:
            return {"$tensor": prefix + doc["$tensor"]}
        return {k: _rename(v, prefix) for k, v in doc.items()}
    return doc
