"""Proxies through which trusted checks use a submission living in a worker process.

    out = sub.softmax(x)                         # call a function
    m = sub.new("SelfAttention", d_in=8, d_out=4)  # construct an object: a handle
    m.load_state_dict(weights); y = m(x)         # call its methods
    w = m.attr("W_query")                        # read an attribute (tensor or handle)

Values come back decoded from the wire: tensors, plain values, or `RemoteObject`s.
Errors in the student's code raise `StudentError` with a message in the student's terms.
"""

from __future__ import annotations

import builtins
import collections
import functools
import inspect
import os
import re
import weakref
from pathlib import Path

from ..course.messages import CATALOG, Msg, t
from .budget import Budget
from .client import Worker, WorkerFault
from .runtime import wire


class StudentError(Exception):
    """The student's code raised, is missing something, or has the wrong signature.

    `str(e)` is what the student reads. In a hidden check it holds no text of the worker's and no
    choice of the student's code (`_hidden_error`); a check that must look into the student's own
    message (does the error name the key that differs?) reads `detail`, and one that asks which
    exception was raised compares `type` (an `Unshown` there): both reveal only the check's verdict."""

    def __init__(self, kind: str, message: str, where: str = "", trace: str = "", type: str = "", detail: str = ""):
        super().__init__(message)
        self.kind = kind
        self.type = type  # the exception class name raised in the worker, e.g. "ValueError"
        self.where = where
        self.trace = trace
        self.detail = detail or message  # the student's own message, for checks to inspect


class Unshown(str):
    """The class name of the exception a hidden check's call raised: compared as itself
    (`e.type == "ValueError"`, `e.type in (...)`), shown as "another exception". Code that has seen
    the hidden input chooses which exception it raises (about 6 bits among Python's own classes), so
    a hidden check's message never names it, whatever the check writes; the public checks do."""

    __slots__ = ()

    def __str__(self) -> str:
        return t("hidden_exception_named")

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return str(self)


def _worded(err: dict, hint: str | None = None, exercise: str = "", forbidden: frozenset = frozenset()) -> str:
    """The runtime's own error in the student's language when the reply's `runtime` field gives a
    catalog code (only the worker_* keys), else the error's English message. The runtime sets that
    field only on its own paths (a handle it cannot find, a guard's refusal by the guard's record,
    sys.exit), never from an attribute of the student's exception (serve.Session.error). But the
    worker runs the student's code, which can rewrite a reply (the sixth outside attack patched the
    session's reply to put a sentence of its own into the grader's wording, as a forbidden call's
    hint): so a name is an identifier, the exercise is this one, the hint is the course's own for
    this exercise (`hint`, from the trusted side) or none, a refused call one the exercise forbids
    (`forbidden`), and any other field one line of at most
    120 characters; a reply that breaks one of these is shown as the worker's English message."""
    runtime = err.get("runtime") if isinstance(err.get("runtime"), dict) else {}
    code, fields = runtime.get("code"), runtime.get("fields")
    if not (isinstance(code, str) and code.startswith("worker_") and code in CATALOG and isinstance(fields, dict)):
        return err.get("message", "")
    fields = {str(k): str(v) for k, v in fields.items()}
    for key, value in fields.items():
        if key in ("name", "type", "module") and not DOTTED.fullmatch(value):
            return err.get("message", "")
        if key == "exercise" and value != exercise:
            return err.get("message", "")
    if code.startswith("worker_forbidden") and fields.get("name") not in forbidden:
        return err.get("message", "")
    for key, value in fields.items():
        if key not in ("hint",) and (len(value) > 120 or "\n" in value or "\r" in value):
            return err.get("message", "")
    if "hint" in fields:
        fields["hint"] = Msg.key("forbidden_hint", hint=hint) if hint and fields["hint"] == hint else ""
    return t(code, **fields)


