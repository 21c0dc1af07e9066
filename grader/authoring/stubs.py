"""Single source: generate the student's stub from a solution file.

A solution marks what the student writes:

    def softmax(x, dim=-1):
        \"\"\"...\"\"\"
        # BEGIN SOLUTION subtract the maximum, exponentiate, divide by the sum
        ...
        # END SOLUTION

Each block becomes `raise NotImplementedError("<exercise>: <what to write>")` at the block's
indentation; signatures, docstrings, imports and everything outside the blocks stay.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

from ..course import atomic
from ..listings import errata
from ..course.messages import LANGS, language, t
from . import stub_i18n

BEGIN = re.compile(r"^(?P<indent>\s*)# BEGIN SOLUTION(?P<text>.*)$")
END = re.compile(r"^\s*# END SOLUTION\s*$")


class StubError(Exception):
    pass


@dataclass
class Block:
    start: int  # 1-based line of BEGIN
    end: int  # 1-based line of END
    indent: str
    text: str
    owner: str  # qualified name of the function holding the block


def _owners(tree: ast.AST) -> list[tuple[int, int, str]]:
    spans = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    spans.append((child.lineno, child.end_lineno, name))
                walk(child, name + ".")
            else:
                walk(child, prefix)

    walk(tree, "")
    return spans


def blocks(source: str, filename: str = "<solution>") -> list[Block]:
    lines = source.splitlines()
    tree = ast.parse(source, filename=filename)
    spans = _owners(tree)
    found: list[Block] = []
    open_block = None
    for no, line in enumerate(lines, 1):
        m = BEGIN.match(line)
        if m:
            if open_block:
                raise StubError(t("stuberr_nested", filename=filename, no=no, line=open_block[0]))
            open_block = (no, m.group("indent"), m.group("text").strip(" :-"))
        elif END.match(line):
            if not open_block:
                raise StubError(t("stuberr_end_without_begin", filename=filename, no=no))
            start, indent, text = open_block
            inside = [s for s in spans if s[0] < start <= s[1]]
            if not inside:
                raise StubError(t("stuberr_outside_function", filename=filename, start=start))
            owner = max(inside, key=lambda s: s[0])[2]
            found.append(Block(start, no, indent, text, owner))
            open_block = None
    if open_block:
        raise StubError(t("stuberr_never_closed", filename=filename, line=open_block[0]))
    if not found:
        raise StubError(t("stuberr_no_block", filename=filename))
    return found


def make_stub(
    source: str, exercise_id: str, filename: str = "<solution>", lang: str = "en", catalog: dict | None = None
) -> str:
    """The stub of a solution. `lang` other than English: its docstrings and "what to write"
    texts come from `catalog` (stub_i18n.load); a text with no translation stays English
    (`kata verify` reports it)."""
    if lang != "en" and catalog:
        source = stub_i18n.translate_comments(source, blocks(source, filename), catalog)
        source, _ = stub_i18n.translate_docstrings(source, catalog)
    lines = source.splitlines()
    out: list[str] = []
    pos = 0
    for b in blocks(source, filename):
        out += lines[pos : b.start - 1]
        what = (catalog or {}).get((b.owner + stub_i18n.TODO, b.text)) if lang != "en" else None
        msg = RAISE[lang].format(id=exercise_id, what=what or b.text or f"implement {b.owner}", owner=b.owner)
        out.append(f"{b.indent}raise NotImplementedError({msg!r})")
        pos = b.end
    out += lines[pos:]
    text = "\n".join(out) + "\n"
    ast.parse(text, filename=f"stub of {filename}")  # the stub must stay valid Python
    return text


def signatures(source: str) -> dict[str, str]:
    """Qualified name -> signature text of every function and class in a module."""
    tree = ast.parse(source)
    sigs: dict[str, str] = {}

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                ret = f" -> {ast.unparse(child.returns)}" if child.returns else ""
                sigs[prefix + child.name] = f"({ast.unparse(child.args)}){ret}"
                walk(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                sigs[prefix + child.name] = f"class({', '.join(ast.unparse(b) for b in child.bases)})"
                walk(child, prefix + child.name + ".")

    walk(tree, "")
    return sigs


# No title on the first two lines: Python reads "coding: ..." there as the file's encoding (PEP 263).
HEADER = {
    "en": "# Exercise {id} (§{section}): replace each `raise NotImplementedError` with your code.\n",
    "zh": "# 练习 {id}（§{section}）：把每个 `raise NotImplementedError` 换成你的代码。\n",
}
RAISE = {"en": "{id}: {what} (in {owner})", "zh": "{id}：{what}（在 {owner} 中）"}


def stub_lang(lang: str | None) -> str:
    """The language of the stubs: `lang`, else the student's (kata --lang, KATA_LANG, the locale)."""
    return lang or language()


def catalog(course, ex, lang: str) -> dict:
    return stub_i18n.load(stub_i18n.catalog_path(course.root, lang, ex.file)) if lang != "en" else {}


