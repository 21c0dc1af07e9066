"""The ordinary nbgrader assignment that benchmarks/nbgrader_compare.py races `kata grade` against:
§1.9–1.12 as one notebook in eight parts whose test cells `assert` in the student's kernel
(tests/nbgrader_course.py). Its test cells are the kata's public checks (same points, inputs,
expected values and tolerances), they catch the corpus's wrong answers, and the real nbgrader
scores the reference full marks and the released stubs 0."""

import pytest

from grader.course import manifest as course_mod
from tests.conftest import ROOT

nbformat = pytest.importorskip("nbformat")

from tests.mistakes import MISTAKES  # noqa: E402
from tests.nbgrader_course import (
    INKERNEL_ASSIGNMENT,
    INKERNEL_IDS,
    INKERNEL_NOTEBOOK,  # noqa: E402
    answers,
    inkernel_notebook,
    inkernel_students,
    nbgrader,
    scores,
    write_inkernel_course,
)

COURSE = course_mod.load(ROOT)
PUBLIC_POINTS = sum(c.points for i in INKERNEL_IDS for c in COURSE.get(i).checks if not c.hidden)
# The kata refuses `@` in its own matrix product by reading the code (course.toml's forbidden
# calls); an assert in the kernel sees only the values, which are right.
SEEN_ONLY_BY_THE_KATA = {("s1_11_matmul", "the @ operator")}


def graded_cells(nb):
    return [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]


def test_one_test_cell_per_public_check_with_its_points():
    nb = inkernel_notebook(COURSE)
    cells = graded_cells(nb)
    for ex_id in INKERNEL_IDS:
        public = [c for c in COURSE.get(ex_id).checks if not c.hidden]
        mine = [c.metadata["nbgrader"] for c in cells if c.metadata["nbgrader"]["grade_id"].startswith(ex_id + "-")]
        assert [(m["grade_id"], m["points"]) for m in mine] == [
            (f"{ex_id}-{c.name.removeprefix('test_')}", c.points) for c in public
        ]
        assert all(m["locked"] and not m["solution"] for m in mine)
    assert sum(c.metadata["nbgrader"]["points"] for c in cells) == PUBLIC_POINTS == 37
    solutions = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")]
    assert [c.metadata["nbgrader"]["grade_id"] for c in solutions] == INKERNEL_IDS
    assert all("### BEGIN SOLUTION" in c.source for c in solutions)
    assert not any("grader" in c.source for c in cells)  # the kata plays no part in the kernel


def run_part(nb, ex_id: str, code: str) -> list[str]:
    """Run the import cell, `code` as the part's answer and the part's test cells in one namespace,
    as the kernel would: the grade ids of the cells that raised."""
    namespace: dict = {}
    exec("import torch\nimport torch.nn as nn", namespace)
    exec(code, namespace)
    failed = []
    for cell in graded_cells(nb):
        gid = cell.metadata["nbgrader"]["grade_id"]
        if gid.startswith(ex_id + "-"):
            try:
                exec(cell.source, namespace)
            except Exception:  # noqa: BLE001 - nbgrader scores any error 0
                failed.append(gid)
    return failed


@pytest.mark.filterwarnings("ignore:The use of `x.T`:UserWarning")  # the keys.T mistake
def test_asserts_pass_on_the_reference_and_catch_the_corpus_mistakes():
    nb = inkernel_notebook(COURSE)
    key = {c.metadata["nbgrader"]["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}
    for ex_id in INKERNEL_IDS:
        code = "\n".join(line for line in key[ex_id].source.splitlines() if "### " not in line)
        assert run_part(nb, ex_id, code) == [], ex_id
    variants = [v for v in MISTAKES if v.exercise in INKERNEL_IDS]
    assert len(variants) >= 20
    for v in variants:
        failed = run_part(nb, v.exercise, v.source())
        assert bool(failed) != ((v.exercise, v.name) in SEEN_ONLY_BY_THE_KATA), (v.exercise, v.name, failed)


def test_real_nbgrader_scores_the_reference_full_and_the_stubs_zero(tmp_path):
    pytest.importorskip("nbgrader")
    course_dir, class_dir = tmp_path / "course", tmp_path / "class"
    write_inkernel_course(COURSE, course_dir)
    proc = nbgrader(course_dir, "generate_assignment", INKERNEL_ASSIGNMENT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    released = course_dir / "release" / INKERNEL_ASSIGNMENT / f"{INKERNEL_NOTEBOOK}.ipynb"
    text = released.read_text()
    assert "raise NotImplementedError()" in text and "token_table[token_ids] + position_table[:seq_len]" not in text

    inkernel_students(course_dir, class_dir, {"alice": "solved", "bob": "unsolved"})
    key = answers(course_dir / "source" / INKERNEL_ASSIGNMENT / f"{INKERNEL_NOTEBOOK}.ipynb")
    for ex_id in INKERNEL_IDS:  # the kata's class folder holds the same work
        assert (class_dir / "alice" / "ch01" / f"{ex_id}.py").read_text() == key[ex_id]
        stub = (ROOT / "exercises" / "ch01" / f"{ex_id}.py").read_text()
        assert (class_dir / "bob" / "ch01" / f"{ex_id}.py").read_text() == stub

    proc = nbgrader(course_dir, "autograde", INKERNEL_ASSIGNMENT, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = scores(course_dir, INKERNEL_ASSIGNMENT)
    assert {s: row["total"] for s, row in got.items()} == {"alice": PUBLIC_POINTS, "bob": 0.0}
