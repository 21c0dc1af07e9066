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
too. Nothing else is rewritten (`x += 1` stays `x += 1` where `x` is read): each rewrite only
removes or reorders what a copier can change for free, so it does not make two different
solutions alike (measured in tests/test_similarity.py: independent solutions still score 0).

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


def canonical(code: str) -> str:
    """`code` as it is compared (module doc); NotCompared when it cannot be."""
    text = _BLANK_OR_COMMENT.sub("", code)
    if len(text) > MAX_TEXT:
        raise NotCompared(t("similarity_too_long_text", limit=MAX_TEXT))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for "\d" and the like: the student's, not ours
            tree = ast.parse(code)
        _simplify(tree)
        out = ast.unparse(tree)
        out += "\n" if out else ""
    except (SyntaxError, ValueError, RecursionError):  # not Python this host reads, or nested too deeply for
        out = text  # the parser or unparse (a copy padded with `1+1+...`): as written, so it is still compared
    except MemoryError as e:
        raise NotCompared(t("similarity_too_deep", error=type(e).__name__)) from None
    if len(out) > MAX_CHARS:
        raise NotCompared(t("similarity_too_long_code", limit=MAX_CHARS))
    return out


def _simplify(tree: ast.AST) -> None:
    """The rewrites of the module doc, in place. ast.walk is iterative (a deep expression does not
    recurse here); reversed, it visits every node after all of its descendants, so a body is
    cleaned before the statement holding it is judged."""
    read = _names_read(tree)
    for node in reversed(list(ast.walk(tree))):
        if isinstance(node, ast.Call):
            node.keywords.sort(key=lambda k: (k.arg is None, k.arg or ""))
        elif isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) \
                and len(node.value) > LONG_STRING:
            node.value = node.value[:LONG_STRING] + ("…" if isinstance(node.value, str) else b"...")
        for name in _STATEMENT_LISTS:
            stmts = getattr(node, name, None)
            if not isinstance(stmts, list) or not stmts or not isinstance(stmts[0], ast.stmt):
                continue
            kept = [b for s in stmts for b in _unwrapped(s) if not _no_op(b) and not _dead_store(b, read)]
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
    return (value is None or _calls_nothing(value)) and all(
        isinstance(n, (ast.Name, ast.Tuple, ast.List, ast.Store)) for n in names) and not any(
        isinstance(n, ast.Name) and n.id in read for n in names)


def _calls_nothing(expr: ast.expr) -> bool:
    return not any(isinstance(n, _DOES_SOMETHING) for n in ast.walk(expr))
