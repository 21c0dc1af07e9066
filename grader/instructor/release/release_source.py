"""The public form of a trusted source file, for the student bundle (`kata release`).

`prune(source, roots, drop)` keeps the top-level definitions reachable from `roots` (a check
module's public checks, the names other shipped modules import from it) and removes the rest:
the `drop`ped ones (hidden checks, `make_fixtures`), the helpers only they used, the comment
block right above each removed definition, and the imports nothing kept uses. What stays is
the original text, line for line, comments included. `replace` swaps a function's body for
given code (the bundle's stand-ins of the reference model's functions).

`imported_names(source)` says which names a module takes from other modules of
`grader.checks` (`from grader.checks.test_x import a`, `R.attr` of `from grader.checks import
bert_reference as R`): those are roots of the module they come from.
"""

from __future__ import annotations

import ast
import copy
import re
from collections import defaultdict

DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
CHECKS_PACKAGE = "grader.checks"


def _bound(target: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(target) if isinstance(n, ast.Name)}


def _defines(node: ast.stmt) -> set[str]:
    if isinstance(node, DEFS):
        return {node.name}
    if isinstance(node, ast.Assign):
        return set().union(*(_bound(t) for t in node.targets))
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return _bound(node.target)
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in node.names}
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _uses(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store)}


def _is_docstring(node: ast.stmt, index: int) -> bool:
    return (
        index == 0
        and isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


def _first_line(node: ast.stmt) -> int:
    return min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])


def prune(
    source: str,
    roots: set[str],
    drop: set[str] = frozenset(),
    replace: dict[str, str] | None = None,
    filename: str = "<source>",
) -> str:
    """`source` with only what `roots` need (see the module's docstring)."""
    replace = replace or {}
    tree = ast.parse(source, filename=filename)
    body = tree.body
    definers: dict[str, list[int]] = defaultdict(list)
    for i, node in enumerate(body):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for name in _defines(node):
            definers[name].append(i)
    dropped = {i for i, node in enumerate(body) if isinstance(node, DEFS) and node.name in drop}

    def uses_of(i: int) -> set[str]:
        node = body[i]
        if isinstance(node, DEFS) and node.name in replace:
            stub = ast.parse(replace[node.name]).body[0]
            return _uses(stub)
        return _uses(node)

    keep: set[int] = set()
    todo = [
        i
        for i, node in enumerate(body)
        if not isinstance(node, (ast.Import, ast.ImportFrom))
        and i not in dropped
        and (
            _is_docstring(node, i)
            or not isinstance(node, (*DEFS, ast.Assign, ast.AnnAssign, ast.AugAssign))
            or _defines(node) & set(roots)
        )
    ]
    while todo:
        i = todo.pop()
        if i in keep:
            continue
        keep.add(i)
        for name in uses_of(i):
            todo.extend(j for j in definers.get(name, ()) if j not in dropped and j not in keep)
    used = set().union(*(uses_of(i) for i in keep)) if keep else set()

    lines = source.splitlines()
    out: dict[int, list[str] | None] = {}  # first line (1-based) -> replacement lines (None: removed)
    spans: dict[int, int] = {}
    for i, node in enumerate(body):
        start, end = _first_line(node), node.end_lineno
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            if isinstance(node, ast.ImportFrom) and node.module == "__future__":
                continue
            names = [a for a in node.names if (a.asname or a.name).split(".")[0] in used]
            if len(names) == len(node.names):
                continue
            spans[start] = end
            if names:
                new = (
                    ast.ImportFrom(node.module, names, node.level)
                    if isinstance(node, ast.ImportFrom)
                    else ast.Import(names)
                )
                out[start] = [ast.unparse(new)]
            else:
                out[start] = None
        elif i not in keep:
            while start > 1 and lines[start - 2].lstrip().startswith("#"):  # the comment about it goes too
                start -= 1
            spans[start] = end
            out[start] = None
        elif isinstance(node, DEFS) and node.name in replace:
            spans[start] = end
            out[start] = replace[node.name].rstrip("\n").splitlines()
    result: list[str] = []
    n = 1
    while n <= len(lines):
        if n in spans:
            result.extend(out[n] or [])
            n = spans[n] + 1
            continue
        result.append(lines[n - 1])
        n += 1
    text = re.sub(r"\n{4,}", "\n\n\n", "\n".join(result).strip("\n") + "\n")
    ast.parse(text, filename=f"public form of {filename}")
    return text


def public_check_roots(source: str, filename: str = "<checks>") -> tuple[set[str], set[str]]:
    """(public check names, hidden check names) of a check module, read from its `@check`s."""
    public, hidden = set(), set()
    for node in ast.parse(source, filename=filename).body:
        if not isinstance(node, ast.FunctionDef):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and getattr(dec.func, "id", None) == "check":
                is_hidden = any(k.arg == "hidden" and ast.literal_eval(k.value) for k in dec.keywords)
                (hidden if is_hidden else public).add(node.name)
    return public, hidden


def imported_names(source: str, filename: str = "<source>") -> dict[str, set[str]]:
    """Module name under grader.checks (e.g. "test_s1_23_training", "bert_reference") -> the
    names this source takes from it."""
    tree = ast.parse(source, filename=filename)
    found: dict[str, set[str]] = defaultdict(set)
    aliases: dict[str, str] = {}  # local alias -> module
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith(CHECKS_PACKAGE + "."):
                found[node.module.split(".")[-1]] |= {a.name for a in node.names}
            elif node.module == CHECKS_PACKAGE:
                for a in node.names:
                    aliases[a.asname or a.name] = a.name
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith(CHECKS_PACKAGE + ".") and a.asname:
                    aliases[a.asname] = a.name.split(".")[-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in aliases:
            found[aliases[node.value.id]].add(node.attr)
    return dict(found)


def function_signature_stub(source: str, name: str, body: str) -> str:
    """The function `name` of `source` with its signature and docstring kept and its body
    replaced by `body` (one or more lines, unindented; `locals()` there holds the arguments)."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            doc = ast.get_docstring(node, clean=False)
            stmts = [ast.Expr(ast.Constant(doc))] if doc is not None else []
            stmts += ast.parse(body).body
            new = copy.copy(node)
            new.body = stmts
            return ast.unparse(ast.fix_missing_locations(new))
    raise KeyError(name)
