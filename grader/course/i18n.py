"""Every text a student reads exists in English and Chinese: a static proof.

Read without running anything, so that a message on a path no solution reaches (a failure
branch) is checked too. `problems(course)` lists, each naming its file and line:
- the message catalog (`grader/locale/zh/messages.po`, read by `grader/course/messages.py`): each
  entry has its key (msgctxt), its English (msgid) and a finished Chinese text (msgstr, not fuzzy)
  with the same {fields} and the python-brace-format flag where there are fields; no key twice, no
  obsolete entry; every key is used somewhere in the package (a string naming it, or a key made
  from a prefix: f"status_{x}", "status_" + x), and every `t("key")` / `Msg.key("key")` in the
  package names a key that exists;
- course.toml: the Chinese titles, hints and forbidden-API hints hold Chinese;
- the check modules (`grader/checks/*.py`):
  - each `@check` has `title=` and `title_zh=`;
  - each `Msg(en, zh, **fields)` has two templates with the same {fields}, all passed, or two
    f-strings interpolating the same expressions, and Chinese in the Chinese one;
  - each `code(...)` holds code, not English prose (quoted strings and fields aside);
  - each `Mistake(value, en, zh)` has its Chinese text, with the same interpolated expressions;
  - no plain string where the student reads it: `expect`'s message, `what=`, `CheckFailure`,
    a helper's `what`/`message`/`label` argument, `pytest.skip`.
Used by `kata verify` and tests/test_i18n.py.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

from .manifest import PACKAGE_DIR, Course
from .messages import CATALOG, CATALOG_FILE, CJK, CatalogError, pair_problems, parse_catalog, placeholders

# Where a check hands text to the student: function name -> index of that positional argument.
MESSAGE_ARGS = {"expect": 1, "expect_equal": 2, "expect_tensor": 3, "CheckFailure": 0, "skip": 0}
MESSAGE_KEYWORDS = {"what", "message", "msg", "label"}
PROSE = re.compile(r"[A-Za-z]{2,} [A-Za-z]{2,}")
QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")


def problems(course: Course, package_dir: Path | None = None) -> list[str]:
    """Everything above, for the course and the grader package at `package_dir` (default: the one
    running) with its message catalog, `locale/zh/messages.po` inside it."""
    package_dir = Path(package_dir or PACKAGE_DIR)
    po = package_dir / CATALOG_FILE.relative_to(PACKAGE_DIR)
    found = catalog_file_problems(po, package_dir)
    try:
        catalog = CATALOG if po == CATALOG_FILE else parse_catalog(po)
    except CatalogError:
        catalog = {}  # named by catalog_file_problems
    found += course_problems(course)
    sources = sorted(package_dir.rglob("*.py"))
    for path in sources:
        found += key_problems(path, catalog, _rel(po, package_dir), package_dir)
    found += unused_key_problems(po, catalog, sources, package_dir)
    for path in sorted(course.checks_dir.glob("*.py")):
        found += module_problems(path)
    return found


# What a text still to translate is called in the problems of this module, of the exercises'
# catalogs (grader/authoring/stub_i18n.py) and of ERRATA.md's (grader/listings/errata.py): `kata
# verify --draft` lists these as pending instead of failing on them.
PENDING = re.compile(r"the Chinese text is empty|has no Chinese in it|is not translated \(empty msgstr\)"
                     r"|: not translated$|is marked fuzzy|: marked fuzzy|: stale: its English|: no catalog \(kata stubs"
                     r"|translates English that the solution no longer has|translates an entry \S+ no longer has")


def pending_translation(problem: str) -> bool:
    """Whether `problem` says only that a Chinese text is still to write (missing, fuzzy or stale),
    not that something written is wrong."""
    return PENDING.search(problem) is not None


# ---------------------------------------------------------------- the catalog file (issue 28, X3)
KEY_PREFIX = re.compile(r"[a-z][a-z0-9_]*_")  # the constant start of a key made at run time: f"status_{s}"


def _rel(path: Path, package_dir: Path) -> str:
    try:
        return path.relative_to(package_dir.parent).as_posix()
    except ValueError:
        return str(path)


def _line_of(lines: list[str], start: int, prefix: str) -> int:
    """The first line from `start` (1-based, an entry's first line) that starts with `prefix`."""
    for no in range(max(start, 1), len(lines) + 1):
        if lines[no - 1].startswith(prefix):
            return no
    return start


def catalog_file_problems(path: Path, package_dir: Path | None = None) -> list[str]:
    """What is wrong with the message catalog at `path`, each naming its file and line: an entry
    without a key (msgctxt), a key twice, an obsolete (#~) or plural entry, a missing or fuzzy
    translation, different {fields} or no Chinese in the Chinese, fields without the
    python-brace-format flag (which Poedit and `msgfmt -c` check)."""
    import polib

    where = _rel(Path(path), Path(package_dir or PACKAGE_DIR))
    try:
        text = Path(path).read_text(encoding="utf-8")
        po = polib.pofile(text, wrapwidth=0)
    except FileNotFoundError:
        return [f"{where}: the message catalog is missing"]
    except UnicodeDecodeError as e:
        return [f"{where}: not UTF-8 ({e.reason} at byte {e.start})"]
    except (OSError, ValueError) as e:
        return [f"{where}: not a readable gettext catalog: {e}"]
    lines = text.splitlines()
    out = []
    first: dict[str, int] = {}
    for e in po:
        if e.obsolete:
            out.append(f"{where}:{_line_of(lines, e.linenum, '#~')}: an obsolete entry (#~ {e.msgctxt or e.msgid!r}): "
                       "delete it")
            continue
        if not e.msgctxt:
            out.append(f"{where}:{_line_of(lines, e.linenum, 'msgid')}: an entry without msgctxt: its key, the name the "
                       "code uses (t(\"key\")), is the msgctxt")
            continue
        key, at = e.msgctxt, _line_of(lines, e.linenum, "msgctxt")
        if key in first:
            out.append(f"{where}:{at}: the key {key!r} again (first at line {first[key]}): one entry per key")
            continue
        first[key] = at
        if e.msgid_plural:
            out.append(f"{where}:{at}: {key!r}: plural forms are not supported; write one text (\"{{n}} file(s)\") "
                       "or two keys")
            continue
        msgstr = _line_of(lines, e.linenum, "msgstr")
        if "fuzzy" in e.flags:
            out.append(f"{where}:{msgstr}: {key!r} is marked fuzzy: check its Chinese against the English, then "
                       "remove the flag")
            continue
        if not e.msgstr.strip():
            out.append(f"{where}:{msgstr}: {key!r} is not translated (empty msgstr)")
        found = [p for p in pair_problems(e.msgid, e.msgstr) if "is empty" not in p]
        out += [f"{where}:{msgstr}: {key!r}: {p}" for p in found]
        try:
            fields = placeholders(e.msgid) | placeholders(e.msgstr)
        except ValueError:
            fields = set()
        if fields and "python-brace-format" not in e.flags:
            out.append(f"{where}:{at}: {key!r} has {{fields}} but not the flag python-brace-format "
                       "(#, python-brace-format), with which Poedit and msgfmt -c check them")
    return out


def unused_key_problems(path: Path, catalog: dict, sources: list[Path], package_dir: Path | None = None) -> list[str]:
    """The catalog's keys that no file of `sources` uses: no string there is the key, and no key
    made at run time (an f-string or a sum starting with a constant such as "status_") starts
    like it. Named by their line in the catalog at `path`."""
    names: set[str] = set()
    prefixes: set[str] = set()
    for src in sources:
        try:
            tree = ast.parse(src.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                names.add(node.value)
            elif isinstance(node, ast.JoinedStr) and len(node.values) > 1 and isinstance(node.values[0], ast.Constant):
                prefixes.add(node.values[0].value)
            elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and isinstance(node.left, ast.Constant) \
                    and isinstance(node.left.value, str):
                prefixes.add(node.left.value)
    prefixes = {p for p in prefixes if KEY_PREFIX.fullmatch(p)}
    unused = [k for k in catalog if k not in names and not any(k.startswith(p) for p in prefixes)]
    if not unused:
        return []
    where = _rel(Path(path), Path(package_dir or PACKAGE_DIR))
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        lines = []
    at = {k: no for no, line in enumerate(lines, 1) for k in [line[len('msgctxt "'):-1]]
          if line.startswith('msgctxt "') and line.endswith('"')}
    return [f"{where}:{at.get(k, 0)}: the key {k!r} is used nowhere in the grader (no t({k!r}), Msg.key({k!r}) or "
            "string names it): delete the entry, or use it" for k in unused]
# ---------------------------------------------------------------- end of the catalog file (X3)


def course_problems(course: Course) -> list[str]:
    """The Chinese texts of course.toml hold Chinese (their presence is required on load)."""
    pairs = [("[course] title", course.title, course.title_zh)]
    pairs += [(f"[[listing]] {lst.id} title", lst.title, lst.title_zh) for lst in course.listings]
    for ex in course.exercises:
        pairs.append((f"[[exercise]] {ex.id} title", ex.title, ex.title_zh))
        pairs += [(f"[[exercise]] {ex.id} hint {i + 1}", en, zh) for i, (en, zh) in enumerate(zip(ex.hints, ex.hints_zh))]
        if ex.forbidden_hint:
            pairs.append((f"[[exercise]] {ex.id} forbidden_hint", ex.forbidden_hint, ex.forbidden_hint_zh))
    return [f"course.toml {where}: {p}" for where, en, zh in pairs for p in pair_problems(en, zh, templates=False)]


def _name(func: ast.AST) -> str:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _dotted(func: ast.AST) -> str:
    try:
        return ast.unparse(func)
    except Exception:  # pragma: no cover
        return ""


def key_problems(path: Path, catalog: dict | None = None, catalog_name: str = "grader/locale/zh/messages.po",
                 package_dir: Path | None = None) -> list[str]:
    """`t("key")` and `Msg.key("key")` name keys of the catalog (default: the grader's)."""
    catalog = CATALOG if catalog is None else catalog
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError:
        return []
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _dotted(node.func) in ("t", "Msg.key") and node.args:
            key = node.args[0]
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and key.value not in catalog:
                where = f"{_rel(path, package_dir)}:{node.lineno}" if package_dir else _where(path, node)
                out.append(f"{where}: message key {key.value!r} is not in the catalog ({catalog_name})")
    return out


def _where(path: Path, node: ast.AST) -> str:
    try:
        rel = path.relative_to(PACKAGE_DIR.parent)
    except ValueError:
        rel = path
    return f"{rel}:{getattr(node, 'lineno', 0)}"


def _exprs(node: ast.JoinedStr) -> list[str]:
    return sorted(ast.unparse(v.value) for v in node.values if isinstance(v, ast.FormattedValue))


def _literal_text(node: ast.AST) -> str:
    """The constant parts of a string or f-string."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value for v in node.values if isinstance(v, ast.Constant))
    return ""


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _bare_text(node: ast.AST) -> bool:
    """A plain string (with a letter in it) or an f-string, outside any call."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str) and bool(re.search(r"[A-Za-z\u3400-\u9fff]", node.value))
    if isinstance(node, ast.Call):
        return False
    return any(_bare_text(child) for child in ast.iter_child_nodes(node))


def _pair(en: ast.AST, zh: ast.AST, keywords: list[ast.keyword]) -> list[str]:
    """What is wrong with the English/Chinese pair of one Msg(...) or Mistake(...)."""
    if isinstance(en, ast.Constant) and isinstance(zh, ast.Constant) and isinstance(en.value, str) \
            and isinstance(zh.value, str):
        names = {k.arg for k in keywords if k.arg}
        if names or any(k.arg is None for k in keywords):
            found = pair_problems(en.value, zh.value)
            if not found and not any(k.arg is None for k in keywords):
                used = placeholders(en.value)
                if used - names:
                    found.append(f"fields {sorted(used - names)} are not passed")
                if names - used:
                    found.append(f"fields {sorted(names - used)} are passed but not used")
            return found
        found = pair_problems(en.value, zh.value, templates=False)
        try:
            unfilled = [n for n in placeholders(en.value) | placeholders(zh.value) if n.isidentifier()]
        except ValueError:
            unfilled = []
        if unfilled:
            found.append(f"uses {{{unfilled[0]}}} but passes no fields")
        return found
    if isinstance(en, ast.JoinedStr) and isinstance(zh, ast.JoinedStr):
        found = pair_problems(_literal_text(en) or "x", _literal_text(zh) or "x", templates=False) \
            if not CJK.search(_literal_text(zh)) else []
        if _exprs(en) != _exprs(zh):
            found.append(f"the f-strings interpolate different expressions: English {_exprs(en)}, "
                         f"Chinese {_exprs(zh)}")
        return found
    if _is_text(en) and _is_text(zh):
        return ["one text is an f-string and the other is not: write both alike"]
    return []  # computed texts (variables): checked when rendered


def module_problems(path: Path) -> list[str]:
    """The check module's texts, both languages (see the module docstring)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError as e:
        return [f"{path}:{e.lineno}: syntax error"]
    out: list[str] = []
    helpers = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for i, arg in enumerate(node.args.args):
                if arg.arg in MESSAGE_KEYWORDS:
                    helpers[node.name] = i
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_"):
            for dec in node.decorator_list:
                if isinstance(dec, ast.Call) and _name(dec.func) == "check":
                    kw = {k.arg: k.value for k in dec.keywords}
                    en, zh = kw.get("title"), kw.get("title_zh")
                    if not (isinstance(en, ast.Constant) and isinstance(zh, ast.Constant)):
                        out.append(f"{_where(path, dec)}: @check of {node.name} needs title=\"...\" and title_zh=\"...\"")
                    else:
                        out += [f"{_where(path, dec)}: title of {node.name}: {p}"
                                for p in pair_problems(en.value, zh.value, templates=False)]
        if not isinstance(node, ast.Call):
            continue
        name, dotted = _name(node.func), _dotted(node.func)
        where = _where(path, node)
        if dotted == "Msg":
            if len(node.args) != 2:
                out.append(f"{where}: Msg(english, chinese, **fields) takes exactly two texts")
            else:
                out += [f"{where}: Msg: {p}" for p in _pair(node.args[0], node.args[1], node.keywords)]
            continue
        if dotted == "Msg.key" and node.args and isinstance(node.args[0], ast.Constant):
            entry = CATALOG.get(node.args[0].value)
            names = {k.arg for k in node.keywords}
            if entry is not None and None not in names and placeholders(entry["en"]) - names:
                out.append(f"{where}: Msg.key({node.args[0].value!r}) does not pass "
                           f"{sorted(placeholders(entry['en']) - names)}")
            continue
        if dotted == "code":
            if node.args and _is_text(node.args[0]):  # a variable holds code computed elsewhere
                text = QUOTED.sub("", re.sub(r"\{[^{}]*\}", "", _literal_text(node.args[0])))
                if PROSE.search(text):
                    out.append(f"{where}: code({ast.unparse(node.args[0])}) reads as English prose: "
                               "use Msg(english, chinese)")
            continue
        if dotted == "Mistake":
            args = list(node.args[1:3]) + [k.value for k in node.keywords if k.arg in ("en", "zh")]
            if len(args) != 2:
                out.append(f"{where}: Mistake(value, en, zh) needs both texts")
            else:
                out += [f"{where}: Mistake: {p}" for p in _pair(args[0], args[1], [])]
            continue
        index = MESSAGE_ARGS.get(name) if name != "skip" or dotted == "pytest.skip" else None
        if index is None and isinstance(node.func, ast.Name):
            index = helpers.get(name)
        candidates = [node.args[index]] if index is not None and len(node.args) > index else []
        candidates += [k.value for k in node.keywords if k.arg in MESSAGE_KEYWORDS]
        for arg in candidates:
            if _bare_text(arg):
                out.append(f"{where}: {name}(...) is given a plain string {ast.unparse(arg)[:80]}: "
                           "write Msg(english, chinese), or code(...) for code")
    return out
