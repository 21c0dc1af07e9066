"""One-shot converter: grader/course/messages.py's CATALOG dict -> grader/locale/zh/messages.po.

msgctxt = the key, msgid = the English, msgstr = the Chinese; the comments that group keys become
translator comments (#.) of the entry they precede; python-brace-format where there are {fields}.
Run once from the repository root (issue 28): `.venv/bin/python grader/authoring/messages_to_po.py`;
kept in this commit as the tool that made the catalog, deleted in the next one.
"""
import ast
import io
import string
import sys
import tokenize
from pathlib import Path

import polib


def fields(text):
    return {name for _, name, _, _ in string.Formatter().parse(text) if name is not None}


def convert(src_path: Path, out_path: Path) -> int:
    source = src_path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    node = next(n for n in tree.body if isinstance(n, ast.AnnAssign | ast.Assign)
                and ast.unparse(n.target if isinstance(n, ast.AnnAssign) else n.targets[0]) == "CATALOG")
    d = node.value
    assert isinstance(d, ast.Dict)
    comments = []  # (line, text)
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT and d.lineno <= tok.start[0] <= d.end_lineno:
            comments.append((tok.start[0], tok.string[1:].strip()))
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": "Transformer kata messages",
        "Language": "zh",
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    po.header = ("The grader's messages (grader/course/messages.py renders them with t(key) and Msg.key(key)).\n"
                 "msgctxt: the key; msgid: the English; msgstr: the Chinese. {fields} are str.format fields:\n"
                 "keep each one, in the order Chinese needs. kata verify checks this file.")
    seen = set()
    prev_end = d.lineno
    for k, v in zip(d.keys, d.values):
        key = ast.literal_eval(k)
        entry = ast.literal_eval(v)
        if key in seen:
            raise SystemExit(f"{src_path}:{k.lineno}: key {key!r} twice")
        seen.add(key)
        if set(entry) != {"en", "zh"}:
            raise SystemExit(f"{src_path}:{k.lineno}: {key!r} has {sorted(entry)}")
        notes = [c for line, c in comments if prev_end <= line <= v.end_lineno and (line != prev_end or prev_end == d.lineno)]
        prev_end = v.end_lineno
        e = polib.POEntry(msgctxt=key, msgid=entry["en"], msgstr=entry["zh"], comment="\n".join(notes))
        if fields(entry["en"]) or fields(entry["zh"]):
            e.flags.append("python-brace-format")
        po.append(e)
    left = [c for line, c in comments if line > prev_end or (line == prev_end and False)]
    if left:
        print(f"comments after the last entry, not kept: {left}", file=sys.stderr)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(out_path))
    return len(po)


if __name__ == "__main__":
    src = Path(sys.argv[1] if len(sys.argv) > 1 else "grader/course/messages.py")
    out = Path(sys.argv[2] if len(sys.argv) > 2 else "grader/locale/zh/messages.po")
    print(convert(src, out), "messages ->", out)
