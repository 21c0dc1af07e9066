"""The exercises in other languages: one gettext catalog per exercise and language.

The English text of a stub is its solution file's docstrings, its comments outside the solution
blocks (a run of whole-line comments is one text; a one-word comment, a row's label, is not
prose) and the "what to write" text of each `# BEGIN SOLUTION` block. A translation lives beside the solutions, in
`locale/<lang>/<chapter>/<exercise>.po`, one entry per text: `msgctxt` names where the
text is (the module, a class or function by qualified name, `<name> TODO` for a block, or
`<name> #` for a comment in it),
`msgid` is the English and `msgstr` the translation. Any gettext tool (Poedit, Weblate, polib)
edits these files; `kata stubs --lang zh --update-catalogs` adds what the English gained and
marks as fuzzy what it changed, and `kata verify` refuses a catalog that is incomplete or stale.
"""

from __future__ import annotations

import ast
import functools
import io
import re
import tokenize
from dataclasses import dataclass
from pathlib import Path

import polib

from ..course.messages import spacing_problems, t

MODULE = "<module>"
TODO = " TODO"
COMMENT = " #"  # a comment outside the solution blocks: "<module> #", "BPE.encode #"
NOT_PROSE = re.compile(r"^\s*(noqa|type:|pragma|fmt:)|^\W*\w+\W*$")  # pragmas; one word (a row's label: "# The")


@dataclass(frozen=True)
class Text:
    context: str  # msgctxt: "<module>", "softmax", "SelfAttention.forward", "softmax TODO"
    english: str  # msgid
    node: ast.AST | None = None  # the docstring's Constant node (None for a block's text)


