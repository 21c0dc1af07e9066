"""One source text, decoded once (issue 24, part 1).

Python's importer honours a UTF-8 byte-order mark and a PEP 263 coding line; the forbidden-API scan
once read the bytes as UTF-8 and gave up ("no violations") on what it could not parse. An outside
attack scored full marks with tiktoken in s1_04_byte_bpe saved with a BOM, again behind
`# -*- coding: latin-1 -*-` and one byte that is not UTF-8, and on s1_11_softmax with code hidden
in a `# coding: utf-7` comment (as a .py and as a notebook), which `kata similarity` did not see
as a copy either. Now every reader on the trusted side reads grader/course/source_text.py's text.

The differential part: for a corpus of encodings and tricks, the tree the scan reads is the tree
Python's own compiler builds from the raw bytes, or the file is refused (and under a forbidden list
the scan says so: never "no violations"). The end-to-end part grades through the real `kata grade`
and `kata similarity`.
"""

from __future__ import annotations

import ast
import csv
import io
import shutil
import warnings

import pytest

from grader.capstone import gpt2
from grader.checking.notebook import code_of
from grader.cli import main
from grader.course.manifest import load
from grader.course.messages import t
from grader.course.scan import scan_source
from grader.course.source_text import REFUSED, decode, of_text
from tests.conftest import EXERCISES, ROOT, SOLUTIONS, checks_of, grade, score_of

COURSE = load(ROOT)
SOFTMAX, BPE = "s1_11_softmax", "s1_04_byte_bpe"
BOM = b"\xef\xbb\xbf"
CODE = "import torch\n\n\ndef f(x):\n    return torch.softmax(x, -1)\n"
FORBIDDEN = COURSE.get(SOFTMAX).forbidden


def utf7_hidden(code: str) -> bytes:
    """`code` hidden in one comment line: UTF-8 reads a comment, Python (told utf-7) reads the code."""
    return (
        "# coding: utf-7\n# +AAo-"
        + "+AAo-".join(line.encode("utf-7").decode("ascii") for line in code.split("\n"))
        + "\n"
    ).encode("ascii")


def notebook(first_cell: str, *more: str) -> bytes:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(c) for c in (first_cell, *more)]
    return nbformat.writes(nb).encode("utf-8")


CORPUS = {
    "plain": CODE.encode(),
    "UTF-8 BOM": BOM + CODE.encode(),
    "utf-8 cookie": b"# -*- coding: utf-8 -*-\n" + CODE.encode(),
    "utf8 cookie spelled otherwise": b"# vim: set fileencoding=UTF_8 :\n" + CODE.encode(),
    "BOM and utf-8 cookie": BOM + b"# coding: utf-8\n" + CODE.encode(),
    "BOM and latin-1 cookie": BOM + b"# coding: latin-1\n" + CODE.encode(),
    "latin-1 cookie": b"# -*- coding: latin-1 -*-\n# caf\xe9\n" + CODE.encode(),
    "cp1252 cookie": b"# coding: cp1252\nx = '\x93quoted\x94'\n" + CODE.encode(),
    "utf-7 cookie": utf7_hidden(CODE),
    "shift_jis cookie": "# coding: shift_jis\nx = 'ソ表'\n".encode("shift_jis") + CODE.encode(),
    "gbk cookie": "# coding: gbk\nx = '中文词元'\n".encode("gbk") + CODE.encode(),
    "cookie on line 2": b"#!/usr/bin/env python\n# coding: latin-1\nx = '\xe9'\n" + CODE.encode(),
    "cookie on line 2 after a blank line": b"\n# coding: utf-7\n# +AAo-import tiktoken\n",
    "cookie after code (ignored)": b"import torch\n# coding: utf-7\n# +AAo-import tiktoken\n",
    "cookie on line 3 (ignored)": b"#\n#\n# coding: utf-7\n# +AAo-import tiktoken\n",
    "cookie after a form feed": b"\x0c# coding: utf-7\n# +AAo-import tiktoken\n",
    "cookie after a form feed line": b"\x0c\n# coding: latin-1\nx = '\xe9'\n",
    "unknown codec": b"# coding: no-such-codec\nimport tiktoken\n",
    "CR-only line endings": CODE.replace("\n", "\r").encode(),
    "CRLF line endings": CODE.replace("\n", "\r\n").encode(),
    "CR-only with a utf-7 cookie": b"# coding: utf-7\r# +AAo-import tiktoken\r",
    "NUL byte": b"import torch\x00\n" + CODE.encode(),
    "NUL in a comment": b"# \x00\n" + CODE.encode(),
    "lone surrogate bytes": b"x = '\xed\xa0\x80'\n" + CODE.encode(),
    "invalid UTF-8": b"# \xff\xfe\n" + CODE.encode(),
    "UTF-16 with its BOM": "\ufeff".encode("utf-16-le") + CODE.encode("utf-16-le"),
    "empty file": b"",
    "only a BOM": BOM,
    "syntax error": b"def f(:\n    return torch.softmax(x)\n",
    "tiktoken in a string only": b"x = 'import tiktoken'\n",
}
GRADED = {
    "plain",
    "UTF-8 BOM",
    "utf-8 cookie",
    "utf8 cookie spelled otherwise",
    "BOM and utf-8 cookie",
    "cookie after code (ignored)",
    "cookie on line 3 (ignored)",
    "CR-only line endings",
    "CRLF line endings",
    "empty file",
    "only a BOM",
    "tiktoken in a string only",
}
CODING = {
    "latin-1 cookie",
    "cp1252 cookie",
    "utf-7 cookie",
    "shift_jis cookie",
    "gbk cookie",
    "cookie on line 2",
    "cookie on line 2 after a blank line",
    "cookie after a form feed",
    "cookie after a form feed line",
    "CR-only with a utf-7 cookie",
}


