"""`kata similarity DIR --out OUT`: planted copies are flagged, independent solutions are not.

The class is built from the course itself: alice submits the reference solutions; bob and ivan
(a notebook) submit alice's code disguised (local variables renamed, top-level functions in
reverse order, a comment on every line); dave, erin and frank each fill the stubs of softmax and
layer norm with their own correct code, written differently (checked against torch here, in the
test, never by the tool); carol and gina hand in the untouched stubs (gina's in Chinese); hank's zip has a syntax
error and lacks a file; zed is a symbolic link to alice. A second class (`noop_class`) hands in
alice's code with edits that change nothing it does (`pass`, `...`, string statements, keyword
arguments reordered, a 200 KB comment), next to dave's own code edited the same way, and a file
nested too deeply to compare. The test reads what an instructor reads: similarity.csv,
similarity.md, similarity.html, the command's output, summary.md.
"""

from __future__ import annotations

import ast
import csv
import io
import os
import re
import shutil
import tokenize
import zipfile
from pathlib import Path

import pytest

from conftest import EXERCISES, ROOT, SOLUTIONS
from grader.authoring.stubs import stub_text
from grader.cli import main
from grader.course.manifest import load
from grader.instructor.similarity.run import DEFAULT_THRESHOLD

SOFTMAX, LAYER_NORM, MULTIHEAD = "s1_11_softmax", "s1_17_layer_norm", "s1_16_multihead"
PLANTED = (SOFTMAX, LAYER_NORM, MULTIHEAD)
INDEPENDENT = ("alice", "dave", "erin", "frank")  # alice: the reference; the others their own code

# Each student's bodies for the stub's `raise NotImplementedError` lines, in the stub's order.
OWN_CODE = {
    "dave": {
        SOFTMAX: [
            "total = torch.sum(x, dim, keepdim=True)\nout = torch.div(x, total)\nreturn out",
            "m, _ = torch.max(x, dim, keepdim=True)\nnum = (x - m).exp()\nden = num.sum(dim, keepdim=True)\n"
            "return num / den",
        ],
        LAYER_NORM: [
            "n = x.shape[-1]\nmu = torch.sum(x, dim=-1, keepdim=True) / n\n"
            "sq = torch.sum((x - mu) * (x - mu), dim=-1, keepdim=True)\nreturn mu, sq / n",
            "mu, v = mean_and_variance(x)\ninv = torch.rsqrt(v + eps)\nreturn (x - mu) * inv",
            "self.weight = nn.Parameter(torch.full((emb_dim,), 1.0))\n"
            "self.bias = nn.Parameter(torch.full((emb_dim,), 0.0))\nself.eps = eps",
            "y = normalize(x, eps=self.eps)\ny = y * self.weight\ny = y + self.bias\nreturn y",
        ],
    },
    "erin": {
        SOFTMAX: [
            "s = x.sum(dim).unsqueeze(dim)\nreturn x * (1.0 / s)",
            "moved = x.transpose(dim, -1)\npeak = moved.max(-1).values[..., None]\n"
            "w = torch.exp(moved - peak)\nw = w / w.sum(-1)[..., None]\nreturn w.transpose(dim, -1)",
        ],
        LAYER_NORM: [
            "var, mean = torch.var_mean(x, dim=-1, unbiased=False, keepdim=True)\nreturn mean, var",
            "m, v = mean_and_variance(x)\ncentred = x.sub(m)\nreturn centred.div(v.add(eps).sqrt())",
            "self.eps = float(eps)\nones = torch.ones(emb_dim)\nself.weight = nn.Parameter(ones)\n"
            "self.bias = nn.Parameter(torch.zeros_like(ones))",
            "return torch.addcmul(self.bias, normalize(x, self.eps), self.weight)",
        ],
    },
    "frank": {
        SOFTMAX: [
            "denominator = x.sum(dim=dim).unsqueeze(dim=dim)\nreturn x / denominator",
            "z = x - torch.max(x, dim=dim, keepdim=True).values\n"
            "log_norm = torch.log(torch.exp(z).sum(dim=dim, keepdim=True))\nreturn torch.exp(z - log_norm)",
        ],
        LAYER_NORM: [
            "mu = x.mean(-1).unsqueeze(-1)\nsecond = x.pow(2).mean(-1).unsqueeze(-1)\nreturn mu, second - mu.pow(2)",
            "avg, variance = mean_and_variance(x)\nstd = (variance + eps) ** 0.5\nreturn (x - avg) / std",
            "self.eps = eps\nself.register_parameter('weight', nn.Parameter(torch.ones(emb_dim)))\n"
            "self.register_parameter('bias', nn.Parameter(torch.zeros(emb_dim)))",
            "scaled = normalize(x, self.eps) * self.weight\nreturn scaled + self.bias",
        ],
    },
}
HOSTILE = "</code></pre><script>alert('bob')</script>"  # a comment and a string in bob's copy: shown escaped


