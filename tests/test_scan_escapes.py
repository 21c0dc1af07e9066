"""The escape rule of the forbidden-API scan, as a family: every technique below is applied to every
exercise with a forbidden list (a new exercise is covered without a new test), appended to that
exercise's own reference solution, and must be refused on the lines it added; the reference
solutions and the ordinary idioms of correct code must not be. The graded attacks of this family
are in tests/corpus.py (group "guard"); the rule itself is grader/course/scan_escapes.py."""

from __future__ import annotations

import textwrap

import pytest

from grader.course.manifest import load
from grader.course.scan import scan
from grader.course.scan_escapes import resolve
from grader.course.source_text import decode

COURSE = load()
LOCAL = frozenset(e.module for e in COURSE.exercises)
GUARDED = [e for e in COURSE.exercises if e.forbidden]

# One technique per way of running code out of the guard's sight or reaching a name the scan cannot
# read. Each is a few lines appended to a correct file.
TECHNIQUES = {
    "import threading": "import threading",
    "import _thread": "import _thread",
    "from concurrent.futures import ThreadPoolExecutor": "from concurrent.futures import ThreadPoolExecutor",
    "import multiprocessing": "import multiprocessing",
    "import os": "import os",
    "import sys": "import sys",
    "import gc": "import gc",
    "import ctypes": "import ctypes",
    "import inspect": "import inspect",
    "import importlib": "import importlib",
    "import builtins": "import builtins",
    "operator.attrgetter": "import operator\nimport torch\n_c = operator.attrgetter('nn')(torch)",
    "import warnings": "import warnings",
    "import weakref": "import weakref",
    "import types": "import types",
    "import signal": "import signal",
    "import numpy": "import numpy",
    "import pickle": "import pickle",
    "string.Formatter": "import string\nimport torch\n_f = string.Formatter().get_field('0.nn', [torch], {})",
    "relative import": "from . import helper",
    "star import from torch": "from torch.nn.functional import *",
    "star import from a module": "from math import *",
    "torch.overrides": "import torch\n_m = torch.overrides.TorchFunctionMode",
    "import torch.overrides": "import torch.overrides as _o",
    "torch._C": "import torch\n_c = torch._C",
    "torch.overrides._pop_mode": "from torch.overrides import _pop_mode",
    "python dispatch": "from torch.utils._python_dispatch import _disable_current_modes",
    "torch.utils": "import torch.utils.checkpoint",
    "torch.library": "import torch\n_op = torch.library.custom_op",
    "torch.jit": "import torch\n_s = torch.jit.script",
    "torch.compile": "import torch\n_c = torch.compile",
    "torch.fx": "import torch.fx",
    "torch.export": "import torch\n_e = torch.export",
    "torch.func": "import torch\n_v = torch.func.vmap",
    "torch.vmap": "import torch\n_v = torch.vmap",
    "torch.load": "import torch\n_l = torch.load",
    "torch.hub": "import torch\n_h = torch.hub",
    "torch.multiprocessing": "import torch.multiprocessing",
    "torch.ops": "import torch\n_o = torch.ops.aten",
    "torch.cond": "import torch\n_c = torch.cond",
    "torch through a module path": "import torch\n_l = torch.nn.modules.module.torch.library",
    "torch under another name": "import torch\n_t = torch\n_l = _t.library.custom_op",
    "torch in a container": "import torch\n_t = [torch]\n_l = _t[0].library.custom_op",
    "Tensor.apply_": "def _f(x):\n    return x.apply_(abs)",
    "Tensor.map_": "def _f(x, y):\n    return x.map_(y, max)",
    "gradient hook": "def _f(x):\n    return x.register_hook(print)",
    "module backward hook": "def _f(m):\n    return m.register_full_backward_hook(print)",
    "saved tensor hooks": "import torch\n_h = torch.autograd.graph.saved_tensors_hooks",
    "as_subclass": "def _f(x):\n    return x.as_subclass(type(x))",
    "numpy": "def _f(x):\n    return x.numpy()",
    "getattr with a computed name": "import torch\n_f = getattr(torch, 'n' + 'n')",
    "setattr with a computed name": "def _f(o, n):\n    setattr(o, n, 1)",
    "getattr as a value": "import functools\nimport torch\n_f = functools.reduce(getattr, ['nn'], torch)",
    "getattr of a private name": "import torch\n_c = getattr(torch, '_C')",
    "exec": "exec('_x = 1')",
    "eval": "_x = eval('1')",
    "compile": "_x = compile('1', 'f', 'eval')",
    "__import__": "_m = __import__('torch')",
    "globals": "_g = globals()",
    "vars": "_v = vars()",
    "__builtins__": "_b = __builtins__",
    "traceback frames": (
        "def _f():\n    try:\n        raise ValueError\n    except ValueError as e:\n"
        "        return e.__traceback__.tb_frame.f_back"
    ),
    "generator frame": "def _g():\n    yield 1\n\n\ndef _f():\n    return _g().gi_frame",
    "__subclasses__": "_s = ().__class__.__base__.__subclasses__()",
    "__dict__": "_d = object.__dict__",
    "__globals__": "_g = (lambda: 0).__globals__",
    "type hints evaluated": "import typing\n\n\ndef _f(x: 'int'):\n    return x\n\n\n_h = typing.get_type_hints(_f)",
    "__torch_function__": (
        "import torch\n\n\nclass _T(torch.Tensor):\n    @classmethod\n"
        "    def __torch_function__(cls, func, types, args=(), kwargs=None):\n        return None"
    ),
    "__torch_function__ assigned": (
        "import torch\n\n\nclass _T(torch.Tensor):\n    __torch_function__ = classmethod(lambda *a, **k: None)"
    ),
    "module __getattr__": "def __getattr__(name):\n    return name",
    "a callback in __eq__": (
        "import torch\n\n\nclass _Key(int):\n    def __eq__(self, other):\n        return True\n\n\n"
        "_x = _Key(0) in torch.zeros(1)"
    ),
    "a callback in __index__": "class _I(int):\n    def __index__(self):\n        return 1",
    "a callback assigned": "class _S(str):\n    __eq__ = lambda self, other: True",
    "a class from a dict": "_K = type('K', (int,), {'__eq__': lambda s, o: True})",
    "autograd.Function": (
        "import torch\n\n\nclass _F(torch.autograd.Function):\n    @staticmethod\n"
        "    def forward(ctx, x):\n        return x"
    ),
    "code in a string annotation": (
        "import functools\n\n\n@functools.singledispatch\ndef _d(a):\n    return a\n\n\n"
        "def _k(a: \"__import__('builtins').exec('x = 1') or int\"):\n    return a"
    ),
    "code in a return annotation": "def _k(a) -> \"exec('x = 1') or int\":\n    return a",
    "an annotation that is not code": "def _k(a: 'import os'):\n    return a",
    "singledispatch": "from functools import singledispatch",
    "a base whose special methods call back": (
        "import collections\n\n\nclass _Box(collections.UserList):\n"
        "    @property\n    def data(self):\n        return [1]"
    ),
    "a list as base": "class _L(list):\n    pass",
    "a metaclass": "class _M(type):\n    pass\n\n\nclass _C(metaclass=_M):\n    pass",
    "a subclass of a forbidden class": "import torch\n_q = torch.ao.nn.quantizable.MultiheadAttention",
    "torch.nn.attention": "from torch.nn.attention.flex_attention import flex_attention",
    "__del__": "class _D:\n    def __del__(self):\n        pass",
    "a private attribute of torch's": "import torch\n_p = torch.nn.Linear(2, 2)._parameters",
}