# Python's own exception names. The worker is the student's, and a hidden check runs it on hidden
# inputs: any text it sends back (a message, a class name, a file, a line, a traceback) could carry
# those inputs out in the report, so a hidden check shows none (not even which of these it raised).
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,39}")
DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,79}(\.[A-Za-z_][A-Za-z0-9_]{0,79}){0,5}")
BUILTIN_EXCEPTIONS = frozenset(
    name for name, obj in vars(builtins).items() if isinstance(obj, type) and issubclass(obj, BaseException)
)


def _earlier(err: dict, exercise: str, exercises: frozenset) -> dict | None:
    """When the error came from the file of another exercise of the course (the student's own
    earlier code, which this exercise imports, and a file the course lists): that exercise's
    file, id and the line the worker named; else None."""
    where = err.get("where")
    file, _, line = where.rpartition(":") if isinstance(where, str) else ("", "", "")
    if file not in exercises or Path(file).stem == exercise or not (line.isdigit() and len(line) <= 6):
        return None
    return {"exercise": exercise, "other": Path(file).stem, "file": file, "line": line}


def _earlier_error(label: str, err: dict, found: dict) -> StudentError | None:
    """The message that says which earlier exercise to finish or fix first (an error raised in
    its file). Public checks only: the file is the worker's word (`compile(src, "/sub/ch01/<another
    exercise>.py", ...)` names any), which a hidden check never repeats."""
    kind = err.get("kind", "exception")
    name = err.get("type")
    name = name if isinstance(name, str) and IDENTIFIER.fullmatch(name) else "Exception"
    if kind == "not_implemented":
        text = t("earlier_unfinished", **found)
    elif kind in ("exception", "syntax"):
        detail = Msg.key("earlier_detail", message=_worded(err, None, found["other"])[:500])
        text = t("earlier_raised", label=label, type=name, detail=detail, **found)
    else:  # missing names, signatures, forbidden APIs, memory: the usual message says it best
        return None
    detail = err.get("message", "")
    return StudentError(
        kind,
        text,
        f"{found['file']}:{found['line']}",
        err.get("trace", ""),
        name,
        detail if isinstance(detail, str) else "",
    )


def student_error(
    label: str,
    err: dict,
    memory_mb: int | None = None,
    hidden: "HiddenContext | None" = None,
    exercise: str = "",
    exercises: frozenset = frozenset(),
    hint: str | None = None,
    forbidden: frozenset = frozenset(),
) -> StudentError:
    if hidden is not None:
        return _hidden_error(label, err, memory_mb, hidden)
    found = _earlier(err, exercise, exercises) if exercise else None
    if found is not None:
        earlier = _earlier_error(label, err, found)
        if earlier is not None:
            return earlier
    kind = err.get("kind", "exception")
    message = _worded(err, hint, exercise, forbidden)
    where = err.get("where", "")
    if kind == "memory" and memory_mb:
        at = Msg.key("memory_at", where=where) if where else ""
        text = t("memory_limit", label=label, mb=memory_mb, type=err.get("type", "MemoryError"), at=at)
    elif kind == "not_implemented":
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
        transposed = _batched_T(err)
        if transposed:
            text = t("with_hint", message=text, hint=t("batched_T", name=transposed))
    return StudentError(kind, text, where, err.get("trace", ""), err.get("type", ""))


# The last frame of the student's traceback (serve.Session.student_trace: traceback.format_list)
_FRAME = re.compile(r'^  File "[^"\n]*", line \d+, in [^\n]*\n    ([^\n]*)$', re.M)
_DOT_T = re.compile(r"([A-Za-z_][\w.]{0,60}?)\.T(?![\w(])")


def _batched_T(err: dict) -> str:
    """The name `x` when the student's line that raised a RuntimeError uses `x.T` and the error is
    not a plain matrix product's (`mat1 and mat2 shapes cannot be multiplied`): `x.T` reverses every
    dimension of a batch, (2, 5, 4) -> (4, 5, 2), the book's `keys.T` met with batched input. One
    explanation for every exercise whose inputs are batched (s1_11, s1_12, s1_15, s1_16, s1_23...);
    public checks only (the trace is the worker's text)."""
    trace, message = err.get("trace"), err.get("message")
    if err.get("type") != "RuntimeError" or not isinstance(trace, str) or not isinstance(message, str):
        return ""
    if "mat1 and mat2" in message:
        return ""
    frames = _FRAME.findall(trace[-4000:])
    found = _DOT_T.search(frames[-1]) if frames else None
    return found.group(1) if found else ""