def stub(ex: str) -> str:
    return (EXERCISES / "ch01" / f"{ex}.py").read_text(encoding="utf-8")


def solution(ex: str) -> str:
    return (SOLUTIONS / "ch01" / f"{ex}.py").read_text(encoding="utf-8")


def fill(ex: str, bodies: list[str]) -> str:
    """The stub of `ex` with each `raise NotImplementedError(...)` line replaced by a body."""
    lines, out, todo = stub(ex).splitlines(), [], list(bodies)
    for line in lines:
        if line.strip().startswith("raise NotImplementedError"):
            indent = line[: len(line) - len(line.lstrip())]
            out += [indent + b for b in todo.pop(0).splitlines()]
        else:
            out.append(line)
    assert not todo, f"{ex}: more bodies than stubs"
    return "\n".join(out) + "\n"


def disguise(source: str) -> str:
    """`source` as a copier hands it in: every local variable renamed, the top-level functions
    and classes in reverse order, a comment on every line of code. Still valid Python."""
    tree = ast.parse(source)
    local = {
        n.id
        for f in ast.walk(tree)
        if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        for n in ast.walk(f)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    toks, prev = [], None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string in local and prev != ".":
            tok = tok._replace(string=f"my_{tok.string}_")
        toks.append(tok)
        if tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT):
            prev = tok.string
    renamed = tokenize.untokenize(toks)
    lines = renamed.splitlines()
    tree = ast.parse(renamed)
    blocks = [
        (min([n.lineno] + [d.lineno for d in getattr(n, "decorator_list", [])]), n.end_lineno)
        for n in tree.body
        if isinstance(n, (ast.FunctionDef, ast.ClassDef))
    ]
    head = lines[: blocks[0][0] - 1]
    moved = ["\n".join(lines[a - 1 : b]) for a, b in reversed(blocks)]
    text = "\n".join(head) + "\n\n\n" + "\n\n\n".join(moved) + "\n"
    out = []
    for i, line in enumerate(text.splitlines()):
        code = line.strip()
        commentable = code and not code.startswith(("#", '"', "'")) and not code.endswith("\\")
        comment = f"  # {'step' if i % 5 else HOSTILE} {i}"
        out.append(line + (comment if commentable and not _in_string(text, i) else ""))
    disguised = "\n".join(out) + "\n"
    ast.parse(disguised)
    return disguised


def _in_string(text: str, index: int) -> bool:
    """Line `index` of `text` lies inside a triple-quoted string (a docstring's inner line)."""
    before = "\n".join(text.splitlines()[:index])
    return (before.count('"""') + before.count("'''")) % 2 == 1


def as_notebook(code: str, ex: str) -> bytes:
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(code)]
    nb.metadata["kata"] = {"exercise": ex}
    return nbformat.writes(nb).encode("utf-8")


def kata_out(capsys, *args: str) -> tuple[int, str, str]:
    old = os.environ.get("KATA_LANG")
    os.environ["KATA_LANG"] = "en"
    try:
        code = main(list(args))
    except SystemExit as e:  # argparse refusing an option
        code = e.code
    finally:
        if old is None:
            os.environ.pop("KATA_LANG", None)
        else:
            os.environ["KATA_LANG"] = old
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def klass(tmp_path_factory) -> Path:
    base = tmp_path_factory.mktemp("class")
    d = base / "submissions"
    d.mkdir()
    shutil.copytree(SOLUTIONS, d / "alice")
    shutil.copytree(EXERCISES, d / "bob")
    for ex in PLANTED:  # the page shows code as compared (no comments): the string carries HOSTILE there
        (d / "bob" / "ch01" / f"{ex}.py").write_text(disguise(solution(ex)) + f"print({HOSTILE!r})\n", encoding="utf-8")
    for name, own in OWN_CODE.items():
        shutil.copytree(EXERCISES, d / name)
        for ex, bodies in own.items():
            (d / name / "ch01" / f"{ex}.py").write_text(fill(ex, bodies), encoding="utf-8")
    marker = base / "executed"
    with open(d / "frank" / "ch01" / f"{SOFTMAX}.py", "a", encoding="utf-8") as f:  # runs only if executed
        f.write(f"\nimport pathlib\npathlib.Path({str(marker)!r}).write_text('student code ran')\n")
    shutil.copytree(EXERCISES, d / "carol")
    shutil.copytree(EXERCISES, d / "gina")  # gina's stubs are the Chinese ones (kata stubs --lang zh)
    course = load(ROOT)
    for ex in PLANTED:
        (d / "gina" / "ch01" / f"{ex}.py").write_text(stub_text(course, course.get(ex), "zh"), encoding="utf-8")
    with zipfile.ZipFile(d / "hank.zip", "w") as z:  # a syntax error, and no softmax at all
        for p in sorted((EXERCISES / "ch01").glob("*.py")):
            if p.stem == SOFTMAX:
                continue
            text = p.read_text(encoding="utf-8")
            if p.stem == LAYER_NORM:
                text += "\ndef broken(:\n    mean = x.mean(dim=-1 keepdim=True\n"
            z.writestr(f"exercises/ch01/{p.name}", text)
    (d / "ivan").mkdir()  # loose notebooks, as nbgrader collects them
    (d / "ivan" / f"{LAYER_NORM}.ipynb").write_bytes(as_notebook(disguise(solution(LAYER_NORM)), LAYER_NORM))
    os.symlink("alice", d / "zed")
    (d / "README.txt").write_text("not a submission\n")
    return d


