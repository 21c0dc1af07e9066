"""Generic answers: submissions built mechanically from the committed stubs, each answering every
exercise without solving it. A point earned by one of them is a point earned without solving.

Every variant is derived from the stubs' `raise NotImplementedError(...)` statements (found with
`ast`), so a new exercise is covered with no new code here:

- `raise-<Type>`: each of them raises <Type> instead (ValueError, TypeError, ...);
- `echo`: each returns its first argument (a method: the first after self);
- `none`: each returns None;
- `zeros`, `ones`, `constant`, `random`: each returns the reference solution's output with its
  values replaced: the same shape, dtype and type (tensors, ints, floats, strings, bools, nested in
  tuples, lists and dicts), but wrong values. The reference rides along as a private copy in the
  submission (ch01/_kata_reference/), imported under a private name;
- `getattr-echo`, `getattr-zeros`: one module for every exercise, whose module-level
  `__getattr__` answers every name with a callable that works as a function and as an
  `nn.Module` class, returning its first input (or zeros like it).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STUBS = ROOT / "exercises" / "ch01"
SOLUTIONS = ROOT / "solutions" / "ch01"
REFERENCE_DIR = "_kata_reference"  # inside the submission's ch01/: the private copy of the solutions

EXCEPTIONS = (
    "ValueError",
    "TypeError",
    "IndexError",
    "KeyError",
    "RuntimeError",
    "AssertionError",
    "ZeroDivisionError",
    "Exception",
)
FAKES = ("zeros", "ones", "constant", "random")
VARIANTS = [f"raise-{e}" for e in EXCEPTIONS] + ["echo", "none"] + list(FAKES) + ["getattr-echo", "getattr-zeros"]


def _is_stub_raise(node: ast.AST) -> bool:
    """`raise NotImplementedError(...)` or a bare `raise NotImplementedError`."""
    if not isinstance(node, ast.Raise) or node.exc is None:
        return False
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def _first_argument(fn: ast.FunctionDef, in_class: bool) -> str | None:
    args = fn.args.posonlyargs + fn.args.args
    if in_class and not any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in fn.decorator_list):
        args = args[1:]
    if args:
        return args[0].arg
    if fn.args.vararg:
        return f"({fn.args.vararg.arg} or [None])[0]"
    return None


def _replace_raises(node: ast.AST, make, fn=None, in_class=False) -> None:
    """Replace, in place, each stub's raise under `node` with the statement `make(fn, in_class)`
    gives for the function `fn` that holds it."""
    for field, value in ast.iter_fields(node):
        if not isinstance(value, list):
            continue
        for i, child in enumerate(value):
            if fn is not None and _is_stub_raise(child):
                value[i] = ast.copy_location(ast.parse(make(fn, in_class)).body[0], child)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                _replace_raises(child, make, child, isinstance(node, ast.ClassDef))
            elif isinstance(child, ast.AST):
                _replace_raises(child, make, fn, in_class)


def transformed_stub(source: str, variant: str) -> str:
    """The stub with every `raise NotImplementedError(...)` replaced as `variant` says."""

    def make(fn: ast.FunctionDef, in_class: bool) -> str:
        if variant.startswith("raise-"):
            return f"raise {variant[len('raise-') :]}('generic answer')"
        if fn.name == "__init__" or variant == "none":
            return "return None"
        first = _first_argument(fn, in_class)
        return f"return {first}" if first else "return None"

    tree = ast.parse(source)
    _replace_raises(tree, make)
    return ast.unparse(ast.fix_missing_locations(tree))


def stubbed_functions(source: str) -> tuple[list[str], dict[str, list[str]]]:
    """(top-level functions, {class: methods}) whose body holds a stub's raise."""
    functions, classes = [], {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and any(_is_stub_raise(n) for n in ast.walk(node)):
            functions.append(node.name)
        elif isinstance(node, ast.ClassDef):
            methods = [
                m.name
                for m in node.body
                if isinstance(m, ast.FunctionDef) and any(_is_stub_raise(n) for n in ast.walk(m))
            ]
            if methods:
                classes[node.name] = methods
    return functions, classes


# The fake values, computed inside the worker from the reference's own output.
FAKE_RUNTIME = """
import copy as _copy
import importlib.util as _ilu
import os as _os
import random as _random
import sys as _sys

import torch as _torch

_KIND = {kind!r}
_rng = _random.Random(12)


def _load_reference(name):
    folder = _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), {refdir!r})
    before = set(_sys.modules)
    _sys.path.insert(0, folder)
    try:
        spec = _ilu.spec_from_file_location("_kata_reference_" + name, _os.path.join(folder, name + ".py"))
        module = _ilu.module_from_spec(spec)
        _sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    finally:
        _sys.path.remove(folder)
        for key in set(_sys.modules) - before - {{spec.name}}:  # the reference's own sibling imports
            _sys.modules["_kata_reference_" + key] = _sys.modules.pop(key)
    return module


def _fake_tensor(t):
    if _KIND == "zeros":
        return _torch.zeros_like(t)
    if _KIND == "ones":
        return _torch.ones_like(t)
    if _KIND == "constant":
        return _torch.full_like(t, True if t.dtype == _torch.bool else (3 if not t.is_floating_point() else 0.5))
    if t.dtype == _torch.bool:
        return _torch.randint(0, 2, t.shape) == 1
    if not t.is_floating_point() and not t.is_complex():
        return _torch.randint(0, 10, t.shape, dtype=t.dtype)
    return _torch.rand_like(t)


def _fake_module(m):
    with _torch.no_grad():
        for t in list(m.parameters()) + list(m.buffers()):
            t.copy_(_fake_tensor(t))
    return m


def _fake(v):
    if isinstance(v, _torch.Tensor):
        return _fake_tensor(v.detach()).requires_grad_(v.requires_grad and v.is_floating_point())
    if isinstance(v, _torch.nn.Module):
        return _fake_module(v)
    if isinstance(v, bool):
        return {{"zeros": False, "ones": True, "constant": True}}.get(_KIND, _rng.random() < 0.5)
    if isinstance(v, int):
        return {{"zeros": 0, "ones": 1, "constant": 3}}.get(_KIND, _rng.randint(0, 100))
    if isinstance(v, float):
        return {{"zeros": 0.0, "ones": 1.0, "constant": 0.5}}.get(_KIND, _rng.random())
    if isinstance(v, str):
        return {{"zeros": "", "ones": "a", "constant": "the"}}.get(
            _KIND, "".join(_rng.choice("abcdefgh ") for _ in range(len(v))))
    if isinstance(v, bytes):
        return _fake(v.decode("latin-1")).encode("latin-1")
    if isinstance(v, tuple) and hasattr(v, "_fields"):
        return type(v)(*[_fake(x) for x in v])
    if isinstance(v, (list, tuple)):
        return type(v)(_fake(x) for x in v)
    if isinstance(v, dict):
        return type(v)((k, _fake(x)) for k, x in v.items())
    return v if v is None else None  # an object with no plain values (an optimizer, a loader): nothing


def _copied(args, kwargs):
    try:  # the reference must not do the work in place on the caller's objects
        return _copy.deepcopy(args), _copy.deepcopy(kwargs)
    except Exception:
        return args, kwargs


def _faked_function(fn):
    import functools

    @functools.wraps(fn)
    def answer(*args, **kwargs):
        args, kwargs = _copied(args, kwargs)
        return _fake(fn(*args, **kwargs))
    return answer


def _faked_init(init):
    import functools

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if isinstance(self, _torch.nn.Module):
            _fake_module(self)
        else:
            for key, value in list(vars(self).items()):
                setattr(self, key, _fake(value))
    return __init__


def _faked_method(method):
    import functools

    if isinstance(method, property):
        return property(_faked_method(method.fget))
    if isinstance(method, (staticmethod, classmethod)):
        return type(method)(_faked_function(method.__func__))

    @functools.wraps(method)
    def answer(self, *args, **kwargs):
        args, kwargs = _copied(args, kwargs)
        return _fake(method(self, *args, **kwargs))
    return answer
"""


def faked_module(exercise: str, kind: str) -> str:
    """The exercise's file for the `kind` fake: the reference's names, with every function the
    stub leaves to the student answering the reference's output with the values replaced."""
    functions, classes = stubbed_functions((STUBS / f"{exercise}.py").read_text())
    lines = [
        FAKE_RUNTIME.format(kind=kind, refdir=REFERENCE_DIR),
        f"_ref = _load_reference({exercise!r})",
        "globals().update({k: v for k, v in vars(_ref).items() if not k.startswith('__')})",
    ]
    for name in functions:
        lines.append(f"{name} = _faked_function(_ref.{name})")
    for cls, methods in classes.items():
        body = [
            f"    {m} = {'_faked_init' if m == '__init__' else '_faked_method'}(_ref.{cls}.__dict__[{m!r}])"
            for m in methods
        ]
        lines += [f"class {cls}(_ref.{cls}):", *body]
    # The reference's own given code (helpers, constructors) uses the faked names too.
    lines += [f"_ref.{name} = {name}" for name in [*functions, *classes]]
    return "\n".join(lines) + "\n"


GETATTR_MODULE = '''
import torch


def _answer(value):
    if {zeros!r} and isinstance(value, torch.Tensor):
        return torch.zeros_like(value)
    return value


class _Anything(torch.nn.Module):
    """Called like a function on a value: answers it. Called like a class: a module that does."""

    def __new__(cls, *args, **kwargs):
        if args and isinstance(args[0], (torch.Tensor, str, list, tuple, dict)):
            return _answer(args[0])
        return super().__new__(cls)

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, *args, **kwargs):
        return _answer(args[0] if args else next(iter(kwargs.values()), None))

    def __getattr__(self, name):
        try:
            return super().__getattr__(name)
        except AttributeError:
            return self.forward


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return _Anything
'''


def build(variant: str, base: Path) -> Path:
    """The submission folder (shaped like exercises/) of `variant`, under `base`."""
    sub = base / variant / "submission"
    chapter = sub / "ch01"
    chapter.mkdir(parents=True)
    for stub in sorted(STUBS.glob("*.py")):
        if variant.startswith("getattr-"):
            text = GETATTR_MODULE.format(zeros=variant == "getattr-zeros")
        elif variant in FAKES:
            text = faked_module(stub.stem, variant)
        else:
            text = transformed_stub(stub.read_text(), variant)
        (chapter / stub.name).write_text(text)
    if variant in FAKES:
        shutil.copytree(SOLUTIONS, chapter / REFERENCE_DIR, ignore=shutil.ignore_patterns("__pycache__"))
    return sub
