"""The code `kata similarity` compares: each file (and each stub) in one canonical form, so that
edits which change nothing the code does change nothing in the comparison.

copydetect's windows are 25 tokenised characters and an exercise's own code is a few lines, so a
few inserted tokens break every window of a copy: a `pass` after each statement took an exact
copy from 100 % to 26-37 %, two `pass` lines or two swapped keyword arguments to 0 %. So the code
is parsed (ast: read, never run) and written back with ast.unparse, after:

  - statements that do nothing are dropped: `pass`, `...`, docstrings and every other expression
    statement that calls nothing (a bare constant, string, name, attribute, arithmetic),
    `assert True`, and an `if` that calls nothing in its test and has nothing left in its
    branches; `if` on a constant (`if True:`, `if 0:`) becomes the branch taken, `while False:`
    its `else`, a `try` left with no handler and no `finally` its body; a body left empty gets
    one `pass`;
  - the keyword arguments of every call are sorted by name (`**kw` last, in their order);
  - a string or bytes constant longer than LONG_STRING is cut there (copydetect sees any string
    as one S; a long one only made the file long);
  - comments and layout are gone (the parser drops them; unparse writes the code one way).

Stores into names the file never reads, of values that call nothing (`_t = 0`), are dropped
too. Each rewrite above only removes or reorders what a copier can change for free, so it does
not make two different solutions alike (measured in tests/test_similarity.py: independent
solutions still score 0).

A copier also rewrites a computation by hand: temporaries inlined or added, a loop that appends
turned into a comprehension, `a, b = x, y` split in two, the result of a call stored in a name never
read. A disguise doing all of that across four exercises scored 0-34 % against the work it copied
(tests/similarity_class/gus). So each file is also written one way (`forms`, the rewritten form):
`_g = f(x)` with `_g` never read becomes `f(x)`; `a, b = x, y` two assignments (when neither value
reads a target); `xs = []` then `for t in it: xs.append(e)` becomes `xs = [e for t in it]`; and a
name assigned once and read once, by the next statement of the same block that mentions it (outside
loops, comprehensions and nested functions, never read after it), is replaced there by its value.
The disguise then scores 75-100 %, the class's independent solutions still 0 against it. A pair is
compared in this form when both files parse, else both in the plain form above.

Code that does not parse (a syntax error, Python newer than the host's, nesting too deep for the
parser or for unparse) is compared as written, less its blank and comment-only lines. What is compared may be at most MAX_CHARS characters,
counted without comments, so a copy padded with a long comment is compared like the copy. A file
that cannot be read at all (MemoryError) or is too long raises NotCompared with the reason, which the report
shows: never an error that stops the command.
"""

from __future__ import annotations

import ast
import re
import warnings

from ...course.messages import t

MAX_CHARS = 200_000  # code compared, comments and no-ops removed (copydetect's tokeniser is slow past it; none is near)
MAX_TEXT = 2 * MAX_CHARS  # text parsed, blank and comment-only lines removed: bounds the parser's time and
# memory (8 MB of one-name lines, under the submission limit, took 45 s and 7 GB; 400 KB: 2 s, 0.4 GB)
LONG_STRING = 200  # string and bytes constants are cut to this many characters

_BLANK_OR_COMMENT = re.compile(r"^[ \t\f]*(?:#[^\r\n]*)?(?:\r\n|\r|\n)", re.M)
_STATEMENT_LISTS = ("body", "orelse", "finalbody")
_DOES_SOMETHING = (ast.Call, ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)


class NotCompared(Exception):
    """The file cannot be compared; str() is the reason, in the user's language."""


def canonical(code: str, rewrite: bool = True) -> str:
    """`code` as it is compared (module doc); NotCompared when it cannot be. `rewrite`: also one way
    to write a computation (temporaries inlined, list-building loops as comprehensions)."""
    rewritten, plain = forms(code, rewrite)
    return plain if rewritten is None else rewritten


def forms(code: str, rewrite: bool = True) -> tuple[str | None, str]:
    """(rewritten, plain): `code` in its canonical form with the rewrites of a computation (None
    when it does not parse: then it is only compared as written, against the plain form of the
    other file) and without them. NotCompared when it cannot be compared at all."""
    text = _BLANK_OR_COMMENT.sub("", code)
    if len(text) > MAX_TEXT:
        raise NotCompared(t("similarity_too_long_text", limit=MAX_TEXT))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for "\d" and the like: the student's, not ours
            tree = ast.parse(code)
        _simplify(tree, False)
        plain = ast.unparse(tree)
        plain += "\n" if plain else ""
        rewritten = None
        if rewrite:
            _simplify(tree, True)
            rewritten = ast.unparse(tree)
            rewritten += "\n" if rewritten else ""
    except (SyntaxError, ValueError, RecursionError):  # not Python this host reads, or nested too deeply for
        plain, rewritten = (
            text,
            None,
        )  # the parser or unparse (a copy padded with `1+1+...`): as written, so it is still compared
    except MemoryError as e:
        raise NotCompared(t("similarity_too_deep", error=type(e).__name__)) from None
    if len(plain) > MAX_CHARS:
        raise NotCompared(t("similarity_too_long_code", limit=MAX_CHARS))
    return rewritten, plain