@pytest.fixture(scope="module")
def report(klass, tmp_path_factory):
    out = tmp_path_factory.mktemp("similarity") / "out"
    code = main(["similarity", str(klass), "--out", str(out), "-e", SOFTMAX, "-e", LAYER_NORM, "-e", MULTIHEAD])
    assert code == 0
    rows = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    return out, rows


def row(rows, ex, a, b) -> dict:
    a, b = sorted((a, b))
    found = [r for r in rows if r["exercise"] == ex and (r["student_a"], r["student_b"]) == (a, b)]
    assert len(found) == 1, (ex, a, b, found)
    return found[0]


def top(r: dict) -> float:
    return max(float(r["similarity_a_to_b"]), float(r["similarity_b_to_a"]))


def test_the_independent_solutions_are_correct():
    """dave's, erin's and frank's code computes softmax and layer norm (else "independent correct
    solutions" would prove nothing). The test runs it; the tool never does."""
    torch = pytest.importorskip("torch")
    x = torch.randn(3, 4, 7, dtype=torch.float64)
    for name, own in OWN_CODE.items():
        soft, ln = {}, {}
        exec(compile(fill(SOFTMAX, own[SOFTMAX]), f"{name}/softmax", "exec"), soft)
        exec(compile(fill(LAYER_NORM, own[LAYER_NORM]), f"{name}/layer_norm", "exec"), ln)
        for dim in (-1, 1, 0):
            assert torch.allclose(soft["softmax"](x, dim), torch.softmax(x, dim)), name
            assert torch.allclose(soft["simple_normalize"](x.abs(), dim), x.abs() / x.abs().sum(dim, keepdim=True))
        layer = ln["LayerNorm"](7)
        assert torch.allclose(layer(x), torch.nn.functional.layer_norm(x, (7,)), atol=1e-6), name


def test_planted_copies_are_flagged_with_their_matching_regions(report):
    out, rows = report
    for ex in PLANTED:
        r = row(rows, ex, "alice", "bob")
        assert r["flagged"] == "yes" and top(r) >= 0.9, r  # renamed, reordered, commented: still the same code
        assert min(float(r["similarity_a_to_b"]), float(r["similarity_b_to_a"])) >= DEFAULT_THRESHOLD, r
        assert int(r["matched_tokens"]) >= 40
    nb = row(rows, LAYER_NORM, "alice", "ivan")  # the notebook, read as grading reads it
    assert nb["flagged"] == "yes" and top(nb) >= 0.9, nb
    assert row(rows, LAYER_NORM, "bob", "ivan")["flagged"] == "yes"
    md = (out / "similarity.md").read_text(encoding="utf-8")
    ranked = md.split("## Pairs above the threshold")[1].split("\n## ")[0]
    for ex in PLANTED:
        assert re.search(rf"\| {ex} \| alice \| bob \| \d+% \| \d+% \| \d+ \|", ranked), ranked
    assert "| alice | bob | 3 |" in md  # the pair flagged on several exercises
    page = (out / "similarity.html").read_text(encoding="utf-8")
    section = page.split(f"{LAYER_NORM}: alice and bob</h2>")[1].split("</section>")[0]
    marked = re.findall(r'<mark class="a">(.*?)</mark>', section, re.S)
    assert any("self.weight = nn.Parameter(torch.ones(emb_dim))" in m for m in marked), marked  # alice's own line
    assert any("my_mean_" in m for m in re.findall(r'<mark class="b">(.*?)</mark>', section, re.S))  # bob's rename


