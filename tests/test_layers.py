"""The grader's parts and their order: a module imports its own part and parts of lower levels,
never a part of its own level or above (README.md, "How the grader works").

Every import counts: `import grader.x`, `from grader.x import y`, `from grader import x`,
relative imports (`from ..x import y`), and imports inside functions. Nothing is imported to
find them: each module's source is read with `ast`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "grader"

# The parts, lowest level first. A module may import its own part and the parts of lower levels;
# parts on one level never import each other. `grader` itself (its __version__) is below them all.
LEVELS: list[tuple[str, ...]] = [
    ("course",),  # the course manifest, messages and i18n, the forbidden-API scan, safe_text, files, atomic
    ("capstone", "worker"),  # kata train and its data, GPT-2's ranks; the sandboxed worker
    ("checking",),  # what checks are written with, the runner, reading a submission
    ("checks",),  # each exercise's checks
    ("listings",),  # the book's listings re-run with a student's code, and the figures' vocabulary
    ("reports", "authoring"),  # the terminal/JSON/HTML reports and figures; kata stubs, fixtures, verify
    ("student",),  # the student's commands
    ("instructor",),  # a class's grading and gradebooks, the release, the exports
    ("cli",),  # grader/cli.py and grader/__main__.py: arguments and dispatch
]
LEVEL = {part: i for i, parts in enumerate(LEVELS) for part in parts}
LOOSE = {"__init__.py", "__main__.py", "cli.py"}  # the only modules directly in grader/
DATA_DIRS = {
    "fixtures",
    "locale",
    "release_stubs",
    "__pycache__",
}  # folders of grader/ that are not parts (locale: messages.po)
SANDBOXED = "grader.worker.runtime"  # runs inside the sandbox, which cannot see the rest of the grader


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str, package: Path = PACKAGE) -> bool:
    where = package.parent.joinpath(*name.split("."))
    return where.with_suffix(".py").is_file() or (where / "__init__.py").is_file()


def imports(source: str, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) for each grader module that `source`, the code of `module`, imports."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "grader"]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".") if is_package else module.split(".")[:-1]
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            if origin.split(".")[0] != "grader":
                continue
            for a in node.names:  # `from grader import listings` imports the module grader.listings
                sub = f"{origin}.{a.name}"
                found.append((node.lineno, sub if a.name != "*" and is_module(sub) else origin))
    return found


def part_of(module: str) -> str:
    """The part a module belongs to: "" for the package `grader` itself."""
    names = module.split(".")
    if len(names) == 1:
        return ""
    return "cli" if names[1] in ("cli", "__main__") else names[1]


def violations(module: str, imported: list[tuple[int, str]]) -> list[str]:
    """What `module` may not import, one line each (empty: nothing)."""
    own = part_of(module)
    out = []
    for line, target in imported:
        part = part_of(target)
        if target == "grader" or part == own and (not module.startswith(SANDBOXED) or target.startswith(SANDBOXED)):
            continue
        if module.startswith(SANDBOXED):
            why = f"{SANDBOXED} runs in the sandbox and imports nothing of the grader outside itself"
        elif part not in LEVEL:
            why = f"{target} is in no part of LEVELS"
        elif own not in LEVEL:
            why = f"{module} is in no part of LEVELS, and may import no part"
        elif LEVEL[part] == LEVEL[own]:
            why = f"{part}/ and {own}/ are on one level: neither imports the other"
        elif LEVEL[part] > LEVEL[own]:
            why = f"{part}/ is above {own}/"
        else:
            continue
        out.append(f"{module}:{line} imports {target}: {why}")
    return out


def loose_modules(names: set[str]) -> list[str]:
    """Modules directly in grader/ besides cli.py, __main__.py and __init__.py."""
    return sorted(n for n in names if n.endswith(".py") and n not in LOOSE)


def test_no_module_imports_a_part_above_its_own():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        module = module_name(path)
        found += violations(module, imports(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"))
    assert not found, "\n".join(found)


def test_every_folder_is_a_part_and_no_module_is_loose():
    assert not loose_modules({p.name for p in PACKAGE.iterdir() if p.is_file()})
    folders = {p.name for p in PACKAGE.iterdir() if p.is_dir()} - DATA_DIRS
    assert folders == set(LEVEL) - {"cli"}, folders ^ (set(LEVEL) - {"cli"})


@pytest.mark.parametrize("part", sorted(set(LEVEL) - {"cli"}))
def test_each_part_says_what_it_does(part):
    doc = ast.get_docstring(ast.parse((PACKAGE / part / "__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc.split()) >= 12, f"grader/{part}/__init__.py: say what the part does and may import"


# The checker itself: imports that break the order must be found, wherever and however written.
BREAKING = {
    # module, is it a package's __init__, its source -> the import found
    ("grader.course.fake", False, "from ..reports import report\n"): "grader.reports.report",
    (
        "grader.course.fake",
        False,
        "def f():\n    from grader.student.commands import cmd_check\n",
    ): "grader.student.commands",
    ("grader.checking.fake", False, "import grader.instructor.batch.run as run\n"): "grader.instructor.batch.run",
    ("grader.checks.test_fake", False, "from grader import listings\n"): "grader.listings",
    ("grader.reports.fake", False, "from ..authoring.stubs import stub_text\n"): "grader.authoring.stubs",
    ("grader.worker", True, "from . import client\nfrom ..capstone import gpt2\n"): "grader.capstone.gpt2",
    ("grader.worker.runtime.fake", False, "from ...course.messages import t\n"): "grader.course.messages",
    ("grader.listings.fake", False, "from grader.helpers import Heatmap\n"): "grader.helpers",
}
ALLOWED = [
    ("grader.student.fake", False, "from ..reports.report import to_dict\nfrom . import progress\n"),
    ("grader.instructor.batch.fake", False, "from ... import __version__\nfrom ..exports import gradescope\n"),
    ("grader.checks.test_fake", False, "from grader.checking import check\nfrom grader.capstone import gpt2\n"),
    ("grader.cli", False, "def f():\n    from .instructor.release.release import build\n"),
    ("grader.worker.runtime.fake", False, "from . import wire\n"),
]


@pytest.mark.parametrize("case", list(BREAKING), ids=lambda c: c[0] + ": " + c[2].strip().splitlines()[-1].strip())
def test_the_check_finds_an_import_that_breaks_the_order(case):
    module, is_package, source = case
    found = violations(module, imports(source, module, is_package))
    assert len(found) == 1 and f"imports {BREAKING[case]}:" in found[0], found


@pytest.mark.parametrize("case", ALLOWED, ids=lambda c: c[0])
def test_the_check_allows_imports_downwards(case):
    module, is_package, source = case
    assert violations(module, imports(source, module, is_package)) == []


def test_the_check_finds_a_loose_module():
    assert loose_modules({"cli.py", "__init__.py", "__main__.py", "helpers.py", "release.json"}) == ["helpers.py"]


# ----------------------------------------------------------------------------- no circles
def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Each grader module and the grader modules it imports (a name that is not a module, such as
    `from grader.x import function`, counts as its module grader.x)."""
    graph = {}
    for path in sorted(package.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        module = module_name(path, package)
        found = set()
        for _, target in imports(path.read_text(encoding="utf-8"), module, path.name == "__init__.py"):
            names = target.split(".")
            while names and not is_module(".".join(names), package):
                names.pop()
            if names:
                found.add(".".join(names))
        graph[module] = found - {module}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others (Tarjan's strongly
    connected components of more than one module), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in graph:
                continue
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def test_no_two_modules_import_each_other():
    """Within a part too: a circle, even through a function's own import, means neither module can
    be read (or changed) without the other."""
    assert circles(import_graph()) == []


def test_the_circle_check_finds_direct_and_indirect_circles():
    assert circles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []
