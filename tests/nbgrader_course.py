"""Drive the real nbgrader on a course written by `kata export nbgrader`: students' submissions
made from the released notebooks, the nbgrader command line, and the gradebook's scores; and
an ordinary nbgrader assignment of §1.9–1.12 whose test cells assert in the kernel (below).
Used by tests/test_export_nbgrader.py, tests/test_nbgrader_compare.py and
benchmarks/nbgrader_compare.py."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
COURSE_ID = "transformer-kata"


def nbgrader(
    course_dir: Path, *args: str, timeout: float = 600, env: dict | None = None
) -> subprocess.CompletedProcess:
    """`nbgrader ARGS` in the course directory, as an instructor runs it. The venv's bin/ comes
    first on PATH (nbgrader calls `alembic` by name) and this checkout's grader is the one
    nbgrader's grading imports (PYTHONPATH); `env` adds to the environment."""
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": str(ROOT),
        "KATA_LANG": "en",
        **(env or {}),
    }
    return subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course_dir,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def answers(source_notebook: Path) -> dict[str, str]:
    """grade_id -> the solution cell's code, as a student who solved it would type it."""
    nb = nbformat.read(source_notebook, as_version=4)
    return {
        c.metadata["nbgrader"]["grade_id"]: "\n".join(line for line in c.source.splitlines() if "### " not in line)
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("solution")
    }


def solve(release_notebook: Path, code: dict[str, str]):
    """The released notebook with the answer cells named in `code` (grade_id -> source) filled in."""
    nb = nbformat.read(release_notebook, as_version=4)
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id")
        if cell.metadata.get("nbgrader", {}).get("solution") and gid in code:
            cell.source = code[gid]
    return nb


def submit(course_dir: Path, student: str, assignment: str, notebooks: dict) -> Path:
    """Put a student's notebooks (name -> notebook) where `nbgrader autograde` finds them."""
    folder = course_dir / "submitted" / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    for name, nb in notebooks.items():
        nbformat.write(nb, folder / f"{name}.ipynb")
    return folder


def scores(course_dir: Path, assignment: str) -> dict[str, dict[str, float]]:
    """student -> {notebook: score, "total": score} from nbgrader's gradebook database."""
    from nbgrader.api import Gradebook

    out: dict[str, dict[str, float]] = {}
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}", COURSE_ID) as gb:
        for sub in gb.assignment_submissions(assignment):
            row = {nb.name: nb.score for nb in sub.notebooks}
            row["total"] = sub.score
            out[sub.student.id] = row
    return out


def max_scores(course_dir: Path, assignment: str) -> dict[str, float]:
    from nbgrader.api import Gradebook

    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}", COURSE_ID) as gb:
        a = gb.find_assignment(assignment)
        return {**{nb.name: nb.max_score for nb in a.notebooks}, "total": a.max_score}


# ---------------------------------------------------------------------------------------------
# nbgrader as instructors ordinarily use it: one notebook of §1.9–1.12 in eight parts, each a
# solution cell and test cells that `assert` in the student's kernel (torch imported there, no
# sandbox, no kata). benchmarks/nbgrader_compare.py races it against `kata grade`;
# tests/test_nbgrader_compare.py proves its asserts pass on the reference and fail on stubs.
#
# One test cell per public check of the kata, worth the check's points and asserting on the
# check's own inputs and expected values (grader/checks/test_<id>.py, grader/fixtures/), at the
# check's tolerance (grader/checking/tolerances.py): a student scores the same here as on the
# kata's public checks. The hidden checks have no cell: an instructor's notebook would not have
# them, so `kata grade` (which runs them too) does more work than this notebook.

INKERNEL_ASSIGNMENT = "s1_09_to_12"
INKERNEL_NOTEBOOK = "attention"
INKERNEL_IDS = [
    "s1_09_input_embeddings",
    "s1_10_qkv",
    "s1_11_matmul",
    "s1_11_attention_scores",
    "s1_11_softmax",
    "s1_12_scaled_attention",
    "s1_12_context",
    "s1_12_self_attention",
]  # book order
SA_NAMES = ["W_query", "W_key", "W_value"]