def test_independent_solutions_and_untouched_stubs_are_not_flagged(report):
    out, rows = report
    scores = {}
    for ex in (SOFTMAX, LAYER_NORM):
        for i, a in enumerate(INDEPENDENT):
            for b in INDEPENDENT[i + 1 :]:
                r = row(rows, ex, a, b)
                scores[(ex, a, b)] = top(r)
                assert r["flagged"] == "no", r
                assert top(r) < 0.3, r  # measured: 0 for all twelve pairs (plain copydetect: up to 0.44)
    for ex in PLANTED:  # both handed in the stub (gina's in Chinese): nothing of their own to compare
        r = row(rows, ex, "carol", "gina")
        assert (r["flagged"], r["own_tokens_a"], r["own_tokens_b"], r["matched_tokens"]) == ("no", "0", "0", "0")
    assert all(r["flagged"] == "no" for r in rows if {"carol", "gina"} & {r["student_a"], r["student_b"]})
    assert len(scores) == 12


def test_broken_missing_and_linked_submissions_do_not_break_the_report(report, klass):
    out, rows = report
    pairs = [r for r in rows if r["flagged"] != "not compared"]
    students = {r["student_a"] for r in pairs} | {r["student_b"] for r in pairs}
    assert students == {"alice", "bob", "carol", "dave", "erin", "frank", "gina", "hank", "ivan"}
    zed = [r for r in rows if r["student_a"] == "zed"]  # one row per exercise: none of zed's code was compared
    assert sorted(r["exercise"] for r in zed) == sorted(PLANTED), zed
    assert all(r["flagged"] == "not compared" and "symbolic link" in r["reason"] for r in zed), zed
    assert row(rows, LAYER_NORM, "alice", "hank")["flagged"] == "no"  # a syntax error is text like any other
    assert not [r for r in rows if r["exercise"] == SOFTMAX and "hank" in (r["student_a"], r["student_b"])]
    assert not [r for r in rows if "ivan" in (r["student_a"], r["student_b"]) and r["exercise"] != LAYER_NORM]
    md = (out / "similarity.md").read_text(encoding="utf-8")
    not_compared = md.split("## Not compared")[1]
    assert "**zed**" in not_compared and "symbolic link" in not_compared  # refused, never followed
    assert "README" not in md
    assert not (klass.parent / "executed").exists()  # frank's file was read, never run


def test_the_page_is_self_contained_and_escapes_the_code(report):
    out, _ = report
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "<script" not in page.lower() and "alert(&#x27;bob&#x27;)" in page  # bob's comment, as text
    assert "&lt;/code&gt;&lt;/pre&gt;&lt;script&gt;" in page
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", page)  # nothing loaded from anywhere
    assert "default-src 'none'" in page
    assert page.count('<section class="pair"') == len(
        [
            line
            for line in (out / "similarity.md")
            .read_text()
            .split("## Pairs above the threshold")[1]
            .split("\n## ")[0]
            .splitlines()
            if line.startswith("| [")
        ]
    )


def test_the_command_says_what_it_found_in_english_and_chinese(klass, tmp_path, capsys):
    code, out, err = kata_out(capsys, "similarity", str(klass), "--out", str(tmp_path / "o"), "-e", LAYER_NORM)
    assert code == 0, err
    assert "Compared 9 submissions on 1 exercises" in out and "at or above 50% similarity" in out
    assert "s1_17_layer_norm  alice ~ bob" in out
    assert "not compared: zed: a symbolic link" in out
    rows = list(csv.DictReader(io.StringIO((tmp_path / "o" / "similarity.csv").read_text())))
    assert {r["exercise"] for r in rows} == {LAYER_NORM}  # -e: only that exercise
    code, out, err = kata_out(
        capsys,
        "--lang",
        "zh",
        "similarity",
        str(klass),
        "--out",
        str(tmp_path / "z"),
        "-e",
        LAYER_NORM,
        "--threshold",
        "95%",
    )
    assert code == 0 and "已比较 9 份提交的 1 道练习" in out and "95%" in out
    rows = list(csv.DictReader(io.StringIO((tmp_path / "z" / "similarity.csv").read_text())))
    flagged = {(r["student_a"], r["student_b"]) for r in rows if r["flagged"] == "yes"}
    assert ("alice", "bob") in flagged and flagged <= {("alice", "bob"), ("alice", "ivan"), ("bob", "ivan")}


def test_bad_arguments_are_refused_plainly(klass, tmp_path, capsys):
    code, _, err = kata_out(capsys, "similarity", str(klass), "--out", str(tmp_path / "o"), "--threshold", "2")
    assert code == 2 and "--threshold 2: give a fraction above 0 and at most 1" in err
    code, _, err = kata_out(capsys, "similarity", str(klass / "alice"), "--out", str(tmp_path / "o"))
    assert code == 2 and "is one submission" in err
    code, _, err = kata_out(capsys, "similarity", str(tmp_path / "nowhere"), "--out", str(tmp_path / "o"))
    assert code == 2 and "does not exist" in err
    assert not (tmp_path / "o").exists()


