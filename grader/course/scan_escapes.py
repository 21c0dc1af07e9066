"""The escape rule of the static scan: code that could run out of the worker's guard's sight.

An exercise that asks the student to write a piece of torch themselves (softmax, matmul, layer
norm...) has a forbidden list. Two things enforce it: the static scan on the trusted side (the
verdict) and, inside the worker, a guard that refuses the forbidden functions and operators while
the student's code runs (it teaches, and it catches spellings the scan cannot know, such as
`F.softmin(-x)` reaching the softmax operator). The guard lives in the student's process, so a
file could try to switch it off, hide from it or reach a forbidden function under another name.
This rule refuses, in every file graded under a forbidden list, the whole families that do so,
not one trick at a time:

- `import`: only torch, the course's exercise modules and a short list of standard modules that
  run no code of their choosing (no numpy, ctypes, threading, os, sys, gc, inspect, importlib...);
- `torch_part`: the parts of torch that run code where the guard cannot see it or switch it off
  (torch.library custom operators, jit, compile, fx, export, overrides, utils, multiprocessing,
  hub, load, ops, autograd.Function...), reached by any spelling, and callbacks that torch runs
  inside one of its own calls, where the function guard is paused (Tensor.apply_/map_, gradient
  hooks, as_subclass);
- `special_def`: a special method the file defines (__eq__, __index__, __torch_function__,
  __del__...), which Python calls from inside torch's functions, with the function guard paused;
- `base`: a class whose base is not object, an exception, nn.Module (or one of torch's modules),
  NamedTuple, Enum or a class of the course's files: the special methods of a list, a dict,
  collections.UserList or int call the file's overrides and properties from inside torch too;
- `private` / `special`: names with a leading underscore that the file does not define itself
  (torch._C, torch.overrides._pop_mode, nn.Module._parameters) and special attributes
  (__dict__, __globals__, __subclasses__...), the ways to torch's internals and to the guard;
- `star`: `from torch.nn.functional import *`, after which `softmax(x)` names nothing the scan knows;
- `dynamic`: names made at run time (getattr with a computed name, exec, eval, compile,
  __import__, globals, vars, operator.attrgetter, type() with three arguments), which no scan can
  read; a string annotation is scanned as the code it holds (functools.singledispatch evaluates it);
- `frames`: the interpreter's frames and tracebacks (f_back, f_locals, tb_frame), from which the
  guard object itself could be reached;
- `alias`: a forbidden function reached through another path (`torch.nn.modules.activation.F.softmax`,
  `nn.modules.activation.MultiheadAttention`, `t = torch.nn; t.MultiheadAttention`), found by
  resolving the path on the trusted side to the object it names.

Beyond the scan, a worker graded under a forbidden list cannot start a thread or a process or
replace its program (worker/runtime/syscalls.py), and its guard is on from before the file is
imported to the end of the process (worker/runtime/serve.py).
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import sys

ALLOWED_MODULES = frozenset(
    {
        "__future__",
        "abc",
        "array",
        "base64",
        "bisect",
        "cmath",
        "collections",
        "contextlib",
        "copy",
        "csv",
        "dataclasses",
        "datetime",
        "decimal",
        "enum",
        "fractions",
        "functools",
        "hashlib",
        "heapq",
        "io",
        "itertools",
        "json",
        "math",
        "numbers",
        "operator",
        "pathlib",
        "pprint",
        "random",
        "re",
        "regex",
        "statistics",
        "string",
        "struct",
        "textwrap",
        "time",
        "torch",
        "typing",
        "typing_extensions",
        "unicodedata",
    }
)

# Parts of torch, by the name of one component of the path: anything under them, however spelled.
TORCH_PARTS = frozenset(
    {
        "library",
        "jit",
        "compile",
        "compiler",
        "export",
        "fx",
        "onnx",
        "overrides",
        "utils",
        "multiprocessing",
        "distributed",
        "hub",
        "package",
        "serialization",
        "load",
        "ops",
        "classes",
        "testing",
        "func",
        "vmap",
        "cond",
        "while_loop",
        "autograd.graph",
        "autograd.Function",
        "autograd.function",
        "profiler",
        "cpp_extension",
        # other implementations of nn's modules (quantizable MultiheadAttention is torch's attention in
        # plain Python) and the attention APIs beside nn.functional
        "ao",
        "quantization",
        "quantizable",
        "quantized",
        "qat",
        "intrinsic",
        "nn.attention",
    }
)
# The same names reached from an object the scan cannot resolve (`t = [torch][0]; t.library`): only
# those that mean nothing else in an exercise's own code.
TORCH_PARTS_ANYWHERE = frozenset(
    {
        "library",
        "jit",
        "fx",
        "onnx",
        "overrides",
        "multiprocessing",
        "distributed",
        "hub",
        "serialization",
        "vmap",
        "functionalize",
        "custom_op",
        "load_library",
        "cpp_extension",
        "while_loop",
        "compiler",
    }
)
# Torch runs these callbacks inside one of its own calls, with the function guard paused.
CALLBACKS = frozenset(
    {
        "apply_",
        "map_",
        "map2_",
        "register_hook",
        "register_post_accumulate_grad_hook",
        "register_multi_grad_hook",
        "register_prehook",
        "register_full_backward_hook",
        "register_full_backward_pre_hook",
        "register_backward_hook",
        "saved_tensors_hooks",
        "save_on_cpu",
        "as_subclass",
        "numpy",
        "get_type_hints",
        "ForwardRef",
        # names that reach attributes or code from text: operator's getters, string.Formatter's fields,
        # functools' dispatch on annotations (it evaluates string annotations)
        "attrgetter",
        "methodcaller",
        "Formatter",
        "get_field",
        "singledispatch",
        "singledispatchmethod",
    }
)
# A special method the file defines is a callback: Python calls it from inside torch's own functions
# (`x in tensor` calls __eq__, an argument's __index__ or __format__), where the function guard is
# paused. A class of a "write it yourself" file needs none but these.
SPECIAL_DEFS_OK = frozenset({"__init__", "__post_init__", "__repr__", "__str__"})
# The bases a class of such a file may have: the special methods of any other (a list, a dict,
# collections.UserList, int, str) call the student's overrides and properties from inside torch.
BASES_OK = frozenset(
    {
        "object",
        "Exception",
        "ValueError",
        "TypeError",
        "RuntimeError",
        "KeyError",
        "IndexError",
        "NotImplementedError",
        "AssertionError",
        "ArithmeticError",
        "LookupError",
    }
)
BASES_OK_PATHS = frozenset({"typing.NamedTuple", "typing.Protocol", "typing.Generic", "abc.ABC", "enum.Enum"})
SPECIAL_OK = frozenset(
    {
        "__init__",
        "__name__",
        "__qualname__",
        "__doc__",
        "__class__",
        "__call__",
        "__len__",
        "__getitem__",
        "__iter__",
        "__next__",
        "__repr__",
        "__str__",
        "__post_init__",
    }
)
DYNAMIC = frozenset(
    {
        "exec",
        "eval",
        "compile",
        "__import__",
        "globals",
        "locals",
        "vars",
        "breakpoint",
        "__builtins__",
        "__loader__",
        "__spec__",
    }
)
ATTRIBUTE_BUILTINS = frozenset({"getattr", "setattr", "delattr", "hasattr"})
FRAMES = frozenset(
    {
        "tb_frame",
        "tb_next",
        "f_back",
        "f_locals",
        "f_globals",
        "f_builtins",
        "f_code",
        "f_trace",
        "gi_frame",
        "gi_code",
        "gi_yieldfrom",
        "cr_frame",
        "cr_code",
        "cr_await",
        "ag_frame",
        "ag_code",
        "co_code",
        "co_consts",
        "co_names",
    }
)


def _special(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


def _private(name: str) -> bool:
    return name.startswith("_") and not _special(name)


class _Attributes(ast.NodeTransformer):
    """getattr(obj, "name") is obj.name, for every rule (and so is hasattr, setattr, delattr); a
    string annotation is the code it holds (typing and functools evaluate it: `def f(a: "exec(...)")`)."""

    def __init__(self, dynamic: list[ast.AST]):
        self.dynamic = dynamic

    def _annotation(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                parsed = ast.parse(node.value.strip(), mode="eval").body
            except SyntaxError:
                self.dynamic.append(node)  # text that is not an expression: nothing may evaluate it
                return node
            for inner in ast.walk(parsed):
                ast.copy_location(inner, node)
            return self.visit(parsed)
        return node

    def visit_arg(self, node: ast.arg):
        self.generic_visit(node)
        if node.annotation is not None:
            node.annotation = self._annotation(node.annotation)
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        if node.returns is not None:
            node.returns = self._annotation(node.returns)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_AnnAssign(self, node: ast.AnnAssign):
        self.generic_visit(node)
        node.annotation = self._annotation(node.annotation)
        return node

    def visit_Call(self, node: ast.Call):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in ATTRIBUTE_BUILTINS and len(node.args) >= 2:
            name = node.args[1]
            if isinstance(name, ast.Constant) and isinstance(name.value, str):
                ctx = ast.Store() if node.func.id in ("setattr", "delattr") else ast.Load()
                attr = ast.Attribute(value=node.args[0], attr=name.value, ctx=ctx)
                ast.copy_location(attr, node)
                if node.func.id == "getattr" and len(node.args) == 2 and not node.keywords:
                    return attr
                node.args[1] = attr  # still a call of setattr/...: the attribute is judged all the same
                return node
            self.dynamic.append(node)
        elif isinstance(node.func, ast.Name) and node.func.id == "type" and len(node.args) == 3:
            self.dynamic.append(node)  # type(name, bases, {"__eq__": f}): a class made from text and a dict
        return node


@functools.lru_cache(maxsize=4096)
def resolve(dotted: str):
    """The object a path under torch names, read without running anything the path chooses beyond
    torch's own imports; None when it names nothing."""
    parts = dotted.split(".")
    try:
        obj = importlib.import_module(parts[0])
    except ImportError:
        return None
    for i, part in enumerate(parts[1:], 1):
        try:
            obj = inspect.getattr_static(obj, part)
        except AttributeError:
            if not inspect.ismodule(obj):
                return None
            name = f"{obj.__name__}.{part}"
            try:
                obj = sys.modules.get(name) or importlib.import_module(name)
            except Exception:
                return None
        if isinstance(obj, (staticmethod, classmethod)):
            obj = obj.__func__
    return obj