def _simplify(tree: ast.AST, rewrite: bool) -> None:
    """The rewrites of the module doc, in place. ast.walk is iterative (a deep expression does not
    recurse here); reversed, it visits every node after all of its descendants, so a body is
    cleaned before the statement holding it is judged."""
    read = _names_read(tree)
    for node in reversed(list(ast.walk(tree))):
        if isinstance(node, ast.Call):
            node.keywords.sort(key=lambda k: (k.arg is None, k.arg or ""))
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and len(node.value) > LONG_STRING:
            node.value = node.value[:LONG_STRING] + ("…" if isinstance(node.value, str) else b"...")
        for name in _STATEMENT_LISTS:
            stmts = getattr(node, name, None)
            if not isinstance(stmts, list) or not stmts or not isinstance(stmts[0], ast.stmt):
                continue
            kept = [b for s in stmts for b in _unwrapped(s) if not _no_op(b) and not _dead_store(b, read)]
            if rewrite:
                kept = _inlined(_as_comprehensions(_split_tuples([_call_kept(b, read) for b in kept])))
            if not kept and name == "body" and not isinstance(node, ast.Module):
                kept = [ast.Pass()]  # still Python: `def f(): pass`
            setattr(node, name, kept)


def _unwrapped(s: ast.stmt) -> list[ast.stmt]:
    """The statements `s` amounts to: the branch taken of an `if` on a constant, the `else` of a
    `while` on a false one, the body of a `try` that catches nothing and has no `finally`; else `s`."""
    if isinstance(s, ast.If) and isinstance(s.test, ast.Constant):
        return s.body if s.test.value else s.orelse
    if isinstance(s, ast.While) and isinstance(s.test, ast.Constant) and not s.test.value:
        return s.orelse
    if isinstance(s, (ast.Try, ast.TryStar)) and not s.handlers and not s.finalbody:
        return s.body
    return [s]


def _no_op(s: ast.stmt) -> bool:
    """A statement that does nothing: `pass`, an expression statement that calls nothing,
    `assert` on a true constant, or an `if` whose test calls nothing and whose branches are (by
    now) nothing but `pass`."""
    if isinstance(s, ast.Pass):
        return True
    if isinstance(s, ast.Assert):
        return isinstance(s.test, ast.Constant) and bool(s.test.value)
    if isinstance(s, ast.Expr):
        return _calls_nothing(s.value)
    if isinstance(s, ast.If):
        return _calls_nothing(s.test) and all(isinstance(b, ast.Pass) for b in s.body + s.orelse)
    return False


def _names_read(tree: ast.AST) -> set[str]:
    """Every name the file reads somewhere (or declares global/nonlocal, or exports in __all__)."""
    read = {"__all__"}
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Store):
            read.add(n.id)
        elif isinstance(n, (ast.Global, ast.Nonlocal)):
            read.update(n.names)
    return read


def _dead_store(s: ast.stmt, read: set[str]) -> bool:
    """`_t = 0`, `_t += 1`, `_t: int = 0`: a store into names the file never reads, of a value that
    calls nothing. It changes nothing, so a copier may sprinkle it anywhere for free (a dead
    `_t = 0` after every statement took a copy from 1.0 down to 0.31-0.40)."""
    if isinstance(s, ast.Assign):
        targets, value = s.targets, s.value
    elif isinstance(s, (ast.AugAssign, ast.AnnAssign)):
        targets, value = [s.target], s.value
    else:
        return False
    names = [n for t in targets for n in ast.walk(t)]
    return (
        (value is None or _calls_nothing(value))
        and all(isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store)) for n in names)
        and not any(isinstance(n, ast.Name) and n.id in read for n in names)
    )


def _calls_nothing(expr: ast.expr) -> bool:
    return not any(isinstance(n, _DOES_SOMETHING) for n in ast.walk(expr))


# ---- one way to write a computation: temporaries inlined, loops that build a list as comprehensions
# (module doc). Each rewrite maps code a copier can rewrite by hand onto one form; both files of a
# pair are rewritten the same way, so what is compared is what the code computes, step by step.