def test_the_class_summary_gets_a_similarity_section(report, klass, tmp_path, capsys):
    """An OUT of `kata grade DIR --out OUT`: its summary.md lists the flagged pairs, and a later
    grading run into an OUT that only `kata similarity` wrote is not refused as foreign."""
    from grader.instructor.batch import gradebook, store
    from grader.instructor.batch.run import BatchError, _check_out

    out = tmp_path / "grades"
    doc = {
        "schema": 1,
        "score": 13.0,
        "max_score": 13.0,
        "exercises": [],
        "checks": [],
        "notes": [],
        "student": {"name": "alice", "source": "alice", "status": "graded", "reason": ""},
    }
    store.write_json(store.record_path(out, "alice"), doc)
    store.write_json(out / store.META, {"kind": "kata-batch", "format": 1, "exercises": [LAYER_NORM]})
    gradebook.write_class(out, store.load_records(out), store.read_meta(out))
    assert "## Similarity" not in (out / "summary.md").read_text()
    code, _, err = kata_out(capsys, "similarity", str(klass), "--out", str(out), "-e", LAYER_NORM)
    assert code == 0, err
    summary = (out / "summary.md").read_text()
    section = summary.split("## Similarity")[1]
    assert "flagged 3 pairs" in section and f"| {LAYER_NORM} | alice | bob |" in section
    gradebook.write_class(out, store.load_records(out), store.read_meta(out))  # kata gradebook keeps it
    assert f"| {LAYER_NORM} | alice | bob |" in (out / "summary.md").read_text()

    fresh = tmp_path / "fresh"
    assert kata_out(capsys, "similarity", str(klass), "--out", str(fresh), "-e", LAYER_NORM)[0] == 0
    _check_out(fresh, {}, force=False)  # only kata similarity's files: grading may write here
    (fresh / "notes.txt").write_text("mine")
    with pytest.raises(BatchError):
        _check_out(fresh, {}, force=False)


# --- copies with edits that change nothing the code does (attack15 F9, F10) ----------------------
NOOP_EXERCISES = (SOFTMAX, LAYER_NORM, MULTIHEAD)
NOOP_COPIES = ("paula", "ellie", "sean", "tess", "iffy", "kurt", "pad", "dora")  # alice's code edited: see noop_class


def after_each_statement(source: str, line: str) -> str:
    """`source` with `line` (a statement that does nothing) after every statement, at the
    statement's own indentation (the outermost one where several end on one line)."""
    ends: dict[int, int] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.stmt):
            ends[node.end_lineno] = min(ends.get(node.end_lineno, node.col_offset), node.col_offset)
    lines = source.splitlines()
    for end in sorted(ends, reverse=True):
        lines.insert(end, " " * ends[end] + line)
    out = "\n".join(lines) + "\n"
    ast.parse(out)
    return out


def reorder_keywords(source: str) -> str:
    """`source` with the keyword arguments of every call that has several in reverse order
    (`x.sum(keepdim=True, dim=dim)`), the rest of the text as it was."""
    data = source.encode("utf-8")
    starts = [0]
    for line in data.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    calls = [
        n
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.Call) and len(n.keywords) > 1 and all(k.arg for k in n.keywords)
    ]
    done: list[tuple[int, int]] = []
    for call in sorted(calls, key=lambda c: (c.keywords[0].lineno, c.keywords[0].col_offset), reverse=True):
        spans = [
            (starts[k.lineno - 1] + k.col_offset, starts[k.end_lineno - 1] + k.end_col_offset) for k in call.keywords
        ]
        lo, hi = spans[0][0], spans[-1][1]
        if any(a < hi and lo < b for a, b in done):
            continue  # holds a call already rewritten (its offsets have moved)
        data = data[:lo] + b", ".join(data[a:b] for a, b in reversed(spans)) + data[hi:]
        done.append((lo, hi))
    out = data.decode("utf-8")
    ast.parse(out)
    return out


PAD = "".join(f"# padding line {i:05d} " + "x" * 30 + "\n" for i in range(4000))  # about 200 KB of comment