def _added_lines(base: str, snippet: str) -> range:
    start = len(base.splitlines()) + 3
    return range(start, start + len(snippet.splitlines()))


def _violations(ex, snippet: str):
    base = (COURSE.solutions_dir / ex.file).read_text(encoding="utf-8")
    text = base + "\n\n" + snippet + "\n"
    added = _added_lines(base, snippet)
    found = scan(text, ex.forbidden, LOCAL)
    return [v for v in found if v.line in added], [v for v in found if v.line not in added]


@pytest.mark.parametrize("technique", sorted(TECHNIQUES))
@pytest.mark.parametrize("ex", GUARDED, ids=lambda e: e.id)
def test_every_escape_is_refused_in_every_guarded_exercise(ex, technique):
    refused, elsewhere = _violations(ex, TECHNIQUES[technique])
    assert refused, f"{ex.id}: {technique!r} was not refused"
    assert not elsewhere, f"{ex.id}: the reference solution itself was refused: {elsewhere}"


def _other_paths(name: str) -> list[str]:
    """Spellings of the forbidden torch name `name` through other modules, found by identity."""
    target = resolve(name)
    if target is None:
        return []
    rest = name.removeprefix("torch.")
    last = name.rsplit(".", 1)[1]
    paths = [f"torch.nn.modules.module.torch.{rest}"]  # torch.nn.modules.module imports torch
    import torch.nn.modules as mods

    for sub in ("activation", "linear", "normalization", "dropout", "sparse", "transformer", "distance"):
        module = getattr(mods, sub)
        if getattr(module, last, None) is target:
            paths.append(f"torch.nn.modules.{sub}.{last}")
        if getattr(getattr(module, "F", None), last, None) is target:
            paths.append(f"torch.nn.modules.{sub}.F.{last}")
    return [p for p in paths if resolve(p) is target]