def _num(x: float) -> str:
    import numpy as np

    return str(np.float32(x))  # the shortest text that gives back the same float32


def lit(t) -> str:
    """A float32 or int64 tensor as the `torch.tensor(...)` literal that rebuilds it exactly."""
    import torch

    assert t.dtype in (torch.float32, torch.int64) and bool(torch.isfinite(t.double()).all()), t.dtype

    def rows(v, depth: int) -> str:
        if not isinstance(v, list):
            return _num(v) if t.dtype == torch.float32 else str(v)
        sep = ", " if not v or not isinstance(v[0], list) else ",\n    " + " " * depth
        return "[" + sep.join(rows(x, depth + 1) for x in v) + "]"

    return f"torch.tensor({rows(t.tolist(), 0)})"


def expect(var: str, expected, tol: str) -> str:
    """The asserts of the kata's expect_tensor(var, expected, tol): a tensor of that shape and
    dtype, equal (exact) or torch.allclose at the tolerance's atol and rtol."""
    from grader.checking import tolerances

    value = expected if isinstance(expected, str) else lit(expected)
    tolv = tolerances.get(tol)
    close = (
        f"torch.equal({var}, expected)"
        if tol == "exact"
        else f"torch.allclose({var}, expected, rtol={tolv.rtol!r}, atol={tolv.atol!r})"
    )
    return (
        f"expected = {value}\n"
        f"assert isinstance({var}, torch.Tensor), type({var})\n"
        f"assert {var}.shape == expected.shape and {var}.dtype == expected.dtype, ({var}.shape, {var}.dtype)\n"
        f"assert {close}, {var}\n"
    )


def _triple(var: str, call: str) -> str:
    return (
        f"{var} = {call}\n"
        f"assert isinstance({var}, (tuple, list)) and len({var}) == 3, 'expected (queries, keys, values)'\n"
    )