@pytest.fixture(scope="module")
def noop_class(tmp_path_factory) -> Path:
    """alice hands in the solutions; paula the same with `pass` after every statement, ellie with
    `...`, sean with a string statement (a docstring everywhere), tess with `assert True`, iffy
    with `if False: x = 1`, kurt with keyword arguments reordered, pad with a 200 KB comment, dora with a dead
    `_t = 0`; dave his own softmax and layer norm with `pass` after
    every statement; deep a softmax nested too deeply to parse (compared as written) and a layer norm
    too long to compare."""
    d = tmp_path_factory.mktemp("noop") / "submissions"
    edits = {
        "paula": lambda s: after_each_statement(s, "pass"),
        "ellie": lambda s: after_each_statement(s, "..."),
        "sean": lambda s: after_each_statement(s, '"""Does what the line above says."""'),
        "tess": lambda s: after_each_statement(s, "assert True"),
        "iffy": lambda s: after_each_statement(s, "if False: x = 1"),
        "kurt": reorder_keywords,
        "dora": lambda s: after_each_statement(s, "_t = 0"),
        "pad": lambda s: s + PAD,
    }
    for name, edit in [("alice", lambda s: s), *edits.items()]:
        (d / name / "ch01").mkdir(parents=True)
        for ex in NOOP_EXERCISES:
            edited = edit(solution(ex))
            if name != "alice":
                assert edited != solution(ex), (name, ex)
            (d / name / "ch01" / f"{ex}.py").write_text(edited, encoding="utf-8")
    shutil.copytree(EXERCISES, d / "dave")
    for ex, bodies in OWN_CODE["dave"].items():
        (d / "dave" / "ch01" / f"{ex}.py").write_text(after_each_statement(fill(ex, bodies), "pass"), encoding="utf-8")
    (d / "deep" / "ch01").mkdir(parents=True)
    (d / "deep" / "ch01" / f"{SOFTMAX}.py").write_text(
        solution(SOFTMAX) + "\n_x = " + "+".join(["1"] * 5000) + "\n", encoding="utf-8"
    )
    (d / "deep" / "ch01" / f"{LAYER_NORM}.py").write_text(
        solution(LAYER_NORM) + "".join(f"print({i})\n" for i in range(25_000)), encoding="utf-8"
    )
    return d


@pytest.fixture(scope="module")
def noop_report(noop_class, tmp_path_factory):
    out = tmp_path_factory.mktemp("noop-similarity") / "out"
    args = ["similarity", str(noop_class), "--out", str(out)] + [a for ex in NOOP_EXERCISES for a in ("-e", ex)]
    assert main(args) == 0
    return out, list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))


def test_copies_with_no_op_edits_are_flagged(noop_report):
    """`pass`, `...`, a string, `assert True` or `if False: ...` after every statement, keyword
    arguments reordered, a 200 KB comment: the code compared is the same as alice's, so the copy
    is flagged (compared as written: 0-0.37, swapped keywords 0 on softmax, and the padded file
    was not compared at all)."""
    out, rows = noop_report
    for ex in NOOP_EXERCISES:
        for name in NOOP_COPIES:  # the same code as compared: one cluster with alice (or a flagged pair)
            r = row(rows, ex, "alice", name)
            assert r["flagged"] in ("yes", "same code"), r
            assert min(float(r["similarity_a_to_b"]), float(r["similarity_b_to_a"])) >= 0.9, r
            assert int(r["matched_tokens"]) >= 40, r
    same = [r for r in rows if r["flagged"] == "same code" and r["exercise"] == SOFTMAX]
    assert {r["student_b"] for r in same} >= set(NOOP_COPIES) - {"deep"}, same
    assert not [r for r in rows if r["flagged"] == "not compared" and r["student_a"] == "pad"]
    page = (out / "similarity.html").read_text(encoding="utf-8")
    assert "The code is shown as it was compared, not as it was handed in" in page
    # paula's copy is in alice's cluster (the same code as compared); deep's, compared as written (it
    # does not parse), is a pair: alice's side is shown without the rewrites deep's cannot have
    section = page.split(f"{SOFTMAX}: alice and deep</h2>")[1].split("</section>")[0]
    assert "pass" not in section and "keepdim=True" in section  # the code as compared, its matches marked
    assert re.search(r'<mark class="a">[^<]*e = torch\.exp\(shifted\)', section), section


def test_no_op_edits_do_not_make_independent_code_alike(noop_report):
    """dave's own code with `pass` after every statement is still dave's own: not flagged against
    alice or any edited copy of hers (0 before and after the canonical form); his untouched stub
    of multi-head attention, `pass` lines and all, has no code of its own."""
    _, rows = noop_report
    for ex in (SOFTMAX, LAYER_NORM):
        r = row(rows, ex, "alice", "dave")  # alice stands for her copies, all the same code as compared
        assert r["flagged"] == "no" and top(r) < 0.3, r
        assert not [
            r
            for r in rows
            if r["exercise"] == ex and r["flagged"] == "yes" and "dave" in (r["student_a"], r["student_b"])
        ]
    r = row(rows, MULTIHEAD, "alice", "dave")
    assert (r["flagged"], r["own_tokens_a" if r["student_a"] == "dave" else "own_tokens_b"]) == ("no", "0"), r


