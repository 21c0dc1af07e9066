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
    a helper's `what`/`message`/`label` argument, `pytest.skip`;
  - a hidden check's texts (its `Msg`, `code` and `Mistake` texts, and those of the module's
    functions it calls) state no number, option value or True/False/None outside a field: a
    value of the hidden input is a field marked `from_input`, shown as "…".
Used by `kata verify` and tests/test_i18n.py.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

from .manifest import PACKAGE_DIR, Course
from .messages import CATALOG, CATALOG_FILE, CJK, CatalogError, pair_problems, parse_catalog, placeholders, t

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
PENDING = re.compile(
    r"the Chinese text is empty|has no Chinese in it|is not translated \(empty msgstr\)"
    r"|: not translated$|is marked fuzzy|: marked fuzzy|: stale: its English|: no catalog \(kata stubs"
    r"|translates English that the solution no longer has|translates an entry \S+ no longer has"
)


# The same, by the catalog keys that say it: their fixed words in every language the problems are
# written in (`kata --lang zh verify --draft` reads them in Chinese).
PENDING_KEYS = (
    "i18n_pair_zh_empty",
    "i18n_pair_no_chinese",
    "i18n_fuzzy",
    "i18n_not_translated",
    "stubi18n_no_catalog",
    "stubi18n_fuzzy",
    "stubi18n_not_translated",
    "stubi18n_stale",
    "stubi18n_gone",
    "errata_no_catalog",
    "errata_not_translated",
    "errata_fuzzy",
    "errata_stale",
    "errata_gone",
)


@functools.lru_cache(maxsize=1)
def _pending_words() -> tuple[str, ...]:
    """The longest fixed part of each PENDING_KEYS text, in English and in Chinese."""
    from .messages import CATALOG

    words = []
    for key in PENDING_KEYS:
        for text in CATALOG[key].values():
            parts = [part.strip(" :：,，") for part in re.split(r"\{[^{}]*\}", text)]
            longest = max(parts, key=len)
            if len(longest) >= 3:
                words.append(longest)
    return tuple(words)


def pending_translation(problem: str) -> bool:
    """Whether `problem` says only that a Chinese text is still to write (missing, fuzzy or stale),
    not that something written is wrong."""
    return PENDING.search(problem) is not None or any(word in problem for word in _pending_words())


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
        return [t("i18n_catalog_missing", where=where)]
    except UnicodeDecodeError as e:
        return [t("i18n_catalog_not_utf8", where=where, reason=e.reason, byte=e.start)]
    except (OSError, ValueError) as e:
        return [t("i18n_catalog_unreadable", where=where, error=e)]
    lines = text.splitlines()
    out = []
    first: dict[str, int] = {}
    for e in po:
        if e.obsolete:
            out.append(
                t("i18n_obsolete", where=f"{where}:{_line_of(lines, e.linenum, '#~')}", entry=e.msgctxt or e.msgid)
            )
            continue
        if not e.msgctxt:
            out.append(t("i18n_no_msgctxt", where=f"{where}:{_line_of(lines, e.linenum, 'msgid')}"))
            continue
        key, at = e.msgctxt, _line_of(lines, e.linenum, "msgctxt")
        if key in first:
            out.append(t("i18n_key_again", where=f"{where}:{at}", name=key, first=first[key]))
            continue
        first[key] = at
        if e.msgid_plural:
            out.append(t("i18n_plural", where=f"{where}:{at}", name=key))
            continue
        msgstr = _line_of(lines, e.linenum, "msgstr")
        if "fuzzy" in e.flags:
            out.append(t("i18n_fuzzy", where=f"{where}:{msgstr}", name=key))
            continue
        if not e.msgstr.strip():
            out.append(t("i18n_not_translated", where=f"{where}:{msgstr}", name=key))
        found = pair_problems(e.msgid, e.msgstr, empty=False)
        out += [t("i18n_in_entry", where=f"{where}:{msgstr}", name=key, problem=p) for p in found]
        try:
            fields = placeholders(e.msgid) | placeholders(e.msgstr)
        except ValueError:
            fields = set()
        if fields and "python-brace-format" not in e.flags:
            out.append(t("i18n_no_brace_flag", where=f"{where}:{at}", name=key))
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
            elif (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Add)
                and isinstance(node.left, ast.Constant)
                and isinstance(node.left.value, str)
            ):
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
    at = {
        k: no
        for no, line in enumerate(lines, 1)
        for k in [line[len('msgctxt "') : -1]]
        if line.startswith('msgctxt "') and line.endswith('"')
    }
    return [t("i18n_unused_key", where=f"{where}:{at.get(k, 0)}", name=k) for k in unused]


