"""One Chinese vocabulary: the glossary (locale/zh/glossary.toml) and the rule `kata verify` holds.

The glossary gives each English term its one Chinese term and the variants the kata refuses
(`token` in Chinese prose, 词汇表, 单词级, 屏蔽, 清单 without 代码, ...). `problems(root)` reads
every Chinese text the kata writes, without running anything, and names each variant by file and
line with the term to use:
- the translation catalogs, `locale/zh/**/*.po` (the stubs' docstrings, comments and "what to
  write" texts, the errata shown to students) and the grader's message catalog,
  `grader/locale/zh/messages.po`: every `msgstr`;
- course.toml: every line holding Chinese (the `*_zh` titles and hints);
- the grader package, `grader/**/*.py`: every string holding Chinese, read with ast (the message
  catalog's zh texts, the checks' `Msg(en, zh)`, `Mistake(...)` and `title_zh`, summary.md's and
  the figures' texts, which come from the catalog).
Code is not prose: `backticked` spans, fenced code blocks, doctest lines, `{fields}` and the name
opening an indented `name:` line (a table of sub-modules) are left out, and a variant in ASCII
letters matches only a whole word (`token_ids` is not "token").
"""

from __future__ import annotations

import ast
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..course.messages import t

GLOSSARY = Path("locale") / "zh" / "glossary.toml"
CHINESE = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")  # ideographs and Chinese punctuation
# code in a text: fenced blocks, `spans`, format fields ({what}, {n:.3g}, {x!r}; not "{token 字节: 排名}")
CODE = re.compile(
    r"```.*?```|`[^`\n]*`|\{[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_]\w*|\[\w+\])*(?:![rsa])?(?::[^{}\n]*)?\}", re.S
)


class GlossaryError(Exception):
    pass


@dataclass(frozen=True)
class Term:
    en: str
    zh: str
    forbidden: tuple[str, ...]
    unless_after: tuple[str, ...] = ()
    patterns: tuple = field(default=(), compare=False)