@functools.cache
def known_types() -> frozenset[str]:
    """Class names a hidden check may show for an object the worker returned: Python's and
    torch's own (nn modules, optimizers, schedulers, datasets), never one the student made up."""
    import torch
    import torch.utils.data

    names = set(BUILTIN_EXCEPTIONS) | {n for n, o in vars(builtins).items() if isinstance(o, type)}
    for module in (torch, torch.nn, torch.optim, torch.optim.lr_scheduler, torch.utils.data):
        names |= {n for n, o in vars(module).items() if isinstance(o, type) and IDENTIFIER.fullmatch(n)}
    return frozenset(names)


class HiddenContext:
    """What a hidden check's messages may name besides the label: the exercise, and the APIs its
    manifest forbids (a refusal the runtime reports is checked against them, not taken on trust)."""

    def __init__(self, exercise: str, forbidden=()):
        self.exercise = exercise
        self.forbidden = set(forbidden)


def _hidden_error(label: str, err: dict, memory_mb: int | None, hidden: HiddenContext) -> StudentError:
    """What a hidden check may say about an error in the student's code: the label, the exercise,
    the memory limit, and which kind of error it was (not implemented, a missing name, a signature, a
    forbidden function, memory, any other exception); nothing the code chose beyond that kind. Not
    the exception's class (the check still compares it: `Unshown`), not a file (any file name is the
    code's choice: `compile(src, "/sub/ch01/<another exercise>.py", ...)`; an earlier exercise's file
    too), not a line, not the forbidden function it called, not a text or attribute of its exception."""
    kind = err.get("kind", "exception")
    name = err.get("type")
    name = Unshown(name if isinstance(name, str) and name in BUILTIN_EXCEPTIONS else "Exception")
    runtime = err.get("runtime") if isinstance(err.get("runtime"), dict) else {}
    fields = runtime.get("fields") if isinstance(runtime.get("fields"), dict) else {}
    refused = (
        kind == "forbidden"
        and str(fields.get("name", "")) in hidden.forbidden
        and runtime.get("code") in ("worker_forbidden", "worker_forbidden_op")
    )
    if kind == "not_implemented":
        text = t("not_implemented", message=f"{label} ({hidden.exercise})")
    elif kind == "missing":
        text = t("hidden_missing", label=label)
    elif kind == "signature":
        text = t("signature", message=t("hidden_signature", label=label))
    elif refused:
        text = t("hidden_forbidden", label=label, exercise=hidden.exercise)
    elif kind == "memory" and memory_mb:
        text = t("hidden_memory_limit", label=label, mb=memory_mb)
    else:
        kind = "exception"
        text = t("hidden_raised", label=label)
    detail = err.get("message", "")
    return StudentError(kind, text, "", "", name, detail if isinstance(detail, str) else "")


# Where the student's code returned the values that public checks received lately: the worker's
# `returned_at` ("ch01/x.py:14", the last `return` run in the submission's files during the call),
# by the value itself (tensors by weak reference, lists, tuples and dicts by identity while held
# here), so that a failed comparison of that value says where it came from (compare.expect_*).
_RETURNED: "collections.deque" = collections.deque(maxlen=32)
_WHERE = re.compile(r"(?!.*\.\.)[\w./-]{1,200}\.py:\d{1,6}")
_MAX_SOURCE = 1 << 20  # bytes of a file read to count its lines (a solution is 7 KB)


def _note_returned(value, where) -> None:
    if not isinstance(where, str) or not _WHERE.fullmatch(where):
        return
    import torch  # loaded already: the value came over the wire

    values = [value] + (list(value)[:8] if isinstance(value, (tuple, list)) and len(value) <= 8 else [])
    for v in values:
        if isinstance(v, torch.Tensor):
            _RETURNED.append((weakref.ref(v), where))
        elif isinstance(v, (list, tuple, dict)):
            _RETURNED.append((v, where))