ALIASES = [
    (ex, name)
    for ex in GUARDED
    for name in ex.forbidden
    if name.startswith("torch.") and not name.endswith(".*") and resolve(name) is not None
]


@pytest.mark.parametrize("ex, name", ALIASES, ids=[f"{e.id}:{n}" for e, n in ALIASES])
def test_a_forbidden_function_under_another_name_is_refused(ex, name):
    """By another module's path, by an assignment, as a default argument, through a container."""
    parent, last = name.rsplit(".", 1)
    spellings = [f"import torch\n_x = {path}" for path in _other_paths(name)]
    spellings += [
        f"import torch\n_t = {parent}\n_x = _t.{last}",
        f"import torch\n\n\ndef _f(m={parent}):\n    return m.{last}",
        f"import torch\n_t = [{parent}]\n_x = _t[0].{last}",
    ]
    for snippet in spellings:
        refused, elsewhere = _violations(ex, snippet)
        assert refused, f"{ex.id}: {name} spelled as\n{snippet}\nwas not refused"
        assert not elsewhere


CORRECT_IDIOMS = textwrap.dedent("""
    import copy
    import heapq
    import math
    import operator
    import string
    from collections import Counter
    from contextlib import nullcontext
    from pathlib import Path
    from dataclasses import dataclass
    from enum import Enum
    from functools import lru_cache
    from typing import NamedTuple, Optional

    import regex
    import torch
    import torch.nn as nn


    __all__ = ["_Block"]


    class _Kind(Enum):
        A = 1


    class _Pair(NamedTuple):
        left: int
        right: int


    @dataclass
    class _Config:
        width: int = 4
        __hash__ = None


    class _Block(nn.Module):
        __constants__ = ["width"]

        def __init__(self, width: int, scale: Optional[float] = None):
            super().__init__()
            nn.Module.__init__(self) if False else None
            self._scale = scale or 1 / math.sqrt(width)
            self.proj = nn.Linear(width, width)
            nn.init.xavier_uniform_(self.proj.weight)
            self.register_buffer("_mask", torch.ones(width))

        def __repr__(self) -> str:
            return f"_Block({self.proj.in_features})"

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            if not hasattr(x, "shape") or getattr(self, "proj", None) is None:
                raise TypeError(f"{type(x).__name__} / {x.__class__.__name__}")
            y = self.proj(x) * self._scale * self._mask
            return y.masked_fill(y == 0, torch.finfo(y.dtype).min).exp()


    @lru_cache(maxsize=None)
    def _pattern():
        return regex.compile(r"\\p{L}+")


    def _count(words):
        return Counter(words).most_common(1)[0][0], [w for w in sorted(words)], repr(_Config())


    def _clones(block: "_Block", n: int) -> "nn.ModuleList":
        return nn.ModuleList([copy.deepcopy(block) for _ in range(n)])


    def _lowest(pairs: dict, ranks: dict):
        with nullcontext():
            best = heapq.nsmallest(1, pairs, key=lambda p: ranks.get(p, math.inf))
        return sorted(pairs.items(), key=operator.itemgetter(1)), best, string.ascii_letters


    def _read(path: str) -> list[str]:
        return Path(path).read_text(encoding="utf-8").splitlines()
""")


@pytest.mark.parametrize("ex", GUARDED, ids=lambda e: e.id)
def test_ordinary_correct_code_is_not_refused(ex):
    refused, elsewhere = _violations(ex, CORRECT_IDIOMS)
    assert not refused and not elsewhere, [v.describe(ex.file) for v in refused + elsewhere]


def test_the_verdict_says_what_and_where_in_both_languages(monkeypatch):
    from grader.checking.runner import _scan_exercise

    class _Sub:
        def __init__(self, text):
            self.text = text

        def source(self, f):
            return self.text if f == "ch01/s1_11_softmax.py" else None

        def read(self, f):  # the one reader of a student's file (grader/course/source_text.py)
            return decode(self.text.encode(), f) if f == "ch01/s1_11_softmax.py" else None

    ex = COURSE.get("s1_11_softmax")
    text = (COURSE.solutions_dir / ex.file).read_text() + "\nimport threading\n"
    line = len(text.splitlines())
    monkeypatch.setenv("KATA_LANG", "en")
    en, escaped = _scan_exercise(ex, _Sub(text), COURSE)
    assert escaped
    assert f"ch01/s1_11_softmax.py:{line}: imports threading" in en and "scores 0" in en, en
    monkeypatch.setenv("KATA_LANG", "zh")
    zh, _ = _scan_exercise(ex, _Sub(text), COURSE)
    assert f"ch01/s1_11_softmax.py:{line}：导入了 threading" in zh and "记 0 分" in zh, zh