def stub_text(course, ex, lang: str | None = None) -> str:
    """The stub of exercise `ex` in `lang` (default: the student's language, see stub_lang)."""
    lang = stub_lang(lang)
    solution = course.solutions_dir / ex.file
    if not solution.is_file():  # a student bundle (kata release) ships the stubs instead of the solutions
        from ..course.manifest import PACKAGE_DIR

        shipped = PACKAGE_DIR / "release_stubs" / (lang if lang != "en" else "") / ex.file
        if not shipped.is_file():
            shipped = PACKAGE_DIR / "release_stubs" / ex.file
        if shipped.is_file():
            return shipped.read_text(encoding="utf-8")
    po = stub_i18n.catalog_path(course.root, lang, ex.file) if lang != "en" else None
    return _stub(
        str(solution),
        _version(solution),
        str(po) if po else "",
        _version(po) if po else None,
        ex.id,
        ex.section,
        ex.file,
        lang,
    )


def _version(path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size


@functools.lru_cache(maxsize=256)
def _stub(solution: str, version, po: str, po_version, ex_id: str, section: str, file: str, lang: str) -> str:
    """A stub made once per version of its solution and catalog (the versions are part of the key):
    `kata watch` asks for every exercise's stubs, in each language, on each save."""
    source = Path(solution).read_text(encoding="utf-8")
    table = stub_i18n.load(Path(po)) if po else {}
    return HEADER[lang].format(id=ex_id, section=section) + make_stub(source, ex_id, file, lang, table)


def stub_variants(course, ex) -> list[str]:
    """The stub of `ex` in every language: a file equal to one of them is untouched."""
    out = []
    for lang in LANGS:
        try:
            out.append(stub_text(course, ex, lang))
        except (OSError, StubError, SyntaxError):
            continue
    return out


def write_stubs(course, only=None, backup_dir=None, lang: str | None = None) -> list[str]:
    """(Re)write exercises/ from solutions/, in `lang` (see stub_lang). A stub that differs from
    the new text (for example one a student edited) is first copied to `backup_dir` (default
    .kata/backups/). Returns the files written."""
    import shutil
    import time
    from pathlib import Path

    backup_dir = Path(backup_dir or course.root / ".kata" / "backups" / time.strftime("%Y%m%d-%H%M%S"))
    written = []
    for ex in course.exercises:
        if only and ex.id not in only:
            continue
        target = course.exercises_dir / ex.file
        text = stub_text(course, ex, lang)
        if target.is_file():
            old = target.read_text(encoding="utf-8", errors="replace")
            if old == text:
                continue
            (backup_dir / ex.file).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(target, backup_dir / ex.file)
        atomic.write_text(target, text, mode=0o644, keep_mode=True)  # a full disk never truncates a student's file
        written.append(str(target))
    return written


def update_catalogs(course) -> list[str]:
    """Bring every language's catalogs (locale/<lang>/) up to date with the solutions'
    English: new texts are added untranslated, changed ones kept as fuzzy (stub_i18n.update).
    Returns one line per catalog saying what is left to translate."""
    out = []
    for lang in LANGS:
        if lang == "en":
            continue
        for ex in course.exercises:
            source = (course.solutions_dir / ex.file).read_text(encoding="utf-8")
            path = stub_i18n.catalog_path(course.root, lang, ex.file)
            stub_i18n.update(source, blocks(source, ex.file), path, lang, f"{course.title} {ex.id}")
            left = stub_i18n.problems(source, blocks(source, ex.file), path)
            rel = path.relative_to(course.root).as_posix()
            out.append(
                t("catalog_to_translate", path=rel, count=len(left)) if left else t("catalog_complete", path=rel)
            )
        errata.update(course.root, lang, course.title)  # ERRATA.md's entries, as `kata run --book` shows them
        left = errata.problems(course.root, lang, errata.wanted_ids(course))
        rel = errata.catalog_path(course.root, lang).relative_to(course.root).as_posix()
        out.append(
            t("errata_to_translate" if len(left) == 1 else "errata_to_translate_n", path=rel, count=len(left))
            if left
            else t("catalog_complete", path=rel)
        )
    return out


def catalog_problems(course, ex) -> list[str]:
    """What the translations of `ex` lack (stub_i18n.problems), for every language but English,
    and whether each translated stub is the English one's code: the same syntax tree once
    docstrings and the texts of `raise NotImplementedError(...)` are set aside, so it fails
    every check that the English stub fails."""
    source = (course.solutions_dir / ex.file).read_text(encoding="utf-8")
    found = []
    english = _code_only(stub_text(course, ex, "en"))
    for lang in LANGS:
        if lang == "en":
            continue
        path = stub_i18n.catalog_path(course.root, lang, ex.file)
        found += [
            p.replace(str(course.root) + "/", "") for p in stub_i18n.problems(source, blocks(source, ex.file), path)
        ]
        if _code_only(stub_text(course, ex, lang)) != english:
            found.append(t("stubs_code_differs", id=ex.id, language=lang))
    return found


def _code_only(text: str) -> str:
    tree = ast.parse(text)
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            body[0].value.value = ""
        if (
            isinstance(node, ast.Raise)
            and isinstance(node.exc, ast.Call)
            and ast.unparse(node.exc.func) == "NotImplementedError"
        ):
            node.exc.args = []
    return ast.dump(tree)