# ---------------------------------------------------------------- end of the catalog file (X3)


def course_problems(course: Course) -> list[str]:
    """The Chinese texts of course.toml hold Chinese (their presence is required on load)."""
    pairs = [(("i18n_toml_course_title", {}), course.title, course.title_zh)]
    pairs += [(("i18n_toml_listing_title", {"id": lst.id}), lst.title, lst.title_zh) for lst in course.listings]
    for ex in course.exercises:
        pairs.append((("i18n_toml_exercise_title", {"id": ex.id}), ex.title, ex.title_zh))
        pairs += [
            (("i18n_toml_hint", {"id": ex.id, "number": i + 1}), en, zh)
            for i, (en, zh) in enumerate(zip(ex.hints, ex.hints_zh))
        ]
        if ex.forbidden_hint:
            pairs.append((("i18n_toml_forbidden_hint", {"id": ex.id}), ex.forbidden_hint, ex.forbidden_hint_zh))
    return [
        t(key, problem=p, **fields) for (key, fields), en, zh in pairs for p in pair_problems(en, zh, templates=False)
    ]


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


def key_problems(
    path: Path,
    catalog: dict | None = None,
    catalog_name: str = "grader/locale/zh/messages.po",
    package_dir: Path | None = None,
) -> list[str]:
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
                out.append(t("i18n_unknown_key", where=where, name=key.value, catalog=catalog_name))
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
    if (
        isinstance(en, ast.Constant)
        and isinstance(zh, ast.Constant)
        and isinstance(en.value, str)
        and isinstance(zh.value, str)
    ):
        names = {k.arg for k in keywords if k.arg}
        if names or any(k.arg is None for k in keywords):
            found = pair_problems(en.value, zh.value)
            if not found and not any(k.arg is None for k in keywords):
                used = placeholders(en.value)
                if used - names:
                    found.append(t("i18n_fields_not_passed", fields=sorted(used - names)))
                if names - used:
                    found.append(t("i18n_fields_not_used", fields=sorted(names - used)))
            return found
        found = pair_problems(en.value, zh.value, templates=False)
        try:
            unfilled = [n for n in placeholders(en.value) | placeholders(zh.value) if n.isidentifier()]
        except ValueError:
            unfilled = []
        if unfilled:
            found.append(t("i18n_no_fields_passed", field="{" + unfilled[0] + "}"))
        return found
    if isinstance(en, ast.JoinedStr) and isinstance(zh, ast.JoinedStr):
        found = (
            pair_problems(_literal_text(en) or "x", _literal_text(zh) or "x", templates=False)
            if not CJK.search(_literal_text(zh))
            else []
        )
        if _exprs(en) != _exprs(zh):
            found.append(t("i18n_fstrings_differ", en=_exprs(en), zh=_exprs(zh)))
        return found
    if _is_text(en) and _is_text(zh):
        return [t("i18n_fstring_and_not")]
    return []  # computed texts (variables): checked when rendered


# What a hidden check's text may not state outside a field: a number (a size, a shape, a dtype such
# as float64), an option set to a value (causal=True, max_len=10) or True/False/None. Code in
# backticks (`-inf`, `1 / (1 - p)`) and the book's references (§1.11, listing 1.6) are the course's
# own text, not the input's, and stay, as do the names GPT-2 and UTF-8 and an exercise's id.
_STATED = re.compile(r"\d|\b[A-Za-z_]\w*\s*=\s*[\w'\"\[(-]|\b(?:True|False|None)\b")
_NOT_STATED = re.compile(r"\{[^{}]*\}|`[^`\n]*`|(?:§|listings? )[\d.]+|\bGPT-2\b|\bUTF-8\b|\bs\d+_\d+\w*")