def _call_kept(s: ast.stmt, read: set[str]) -> ast.stmt:
    """`_g = torch.manual_seed(seed)` with `_g` never read: the call alone, `torch.manual_seed(seed)`."""
    if (
        isinstance(s, ast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], ast.Name)
        and s.targets[0].id not in read
    ):
        return ast.Expr(s.value)
    return s


def _split_tuples(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """`a, b = x, y` as `a = x` then `b = y` when no value reads a name the targets store (so the
    order cannot matter)."""
    out = []
    for s in stmts:
        if (
            isinstance(s, ast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], (ast.Tuple, ast.List))
            and isinstance(s.value, (ast.Tuple, ast.List))
            and len(s.targets[0].elts) == len(s.value.elts)
            and not any(isinstance(e, ast.Starred) for e in s.targets[0].elts + s.value.elts)
        ):
            stored = {n.id for t in s.targets[0].elts for n in ast.walk(t) if isinstance(n, ast.Name)}
            if not stored & {n.id for n in ast.walk(s.value) if isinstance(n, ast.Name)}:
                out += [ast.Assign(targets=[t], value=v, lineno=0) for t, v in zip(s.targets[0].elts, s.value.elts)]
                continue
        out.append(s)
    return out


def _as_comprehensions(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """`xs = []` followed by `for t in it: xs.append(e)` as `xs = [e for t in it]`."""
    out: list[ast.stmt] = []
    for s in stmts:
        prev = out[-1] if out else None
        if (
            isinstance(s, ast.For)
            and not s.orelse
            and len(s.body) == 1
            and isinstance(prev, ast.Assign)
            and len(prev.targets) == 1
            and isinstance(prev.targets[0], ast.Name)
            and isinstance(prev.value, ast.List)
            and not prev.value.elts
        ):
            call = s.body[0].value if isinstance(s.body[0], ast.Expr) else None
            name = prev.targets[0].id
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "append"
                and isinstance(call.func.value, ast.Name)
                and call.func.value.id == name
                and len(call.args) == 1
                and not call.keywords
                and name not in _names_in(call.args[0])
                and name not in _names_in(s.iter)
            ):
                comp = ast.ListComp(
                    elt=call.args[0], generators=[ast.comprehension(target=s.target, iter=s.iter, ifs=[], is_async=0)]
                )
                out[-1] = ast.Assign(targets=prev.targets, value=comp, lineno=0)
                continue
        out.append(s)
    return out


_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_NOT_INTO = (
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.TryStar,
    ast.If,
    ast.Match,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def _names_in(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _inlined(stmts: list[ast.stmt]) -> list[ast.stmt]:
    """Each temporary read once inlined: `t = e` followed, in the same statement list, by the one
    simple statement that reads `t` (once, outside any loop, comprehension or nested function),
    with `t` read nowhere after it, becomes that statement with `e` in place of `t`."""
    stmts = list(stmts)
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if not (
            isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
        ) or not _calls_nothing_odd(s.value):
            i += 1
            continue
        name = s.targets[0].id
        j = next((k for k in range(i + 1, len(stmts)) if name in _names_in(stmts[k])), None)
        if j is None or isinstance(stmts[j], _NOT_INTO):
            i += 1
            continue
        target = stmts[j]
        loads = [n for n in _walk_scope(target) if isinstance(n, ast.Name) and n.id == name]
        inner = [n for n in ast.walk(target) if isinstance(n, ast.Name) and n.id == name]
        rebinds = isinstance(target, ast.Assign) and any(
            isinstance(n, ast.Name) and n.id == name for t in target.targets for n in ast.walk(t)
        )
        reads_later = any(name in _names_in(later) for later in stmts[j + 1 :])
        if (
            len(loads) != 1
            or not isinstance(loads[0].ctx, ast.Load)
            or len(inner) != 1 + rebinds
            or (reads_later and not rebinds)
        ):
            i += 1
            continue
        _replace(target, loads[0], s.value)
        del stmts[i]  # the statement that read it may now be inlined in turn: look at it again
        i = max(i - 1, 0)
    return stmts


def _calls_nothing_odd(expr: ast.expr) -> bool:
    """A value that may move: no yield, await or walrus in it."""
    return not any(isinstance(n, (ast.Await, ast.Yield, ast.YieldFrom, ast.NamedExpr)) for n in ast.walk(expr))


def _walk_scope(node: ast.AST):
    """ast.walk, not entering nested scopes (comprehensions, lambdas, functions, classes)."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        todo += [c for c in ast.iter_child_nodes(n) if not isinstance(c, _SCOPES)]


def _replace(tree: ast.AST, old: ast.AST, new: ast.expr) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for k, v in enumerate(value):
                    if v is old:
                        value[k] = new
                        return
