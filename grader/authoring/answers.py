"""No stub hands out an exercise's answer (a part of `kata verify`).

An answer is the code of one `# BEGIN SOLUTION ... # END SOLUTION` block of a solution file.
A stub contains it when some run of consecutive statements anywhere in the stub (a module, a
function or class body, a branch or loop body) is the same code once normalised: the syntax
tree without comments, layout or docstrings, every variable and parameter renamed in order of
first use (`x`, `h` and `hidden` are one name), attribute names and constants kept. So a given
class that copies another exercise's answer is found however its locals are named; a block too
small to be an answer of its own (`return self.net(x)`) is not looked for.

A copy with a statement or two changed is found too: a function of the stub whose statements,
with every name made one, match at least SIMILAR of a block's (difflib's ratio) holds it.
"""

from __future__ import annotations

import ast
import copy
import difflib
import textwrap
from dataclasses import dataclass

from ..course.messages import t
from . import stubs

MIN_NODES = 8  # a block with fewer syntax nodes (after normalising) is too generic to be an answer
SIMILAR = 0.8  # difflib ratio from which a function's body counts as a changed copy of a block
MIN_STATEMENTS = 4  # blocks shorter than this are only looked for as exact copies


@dataclass(frozen=True)
class Answer:
    exercise: str
    owner: str  # the function holding the block, e.g. "BERTEncoder.forward"
    line: int  # the block's BEGIN line in the solution
    code: tuple[str, ...]  # one normalised dump per statement
    shape: tuple[str, ...]  # the same with every name one: for changed copies


@dataclass(frozen=True)
class Leak:
    stub_exercise: str
    stub_line: int
    answer: Answer


class _Rename(ast.NodeTransformer):
    """Every variable and parameter becomes _0, _1, ... in order of first use (all "_" when `one`)."""

    def __init__(self, one: bool = False):
        self.names: dict[str, str] = {}
        self.one = one

    def _new(self, name: str) -> str:
        return "_" if self.one else self.names.setdefault(name, f"_{len(self.names)}")

    def visit_Name(self, node):
        node.id = self._new(node.id)
        return node

    def visit_arg(self, node):
        node.arg = self._new(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node):
        node.name = self._new(node.name)
        node.returns = None
        node.body = _without_docstring(node.body)
        self.generic_visit(node)
        return node

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node):
        node.name = self._new(node.name)
        node.body = _without_docstring(node.body)
        self.generic_visit(node)
        return node


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[1:] or [ast.Pass()]
    return body


def normalise(statements: list[ast.stmt], one_name: bool = False) -> tuple[str, ...]:
    """One dump per statement, with one renaming shared by the whole run."""
    renamer = _Rename(one_name)
    out = []
    for stmt in statements:
        node = renamer.visit(copy.deepcopy(stmt))
        out.append(ast.dump(node, annotate_fields=False, include_attributes=False))
    return tuple(out)


def _size(statements: list[ast.stmt]) -> int:
    return sum(1 for s in statements for n in ast.walk(s) if not isinstance(n, ast.expr_context))


def answers(source: str, exercise: str, filename: str = "<solution>") -> list[Answer]:
    """The normalised answer blocks of one solution file (too small ones left out)."""
    lines = source.splitlines()
    found = []
    for b in stubs.blocks(source, filename):
        body = ast.parse(textwrap.dedent("\n".join(lines[b.start : b.end - 1]))).body
        if body and _size(body) >= MIN_NODES:
            found.append(Answer(exercise, b.owner, b.start, normalise(body), normalise(body, one_name=True)))
    return found


def _statement_lists(tree: ast.AST):
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            value = getattr(node, name, None)
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                yield value
        for handler in getattr(node, "handlers", ()) or ():
            yield handler.body


def leaks(stub_source: str, stub_exercise: str, known: list[Answer]) -> list[Leak]:
    """Each answer of `known` that appears in the stub, with the stub line where it starts."""
    tree = ast.parse(stub_source)
    by_length: dict[int, list[Answer]] = {}
    for a in known:
        by_length.setdefault(len(a.code), []).append(a)
    found: dict[Answer, int] = {}
    for body in _statement_lists(tree):
        for n, group in by_length.items():
            for i in range(len(body) - n + 1):
                code = normalise(body[i : i + n])
                for a in group:
                    if a.code == code and a not in found:
                        found[a] = body[i].lineno
    similar = [a for a in known if len(a.code) >= MIN_STATEMENTS]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            shape = normalise(_without_docstring(node.body), one_name=True)
            for a in similar:
                if a not in found and difflib.SequenceMatcher(None, a.shape, shape, autojunk=False).ratio() >= SIMILAR:
                    found[a] = node.lineno
    return [Leak(stub_exercise, line, a) for a, line in found.items()]


def check_course(course) -> list[str]:
    """`kata verify`'s problems: every stub line that holds the answer of an exercise."""
    known = []
    for ex in course.exercises:
        path = course.solutions_dir / ex.file
        known += answers(path.read_text(encoding="utf-8"), ex.id, ex.file)
    problems = []
    for ex in course.exercises:
        stub = course.exercises_dir / ex.file
        for leak in leaks(stub.read_text(encoding="utf-8"), ex.id, known):
            a = leak.answer
            problems.append(
                t(
                    "answers_own_leak" if a.exercise == ex.id else "answers_leak",
                    id=ex.id,
                    stub=f"exercises/{ex.file}:{leak.stub_line}",
                    exercise=a.exercise,
                    owner=a.owner,
                    solution=f"solutions/{course.get(a.exercise).file}:{a.line}",
                )
            )
    return problems