def _inkernel_tests(book, f: dict) -> dict[str, dict[str, str]]:
    """exercise -> public check -> the test cell's code, on that check's inputs and expected values."""
    inputs = f"torch.tensor({book.INPUT_VECTORS!r})"
    t = {}
    x = f["s1_09_input_embeddings"]
    t["s1_09_input_embeddings"] = {
        "test_listing_1_1_matrix": f"out = input_embedding_matrix({book.INPUT_VECTORS!r})\n"
        + expect("out", x["listing_1_1"], "exact"),
        "test_adds_positions": f"words = {lit(x['words'])}.tolist()\npositions = {lit(x['positions'])}.tolist()\n"
        "out = input_embedding_matrix(words, positions)\n" + expect("out", x["with_positions"], "exact"),
        "test_embed_small_example": f"tokens = {lit(x['small_tokens'])}\npositions = {lit(x['small_positions'])}\n"
        f"out = embed_tokens({lit(x['small_ids'])}, tokens, positions)\n"
        + expect("out", x["small_embedded"], "exact")
        + f"out = embed_tokens({lit(x['small_batch'])}, tokens, positions)\n"
        + expect("out", x["small_embedded_batch"], "exact"),
    }
    x = f["s1_10_qkv"]
    weights = "".join(f"{n} = {lit(x[n])}\n" for n in SA_NAMES)
    t["s1_10_qkv"] = {
        "test_listing_1_2_single_token": weights
        + f"x_2 = {inputs}[1]\n"
        + _triple("out", "project_qkv(x_2, W_query, W_key, W_value)")
        + "".join(
            f"{v} = out[{k}]\n" + expect(v, x[name][1], "matmul")
            for k, (v, name) in enumerate([("q", "queries"), ("k", "keys"), ("v", "values")])
        ),
        "test_listing_1_3_seeded_weights": _triple("out", "init_qkv_weights(8, 4)")
        + "".join(f"w = out[{k}]\n" + expect("w", x[n], "exact") for k, n in enumerate(SA_NAMES)),
        "test_listing_1_4_projections": weights
        + _triple("out", f"project_qkv({inputs}, W_query, W_key, W_value)")
        + "".join(
            f"got = out[{k}]\n" + expect("got", x[n], "matmul") for k, n in enumerate(["queries", "keys", "values"])
        ),
    }
    t["s1_11_matmul"] = {
        "test_book_example_27_61": f"out = matmul(torch.tensor({book.MATMUL_A!r}), torch.tensor({book.MATMUL_B!r}))\n"
        + expect("out", f["s1_11_matmul"]["book"], "exact")
        + "assert float(out[0, 0]) == 27.0 and float(out[1, 0]) == 61.0\n",
        "test_shape_mismatch_raises": "try:\n    matmul(torch.ones(2, 3), torch.ones(2, 3))\n"
        "except ValueError:\n    pass\n"
        "else:\n    raise AssertionError('multiplying (2, 3) by (2, 3) must raise ValueError')\n"
        f"out = matmul(torch.tensor({book.MATMUL_A!r}), torch.tensor({book.MATMUL_B!r}))\n"
        + expect("out", f["s1_11_matmul"]["book"], "exact"),
    }
    x = f["s1_11_attention_scores"]
    t["s1_11_attention_scores"] = {
        "test_listing_1_5_scores": f"queries = {lit(x['queries'])}\nkeys = {lit(x['keys'])}\n"
        "out = attention_scores(queries, keys)\n" + expect("out", x["scores"], "attention"),
        "test_listing_1_5_single_query": f"queries = {lit(x['queries'])}\nkeys = {lit(x['keys'])}\n"
        "out = attention_scores(queries[1], keys)\n" + expect("out", x["scores_next"], "attention"),
        "test_small_batch_scores": f"out = attention_scores({lit(x['small_q'])},\n"
        f"                       {lit(x['small_k'])})\n" + expect("out", x["small_scores"], "attention"),
    }
    x = f["s1_11_softmax"]
    book_softmax = ""
    for scores, printed, tol in book.SOFTMAX_EXAMPLES:
        book_softmax += f"out = softmax(torch.tensor({scores!r}))\n" + expect("out", f"torch.tensor({printed!r})", tol)
        if scores[0] == 1.0 and scores[3] == 6.0:
            book_softmax += "assert abs(float(out[3] / out[0]) / math.exp(5) - 1) < 1e-4, 'weight of 6 / weight of 1'\n"
    t["s1_11_softmax"] = {
        "test_book_softmax_examples": "import math\n" + book_softmax,
        "test_book_simple_normalization": "".join(
            f"out = simple_normalize(torch.tensor({scores!r}))\n" + expect("out", f"torch.tensor({want!r})", "softmax")
            for scores, want in book.NORMALIZE_EXAMPLES
        ),
        "test_large_inputs_stable": "out = softmax(torch.tensor([1000.0, 1001.0]))\n"
        + expect("out", x["large"], "printed4")
        + "out = softmax(torch.tensor([-1000.0, -1001.0]))\n"
        + expect("out", x["large_neg"], "printed4")
        + "out = softmax(torch.tensor([[1000.0, 1001.0], [0.0, 1.0]]), dim=-1)\n"
        + expect(
            "out", "torch.softmax(torch.tensor([[1000.0, 1001.0], [0.0, 1.0]]).double(), dim=-1).float()", "printed4"
        )
        + "out = softmax(torch.tensor([2.0, 3.0, float('-inf')]))\n"
        + expect("out", x["neg_inf"], "softmax"),
        "test_rows_and_columns": f"rows = {lit(x['rows'])}\n"
        "out = softmax(rows, dim=-1)\n"
        + expect("out", x["rows_dim-1"], "softmax")
        + "out = softmax(rows, dim=0)\n"
        + expect("out", x["rows_dim0"], "softmax"),
    }
    x = f["s1_12_scaled_attention"]
    t["s1_12_scaled_attention"] = {
        "test_book_scaled_scores": f"out = scale_scores(torch.tensor({book.HAND_SCORES!r}), 4)\n"
        + expect("out", f"torch.tensor({book.HAND_SCALED!r})", "printed2"),
        "test_listing_1_6_weights": f"scores = {lit(x['scores'])}\nout = attention_weights(scores, 4)\n"
        + expect("out", x["weights"], "softmax")
        + "assert torch.allclose(out.sum(-1), torch.ones(5), atol=1e-6), 'rows sum to 1'\n"
        + "row = attention_weights(scores[1], 4)\n"
        + expect("row", x["weights_next"], "softmax"),
        "test_small_batch": f"out = attention_weights({lit(x['small'])}, 9)\n"
        + expect("out", x["small_weights"], "softmax"),
    }
    x = f["s1_12_context"]
    t["s1_12_context"] = {
        "test_listing_1_7_context": f"weights = {lit(x['weights'])}\nvalues = {lit(x['values'])}\n"
        "out = context_vectors(weights, values)\n"
        + expect("out", x["context"], "attention")
        + "out = context_vectors(weights[1], values)\n"
        + expect("out", x["context_next"], "attention"),
        "test_book_day_context": f"out = context_vectors(torch.tensor({book.DAY_WEIGHTS!r}),\n"
        f"                      torch.tensor({book.DAY_VALUES!r}))\n"
        + expect("out", f"torch.tensor({book.DAY_CONTEXT!r})", "printed2"),
    }
    x = f["s1_12_self_attention"]
    t["s1_12_self_attention"] = {
        "test_listing_1_8_shape_and_init": "torch.manual_seed(123)\nsa = SelfAttention(d_in=8, d_out=4)\n"
        "state = sa.state_dict()\n"
        + "".join(
            f"assert {n!r} in state, 'no parameter named {n}'\n"
            f"w = state[{n!r}]\n" + expect("w", x[f"init_{n}"], "exact")
            for n in SA_NAMES
        )
        + f"out = sa({inputs})\n"
        + expect("out", x["listing_out"], "attention"),
        "test_parameter_names": "sa = SelfAttention(d_in=5, d_out=2)\nstate = sa.state_dict()\n"
        f"assert sorted(state) == {sorted(SA_NAMES)!r}, sorted(state)\n"
        f"assert all(tuple(state[n].shape) == (5, 2) for n in {SA_NAMES!r})\n"
        "assert len(list(sa.named_parameters())) == 3, 'the matrices must be nn.Parameter'\n"
        "g = torch.Generator().manual_seed(1205)\n"
        f"weights = {{n: torch.randn(5, 2, generator=g) for n in {SA_NAMES!r}}}\n"
        "x = torch.randn(4, 5, generator=g)\n"
        "sa.load_state_dict(weights)\n"
        "q, k, v = x @ weights['W_query'], x @ weights['W_key'], x @ weights['W_value']\n"
        "out = sa(x)\n" + expect("out", "torch.softmax(q @ k.T / 2 ** 0.5, dim=-1) @ v", "attention"),
        "test_small_batch": "sa = SelfAttention(5, 3)\nsa.load_state_dict({\n"
        + "".join(f"    {n!r}: {lit(x[f'small_{n}'])},\n" for n in SA_NAMES)
        + "})\n"
        + f"out = sa({lit(x['small_x'])})\n"
        + expect("out", x["small_y"], "attention"),
    }
    return t