def test_files_not_compared_are_in_the_csv_and_on_the_console(noop_class, tmp_path, capsys):
    """A file too long to compare has a row in similarity.csv and a line on the console (in either
    language), not only in similarity.md. A file nested too deeply for Python's parser is compared
    as written instead: alice's softmax with a 5000-term line added is still her copy."""
    code, out, err = kata_out(
        capsys, "similarity", str(noop_class), "--out", str(tmp_path / "o"), "-e", SOFTMAX, "-e", LAYER_NORM
    )
    assert code == 0, err
    assert (
        f"not compared: deep: {LAYER_NORM}: too long to compare: more than 200000 characters of code once "
        "comments, docstrings and statements that do nothing are removed"
    ) in out
    rows = list(csv.DictReader(io.StringIO((tmp_path / "o" / "similarity.csv").read_text(encoding="utf-8"))))
    skipped = {(r["exercise"], r["student_a"]): r for r in rows if r["flagged"] == "not compared"}
    assert set(skipped) == {(LAYER_NORM, "deep")}, skipped
    assert "too long to compare" in skipped[(LAYER_NORM, "deep")]["reason"]
    assert row(rows, SOFTMAX, "alice", "deep")["flagged"] == "yes"
    md = (tmp_path / "o" / "similarity.md").read_text(encoding="utf-8")
    assert f"- **deep**: {LAYER_NORM}: too long to compare" in md.split("## Not compared")[1]
    code, out, err = kata_out(
        capsys, "--lang", "zh", "similarity", str(noop_class), "--out", str(tmp_path / "z"), "-e", LAYER_NORM
    )
    assert code == 0 and f"未比较：deep：{LAYER_NORM}：" in out, out


# --- a class a TA reads: many copies of the reference, one disguised copy (issue 26, part 7) -------
TA_CLASS = Path(__file__).parent / "similarity_class"
DISGUISED = ("s1_07_additive_attention", "s1_10_qkv", "s1_11_softmax", "s1_12_self_attention")


@pytest.fixture(scope="module")
def ta_class(tmp_path_factory) -> Path:
    """16 students: ref01-ref13 hand in the reference solutions unchanged; dana and eli their own
    honest work on four exercises of week2 (tests/similarity_class/, written by hand, each
    different from the reference and from each other); gus hands in dana's work disguised by hand:
    names changed, functions in another order, loops that append turned into comprehensions,
    temporaries inlined, a comment here and there. Their other exercises are the untouched stubs."""
    d = tmp_path_factory.mktemp("ta") / "submissions"
    for i in range(1, 14):
        shutil.copytree(SOLUTIONS, d / f"ref{i:02d}")
    for name in ("dana", "eli", "gus"):
        shutil.copytree(EXERCISES, d / name)
        for p in (TA_CLASS / name / "ch01").glob("*.py"):
            shutil.copyfile(p, d / name / "ch01" / p.name)
    return d


@pytest.fixture(scope="module")
def ta_report(ta_class, tmp_path_factory):
    out = tmp_path_factory.mktemp("ta-similarity") / "out"
    old = os.environ.get("KATA_LANG")
    os.environ["KATA_LANG"] = "en"
    try:
        assert main(["similarity", str(ta_class), "--out", str(out), "-a", "week2"]) == 0
    finally:
        os.environ.pop("KATA_LANG", None) if old is None else os.environ.__setitem__("KATA_LANG", old)
    rows = list(csv.DictReader(io.StringIO((out / "similarity.csv").read_text(encoding="utf-8"))))
    return out, rows


def test_hand_written_class_is_correct_and_distinct():
    """dana's and eli's work computes what the exercises ask (the test runs it; the tool never
    does), and gus's disguise computes the same as dana's."""
    torch = pytest.importorskip("torch")
    x = torch.randn(2, 5, 6)
    for name in ("dana", "eli", "gus"):
        soft, att, qkv = {}, {}, {}
        exec(compile((TA_CLASS / name / "ch01" / "s1_11_softmax.py").read_text(), name, "exec"), soft)
        exec(compile((TA_CLASS / name / "ch01" / "s1_12_self_attention.py").read_text(), name, "exec"), att)
        exec(compile((TA_CLASS / name / "ch01" / "s1_10_qkv.py").read_text(), name, "exec"), qkv)
        assert torch.allclose(soft["softmax"](x, 1), torch.softmax(x, 1)), name
        torch.manual_seed(0)
        m = att["SelfAttention"](6, 4)
        q, k, v = x @ m.W_query, x @ m.W_key, x @ m.W_value
        want = torch.softmax(q @ k.transpose(-2, -1) / 2, -1) @ v
        assert torch.allclose(m(x), want, atol=1e-5), name
        w = qkv["init_qkv_weights"](6, 4, seed=3)
        torch.manual_seed(3)
        assert all(torch.equal(a, torch.randn(6, 4)) for a in w), name
    for ex in DISGUISED:  # the disguise is not the file it copies
        assert (TA_CLASS / "gus" / "ch01" / f"{ex}.py").read_text() != (
            TA_CLASS / "dana" / "ch01" / f"{ex}.py"
        ).read_text()