def _docstring_nodes(tree: ast.Module):
    """(qualified name, the docstring's Constant node) of the module and every class and function."""

    def doc(node):
        body = getattr(node, "body", None)
        if (
            body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            return body[0].value
        return None

    found = []
    if (d := doc(tree)) is not None:
        found.append((MODULE, d))

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = prefix + child.name
                if (d := doc(child)) is not None:
                    found.append((name, d))
                walk(child, name + ".")

    walk(tree, "")
    return found


def clean(text: str) -> str:
    import inspect

    return inspect.cleandoc(text)


@dataclass(frozen=True)
class Comment:
    first: int  # 1-based lines of the comment (a run of whole-line comments at one indentation is one text)
    last: int
    col: int  # where "#" starts on each of its lines
    inline: bool  # after code on its line
    owner: str  # the class or function holding it, or <module>
    text: str  # the English, its lines joined with "\n", without "# "


def comments(source: str, blocks) -> list[Comment]:
    """The comments a stub keeps (outside the solution blocks), as texts to translate."""
    tree = ast.parse(source)
    scopes = []

    def walk(node, prefix):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                scopes.append((child.lineno, child.end_lineno, prefix + child.name))
                walk(child, prefix + child.name + ".")

    walk(tree, "")
    inside = {n for b in blocks for n in range(b.start, b.end + 1)}
    lines = source.splitlines()
    found: list[Comment] = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type != tokenize.COMMENT or tok.start[0] in inside:
            continue
        no, col = tok.start
        text = tok.string[1:].strip()
        if not text or NOT_PROSE.search(text):
            continue
        inline = bool(lines[no - 1][:col].strip())
        owner = max((s for s in scopes if s[0] <= no <= s[1]), key=lambda s: s[0], default=(0, 0, MODULE))[2]
        last = found[-1] if found else None
        if last and not inline and not last.inline and last.last == no - 1 and last.col == col and last.owner == owner:
            found[-1] = Comment(last.first, no, col, False, owner, last.text + "\n" + text)
        else:
            found.append(Comment(no, no, col, inline, owner, text))
    return found


def translate_comments(source: str, blocks, catalog: dict[tuple[str, str], str]) -> str:
    """The source with each comment that has a translation replaced by it (lines of code unchanged)."""
    lines = source.splitlines(keepends=True)
    for c in reversed(comments(source, blocks)):
        zh = catalog.get((c.owner + COMMENT, c.text))
        if not zh:
            continue
        if c.inline:
            line = lines[c.first - 1]
            lines[c.first - 1] = f"{line[: c.col]}# {' '.join(zh.splitlines())}\n"  # tokenize counts characters
        else:
            indent = lines[c.first - 1][: c.col]
            lines[c.first - 1 : c.last] = [f"{indent}# {part}\n" for part in zh.splitlines()]
    return "".join(lines)


def texts(source: str, blocks) -> list[Text]:
    """Every text of a solution to translate, in the order of the file. `blocks`: the file's
    solution blocks (stubs.blocks), whose `text` is what the stub asks the student to write."""
    tree = ast.parse(source)
    found = [(node.lineno, Text(name, clean(node.value), node)) for name, node in _docstring_nodes(tree)]
    found += [(b.start, Text(b.owner + TODO, b.text)) for b in blocks if b.text]
    found += [(c.first, Text(c.owner + COMMENT, c.text)) for c in comments(source, blocks)]
    return [t for _, t in sorted(found, key=lambda f: f[0])]


def catalog_path(root: Path, lang: str, file: str) -> Path:
    """The catalog of the exercise file `file` (e.g. "ch01/s1_11_softmax.py") in the course at `root`.
    Beside solutions/, not in it: a folder of solutions graded as a submission holds only code."""
    return root / "locale" / lang / Path(file).with_suffix(".po")


def load(path: Path) -> dict[tuple[str, str], str]:
    """(context, English) -> translation, for the finished entries of a catalog (none if it is missing).
    Read once per version of the file: `kata list` and `kata watch` ask for every stub often."""
    try:
        st = path.stat()
    except OSError:
        return {}
    return _load(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=128)
def _load(path: str, mtime_ns: int, size: int) -> dict[tuple[str, str], str]:
    po = polib.pofile(path, wrapwidth=0)
    return {(e.msgctxt or "", e.msgid): e.msgstr for e in po if e.msgstr and not e.obsolete and "fuzzy" not in e.flags}


def problems(source: str, blocks, path: Path) -> list[str]:
    """What the catalog at `path` lacks for this solution: a missing file, an English text with no
    translation (or only a fuzzy one), and translations whose English is no longer in the file."""
    if not path.is_file():
        return [t("stubi18n_no_catalog", path=path, language=path.parts[-3])]
    po = polib.pofile(str(path), wrapwidth=0)
    done = load(path)
    wanted = texts(source, blocks)
    out = []
    for text in wanted:
        if (text.context, text.english) not in done:
            entry = po.find(text.english, msgctxt=text.context)
            state = "stubi18n_fuzzy" if entry is not None and "fuzzy" in entry.flags else "stubi18n_not_translated"
            if entry is None and any((e.msgctxt or "") == text.context for e in po):
                state = "stubi18n_stale"
            out.append(t(state, path=path, context=text.context))
    keys = {(text.context, text.english) for text in wanted}
    for e in po:
        if not e.obsolete and (e.msgctxt or "", e.msgid) not in keys and "fuzzy" not in e.flags:
            out.append(t("stubi18n_gone", path=path, context=e.msgctxt))
    for (context, english), translated in done.items():
        if (context, english) in keys and (lost := lost_code(english, translated)):
            out.append(t("stubi18n_lost_code", path=path, context=context, names=", ".join(lost)))
        if (context, english) in keys:
            out += [
                t("stubi18n_in_context", path=path, context=context, problem=gap)
                for gap in spacing_problems(translated)
            ]
    return out


_IDENT = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)")
_CODE_LINE = re.compile(r" {2,}\S")  # an indented line of a docstring: a sub-module table, a formula, a shape