def _student_code(course, ex) -> tuple[str, str]:
    """The exercise's module docstring, and its solution's code (without that docstring) with
    each `# BEGIN SOLUTION` block as nbgrader's `### BEGIN SOLUTION` region."""
    import ast

    from grader.instructor.exports.export_nbgrader import solution_source

    source = solution_source((course.solutions_dir / ex.file).read_text(encoding="utf-8"), ex.file)
    tree = ast.parse(source)
    doc = ast.get_docstring(tree) or ""
    if doc:
        source = "\n".join(source.splitlines()[tree.body[0].end_lineno :])
    return doc, source.strip("\n") + "\n"


def inkernel_notebook(course):
    """The source notebook: an import cell, then per exercise (book order) a heading, the solution
    cell (grade_id = the exercise id) and one locked, autograded test cell per public check."""
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    from grader.checking import book, fixtures
    from grader.checking.notebook import KERNEL

    def meta(gid, solution=False, points=None):
        m = {
            "grade": points is not None,
            "grade_id": gid,
            "locked": points is not None or gid == "imports",
            "schema_version": 3,
            "solution": solution,
        }
        if points is not None:
            m["points"] = points
        return {"nbgrader": m}

    tests = _inkernel_tests(book, {i: fixtures.load(i) for i in INKERNEL_IDS})
    exercises = [course.get(i) for i in INKERNEL_IDS]
    total = sum(c.points for ex in exercises for c in ex.checks if not c.hidden)
    cells = [
        new_markdown_cell(
            f"# §1.9–1.12: from input embeddings to self-attention\n\n"
            f"Eight parts, {total:g} points. In each part, write your code in place of "
            "`raise NotImplementedError()`; the cells after it test it."
        ),
        new_code_cell("import torch\nimport torch.nn as nn", metadata=meta("imports")),
    ]
    for k, ex in enumerate(exercises, 1):
        public = [c for c in ex.checks if not c.hidden]
        assert sorted(tests[ex.id]) == sorted(c.name for c in public), (ex.id, sorted(tests[ex.id]))
        doc, code = _student_code(course, ex)
        cells.append(
            new_markdown_cell(
                f"## Part {k}. §{ex.section} {ex.title} ({sum(c.points for c in public):g} points)\n\n{doc}"
            )
        )
        cells.append(new_code_cell(code, metadata=meta(ex.id, solution=True)))
        for check in public:
            head = f"# {check.points:g} point{'s' * (check.points != 1)}: {check.title}\n"
            cells.append(
                new_code_cell(
                    head + tests[ex.id][check.name].rstrip("\n"),
                    metadata=meta(f"{ex.id}-{check.name.removeprefix('test_')}", points=check.points),
                )
            )
    for i, cell in enumerate(cells):  # stable ids: the same course builds the same bytes
        cell.id = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell-{i}")[:64]
    return new_notebook(cells=cells, metadata=dict(KERNEL))