def test_identical_code_of_many_students_is_one_cluster_not_pairs(ta_report, ta_class, tmp_path, capsys):
    """13 students with the reference code: one line naming the 13, not 78 flagged pairs per
    exercise (before: 310 flagged pairs for 16 students, 297 of them among those 13)."""
    out, rows = ta_report
    refs = [f"ref{i:02d}" for i in range(1, 14)]
    flagged = [r for r in rows if r["flagged"] == "yes"]
    assert not [r for r in flagged if r["student_a"] in refs and r["student_b"] in refs], flagged
    assert len(flagged) < 10, flagged
    md = (out / "similarity.md").read_text(encoding="utf-8")
    clusters = md.split("## The same code handed in by several students")[1].split("\n## ")[0]
    assert f"| 13 | {', '.join(refs)} | " in clusters and "s1_11_softmax" in clusters, clusters
    same = [r for r in rows if r["flagged"] == "same code" and r["exercise"] == "s1_11_softmax"]
    assert sorted(r["student_b"] for r in same) == refs[1:] and {r["student_a"] for r in same} == {"ref01"}
    code, text, err = kata_out(capsys, "similarity", str(ta_class), "--out", str(tmp_path / "o"), "-a", "week2")
    assert code == 0, err
    assert "the same code from 13 students on " in text and ", ".join(refs) in text, text
    assert text.count("ref01") == 1, text  # the cluster's line, and no pair of the 13
    code, text, _ = kata_out(
        capsys, "--lang", "zh", "similarity", str(ta_class), "--out", str(tmp_path / "z"), "-a", "week2"
    )
    assert code == 0 and "13 名学生在" in text and "上提交了相同的代码" in text, text


def test_a_disguised_copy_across_four_exercises_is_in_the_top_ten(ta_report):
    """gus renamed, reordered, used comprehensions and inlined dana's temporaries on four exercises
    (before: 12-34 % on three of them, 0 on s1_10_qkv, none flagged; in the larger class of the
    issue it ranked #302-#308). Now the pair is flagged on all four and ranked first, ahead of any
    single-exercise pair; eli's own work is flagged with no one."""
    out, rows = ta_report
    for ex in DISGUISED:
        r = row(rows, ex, "dana", "gus")
        assert r["flagged"] == "yes" and min(float(r["similarity_a_to_b"]), float(r["similarity_b_to_a"])) >= 0.5, r
    assert not [r for r in rows if r["flagged"] == "yes" and "eli" in (r["student_a"], r["student_b"])]
    md = (out / "similarity.md").read_text(encoding="utf-8")
    ranked = [
        line
        for line in md.split("## Pairs above the threshold")[1].split("\n## ")[0].splitlines()
        if line.startswith("| [")
    ]
    top_ten = ranked[:10]
    assert sum("| dana | gus |" in line for line in top_ten) == 4, top_ten
    assert all(line.endswith("| 4 |") for line in top_ten[:4]), top_ten  # on 4 exercises: ranked first


def test_assignment_scopes_the_comparison(ta_class, tmp_path, capsys):
    """`-a week2` compares exactly week2's exercises (as `kata grade -a week2` resolves them); an
    unknown assignment or an exercise outside it is refused, nothing written."""
    from grader.course.assignments import find

    course = load(ROOT)
    week2 = [ex.id for ex in course.exercises if ex.id in set(find(course.assignments, "week2").exercises)]
    code, _, err = kata_out(capsys, "similarity", str(ta_class), "--out", str(tmp_path / "o"), "-a", "week2")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO((tmp_path / "o" / "similarity.csv").read_text(encoding="utf-8"))))
    assert {r["exercise"] for r in rows} == set(week2) and LAYER_NORM not in week2
    code, _, err = kata_out(capsys, "similarity", str(ta_class), "--out", str(tmp_path / "x"), "-a", "week9")
    assert code == 2 and "week9" in err and not (tmp_path / "x").exists()
    code, _, err = kata_out(
        capsys, "similarity", str(ta_class), "--out", str(tmp_path / "y"), "-a", "week2", "-e", LAYER_NORM
    )
    assert code == 2 and LAYER_NORM in err and not (tmp_path / "y").exists()
