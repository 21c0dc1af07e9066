"""Static scan for forbidden APIs in a student's file (trusted side, no code is run).

Forbidden names are dotted paths from the manifest: "torch.softmax",
"torch.nn.functional.softmax", "torch.Tensor.softmax" (any `.softmax` method call),
"torch.Tensor.__matmul__" (the `@` operator), "torch.ops.*" (anything under torch.ops).
Import aliases are followed
(`import torch.nn.functional as F; F.softmax` is found).

`imported(source)` names the modules a file imports by name (`import m`, `from m import x`,
`__import__("m")`, `importlib.import_module("m")`): the grader scans the course's exercise files
among them under the importing exercise's forbidden list too (a module spelled at run time,
`import_module("s1_" + ...)`, is not found: see SECURITY.md, known limits).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from .messages import t
from .scan_escapes import escapes


@dataclass(frozen=True)
class Violation:
    name: str
    line: int
    code: str
    why: str = ""  # "": a forbidden name; otherwise the escape rule it broke (scan_escapes.py)

    def describe(self, file: str) -> str:
        key = f"scan_{self.why}" if self.why else "scan_use"
        return t(key, file=file, line=self.line, name=self.name, code=self.code.strip()[:80])


def _dotted(node: ast.AST, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        base = aliases.get(node.id)
        if base is None:
            return None
        return ".".join([base, *reversed(parts)])
    return None


# The longest file the scan reads: about 35 times the course's longest solution (7 KB). The scan
# runs in the grader's own process, at about 10 ms per KB of dense code on a busy 2-core machine;
# an 8 MB file once took 75 s there, past any grading budget.
MAX_SCANNED_CHARS = 256 * 1024


def scan(source: str, forbidden: list[str], local_modules=frozenset()) -> list[Violation]:
    """Violations in `source`: its forbidden names, then on lines that have none the escapes of
    scan_escapes.py (`local_modules`: the course's exercise modules, which a file may import).
    An unparsable file is one violation ("syntax": its import fails in the worker too). A file nested too deeply for
    the scan to read through (Python's parser, or this scan, runs out of recursion or memory:
    `1+1+...` hundreds of terms long) is one violation: what the grader cannot read, it cannot
    vouch for, so the exercise scores 0 (and the student's other exercises are graded as usual);
    so is a file longer than MAX_SCANNED_CHARS."""
    if not forbidden:
        return []
    if len(source) > MAX_SCANNED_CHARS:  # the scan's cost is the grader's, outside the sandbox: bounded
        return [Violation("too_large", 1, "", "too_large")]
    try:
        return _scan(source, forbidden, local_modules)
    except (RecursionError, MemoryError):
        return [Violation("too_deep", 1, "", "too_deep")]


def scan_source(found, forbidden: list[str], local_modules=frozenset()) -> list[Violation]:
    """Violations in a student's file read by grader/course/source_text.py (`found`, a SourceText):
    the scan of the text Python runs, or, for a file the grader cannot vouch for (a coding line that
    is not UTF-8, bytes that are not, a decoding that is not Python's, a file Python cannot compile,
    too long or too deep), one violation saying why: never "no violations"."""
    if not forbidden:
        return []
    if found.kind in ("too_large", "too_deep"):
        return [Violation(found.kind, 1, "", found.kind)]
    if found.kind or found.text is None:
        return [Violation(found.detail, found.line, "", found.kind or "mismatch")]
    return scan(found.text, forbidden, local_modules)


def _scan(source: str, forbidden: list[str], local_modules) -> list[Violation]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as e:  # what the scan cannot read, it cannot vouch for
        return [Violation(str(getattr(e, "msg", e))[:80], getattr(e, "lineno", None) or 1, "", "syntax")]
    lines = source.splitlines()
    banned = {n for n in forbidden if not n.endswith(".*")}
    prefixes = tuple(n[:-1] for n in forbidden if n.endswith(".*"))  # "torch.ops."
    methods = {n.rsplit(".", 1)[1] for n in banned if n.startswith("torch.Tensor.")}
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname:
                    aliases[a.asname] = a.name
                else:
                    aliases[a.name.split(".")[0]] = a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"

    found: dict[tuple[str, int], Violation] = {}

    def hit(name: str, node: ast.AST):
        line = getattr(node, "lineno", 0)
        code = lines[line - 1] if 0 < line <= len(lines) else ""
        found.setdefault((name, line), Violation(name, line, code))

    for node in ast.walk(tree):
        if isinstance(node, (ast.Attribute, ast.Name)):
            dotted = _dotted(node, aliases)
            if dotted in banned:
                hit(dotted, node)
            elif dotted and prefixes and (dotted + ".").startswith(prefixes):
                prefix = next(p for p in prefixes if (dotted + ".").startswith(p))
                hit(prefix + "*", node)  # one report per namespace and line
            elif isinstance(node, ast.Attribute) and node.attr in methods and dotted is None:
                hit(f"torch.Tensor.{node.attr}", node)
        elif isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                full = f"{node.module}.{a.name}"
                if full in banned:
                    hit(full, node)
                elif prefixes and (full + ".").startswith(prefixes):
                    hit(next(p for p in prefixes if (full + ".").startswith(p)) + "*", node)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult) and "torch.Tensor.__matmul__" in banned:
            hit("the @ operator (torch.Tensor.__matmul__)", node)
        elif (
            isinstance(node, ast.AugAssign) and isinstance(node.op, ast.MatMult) and "torch.Tensor.__matmul__" in banned
        ):
            hit("the @ operator (torch.Tensor.__matmul__)", node)
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                isinstance(node.func, ast.Name)
                and node.func.id == "__import__"
                or _dotted(node.func, aliases) == "importlib.import_module"
            )
        ):
            module = node.args[0].value  # __import__("tiktoken"), importlib.import_module("torch.nn.functional")
            if module in banned or prefixes and (module + ".").startswith(prefixes):
                hit(module, node)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            attr = node.args[1].value
            if attr in methods or any(n.rsplit(".", 1)[-1] == attr for n in banned):
                hit(f"getattr(..., {attr!r})", node)
    named = {line for _, line in found}
    escaped: dict[int, Violation] = {}

    def escape(name: str, node: ast.AST, why: str):
        line = getattr(node, "lineno", 0)
        if line not in named and line not in escaped:  # one report per line: the first rule it broke
            code = lines[line - 1] if 0 < line <= len(lines) else ""
            escaped[line] = Violation(name, line, code, why)

    escapes(ast.parse(source), forbidden, frozenset(local_modules), escape)
    return sorted([*found.values(), *escaped.values()], key=lambda v: (v.line, v.name))


def imported(source: str) -> set[str]:
    """The top-level names of the modules `source` imports by a constant name; none if unparsable
    (or nested too deeply to parse, or too long to read: scan() then refuses the file itself)."""
    if len(source) > MAX_SCANNED_CHARS:
        return set()
    try:
        tree = ast.parse(source)
    except (SyntaxError, RecursionError, MemoryError):
        return set()
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module.split(".")[0])
        elif (
            isinstance(node, ast.Call)
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and (
                isinstance(node.func, ast.Name)
                and node.func.id == "__import__"
                or isinstance(node.func, ast.Attribute)
                and node.func.attr == "import_module"
            )
        ):
            out.add(node.args[0].value.split(".")[0])
    return out