def code_names(english: str) -> list[tuple[str, str]]:
    """The code in an English text, as (text, how the translation must keep it): "literal" for
    anything in backticks; in an indented line, "defines" for the name that opens it (`token:` of
    a table of sub-modules, a parameter) and "word" for a call, a keyword argument, or a name with
    an underscore, a dot or a digit (`nn.Embedding`, `max_len`, `dropout(`, `padding_idx=`)."""
    found = [(m.group(0), "literal") for m in re.finditer(r"`[^`\n]+`", english)]
    for line in english.splitlines():
        if not _CODE_LINE.match(line):
            continue
        text = line.strip()
        for m in _IDENT.finditer(text):
            name, after = m.group(1), text[m.end() : m.end() + 2]
            if m.start() == 0 and re.match(r"\s*:", text[m.end() :]):
                found.append((name, "defines"))
            elif (
                "_" in name
                or "." in name
                or any(c.isdigit() for c in name)
                or after.startswith("(")
                or (after.startswith("=") and not after.startswith("=="))
            ):
                found.append((name, "word"))
    return found


def lost_code(english: str, translated: str) -> list[str]:
    """The code of `english` (code_names) that `translated` does not keep: an identifier is code
    and is never translated (a stub whose `token:` became `词元:` once cost a student every check)."""
    lost = []
    for name, how in code_names(english):
        if how == "literal":
            kept = name in translated
        elif how == "defines":  # the line that defines it still opens with it (a full-width colon is fine)
            kept = re.search(rf"(?m)^\s*{re.escape(name)}\s*[:：]", translated) is not None
        else:
            kept = re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", translated) is not None
        if not kept and name not in lost:
            lost.append(name)
    return lost


def update(source: str, blocks, path: Path, lang: str, title: str) -> polib.POFile:
    """Write the catalog at `path` with an entry for every text of the solution: translations
    kept where the English is unchanged; where a text's English changed, the old translation
    stays as a fuzzy one with the previous English beside it (what gettext's msgmerge does)."""
    old = polib.pofile(str(path), wrapwidth=0) if path.is_file() else None
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": title,
        "Language": lang,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    if old is not None:
        po.metadata.update({k: v for k, v in old.metadata.items() if k not in ("Language",)})
    for text in texts(source, blocks):
        entry = polib.POEntry(msgctxt=text.context, msgid=text.english, msgstr="")
        if old is not None:
            same = old.find(text.english, msgctxt=text.context)
            if same is not None and not same.obsolete:
                entry.msgstr, entry.flags = same.msgstr, list(same.flags)
            else:
                before = next((e for e in old if (e.msgctxt or "") == text.context and not e.obsolete), None)
                if before is not None and before.msgstr:
                    entry.msgstr, entry.flags, entry.previous_msgid = before.msgstr, ["fuzzy"], before.msgid
        po.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(path))
    return po


def _literal(text: str, indent: str, multiline: bool) -> str:
    body = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    if body.endswith('"'):
        body = body[:-1] + '\\"'
    lines = body.split("\n")
    body = "\n".join([lines[0]] + [(indent + line) if line else "" for line in lines[1:]])
    if multiline:
        return f'"""{body}\n{indent}"""'
    return f'"""{body}"""'


def translate_docstrings(source: str, catalog: dict[tuple[str, str], str]) -> tuple[str, list[str]]:
    """The source with each docstring replaced by its translation, and the contexts that had none
    (they keep the English)."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def span(node) -> tuple[int, int]:  # ast.get_source_segment splits the whole source on each call
        return (
            offsets[node.lineno - 1] + _char_col(lines[node.lineno - 1], node.col_offset),
            offsets[node.end_lineno - 1] + _char_col(lines[node.end_lineno - 1], node.end_col_offset),
        )

    missing = []
    edits = []
    for name, node in _docstring_nodes(tree):
        zh = catalog.get((name, clean(node.value)))
        if not zh:
            missing.append(name)
            continue
        first = lines[node.lineno - 1]
        indent = first[: len(first) - len(first.lstrip())]
        start, end = span(node)
        raw = source[start:end]
        multiline = "\n" in raw and raw.rstrip("\"'").endswith("\n" + indent)
        edits.append((node, _literal(zh, indent, multiline or "\n" in zh)))
    # Apply from the end so earlier offsets stay valid.
    text = source
    for node, new in sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True):
        start, end = span(node)
        text = text[:start] + new + text[end:]
    return text, missing


def _char_col(line: str, byte_col: int) -> int:
    """ast's col_offset counts UTF-8 bytes; a str index counts characters."""
    return len(line.encode("utf-8")[:byte_col].decode("utf-8"))