def _is_module_class(obj) -> bool:
    import torch

    return isinstance(obj, type) and issubclass(obj, torch.nn.Module)


def _banned_objects(forbidden: list[str]) -> list[tuple[object, str]]:
    """(object, its name in the list) of the exercise's forbidden torch names that exist."""
    named = ((resolve(n), n) for n in forbidden if n.startswith("torch.") and not n.endswith(".*"))
    return [(obj, name) for obj, name in named if obj is not None]


def escapes(tree: ast.AST, forbidden: list[str], local_modules=frozenset(), hit=None) -> None:
    """Call hit(name, node, why) for every escape in the parsed file `tree` (see the module's doc)."""
    dynamic: list[ast.AST] = []
    tree = _Attributes(dynamic).visit(tree)
    for node in dynamic:
        if isinstance(node, ast.Constant):
            hit("an annotation that is not an expression", node, "dynamic")
        elif node.func.id == "type":
            hit("type(name, bases, namespace)", node, "dynamic")
        else:
            hit(f"{node.func.id}(...) with a computed name", node, "dynamic")

    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    def dotted(node):
        parts = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if isinstance(node, ast.Name) and node.id in aliases:
            return ".".join([aliases[node.id], *reversed(parts)])
        return None

    # `t = torch.nn` and `def f(m=torch.nn)` name the same thing under another name.
    for _ in range(3):
        for node in ast.walk(tree):
            pairs = []
            if isinstance(node, ast.Assign):
                pairs = [(t, node.value) for t in node.targets]
            elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                pairs = [(node.target, node.value)]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                a = node.args
                positional = a.posonlyargs + a.args
                pairs = list(zip(positional[len(positional) - len(a.defaults) :], a.defaults))
                pairs += [(arg, d) for arg, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]
            for target, value in pairs:
                name = target.id if isinstance(target, ast.Name) else getattr(target, "arg", None)
                path = dotted(value)
                if name and path and name not in aliases:
                    aliases[name] = path

    defined: set[str] = set()  # names the file makes itself: its own private helpers and attributes
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
            if _special(node.name) and node.name not in SPECIAL_DEFS_OK:
                hit(f"def {node.name}", node, "special_def")
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            defined.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
        elif isinstance(node, ast.arg):
            defined.add(node.arg)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.args
            and node.func.attr in ("register_buffer", "register_parameter", "add_module", "register_module")
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            defined.add(node.args[0].value)  # self.register_buffer("_mask", ...) makes self._mask
    local_classes = {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ClassDef):
            continue
        for kw in node.keywords:
            if kw.arg == "metaclass":
                hit("metaclass=", kw.value, "base")
        for base in node.bases:
            base = base.value if isinstance(base, ast.Subscript) else base  # Generic[T]
            path = dotted(base)
            if isinstance(base, ast.Name) and (base.id in local_classes or base.id in BASES_OK):
                continue
            if path and (path.split(".")[0] in local_modules or path in BASES_OK_PATHS):
                continue
            if path and path.startswith("torch.") and _is_module_class(resolve(path)):
                continue  # nn.Module and torch's modules (a forbidden one is refused as such)
            hit(ast.unparse(base), base, "base")
    # `__eq__ = lambda ...` in a class is a special method too; `__all__ = [...]`, `__constants__ = [...]`
    # or `__hash__ = None` hold data, not code
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            data = all(
                isinstance(n, (ast.Constant, ast.List, ast.Tuple, ast.Set, ast.Dict, ast.Load, ast.expr_context))
                for n in ast.walk(node.value)
            )
            for target in targets:
                if (
                    isinstance(target, ast.Name)
                    and _special(target.id)
                    and target.id not in SPECIAL_DEFS_OK
                    and not data
                ):
                    hit(target.id, target, "special_def")
    own_self = {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.ctx, ast.Store)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
    }
    banned = _banned_objects(forbidden)
    last_names = {n.rsplit(".", 1)[-1] for n in forbidden if not n.endswith(".*")} - {"*"}

    def judge_path(path: str, node) -> bool:
        """Rules for a path that starts at an import; True when it broke one."""
        parts = path.split(".")
        root = parts[0]
        if root in local_modules:
            return False  # the student's own exercise files, scanned under the same rules
        for part in parts[1:]:
            if _special(part) and part not in SPECIAL_OK:
                hit(path, node, "special")
                return True
            if _private(part) and not (part in defined and root not in ("torch",)):
                hit(path, node, "private")
                return True
        if any(part in CALLBACKS for part in parts[1:]):
            hit(path, node, "torch_part")
            return True
        if root == "torch":
            for i, part in enumerate(parts[1:], 1):
                if part in TORCH_PARTS or ".".join(parts[i : i + 2]) in TORCH_PARTS:
                    hit(path, node, "torch_part")
                    return True
            obj = resolve(path)  # the object itself, or a subclass (torch.ao.nn.quantizable.MultiheadAttention)
            name = next(
                (
                    n
                    for b, n in banned
                    if obj is b or isinstance(obj, type) and isinstance(b, type) and issubclass(obj, b)
                ),
                None,
            )
            if name is not None:  # spelled as in the list, the name scan has said it already
                hit(name if path == name else f"{path} (= {name})", node, "alias")
                return True
        return False

    def judge_name(attr: str, node, on_self: bool) -> None:
        """Rules for an attribute of an object the scan cannot resolve."""
        if attr in FRAMES:
            hit(attr, node, "frames")
        elif _special(attr):
            if attr not in SPECIAL_OK:
                hit(attr, node, "special")
        elif _private(attr):
            if attr not in defined:
                hit(attr, node, "private")
        elif attr in CALLBACKS:
            hit(attr, node, "torch_part")
        elif attr in TORCH_PARTS_ANYWHERE and not (on_self and attr in own_self):
            hit(attr, node, "torch_part")
        elif attr in last_names and not (on_self and attr in own_self):
            hit(attr, node, "alias_name")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                top = a.name.split(".")[0]
                if top not in ALLOWED_MODULES and top not in local_modules:
                    hit(a.name, node, "import")
                else:
                    judge_path(a.name, node)
        elif isinstance(node, ast.ImportFrom):
            top = (node.module or "").split(".")[0]
            if node.level or top not in ALLOWED_MODULES and top not in local_modules:
                hit("." * node.level + (node.module or ""), node, "import")
            else:
                for a in node.names:
                    if a.name != "*":
                        judge_path(f"{node.module}.{a.name}", node)
                    elif top not in local_modules:  # names the scan cannot see: `softmax(x)` after it
                        hit(f"from {node.module} import *", node, "star")
        elif isinstance(node, ast.Name):
            if node.id in DYNAMIC:
                hit(node.id, node, "dynamic")
            elif node.id in ATTRIBUTE_BUILTINS and isinstance(node.ctx, ast.Load):
                pass  # a call with a constant name became an attribute above; others are in `dynamic`
            elif node.id in aliases and isinstance(node.ctx, ast.Load):
                judge_path(aliases[node.id], node)
        elif isinstance(node, ast.Attribute):
            path = dotted(node)
            if path is not None:
                judge_path(path, node)
            elif not isinstance(node.value, ast.Attribute) or dotted(node.value) is None:
                on_self = isinstance(node.value, ast.Name) and node.value.id == "self"
                judge_name(node.attr, node, on_self)
    # getattr passed on as a value (functools.reduce(getattr, names, torch)) names things at run time too
    called = {id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Name)
            and node.id in ATTRIBUTE_BUILTINS
            and isinstance(node.ctx, ast.Load)
            and id(node) not in called
        ):
            hit(f"{node.id} passed as a value", node, "dynamic")
