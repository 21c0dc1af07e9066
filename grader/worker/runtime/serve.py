"""The request loop of one worker process: import the student's module, run calls.

Runs inside the sandbox, as an unprivileged user, with resource limits already set.
Every reply says `ok` or describes the error in the student's terms (file and line).
"""

from __future__ import annotations

import importlib.util
import inspect
import itertools
import os
import sys
import threading
import traceback

import torch

from . import given, syscalls, wire
from .guard import Guard, OpGuard

# Taken before any student code runs: which parameters are trainable is read from the modules'
# own _parameters and _modules and with the C getter of requires_grad, never through anything a
# submission's file defines (a given helper it rewrote, an override on its classes).
_REQUIRES_GRAD = torch._C.TensorBase.requires_grad.__get__
_GET = object.__getattribute__


def _named_parameters(module, limit: int = 100_000):
    """(name, parameter) of `module` and its submodules, as nn.Module.named_parameters lists them."""
    out, seen, visited, stack = [], set(), set(), [("", module)]
    while stack and len(out) < limit and len(visited) < limit:
        prefix, mod = stack.pop(0)
        if id(mod) in visited:
            continue
        visited.add(id(mod))
        for name, p in dict(_GET(mod, "_parameters")).items():
            if isinstance(p, torch.Tensor) and id(p) not in seen:
                seen.add(id(p))
                out.append((prefix + str(name), p))
        children = [
            (prefix + str(name) + ".", child)
            for name, child in dict(_GET(mod, "_modules")).items()
            if isinstance(child, torch.nn.Module)
        ]
        stack[:0] = children
    return out


class _Coded(Exception):
    """An error of the worker's own, with a catalog code and fields (the trusted side words it
    in the student's language; the message is the English fallback). The code reaches the grader
    only when the runtime itself raised it (`_raised_by_runtime`): the student's code can reach
    this class too."""

    def __init__(self, message: str, code: str = "", **fields):
        super().__init__(message)
        self.code = code
        self.fields = fields


class _Missing(_Coded):
    pass