def load(path: Path) -> list[Term]:
    """The glossary at `path`; a malformed one is an error naming the file (and line, for TOML)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise GlossaryError(t("glossary_unreadable", path=path, error=e.strerror or e)) from e
    except tomllib.TOMLDecodeError as e:
        raise GlossaryError(t("glossary_not_toml", path=path, error=e)) from e
    terms = []
    for i, entry in enumerate(data.get("term", []), 1):
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) and entry.get(k) for k in ("en", "zh")):
            raise GlossaryError(t("glossary_term_needs", path=path, number=i))
        forbidden = entry.get("forbidden", [])
        after = entry.get("unless_after", [])
        if not all(isinstance(v, str) and v for v in [*forbidden, *after]):
            raise GlossaryError(t("glossary_lists", path=path, term=entry["en"]))
        if entry["zh"] in forbidden:
            raise GlossaryError(t("glossary_forbids_itself", path=path, term=entry["en"], zh=entry["zh"]))
        lookbehind = "".join(f"(?<!{re.escape(a)})" for a in after)
        patterns = []
        for variant in forbidden:
            if re.fullmatch(r"[A-Za-z][A-Za-z -]*", variant):  # an English word: whole words, any case
                patterns.append(
                    (
                        variant,
                        re.compile(
                            rf"{lookbehind}(?<![A-Za-z0-9_.\-]){re.escape(variant)}"
                            r"(?![A-Za-z0-9_\-(])",
                            re.I,
                        ),
                    )
                )
            else:
                patterns.append((variant, re.compile(lookbehind + re.escape(variant))))
        terms.append(Term(entry["en"], entry["zh"], tuple(forbidden), tuple(after), tuple(patterns)))
    if not terms:
        raise GlossaryError(t("glossary_no_terms", path=path))
    return terms


def prose(text: str) -> str:
    """`text` with its code blanked out (same length, so columns and lines stay): backticked
    spans, fenced blocks, {fields}, doctest lines."""
    text = CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    # the name that opens an indented line before a colon: a table of sub-modules or parameters
    # ("  token:    nn.Embedding(...)"), code that the translation keeps (stub_i18n.lost_code)
    text = re.sub(r"(?m)^( {2,})([A-Za-z_]\w*)(?=\s*[:：])", lambda m: " " * len(m.group()), text)
    return re.sub(r"(?m)^(\s*)(>>>|\.\.\.) .*$", lambda m: " " * len(m.group()), text)


def find(terms: list[Term], text: str) -> list[tuple[int, str, Term]]:
    """(line offset in `text`, variant, term) for each forbidden variant in the prose of `text`."""
    found = []
    plain = prose(text)
    for term in terms:
        for variant, pattern in term.patterns:
            for m in pattern.finditer(plain):
                found.append((plain.count("\n", 0, m.start()), variant, term))
    return sorted(found, key=lambda f: f[0])


def _say(where: str, variant: str, term: Term) -> str:
    return t("glossary_variant", where=where, variant=variant, zh=term.zh, en=term.en)


def po_texts(path: Path):
    """(line, text) of each line of every msgstr of a gettext catalog, unescaped."""
    out = []
    in_str = False
    for no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        s = line.strip()
        if s.startswith("msgstr"):
            in_str, s = True, s[len("msgstr") :].lstrip()
        elif not s.startswith('"'):
            in_str = False
        if in_str and s.startswith('"') and s.endswith('"'):
            body = s[1:-1].replace('\\"', '"').replace("\\n", "\n").replace("\\t", "\t").replace("\\\\", "\\")
            out.append((no, body))
    return out


def python_texts(path: Path):
    """(line, text) of every string holding Chinese in a Python file (the line of the variant
    where the string spans lines)."""
    source = path.read_text(encoding="utf-8")
    try:
        tree = ast.parse(source)
    except SyntaxError as e:
        return [(e.lineno or 0, None)]
    lines = source.splitlines()
    comments = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}  # docstrings: the developers'
    out = []
    for node in ast.walk(tree):
        if (
            id(node) not in comments
            and isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and CHINESE.search(node.value)
        ):
            out.append((node.lineno, node.value, lines[node.lineno - 1 : (node.end_lineno or node.lineno)]))
    return out


def problems(root: Path, package_dir: Path | None = None, glossary: Path | None = None) -> list[str]:
    """Every forbidden variant in a Chinese text of the course at `root` and of the grader package
    at `package_dir` (default: the one running), see the module docstring."""
    from ..course.manifest import PACKAGE_DIR

    root = Path(root)
    package_dir = Path(package_dir or PACKAGE_DIR)
    path = glossary or root / GLOSSARY
    try:
        terms = load(path)
    except GlossaryError as e:
        return [str(e)]
    out = []

    def rel(p: Path) -> str:
        for base in (root, package_dir.parent):
            try:
                return p.relative_to(base).as_posix()
            except ValueError:
                continue
        return str(p)

    catalogs = [(base / "locale", po) for base in (root, package_dir) for po in sorted((base / "locale").rglob("*.po"))]
    for base, po in catalogs:  # the course's (locale/zh/) and the grader's messages (grader/locale/zh/messages.po)
        if "zh" not in po.relative_to(base).parts[:1]:
            continue
        for no, text in po_texts(po):
            out += [_say(f"{rel(po)}:{no}", v, term) for _, v, term in find(terms, text)]
    toml = root / "course.toml"
    if toml.is_file():
        for no, line in enumerate(toml.read_text(encoding="utf-8").splitlines(), 1):
            if CHINESE.search(line):
                value = line.split("=", 1)[1] if re.match(r"\s*\w+\s*=", line) else line
                out += [_say(f"course.toml:{no}", v, term) for _, v, term in find(terms, value)]
    for py in sorted(package_dir.rglob("*.py")):
        for item in python_texts(py):
            if item[1] is None:
                out.append(t("glossary_syntax_error", where=f"{rel(py)}:{item[0]}"))
                continue
            no, text, raw = item
            for offset, v, term in find(terms, text):
                # the line of the variant: in the source's lines of the string, else where the string starts
                hit = next((no + i for i, line in enumerate(raw) if v.lower() in line.lower()), no)
                out.append(_say(f"{rel(py)}:{hit}", v, term))
    return out