INKERNEL_CONFIG = f'''"""nbgrader's configuration of the ordinary, in-kernel assignment (tests/nbgrader_course.py)."""
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {COURSE_ID!r}
c.Execute.timeout = 300  # a cell; the first one imports torch, slow on a busy machine
'''


def write_inkernel_course(course, course_dir: Path) -> Path:
    """nbgrader_config.py and source/<assignment>/<notebook>.ipynb; returns the notebook."""
    course_dir.mkdir(parents=True, exist_ok=True)
    (course_dir / "nbgrader_config.py").write_text(INKERNEL_CONFIG, encoding="utf-8")
    path = course_dir / "source" / INKERNEL_ASSIGNMENT / f"{INKERNEL_NOTEBOOK}.ipynb"
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(inkernel_notebook(course), path)
    return path


def solved_ids(kind: str, ids: list[str]) -> list[str]:
    """The exercises a student of this kind solved: all, the first half (in `ids`' order), none."""
    return {"solved": ids, "half": ids[: len(ids) // 2], "unsolved": []}[kind]


def inkernel_students(course_dir: Path, class_dir: Path, kinds: dict[str, str]) -> None:
    """Each student (name -> kind) hands in the released notebook with the solution cells of the
    exercises they solved filled in (submitted/<name>/<assignment>/), and the same code as the
    kata's class folder holds it (<class_dir>/<name>/ch01/<id>.py): an exercise solved is the
    notebook's cell, one not solved the kata's stub (exercises/ch01/<id>.py)."""
    key = answers(course_dir / "source" / INKERNEL_ASSIGNMENT / f"{INKERNEL_NOTEBOOK}.ipynb")
    release = course_dir / "release" / INKERNEL_ASSIGNMENT / f"{INKERNEL_NOTEBOOK}.ipynb"
    for student, kind in kinds.items():
        done = solved_ids(kind, INKERNEL_IDS)
        submit(course_dir, student, INKERNEL_ASSIGNMENT, {INKERNEL_NOTEBOOK: solve(release, {i: key[i] for i in done})})
        folder = class_dir / student / "ch01"
        folder.mkdir(parents=True, exist_ok=True)
        for i in INKERNEL_IDS:
            code = key[i] if i in done else (ROOT / "exercises" / "ch01" / f"{i}.py").read_text(encoding="utf-8")
            (folder / f"{i}.py").write_text(code, encoding="utf-8")
