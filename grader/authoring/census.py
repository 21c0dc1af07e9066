"""The mistake census: which mistakes each check can name, read from the checks themselves.

A check names a mistake in three ways: `Mistake(value, en, zh)` given to `expect_tensor` (directly,
or built from a table of `(value, en, zh)` tuples), `CheckFailure(..., mistake="...")` (or a hint
`Msg.key("mistake", mistake=Msg(en, zh))`), and `draws.expect_drawn`, whose findings carry the
names of draws.MISTAKES. The census reads grader/checks/test_<id>.py statically (nothing is run):
each name belongs to the top-level function or module-level assignment that writes it, and a
check names whatever the module-level helpers and tables it uses (transitively) name.

The rule it serves (tests/test_mistake_census.py): every mistake a hidden check of an exercise
names is named by a public check of the same exercise, so a student sees it in `kata check`
before the hidden checks count it.

    python -m grader.authoring.census [ROOT]    # the per-exercise table, public vs hidden
"""
from __future__ import annotations

import ast
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from ..course.manifest import read_checks

CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
DRAWS = "a draw that is not random (draws.MISTAKES: fixed counts, regions, tied rows or calls, ...)"


def _str(node: ast.AST) -> str | None:
    """The text of a string-like expression: a constant, an f-string ({…} for its fields), a
    concatenation, either branch of a conditional (the first); None for anything else."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) else "{…}" for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _str(node.left), _str(node.right)
        return left + right if left is not None and right is not None else None
    if isinstance(node, ast.IfExp):
        return _str(node.body)
    return None


def _called(call: ast.Call) -> str:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else ""


@dataclass
class _Owner:
    names: set[str] = field(default_factory=set)  # mistakes written here
    uses: set[str] = field(default_factory=set)  # module-level names it refers to


def _pairs(tree: ast.Module, consts: dict[str, tuple[str, str]]):
    """(en, zh) tables: tuples whose last two items are an English and a Chinese text, the value
    first (`*NO_TAIL` spreads a module-level (en, zh) pair into one)."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Tuple) or len(node.elts) < 2:
            continue
        last = node.elts[-1]
        if isinstance(last, ast.Starred) and isinstance(last.value, ast.Name) and last.value.id in consts:
            yield node, consts[last.value.id][0]
            continue
        if len(node.elts) < 3:
            continue
        en, zh = _str(node.elts[-2]), _str(node.elts[-1])
        if en and zh and CJK.search(zh) and not CJK.search(en) and _str(node.elts[0]) is None:
            yield node, en


def _names_in(node: ast.AST, tables: dict[int, str]) -> set[str]:
    out = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Call):
            name = _called(sub)
            if name == "Mistake":
                en = sub.args[1] if len(sub.args) > 1 else next((k.value for k in sub.keywords if k.arg == "en"), None)
                text = _str(en) if en is not None else None
                if text:
                    out.add(text)
            elif name == "expect_drawn":
                out.add(DRAWS)
            for k in sub.keywords:
                if k.arg == "mistake":
                    value = k.value.args[0] if isinstance(k.value, ast.Call) and _called(k.value) == "Msg" and k.value.args else k.value
                    text = _str(value)
                    if text:
                        out.add(text)
        elif isinstance(sub, ast.Tuple) and id(sub) in tables:
            out.add(tables[id(sub)])
    return out


def module_mistakes(path: Path, helpers: dict[str, dict[str, set[str]]] | None = None) -> dict[str, set[str]]:
    """Each check (test_ function) of one module -> the mistakes it can name. `helpers` maps an
    imported helper module's alias (`R`, `ref`) to its functions' own names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    consts = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Tuple) and len(node.value.elts) == 2:
            en, zh = (_str(e) for e in node.value.elts)
            if en and zh and CJK.search(zh):
                consts[node.targets[0].id] = (en, zh)
    tables = {id(t): en for t, en in _pairs(tree, consts)}
    owners: dict[str, _Owner] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            keys = [node.name]
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            keys = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
        else:
            continue
        own = _Owner(_names_in(node, tables))
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name):
                own.uses.add(sub.id)
            elif isinstance(sub, ast.Attribute) and isinstance(sub.value, ast.Name) and helpers \
                    and sub.value.id in helpers:
                own.names |= helpers[sub.value.id].get(sub.attr, set())
        for key in keys:
            owners.setdefault(key, _Owner()).names |= own.names
            owners[key].uses |= own.uses

    def reach(name: str) -> set[str]:
        seen, todo, out = set(), [name], set()
        while todo:
            n = todo.pop()
            if n in seen or n not in owners:
                continue
            seen.add(n)
            out |= owners[n].names
            todo.extend(owners[n].uses)
        return out

    return {n: reach(n) for n in owners if n.startswith("test_")}


def _helpers(checks_dir: Path, path: Path) -> dict[str, dict[str, set[str]]]:
    """The helper modules of grader/checks a check module imports (`from grader.checks import
    bert_reference as R`), each function's own names."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module == "grader.checks":
            for alias in node.names:
                helper = checks_dir / f"{alias.name}.py"
                if helper.exists():
                    out[alias.asname or alias.name] = module_mistakes_flat(helper)
    return out


def module_mistakes_flat(path: Path) -> dict[str, set[str]]:
    """Every top-level function of a helper module -> the names written in it (no closure)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    tables = {id(t): en for t, en in _pairs(tree, {})}
    return {n.name: _names_in(n, tables) for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


@dataclass
class Census:
    public: dict[str, set[str]]  # exercise -> mistakes some public check names
    hidden: dict[str, set[str]]  # exercise -> mistakes some hidden check names

    def hidden_only(self) -> dict[str, list[str]]:
        return {ex: sorted(self.hidden[ex] - self.public[ex]) for ex in self.hidden
                if self.hidden[ex] - self.public[ex]}


def census(root: Path) -> Census:
    checks_dir = root / "grader" / "checks"
    public, hidden = {}, {}
    for path in sorted(checks_dir.glob("test_*.py")):
        ex = path.stem[len("test_"):]
        named = module_mistakes(path, _helpers(checks_dir, path))
        public[ex], hidden[ex] = set(), set()
        for info in read_checks(path):
            (hidden if info.hidden else public)[ex] |= named.get(info.name, set())
    return Census(public, hidden)


def table(c: Census) -> str:
    rows = [f"{'exercise':<24} {'public':>6} {'hidden':>6} {'both':>5} {'hidden only':>11}"]
    tot = [0, 0, 0, 0]
    for ex in sorted(c.public):
        p, h = c.public[ex], c.hidden[ex]
        vals = [len(p), len(h), len(p & h), len(h - p)]
        tot = [a + b for a, b in zip(tot, vals)]
        rows.append(f"{ex:<24} {vals[0]:>6} {vals[1]:>6} {vals[2]:>5} {vals[3]:>11}")
    rows.append(f"{'all':<24} {tot[0]:>6} {tot[1]:>6} {tot[2]:>5} {tot[3]:>11}")
    for ex, names in c.hidden_only().items():
        rows.append(f"\n{ex}: named by hidden checks only:")
        rows += [f"  - {n}" for n in names]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    c = census(root)
    print(table(c))
    return 1 if c.hidden_only() else 0


if __name__ == "__main__":
    raise SystemExit(main())