class Session:
    def __init__(self, sock, submission_root: str):
        self.sock = sock
        self.root = os.path.realpath(submission_root)
        self.module = None
        self.exercise = ""
        self.guards: list = []
        self.objects: dict[int, object] = {}
        self.next_id = 1
        self.serving = None  # the id of the grader's request being served: forwarded helpers ask only then
        self.thread = threading.get_ident()  # the thread that serves it (and alone reads the socket)
        self.mine: dict[str, str] = {}  # file name -> its path in the submission, "" if not the submission's (traced)
        self.returned_at = ""  # where the last call's value was returned (traced)
        # the modules this worker had from its fork server, which never imported a submission's
        # file: loaded_files looks only past them (walking ~1,200 of torch's took 6 ms a check)
        self.inherited = frozenset(sys.modules)

    # ------------------------------------------------------------------ helpers
    def make_handle(self, obj):
        hid = self.next_id
        self.next_id += 1
        self.objects[hid] = obj
        return hid, type(obj).__name__

    def resolve(self, value):
        if isinstance(value, wire.Handle):
            if value.id not in self.objects:
                raise _Missing("that object no longer exists in the worker", "worker_gone")
            return self.objects[value.id]
        return value

    def where(self, tb_or_frames) -> str:
        """'ch01/x.py:12' for the deepest frame in the student's files, or ''."""
        last = ""
        for fs in tb_or_frames:
            path = os.path.realpath(fs.filename)
            if path.startswith(self.root + os.sep):
                last = f"{os.path.relpath(path, self.root)}:{fs.lineno}"
        return last

    def student_trace(self, exc: BaseException) -> str:
        frames = [
            fs
            for fs in traceback.extract_tb(exc.__traceback__)
            if os.path.realpath(fs.filename).startswith(self.root + os.sep)
        ]
        for fs in frames:
            fs.filename = os.path.relpath(os.path.realpath(fs.filename), self.root)
        lines = traceback.format_list(frames)
        lines += traceback.format_exception_only(type(exc), exc)
        return "".join(lines)[-4000:]

    def refused(self, exc: BaseException) -> tuple[str, str, dict] | None:
        """("forbidden", code, fields) when `exc` is a refusal one of the guards raised itself (its
        record, by identity), else None: a ForbiddenAPI the student's code built or changed is theirs."""
        for guard in self.guards:
            said = guard.refusals.of(exc)
            if said is not None:
                return ("forbidden", *said)
        return None

    def error(self, exc: BaseException) -> dict:
        """The error reply for `exc`. Only what the runtime says itself carries a catalog code, in the
        reply's `runtime` field: its own errors (`_raised_by_runtime`), the guards' refusals (their
        record) and sys.exit. Nothing is read from the exception's own attributes (`code`, `fields`):
        an exception of the student's never reads as the grader's text."""
        said = _raised_by_runtime(exc) or self.refused(exc)  # before any code of the student's runs (a __str__)
        code, fields = "", {}
        frames = traceback.extract_tb(exc.__traceback__)
        where = self.where(frames)
        if said is not None:
            kind, code, fields = said
        elif isinstance(exc, NotImplementedError) and where:
            kind = "not_implemented"
        elif isinstance(exc, SyntaxError):
            kind = "syntax"
        elif isinstance(exc, SystemExit):
            kind, code, fields = "exit", "worker_exit", {"code": _repr(exc.code)}
        elif out_of_memory(exc):
            kind = "memory"
        else:
            kind = "exception"
        if isinstance(exc, SyntaxError) and exc.filename:
            path = os.path.realpath(exc.filename)
            rel = os.path.relpath(path, self.root) if path.startswith(self.root) else os.path.basename(path)
            where = f"{rel}:{exc.lineno}"
        message = _text(exc) if not isinstance(exc, SystemExit) else f"sys.exit({fields['code']}) was called"
        error = {
            "kind": kind,
            "type": type(exc).__name__,
            "message": message[:2000],
            "where": where,
            "trace": self.student_trace(exc),
        }
        if code:
            try:
                error["runtime"] = {"code": code, "fields": {str(k): str(v)[:2000] for k, v in fields.items()}}
            except Exception:  # a student's object with a broken __str__: keep the plain message
                pass
        return {"ok": False, "error": error}

    def reply(self, rid, payload: dict, value=None) -> None:
        self.serving = None  # the call is over: a forwarded helper called from here on is refused
        frame = None
        if payload.get("ok"):
            try:  # the whole frame, so that a result the wire cannot carry is an error, not a crash
                doc, tensors = wire.encode(value, self.make_handle)
                if len(tensors) > wire.MAX_TENSORS:  # the grader would refuse it
                    raise wire.WireError(
                        f"the result holds {len(tensors)} tensors, more than the {wire.MAX_TENSORS} a result may hold"
                    )
                frame = wire.pack(dict(payload, value=doc, id=rid), tensors)
                jlen, blen = wire.HEADER.unpack_from(frame)
                if jlen > wire.MAX_JSON or blen > wire.MAX_BLOB:  # the grader would refuse it
                    limit = wire.MAX_JSON if jlen > wire.MAX_JSON else wire.MAX_BLOB
                    raise wire.WireError(
                        f"the result takes {len(frame) >> 20} MB, more than the {limit >> 20} MB a result may take"
                    )
            except Exception as e:  # unencodable result: say so in the student's terms
                frame = None
                kind = "memory" if out_of_memory(e) else "result"
                payload = {
                    "ok": False,
                    "error": {
                        "kind": kind,
                        "type": type(e).__name__,
                        "message": _text(e)[:2000],
                        "where": "",
                        "trace": "",
                    },
                }
        if frame is None:
            frame = wire.pack(dict(payload, id=rid))
        self.sock.sendall(frame)
        for guard in self.guards:  # a refusal is confirmed within the request that made it
            guard.refusals.clear()

    def target(self, spec: dict):
        if "handle" in spec:
            obj = self.objects.get(int(spec["handle"]))
            if obj is None:
                raise _Missing("that object no longer exists in the worker", "worker_gone")
            owner = obj
        else:
            if self.module is None:
                raise _Missing("no exercise module is imported", "worker_no_module")
            owner = self.module
        name = spec.get("name")
        if name is None:
            return owner
        if not isinstance(name, str) or name.startswith("__") and name not in ("__call__",):
            raise _Missing(f"attribute {name!r} cannot be reached", "worker_unreachable", name=repr(name))
        if not hasattr(owner, name):
            if owner is self.module:
                raise _Missing(
                    f"module {self.exercise} has no attribute '{name}'",
                    "worker_no_attribute_module",
                    module=self.exercise,
                    name=name,
                )
            raise _Missing(
                f"{type(owner).__name__} object has no attribute '{name}'",
                "worker_no_attribute_object",
                type=type(owner).__name__,
                name=name,
            )
        return getattr(owner, name)

    # ------------------------------------------------------------------ operations
    def op_import(self, msg):
        self.exercise = msg["module"]
        path = os.path.join(self.root, msg["path"])
        if not os.path.isfile(path):
            raise _Missing(
                f"file {msg['path']} is missing from the submission", "worker_file_missing", path=msg["path"]
            )
        sys.path.insert(0, os.path.dirname(path))
        if not self.guards:
            # On from before the file runs to the end of this process: whatever the student's code
            # does, whenever it runs (at import, in a call, in a property, in a result's __iter__
            # while the reply is encoded, in a __del__), it runs guarded. Under a forbidden list it
            # cannot leave the guarded thread either: no thread, process or exec (syscalls.SPAWN).
            hint = msg.get("hint", "")
            self.guards = [Guard(self.exercise, msg.get("forbidden", []), hint)]
            if msg.get("forbidden_ops"):
                self.guards.append(OpGuard(self.exercise, msg["forbidden_ops"], hint))
            for guard in self.guards:
                guard.__enter__()
            if msg.get("forbidden"):
                syscalls.install(spawn=True)  # where seccomp is missing, the static scan still refuses threads
        spec = importlib.util.spec_from_file_location(self.exercise, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[self.exercise] = module
        spec.loader.exec_module(module)
        self.module = module
        return self.loaded_files()

    def loaded_files(self) -> list[str]:
        """The submission's files this worker has imported so far, relative to it (the student's
        verdict cache re-runs an exercise when any of them changes: grader/student/progress.py)."""
        root = os.path.join(self.root, "")
        found = set()
        for name, module in list(sys.modules.items()):
            if name in self.inherited:
                continue
            try:
                f = module.__dict__.get("__file__") if isinstance(getattr(module, "__dict__", None), dict) else None
            except Exception:
                continue
            if isinstance(f, str) and f.startswith(root):
                found.add(f[len(root) :])
        return sorted(found)[:256]

    def op_call(self, msg, args, kwargs):
        fn = self.target(msg["target"])
        if not callable(fn):
            raise _Missing(
                f"'{msg['target'].get('name')}' is not a function or class",
                "worker_not_callable",
                name=msg["target"].get("name"),
            )
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            try:
                sig.bind(*args, **kwargs)
            except TypeError as e:
                name = msg["target"].get("name") or type(fn).__name__
                raise _SignatureError(
                    f"{name}{sig} cannot be called as the exercise asks: {e}",
                    "worker_signature",
                    name=name,
                    signature=str(sig),
                    error=str(e),
                ) from None
        return self.traced(fn, args, kwargs)  # guarded: the guards are on since op_import

    def traced(self, fn, args, kwargs):
        """fn(*args, **kwargs), noting the line of the last `return` run in a file of the submission
        (`self.returned_at`, "ch01/x.py:14"): the return statement that gave the call's value, which a
        public check names when the value is wrong (the outermost frame of the student's returns
        last). A trace function sees only frames being entered (no C calls, unlike setprofile) and
        follows only the submission's own (`f_trace_lines` off: their returns, not their lines), so a
        call pays one dictionary look-up per Python frame entered; it is on for this call only."""
        self.returned_at = ""
        root, mine, returned, entries = self.root + os.sep, self.mine, [], [0]

        def local(frame, event, arg):
            if event == "return" and (not returned or returned[-1] is not None):
                returned.append((frame.f_code.co_filename, frame.f_lineno))
                del returned[:-1]
            return local

        def entered(frame, event, arg):
            entries[0] += 1
            if entries[0] > TRACED_FRAMES:  # a long call (a training loop): untraced from here on
                sys.settrace(None)
                returned.append(None)
                return None
            name = frame.f_code.co_filename
            ours = mine.get(name)
            if ours is None:  # the file relative to the submission, or "" (not the submission's)
                path = os.path.realpath(name)
                ours = mine[name] = os.path.relpath(path, self.root) if path.startswith(root) else ""
            if not ours:
                return None
            frame.f_trace_lines = False
            return local

        sys.settrace(entered)
        try:
            return fn(*args, **kwargs)
        finally:
            sys.settrace(None)
            if returned and returned[-1] is not None:
                name, line = returned[-1]
                self.returned_at = f"{mine[name]}:{line}"

    def op_getattr(self, msg):
        return self.target(msg["target"])

    def op_protocol(self, op, msg, args):
        """obj[i], len(obj) or one pass over obj (at most 100,000 items, each as a tuple): the checks' own way to
        reach a dataset or a loader, never through a helper of the submission's file."""
        obj = self.target(msg["target"])
        if op == "getitem":
            return obj[args[0]]
        if op == "len":
            return len(obj)
        return [tuple(x) for x in itertools.islice(iter(obj), 100_000)]

    def op_given(self, msg, args, kwargs):
        """A given object built by the runtime's own code (given.py), not the submission's."""
        cls = given.GIVEN.get(str(msg.get("name")))
        if cls is None:
            raise _Missing(f"no given object {msg.get('name')!r}", "worker_unknown_op", op=repr(msg.get("name")))
        return cls(*args, **kwargs)

    def op_forward(self, msg):
        """A given helper whose every call the grader answers (given.Forwarded)."""
        cls = given.FORWARDED.get(str(msg.get("name")))
        if cls is None or type(msg.get("key")) is not int:
            raise _Missing(f"no given object {msg.get('name')!r}", "worker_unknown_op", op=repr(msg.get("name")))
        return cls(msg["key"], self.ask_grader)

    def ask_grader(self, key: int, args: list, kwargs: dict):
        """One call of a forwarded helper: a question frame to the grader, inside the request being
        served, and its answer (the grader bounds how many it answers, and all of them fit in that
        request's time limit). Only plain values go; an error the grader answers is raised here."""
        if self.serving is None or threading.get_ident() != self.thread:
            raise RuntimeError(
                "a given helper of the grader's can be called only while the grader's call runs, "
                "in the thread that runs it"
            )
        try:
            doc_args, tensors = wire.encode(args)
            doc_kwargs, more = wire.encode(kwargs)
        except wire.WireError:
            raise TypeError(
                "a given helper takes only plain values (str, numbers, lists, tuples, dicts, tensors)"
            ) from None
        if more:  # keep the names apart, as the grader's own requests do
            raise TypeError("a given helper takes tensors only as positional arguments")
        wire.send(self.sock, {"callback": int(key), "args": doc_args, "kwargs": doc_kwargs}, tensors)
        answer, tensors = wire.recv(self.sock)
        if answer.get("answer") is not True:
            raise RuntimeError("the grader did not answer the given helper's call")
        if not answer.get("ok"):
            kind = {"TypeError": TypeError, "ValueError": ValueError}.get(answer.get("type"), RuntimeError)
            raise kind(str(answer.get("message", "")))
        return wire.decode(answer.get("value"), tensors)

    def op_trainable(self, msg):
        """[[name, requires_grad], ...] of a module handle's parameters, read by torch's own code."""
        obj = self.target(msg["target"])
        if not isinstance(obj, torch.nn.Module):
            raise _Missing(
                f"{type(obj).__name__} is not a torch.nn.Module", "worker_not_module", type=type(obj).__name__
            )
        return [[name, bool(_REQUIRES_GRAD(p))] for name, p in _named_parameters(obj)]

    def serve(self):
        while True:
            try:
                msg, tensors = wire.recv(self.sock)
            except EOFError:
                return
            rid = msg.get("id")
            op = msg.get("op")
            self.serving = rid
            try:
                args = wire.decode(msg.get("args", []), tensors)
                kwargs = wire.decode(msg.get("kwargs", {"$dict": []}), tensors)
                args = [self.resolve(a) for a in args]
                kwargs = {k: self.resolve(v) for k, v in kwargs.items()}
                self.returned_at = ""
                if op == "import":
                    value = self.op_import(msg)
                elif op == "call":
                    value = self.op_call(msg, args, kwargs)
                elif op == "getattr":
                    value = self.op_getattr(msg)
                elif op in ("getitem", "len", "iterate"):
                    value = self.op_protocol(op, msg, args)
                elif op == "given":
                    value = self.op_given(msg, args, kwargs)
                elif op == "forward":
                    value = self.op_forward(msg)
                elif op == "trainable":
                    value = self.op_trainable(msg)
                elif op == "seed":
                    torch.manual_seed(int(msg["seed"]))
                    value = None
                elif op == "release":
                    self.objects.pop(int(msg["handle"]), None)
                    value = None
                else:
                    raise _Missing(f"unknown operation {op!r}", "worker_unknown_op", op=repr(op))
            except BaseException as e:  # student code may raise anything, SystemExit included
                self.reply(rid, self.error(e))
            else:
                said = {"ok": True}
                if op == "call" and self.returned_at:
                    said["returned_at"] = self.returned_at
                self.reply(rid, said, value)


# The Python frames one call may enter traced (Session.traced): about 0.3 us each. A module's
# forward enters a few hundred (an encoder of two blocks: ~250, +30% of its 260 us); a training loop
# millions, of which it then pays for the first 5,000 (~2 ms) and names no line.
TRACED_FRAMES = 5000


class _SignatureError(_Coded):
    pass


_RUNTIME_CODE: frozenset = frozenset()


def _raised_by_runtime(exc: BaseException) -> tuple[str, str, dict] | None:
    """(kind, code, fields) of an error the runtime raised itself, outside the student's code: a
    `_Coded` whose traceback runs through the Session's own methods alone (code objects compared by
    identity; a file name is the student's to choose with compile()). The student's code can build
    and raise a `_Missing` too, but any frame of theirs in its traceback makes it theirs."""
    global _RUNTIME_CODE
    if not isinstance(exc, _Coded):
        return None
    if not _RUNTIME_CODE:
        _RUNTIME_CODE = frozenset(f.__code__ for f in vars(Session).values() if inspect.isfunction(f))
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb is not None:
        if tb.tb_frame.f_code not in _RUNTIME_CODE:
            return None
        tb = tb.tb_next
    fields = exc.fields if type(exc.fields) is dict else {}
    return ("signature" if isinstance(exc, _SignatureError) else "missing", exc.code, fields)


def out_of_memory(exc: BaseException) -> bool:
    """The address-space limit was hit: Python's MemoryError or torch's allocator failing."""
    if isinstance(exc, MemoryError):
        return True
    text = _text(exc) if isinstance(exc, RuntimeError) else ""
    return "can't allocate memory" in text or "not enough memory" in text


def _repr(value) -> str:
    try:
        return repr(value)[:200]
    except Exception:
        return f"<{type(value).__name__}>"


def _text(exc: BaseException) -> str:
    try:
        return str(exc)
    except Exception:  # a student's exception with a broken __str__
        return type(exc).__name__
