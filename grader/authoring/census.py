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
from . import input_classes

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
    # the same, written inside `if grading():` (the reads `kata check` skips: grader.checking.grading)
    grading_names: set[str] = field(default_factory=set)
    grading_uses: set[str] = field(default_factory=set)


def _is_grading(test: ast.AST) -> bool:
    """`grading()` (or `<module>.grading()`): the test of an `if` whose body runs when grading only."""
    return isinstance(test, ast.Call) and not test.args and _called(test) == "grading"


def _split_grading(node: ast.AST) -> tuple[list[ast.AST], list[ast.AST]]:
    """The parts of `node` that always run and the bodies of its `if grading():` blocks (their
    `else` always runs). Nodes are whole subtrees: a part lists no node inside another."""
    always, guarded = [], []

    def visit(n: ast.AST):
        if isinstance(n, ast.If) and _is_grading(n.test):
            always.append(n.test)
            guarded.extend(n.body)
            for sub in n.orelse:
                visit(sub)
            return
        if not _contains_grading_if(n):
            always.append(n)
            return
        for c in ast.iter_child_nodes(n):  # n itself holds statements: its children say it all
            visit(c)

    visit(node)
    return always, guarded


def _contains_grading_if(node: ast.AST) -> bool:
    return any(isinstance(n, ast.If) and _is_grading(n.test) for n in ast.walk(node))


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
                    value = (
                        k.value.args[0]
                        if isinstance(k.value, ast.Call) and _called(k.value) == "Msg" and k.value.args
                        else k.value
                    )
                    text = _str(value)
                    if text:
                        out.add(text)
        elif isinstance(sub, ast.Tuple) and id(sub) in tables:
            out.add(tables[id(sub)])
    return out


def module_mistakes(path: Path, helpers: dict[str, dict[str, set[str]]] | None = None) -> dict[str, set[str]]:
    """Each check (test_ function) of one module -> the mistakes it can name (when grading)."""
    return {n: always | when_grading for n, (always, when_grading) in module_reads(path, helpers).items()}


def module_reads(
    path: Path, helpers: dict[str, dict[str, set[str]]] | None = None
) -> dict[str, tuple[set[str], set[str]]]:
    """Each check (test_ function) of one module -> (the mistakes it can name on every run, those
    it names only inside `if grading():`, which `kata check` skips). `helpers` maps an imported
    helper module's alias (`R`, `ref`) to its functions' own names."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    consts = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Tuple)
            and len(node.value.elts) == 2
        ):
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
        always, guarded = _split_grading(node)
        own = _Owner()
        for part, names, uses in ((always, own.names, own.uses), (guarded, own.grading_names, own.grading_uses)):
            for top in part:
                names |= _names_in(top, tables)
                for sub in ast.walk(top):
                    if isinstance(sub, ast.Name):
                        uses.add(sub.id)
                    elif (
                        isinstance(sub, ast.Attribute)
                        and isinstance(sub.value, ast.Name)
                        and helpers
                        and sub.value.id in helpers
                    ):
                        names |= helpers[sub.value.id].get(sub.attr, set())
        for key in keys:
            o = owners.setdefault(key, _Owner())
            o.names |= own.names
            o.uses |= own.uses
            o.grading_names |= own.grading_names
            o.grading_uses |= own.grading_uses

    def reach(name: str) -> tuple[set[str], set[str]]:
        """(names reached on every run, names reached only through an `if grading():` block)."""
        seen, todo, out = set(), [(name, False)], {False: set(), True: set()}
        while todo:
            n, guarded = todo.pop()
            if (n, guarded) in seen or n not in owners:
                continue
            seen.add((n, guarded))
            out[guarded] |= owners[n].names
            out[True] |= owners[n].grading_names
            todo.extend((u, guarded) for u in owners[n].uses)
            todo.extend((u, True) for u in owners[n].grading_uses)
        return out[False], out[True] - out[False]

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
    public: dict[str, set[str]]  # exercise -> mistakes some public check names in `kata check`
    hidden: dict[str, set[str]]  # exercise -> mistakes some hidden check names
    # exercise -> mistakes a public check names only when grading (`if grading():`, not in `kata
    # check`) and no public check names in `kata check`: reads at the book's or the training size
    # that catch a rule keyed on where the checks look (a dropout off for T > 128 or in bf16), which
    # no honest mistake is. They are not held to the rule: a public check does read them, when grading.
    grading: dict[str, set[str]] = field(default_factory=dict)

    def hidden_only(self) -> dict[str, list[str]]:
        out = {}
        for ex in self.hidden:
            gap = self.hidden[ex] - self.public[ex] - self.grading.get(ex, set())
            if gap:
                out[ex] = sorted(gap)
        return out


def census(root: Path) -> Census:
    checks_dir = root / "grader" / "checks"
    public, hidden, grading = {}, {}, {}
    for path in sorted(checks_dir.glob("test_*.py")):
        ex = path.stem[len("test_") :]
        named = module_reads(path, _helpers(checks_dir, path))
        public[ex], hidden[ex], grading[ex] = set(), set(), set()
        for info in read_checks(path):
            always, when_grading = named.get(info.name, (set(), set()))
            if info.hidden:  # hidden checks run when grading only: every read counts
                hidden[ex] |= always | when_grading
            else:
                public[ex] |= always
                grading[ex] |= when_grading
        grading[ex] -= public[ex]
    return Census(public, hidden, grading)


def table(c: Census) -> str:
    rows = [f"{'exercise':<24} {'public':>6} {'hidden':>6} {'both':>5} {'grading':>7} {'hidden only':>11}"]
    tot = [0, 0, 0, 0, 0]
    gaps = c.hidden_only()
    for ex in sorted(c.public):
        p, h, g = c.public[ex], c.hidden[ex], c.grading.get(ex, set())
        vals = [len(p), len(h), len(p & h), len(g), len(gaps.get(ex, []))]
        tot = [a + b for a, b in zip(tot, vals)]
        rows.append(f"{ex:<24} {vals[0]:>6} {vals[1]:>6} {vals[2]:>5} {vals[3]:>7} {vals[4]:>11}")
    rows.append(f"{'all':<24} {tot[0]:>6} {tot[1]:>6} {tot[2]:>5} {tot[3]:>7} {tot[4]:>11}")
    rows.append(
        "(grading: named by a public check only when grading, at the book's or the training size; not in `kata check`)"
    )
    for ex, names in sorted(c.grading.items()):
        if names:
            rows.append(f"\n{ex}: named by a public check only when grading:")
            rows += [f"  - {n}" for n in sorted(names)]
    for ex, names in gaps.items():
        rows.append(f"\n{ex}: named by hidden checks only:")
        rows += [f"  - {n}" for n in names]
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    root = Path(argv[0]) if argv else Path(__file__).resolve().parents[2]
    c = census(root)
    print(table(c))
    print("\ninput classes (grader/authoring/input_classes.py): fed by a public check that names the shortcut")
    print(input_classes.table(c.public))
    return 1 if c.hidden_only() or input_classes.uncovered(c.public) else 0


if __name__ == "__main__":
    raise SystemExit(main())