def _hidden_reach(tree: ast.Module) -> set[ast.AST]:
    """The `@check(hidden=True)` functions of a module and the module's functions they call, at any
    depth: every text they hand the student is a hidden check's text."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    todo = [
        f
        for f in functions.values()
        for dec in f.decorator_list
        if isinstance(dec, ast.Call)
        and _name(dec.func) == "check"
        and any(k.arg == "hidden" and isinstance(k.value, ast.Constant) and k.value.value for k in dec.keywords)
    ]
    seen: set[ast.AST] = set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo += [functions[n.id] for n in ast.walk(f) if isinstance(n, ast.Name) and n.id in functions]
    return seen


def _stated(texts: list[ast.AST]) -> str:
    """The first value a hidden check's text states outside a field ("" when none)."""
    for node in texts:
        text = _NOT_STATED.sub(" ", _literal_text(node))
        m = _STATED.search(text)
        if m:  # the word it is in: "float64", "causal=True", "4-layer"
            return re.search(r"[\w.=+'\"-]*$", text[: m.start()])[0] + re.match(r"[\w.=+'\"-]*", text[m.start() :])[0]
    return ""


def module_problems(path: Path) -> list[str]:
    """The check module's texts, both languages (see the module docstring)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except SyntaxError as e:
        return [t("i18n_syntax_error", where=f"{path}:{e.lineno}")]
    out: list[str] = []
    for function in _hidden_reach(tree):
        for node in ast.walk(function):
            if not isinstance(node, ast.Call):
                continue
            dotted = _dotted(node.func)
            texts = (
                node.args[:2]
                if dotted == "Msg"
                else node.args[:1]
                if dotted == "code"
                else node.args[1:3] + [k.value for k in node.keywords if k.arg in ("en", "zh")]
                if dotted == "Mistake"
                else []
            )
            stated = _stated(texts)
            if stated:
                key = "i18n_hidden_value_mistake" if dotted == "Mistake" else "i18n_hidden_value"
                out.append(t(key, where=_where(path, node), call=dotted, stated=stated))
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
                        out.append(t("i18n_check_needs_titles", where=_where(path, dec), name=node.name))
                    else:
                        out += [
                            t("i18n_check_title", where=_where(path, dec), name=node.name, problem=p)
                            for p in pair_problems(en.value, zh.value, templates=False)
                        ]
        if not isinstance(node, ast.Call):
            continue
        name, dotted = _name(node.func), _dotted(node.func)
        where = _where(path, node)
        if dotted in ("Msg", "code") and any(isinstance(a, ast.JoinedStr) for a in node.args):
            # a value baked into the text: a hidden check could only mask it by how it looks
            out.append(t("i18n_fstring_message", where=where, call=dotted))
        if dotted == "Msg":
            if len(node.args) != 2:
                out.append(t("i18n_msg_two_texts", where=where))
            else:
                out += [
                    t("i18n_in_msg", where=where, problem=p) for p in _pair(node.args[0], node.args[1], node.keywords)
                ]
            continue
        if dotted == "Msg.key" and node.args and isinstance(node.args[0], ast.Constant):
            entry = CATALOG.get(node.args[0].value)
            names = {k.arg for k in node.keywords}
            if entry is not None and None not in names and placeholders(entry["en"]) - names:
                out.append(
                    t(
                        "i18n_msg_key_fields",
                        where=where,
                        name=node.args[0].value,
                        fields=sorted(placeholders(entry["en"]) - names),
                    )
                )
            continue
        if dotted == "code":
            if node.args and _is_text(node.args[0]):  # a variable holds code computed elsewhere
                text = QUOTED.sub("", re.sub(r"\{[^{}]*\}", "", _literal_text(node.args[0])))
                if PROSE.search(text):
                    out.append(t("i18n_code_prose", where=where, code=ast.unparse(node.args[0])))
            continue
        if dotted == "Mistake":
            args = list(node.args[1:3]) + [k.value for k in node.keywords if k.arg in ("en", "zh")]
            if len(args) != 2:
                out.append(t("i18n_mistake_two_texts", where=where))
            else:
                out += [t("i18n_in_mistake", where=where, problem=p) for p in _pair(args[0], args[1], [])]
            continue
        index = MESSAGE_ARGS.get(name) if name != "skip" or dotted == "pytest.skip" else None
        if index is None and isinstance(node.func, ast.Name):
            index = helpers.get(name)
        candidates = [node.args[index]] if index is not None and len(node.args) > index else []
        candidates += [k.value for k in node.keywords if k.arg in MESSAGE_KEYWORDS]
        for arg in candidates:
            if _bare_text(arg):
                out.append(t("i18n_plain_string", where=where, name=name, code=ast.unparse(arg)[:80]))
    return out