def returned_where(value) -> str:
    """ "ch01/x.py:14" when `value` is a value a public check's call returned as it is (not a copy
    or a part of it), and the worker saw the student's `return` that gave it; else ""."""
    import torch

    if not isinstance(value, (torch.Tensor, list, tuple, dict)):
        return ""
    for held, where in reversed(_RETURNED):
        if (held() if isinstance(held, weakref.ref) else held) is value:
            return where
    return ""


class Refused(Exception):
    """A forwarded helper's refusal of the arguments the student's code called it with: Python's
    exception name ("TypeError" or "ValueError") and the grader's own text, raised in the worker."""

    def __init__(self, type: str, message: str):
        super().__init__(message)
        self.type = type


MAX_QUESTION_TEXT = 1_000_000  # characters of a str argument of a forwarded helper's call


class Remote:
    """The submission's exercise module as seen from a check."""

    def __init__(
        self,
        worker: Worker,
        exercise: str,
        time_limit: float,
        assets: str | None = None,
        hidden: bool = False,
        exercises: frozenset = frozenset(),
        budget: Budget | None = None,
    ):
        self._worker = worker
        self._budget = budget  # the submission's grading budget: no call waits past it
        self._exercise = exercise
        self._exercises = exercises  # the course's exercise files ("ch01/x.py"): an error from one is named as such
        self._loaded: frozenset = frozenset()  # those the worker said it imported with the exercise (its own too)
        self._time_limit = time_limit
        # a hidden check's: no text of the worker's reaches its messages (set up by _import)
        self._hidden = HiddenContext(exercise) if hidden else None
        self.assets = assets  # read-only data folder as the worker sees it (None: there is none)
        self._forwarded: dict[int, object] = {}  # key -> the trusted helper that answers a forwarded one's calls
        self._hint: str | None = None  # the exercise's forbidden_hint, set by _import
        self._forbidden: frozenset = frozenset()  # and what it forbids
        self._lines: dict[str, int] = {}  # exercise file -> its number of lines (_checked_where)

    def _checked_where(self, where) -> str | None:
        """The worker's `returned_at` when it names a line that is there: a course exercise file
        ("ch01/x.py") of the submission's copy, read here, and a line within it. The worker runs
        the student's code, which can rewrite what it says (an outside attack had it name a file
        of the grader's, another exercise's file the submission lacks, or a sentence of its own)."""
        if not isinstance(where, str) or not _WHERE.fullmatch(where):
            return None
        path, _, line = where.rpartition(":")
        if self._exercises and path not in self._exercises:
            return None
        root = getattr(getattr(self._worker, "box", None), "submission_dir", None)
        if not root:
            return None
        if path not in self._lines:  # the submission's copy does not change while it is graded
            try:
                with open(os.path.join(root, path), "rb") as f:
                    self._lines[path] = f.read(_MAX_SOURCE).count(b"\n") + 1
            except OSError:
                self._lines[path] = 0
        return where if 1 <= int(line) <= self._lines[path] else None

    # -- plumbing
    def _request(self, msg: dict, label: str, args=(), kwargs=None):
        doc_args, tensors = wire.encode([_unwrap(a) for a in args])
        doc_kwargs, more = wire.encode({k: _unwrap(v) for k, v in (kwargs or {}).items()})
        for name, tensor in more.items():  # keep tensor names unique across args and kwargs
            tensors[f"k{name}"] = tensor
        doc_kwargs = _rename(doc_kwargs, "k")
        try:
            reply, out = self._ask(dict(msg, args=doc_args, kwargs=doc_kwargs), tensors)
            if not reply.get("ok"):
                raise student_error(
                    label,
                    reply.get("error") or {},
                    self._worker.limits.memory_mb,
                    self._hidden,
                    self._exercise,
                    self._exercises,
                    self._hint,
                    self._forbidden,
                )
            value = self._worker.decode(reply.get("value"), out)
            if self._hidden is None and msg.get("op") == "call":  # a hidden check names no line of the student's
                _note_returned(value, self._checked_where(reply.get("returned_at")))
        except WorkerFault as fault:
            if self._hidden is not None and fault.kind == "wire":  # what the worker sent is the student's text
                raise WorkerFault("wire", t("fault_wire_hidden"), t("fault_wire_hidden")) from None
            raise
        return self._wrap(value, msg.get("target", {}).get("name", "") if msg.get("op") == "call" else "")

    def _ask(self, msg: dict, tensors=None):
        """One request, waiting at most the time limit or what is left of the grading budget. A call
        the budget cut short is a "budget" fault, whatever the worker was doing."""
        if self._budget is None:
            return self._worker.request(msg, tensors, timeout=self._time_limit, answer=self._answer)
        timeout, capped = self._budget.cap(self._time_limit)
        try:
            return self._worker.request(msg, tensors, timeout=timeout, stop=self._budget.stop, answer=self._answer)
        except WorkerFault as fault:
            if capped and fault.kind == "timeout":
                raise WorkerFault("budget", t("fault_budget"), t("fault_budget")) from None
            raise

    def _answer(self, question: dict, tensors, deadline: float):
        """The grader's answer to a forwarded helper's call (Worker.request's `answer`): the helper
        registered under the question's key computes it here, on the trusted side. The arguments
        are plain values, str ones at most MAX_QUESTION_TEXT characters; a call the helper's
        signature or the helper itself refuses is answered with that error, raised in the worker.
        A question that is not the wire format is a WireError (the worker is ended)."""
        key = question.get("callback")
        helper = self._forwarded.get(key) if type(key) is int else None
        if helper is None or set(question) != {"callback", "args", "kwargs"}:
            raise wire.WireError("a question from the worker that no given helper of this check asks")
        args = wire.decode(question["args"], tensors, deadline=deadline)
        kwargs = wire.decode(question["kwargs"], tensors, deadline=deadline)
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise wire.WireError("a question from the worker that is not the wire format")
        try:
            if any(isinstance(v, wire.Handle) for v in (*args, *kwargs.values())):
                raise Refused("TypeError", "a given helper takes plain values, not objects of the worker's")
            if any(isinstance(v, str) and len(v) > MAX_QUESTION_TEXT for v in (*args, *kwargs.values())):
                raise Refused("ValueError", f"a given helper takes texts of at most {MAX_QUESTION_TEXT} characters")
            try:
                inspect.signature(helper).bind(*args, **kwargs)
            except TypeError as e:
                raise Refused("TypeError", str(e)) from None
            value = helper(*args, **kwargs)
        except Refused as e:
            return {"answer": True, "ok": False, "type": e.type, "message": str(e)}, None
        doc, out = wire.encode(value)
        return {"answer": True, "ok": True, "value": doc}, out

    def _wrap(self, value, asked: str = ""):
        if isinstance(value, wire.Handle):
            # A class name is the student's text too: a hidden check names only the class it asked
            # for (sub.new("SelfAttention")) or one of torch's and Python's own.
            if self._hidden is not None and not (value.type == asked or value.type in known_types()):
                value.type = "object"
            return RemoteObject(self, value)
        if isinstance(value, list):
            return [self._wrap(v) for v in value]
        if isinstance(value, tuple):
            return tuple(self._wrap(v) for v in value)
        if isinstance(value, dict):
            return {k: self._wrap(v) for k, v in value.items()}
        return value

    def _import(self, path: str, forbidden: list[str], hint: str, forbidden_ops: list[str] = ()) -> None:
        self._hint = hint  # the course's: a forbidden call's message shows this one, never the worker's
        self._forbidden = frozenset([*forbidden, *forbidden_ops])
        if self._hidden is not None:
            self._hidden = HiddenContext(self._exercise, [*forbidden, *forbidden_ops])
        reply, _ = self._ask(
            {
                "op": "import",
                "module": self._exercise,
                "path": path,
                "forbidden": forbidden,
                "forbidden_ops": list(forbidden_ops),
                "hint": hint,
            }
        )
        if not reply.get("ok"):  # before any hidden input: the student's full message
            raise student_error(
                f"importing {path}",
                reply.get("error") or {},
                self._worker.limits.memory_mb,
                exercise=self._exercise,
                exercises=self._exercises,
                hint=hint,
                forbidden=self._forbidden,
            )
        files = reply.get("value")
        if isinstance(files, list):  # the exercise files it imported: only names the grader knows count
            self._loaded = frozenset(f for f in files if isinstance(f, str) and f in self._exercises)

    # -- what checks use
    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return RemoteCallable(self, {"name": name}, name)

    def new(self, cls: str, *args, **kwargs) -> "RemoteObject":
        return self._request({"op": "call", "target": {"name": cls}}, cls, args, kwargs)

    def get(self, name: str):
        return self._request({"op": "getattr", "target": {"name": name}}, name)

    def getitem(self, obj: "RemoteObject", index):
        """obj[index] in the worker (a dataset's own __getitem__, no helper of the submission's file)."""
        return self._request({"op": "getitem", "target": {"handle": obj._handle.id}}, f"{obj.type_name}[...]", (index,))

    def length(self, obj: "RemoteObject") -> int:
        """len(obj) in the worker."""
        return self._request({"op": "len", "target": {"handle": obj._handle.id}}, f"len({obj.type_name})")

    def iterate(self, obj: "RemoteObject") -> list:
        """One pass over obj in the worker (a loader's batches, each as a tuple, as the given batches() gives them)."""
        return self._request({"op": "iterate", "target": {"handle": obj._handle.id}}, f"iter({obj.type_name})")

    def given(self, name: str, *args, **kwargs) -> "RemoteObject":
        """A given object (grader/worker/runtime/given.py) built by the runtime, not the submission."""
        return self._request({"op": "given", "name": name}, name, args, kwargs)

    def in_training(self, fn: "RemoteObject", *args, bf16_autocast: bool = False, label: str = "", **kwargs):
        """fn(*args, **kwargs) in the worker as inside a model being trained: grad enabled, the
        floating arguments leaves that require grad, under bf16 autocast if asked (the runtime's
        given as_in_training). A failure names `label` (default: fn's type), as a plain call would."""
        return self._request(
            {"op": "given", "name": "as_in_training"},
            label or fn.type_name,
            (fn, *args),
            {**kwargs, "bf16_autocast": bool(bf16_autocast)},
        )

    def forward(self, name: str, helper) -> "RemoteObject":
        """A given helper (runtime/given.py's FORWARDED) whose every call the student's code makes
        is answered here by `helper(*args)`, a trusted object of the check's: it computes the answer,
        and counts or logs the call where the worker cannot write. Raise Refused in `helper` to
        refuse arguments. The worker holds only a handle that forwards."""
        key = len(self._forwarded) + 1
        self._forwarded[key] = helper
        return self._request({"op": "forward", "name": name, "key": key}, name)

    def trainable_of(self, module: "RemoteObject") -> dict[str, bool]:
        """{parameter name: requires_grad} of a module in the worker, read by the worker's runtime
        (torch's own data, not the submission's code): plain values, as the wire carries no flags."""
        pairs = self._request(
            {"op": "trainable", "target": {"handle": module._handle.id}}, f"{module.type_name} parameters"
        )
        return {str(name): bool(flag) for name, flag in pairs}

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
        return RemoteCallable(self._remote, {"handle": self._handle.id, "name": name}, f"{self._handle.type}.{name}")

    def __call__(self, *args, **kwargs):
        return self._remote._request(
            {"op": "call", "target": {"handle": self._handle.id, "name": "__call__"}},
            f"{self._handle.type}(...)",
            args,
            kwargs,
        )

    def attr(self, name: str):
        return self._remote._request(
            {"op": "getattr", "target": {"handle": self._handle.id, "name": name}}, f"{self._handle.type}.{name}"
        )

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