def python_tree(data: bytes) -> str | None:
    """The tree Python's own compiler builds from the raw bytes, as the importer reads them."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.dump(
                compile(data, "f.py", "exec", ast.PyCF_ONLY_AST, dont_inherit=True), include_attributes=True
            )
    except (SyntaxError, ValueError):
        return None


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_the_scan_reads_the_tree_python_compiles_or_refuses_the_file(name):
    data = CORPUS[name]
    found = decode(data, "f.py")
    if found.kind:
        # refused: under a forbidden list the scan says so, whatever the text holds
        violations = scan_source(found, FORBIDDEN)
        assert violations and all(v.why for v in violations), (name, violations)
        said = violations[0].describe("ch01/f.py")
        assert said.startswith("ch01/f.py") and "{" not in said, said
    else:
        assert found.text is not None
        assert ast.dump(ast.parse(found.text), include_attributes=True) == python_tree(data), name
    if name in GRADED:
        assert found.kind == "", (name, found)
    if name in CODING:
        assert found.kind == "coding" and found.line in (1, 2) and found.text is not None, (name, found)
    if found.kind == "coding":  # what Python would run is still the text: similarity compares it
        assert ast.dump(ast.parse(found.text), include_attributes=True) == python_tree(data), name


def test_the_expected_refusals():
    assert decode(CORPUS["utf-7 cookie"]).detail == "utf-7" and decode(CORPUS["latin-1 cookie"]).line == 1
    assert decode(CORPUS["cookie on line 2"]).line == 2
    assert decode(CORPUS["invalid UTF-8"]).kind == "not_utf8"
    assert decode(CORPUS["lone surrogate bytes"]).kind == "not_utf8"
    assert decode(CORPUS["unknown codec"]).kind == "not_utf8"
    assert decode(CORPUS["NUL byte"]).kind == "syntax"
    assert decode(CORPUS["syntax error"]).kind == "syntax" and decode(CORPUS["syntax error"]).line == 1
    assert decode(CORPUS["BOM and latin-1 cookie"]).kind in ("not_utf8", "syntax")
    # the scan no longer reads an unparsable text as "no violations"
    assert scan_source(decode(CORPUS["syntax error"]), FORBIDDEN)[0].why == "syntax"
    # the hidden code is what the scan reads once the file is decoded as Python decodes it
    assert "tiktoken" in decode(CORPUS["cookie after a form feed"]).text


def test_the_refusal_names_the_exercise_the_file_and_the_line_in_english_and_chinese():
    found = decode(CORPUS["latin-1 cookie"])
    for lang in ("en", "zh"):
        said = t(
            "src_coding", lang, file="ch01/s1_04_byte_bpe.py", line=found.line, encoding=found.detail, exercise=BPE
        )
        assert "ch01/s1_04_byte_bpe.py" in said and BPE in said and "UTF-8" in said and "iso8859-1" in said
        assert ("line 1" in said) if lang == "en" else ("第 1 行" in said)


def test_a_notebook_whose_first_cell_is_a_coding_line_is_read_as_python_reads_its_py():
    import nbformat

    # jupytext writes "# +" lines as "# # +": under utf-7 the hidden line is still code
    for first in ("# coding: utf-7\n# +AAo-import tiktoken\npass", "# -*- coding: latin-1 -*-\nimport torch"):
        code = code_of(nbformat.reads(notebook(first, "x = 1").decode(), as_version=4))
        found = of_text(code)
        assert found.kind == "coding" and found.line == 1, (first, code)
    assert (
        "import tiktoken"
        in of_text(
            code_of(nbformat.reads(notebook("# coding: utf-7\n# +AAo-import tiktoken\npass").decode(), as_version=4))
        ).text
    )
    # a cell of comments only is framed by jupytext ("# +" first): Python cannot decode that as utf-7
    framed = of_text(
        code_of(nbformat.reads(notebook("# coding: utf-7\n# +AAo-import tiktoken").decode(), as_version=4))
    )
    assert framed.kind in REFUSED
    ok = of_text(
        code_of(nbformat.reads(notebook("# -*- coding: utf-8 -*-\nimport torch", "x = 1").decode(), as_version=4))
    )
    assert ok.kind == "" and "import torch" in ok.text


# ----------------------------------------------------------------------------- graded for real
def hand_in(tmp_path, files: dict[str, bytes], name: str = "sub"):
    sub = tmp_path / name
    shutil.copytree(SOLUTIONS, sub, ignore=shutil.ignore_patterns("__pycache__"))
    for rel, data in files.items():
        (sub / "ch01" / rel).write_bytes(data)
    return sub


def solution(ex: str) -> bytes:
    return (SOLUTIONS / "ch01" / f"{ex}.py").read_bytes()


WITH_TIKTOKEN = solution(BPE) + b"\ntry:\n    import tiktoken as _tt\nexcept ImportError:\n    _tt = None\n"
# the reference's own code plus a forbidden name the runtime guard never sees called: only the scan
# can refuse it, so this file scored full marks while the scan read it as a comment
SOFTMAX_HIDDEN = utf7_hidden(solution(SOFTMAX).decode() + "\n_f = torch.softmax\n")


def refused_with_reason(report: dict, ex: str, *words: str) -> None:
    checks = checks_of(report, ex)
    assert checks and score_of(report, ex) == 0, [(c["name"], c["score"], c["message"]) for c in checks]
    public = [c["message"] for c in checks if c["visibility"] == "public"]
    for w in words:
        assert all(w in m for m in public), (w, public)


@pytest.mark.slow
def test_the_three_attacks_score_zero_with_the_reason(tmp_path):
    """BOM + tiktoken and a latin-1 line + tiktoken on s1_04_byte_bpe, utf-7 on s1_11_softmax: 0, saying
    why; the exercise graded beside them keeps its marks."""
    latin = b"# -*- coding: latin-1 -*-\n# Caf\xe9\n" + WITH_TIKTOKEN
    attacks = [({f"{SOFTMAX}.py": SOFTMAX_HIDDEN}, SOFTMAX, [f"ch01/{SOFTMAX}.py, line 1", "utf-7", "coding line"])]
    if gpt2.have_asset():  # without GPT-2's ranks the BPE checks are skipped, not graded
        attacks += [
            ({f"{BPE}.py": BOM + WITH_TIKTOKEN}, BPE, ["tiktoken"]),
            ({f"{BPE}.py": latin}, BPE, [f"ch01/{BPE}.py, line 1", "iso8859-1", "UTF-8"]),
        ]
    for files, ex, words in attacks:
        sub = hand_in(tmp_path, files, name=ex + str(len(list(tmp_path.iterdir()))))
        report = grade(sub, "-e", ex, "-e", "s1_11_matmul")
        refused_with_reason(report, ex, *words)
        matmul = checks_of(report, "s1_11_matmul")
        assert matmul and all(c["status"] == "passed" for c in matmul), matmul


@pytest.mark.slow
def test_utf7_in_a_notebook_scores_zero_naming_the_notebook(tmp_path):
    sub = hand_in(tmp_path, {f"{SOFTMAX}.ipynb": notebook(SOFTMAX_HIDDEN.decode() + "pass")})
    (sub / "ch01" / f"{SOFTMAX}.py").unlink()
    report = grade(sub, "-e", SOFTMAX)
    refused_with_reason(report, SOFTMAX, f"ch01/{SOFTMAX}.ipynb", "utf-7")


@pytest.mark.slow
def test_the_reference_solution_with_a_bom_or_a_utf8_coding_line_scores_full(tmp_path):
    files = {f"{SOFTMAX}.py": BOM + solution(SOFTMAX), f"{BPE}.py": b"# -*- coding: utf-8 -*-\n" + solution(BPE)}
    graded = [SOFTMAX, BPE] if gpt2.have_asset() else [SOFTMAX]
    report = grade(hand_in(tmp_path, files), *[a for ex in graded for a in ("-e", ex)])
    for ex in graded:
        checks = checks_of(report, ex)
        assert checks and all(c["status"] == "passed" for c in checks), [(c["name"], c["message"]) for c in checks]


def test_kata_similarity_sees_a_utf7_hidden_copy(tmp_path, capsys):
    from tests.test_similarity import OWN_CODE, fill

    d = tmp_path / "class"
    d.mkdir()
    for name in ("dave", "erin", "mallory"):
        shutil.copytree(EXERCISES, d / name, ignore=shutil.ignore_patterns("__pycache__"))
    dave = fill(SOFTMAX, OWN_CODE["dave"][SOFTMAX])
    (d / "dave" / "ch01" / f"{SOFTMAX}.py").write_text(dave, encoding="utf-8")
    (d / "erin" / "ch01" / f"{SOFTMAX}.py").write_text(fill(SOFTMAX, OWN_CODE["erin"][SOFTMAX]), encoding="utf-8")
    (d / "mallory" / "ch01" / f"{SOFTMAX}.py").write_bytes(utf7_hidden(dave))
    out = tmp_path / "out"
    assert main(["similarity", str(d), "--out", str(out), "-e", SOFTMAX]) == 0
    capsys.readouterr()
    rows = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    (copy,) = [r for r in rows if {r["student_a"], r["student_b"]} == {"dave", "mallory"}]
    assert copy["flagged"] == "yes", copy
    assert min(float(copy["similarity_a_to_b"]), float(copy["similarity_b_to_a"])) >= 0.9, copy


@pytest.mark.slow
def test_nothing_beside_the_exercise_runs_instead_of_the_scanned_text(tmp_path):
    """A handed-in __pycache__ .pyc of a solved file (stamped with the stub's size and time, so
    Python would load it instead of the source), a .pyc, .so and .pth beside the exercise and a
    package folder shadowing its module: none is copied into the sandbox, the stub is what runs."""
    import importlib._bootstrap_external as bx
    import os
    import sys

    sub = tmp_path / "sub"
    shutil.copytree(EXERCISES, sub, ignore=shutil.ignore_patterns("__pycache__"))
    ch = sub / "ch01"
    stub = ch / f"{SOFTMAX}.py"
    st = stub.stat()
    code = compile(solution(SOFTMAX), str(stub), "exec")
    pyc = bx._code_to_timestamp_pyc(code, int(st.st_mtime), st.st_size)
    (ch / "__pycache__").mkdir()
    (ch / "__pycache__" / f"{SOFTMAX}.{sys.implementation.cache_tag}.pyc").write_bytes(pyc)
    (ch / f"{SOFTMAX}.pyc").write_bytes(pyc)
    (ch / f"{SOFTMAX}.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF not really")
    (ch / "evil.pth").write_text("import os\n")
    (ch / SOFTMAX).mkdir()
    (ch / SOFTMAX / "__init__.py").write_bytes(solution(SOFTMAX))
    os.utime(stub, (st.st_atime, st.st_mtime))
    report = grade(sub, "-e", SOFTMAX)
    assert score_of(report, SOFTMAX) == 0, [(c["name"], c["message"]) for c in checks_of(report, SOFTMAX)]
    notes = "\n".join(report["notes"])
    assert "evil.pth" in notes and f"{SOFTMAX}.pyc" in notes  # named as not graded (a __pycache__ is not even copied)
