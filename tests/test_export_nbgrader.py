"""`kata export nbgrader`: the course directory it writes, and the real nbgrader grading it —
`nbgrader generate_assignment`, then `nbgrader autograde` of solved, unsolved and partly
wrong submissions (one with a test cell edited), scores read from nbgrader's gradebook."""
import json
import re

import nbformat
import pytest

from grader import course as course_mod
from grader.stubs import blocks
from tests.conftest import ROOT, SOLUTIONS, grade
from tests.nbgrader_course import answers, max_scores, nbgrader, scores, solve, submit

SOFTMAX, MATMUL, MASK = "s1_11_softmax", "s1_11_matmul", "s1_13_causal_mask"
COURSE = course_mod.load(ROOT)


@pytest.fixture(autouse=True)
def this_checkout(monkeypatch):
    """`python -m grader` (the grading the test cells start) imports this checkout."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("KATA_LANG", "en")


@pytest.fixture
def export(capsys):
    """`kata export nbgrader ARGS` through the command line's own parser, in this process (a new
    `kata` process per call would re-import torch each time): (exit code, stdout, stderr)."""
    from grader.cli import main

    def run(*args: str):
        try:
            code = main(["export", "nbgrader", *args])
        except SystemExit as e:
            code = e.code
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


def nb_cells(path):
    nb = nbformat.read(path, as_version=4)
    return [(c, c.metadata.get("nbgrader", {})) for c in nb.cells]


def test_export_writes_source_notebooks_with_solution_regions_and_a_test_cell_per_check(tmp_path, export):
    out = tmp_path / "course"
    code, stdout, stderr = export(str(out), "-e", SOFTMAX, "-e", MASK)
    assert code == 0, stderr
    assert "2 assignment(s): s1_11, s1_13" in stdout and "nbgrader generate_assignment s1_11" in stdout

    config = (out / "nbgrader_config.py").read_text()
    assert f"os.environ.setdefault('KATA_COURSE_ROOT', {str(ROOT)!r})" in config
    timeout = int(re.search(r"c\.Execute\.timeout = (\d+)", config).group(1))
    assert timeout >= 120  # above nbgrader's 30 s default: the first test cell grades a whole exercise

    for ex_id, assignment in ((SOFTMAX, "s1_11"), (MASK, "s1_13")):
        ex = COURSE.get(ex_id)
        cells = nb_cells(out / "source" / assignment / f"{ex_id}.ipynb")
        intro, meta = cells[0]
        assert meta["locked"] and f"§{ex.section}" in intro.source and f"{ex.points:g} points" in intro.source

        # One solution region per `# BEGIN SOLUTION` block, in answer cells nbgrader knows.
        solution = (SOLUTIONS / ex.file).read_text()
        answer_cells = [c for c, m in cells if m.get("solution")]
        regions = sum(c.source.count("### BEGIN SOLUTION") for c in answer_cells)
        assert regions == len(blocks(solution)) == sum(c.source.count("### END SOLUTION") for c in answer_cells)
        assert all(m["schema_version"] == 3 and not m["grade"] and not m["locked"] for c, m in cells if m.get("solution"))
        assert not any("BEGIN SOLUTION" in c.source for c, m in cells if not m.get("solution"))
        first = blocks(solution)[0]
        assert f"# {first.text}" in answer_cells[0].source  # the block's text stays, as a comment above the region

        # One locked test cell per check, worth the check's points: together the exercise's points.
        tests = [(c, m) for c, m in cells if m.get("grade")]
        assert [m["grade_id"] for c, m in tests] == [c.name for c in ex.checks]
        assert [m["points"] for c, m in tests] == [c.points for c in ex.checks]
        assert sum(m["points"] for c, m in tests) == ex.points
        assert all(m["locked"] and not m["solution"] and "kata-check" in c.metadata["tags"] for c, m in tests)
        assert all(f"verdict({ex_id!r}, {m['grade_id']!r})" in c.source and "assert passed" in c.source for c, m in tests)
        ids = [m["grade_id"] for c, m in cells if m]
        assert len(ids) == len(set(ids))

    # Again: nothing to do. An instructor's edit is kept unless --force, which backs it up first.
    code, stdout, stderr = export(str(out), "-e", SOFTMAX, "-e", MASK)
    assert code == 0 and "3 file(s) already up to date" in stdout, stderr
    edited = out / "source" / "s1_11" / f"{SOFTMAX}.ipynb"
    edited.write_text(edited.read_text().replace("Exercise `", "My course: exercise `"))
    mine = edited.read_text()
    code, stdout, stderr = export(str(out), "-e", SOFTMAX, "-e", MASK)
    assert code == 2 and str(edited) in stderr and "--force" in stderr
    assert edited.read_text() == mine
    code, stdout, stderr = export(str(out), "-e", SOFTMAX, "-e", MASK, "--force")
    assert code == 0 and "the files replaced are in" in stdout, stderr
    assert "My course" not in edited.read_text()
    backups = list((out / ".kata-backups").glob(f"*/source/s1_11/{SOFTMAX}.ipynb"))
    assert len(backups) == 1 and backups[0].read_text() == mine

    # One assignment per exercise on request; bad input named.
    code, stdout, stderr = export(str(tmp_path / "by-ex"), "-e", SOFTMAX, "--by", "exercise")
    assert code == 0 and (tmp_path / "by-ex" / "source" / SOFTMAX / f"{SOFTMAX}.ipynb").is_file()
    code, stdout, stderr = export(str(tmp_path / "x"), "-e", "softmaxx")
    assert code == 2 and "s1_11_softmax" in stderr and not (tmp_path / "x").exists()
    (tmp_path / "file").write_text("")
    code, stdout, stderr = export(str(tmp_path / "file"), "-e", SOFTMAX)
    assert code == 2 and "is not a folder" in stderr

    # The student-facing text in Chinese on request (`kata --lang zh export nbgrader ...`).
    from grader.cli import main
    assert main(["--lang", "zh", "export", "nbgrader", str(tmp_path / "zh"), "-e", SOFTMAX]) == 0
    cells = nb_cells(tmp_path / "zh" / "source" / "s1_11" / f"{SOFTMAX}.ipynb")
    assert "练习 `s1_11_softmax` · 12 分" in cells[0][0].source and "检查" in cells[-1][0].source


NAIVE_SOFTMAX = "    e = torch.exp(x)\n    return e / e.sum(dim=dim, keepdim=True)"  # overflows on large inputs


@pytest.mark.slow
def test_nbgrader_autograde_gives_the_kata_scores(tmp_path, export):
    pytest.importorskip("nbgrader", reason="nbgrader is an extra: .venv/bin/pip install -e '.[nbgrader]' (setup.sh does)")
    course = tmp_path / "course"
    assert export(str(course), "-e", SOFTMAX, "-e", MATMUL)[0] == 0

    proc = nbgrader(course, "generate_assignment", "s1_11")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    release, source = course / "release" / "s1_11", course / "source" / "s1_11"
    released = (release / f"{SOFTMAX}.ipynb").read_text()
    assert "BEGIN SOLUTION" not in released and "x.amax(" not in released and "raise NotImplementedError()" in released

    key = {n: answers(source / f"{n}.ipynb") for n in (SOFTMAX, MATMUL)}
    submit(course, "solved", "s1_11", {n: solve(release / f"{n}.ipynb", key[n]) for n in key})
    submit(course, "unsolved", "s1_11", {n: solve(release / f"{n}.ipynb", {}) for n in key})
    # A softmax that overflows on large inputs, whose author also edited the test cell of the
    # check it fails into `pass` (nbgrader restores test cells); no matmul handed in.
    naive = {**key[SOFTMAX], "softmax": re.sub(r"(?s)    shifted =.*", NAIVE_SOFTMAX, key[SOFTMAX]["softmax"])}
    assert "torch.exp(x)" in naive["softmax"]
    partial_nb = solve(release / f"{SOFTMAX}.ipynb", naive)
    edited = [c for c in partial_nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_large_inputs_stable"]
    assert len(edited) == 1
    edited[0].source = "pass"
    partial = submit(course, "partial", "s1_11", {SOFTMAX: partial_nb})

    proc = nbgrader(course, "autograde", "s1_11")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got, full = scores(course, "s1_11"), max_scores(course, "s1_11")
    assert full == {SOFTMAX: 12, MATMUL: 5, "total": 17}
    assert got["solved"] == full
    assert got["unsolved"] == {SOFTMAX: 0, MATMUL: 0, "total": 0}

    # The partial softmax scores in nbgrader what `kata grade` gives the same notebook.
    kata_sub = tmp_path / "partial-kata" / "ch01"
    kata_sub.mkdir(parents=True)
    (kata_sub / f"{SOFTMAX}.ipynb").write_bytes((partial / f"{SOFTMAX}.ipynb").read_bytes())
    ours = grade(kata_sub.parent, "-e", SOFTMAX)
    failed = {c["name"] for c in ours["checks"] if c["status"] == "failed"}
    assert "test_large_inputs_stable" in failed and 0 < ours["score"] < 12
    assert got["partial"] == {SOFTMAX: ours["score"], MATMUL: 0, "total": ours["score"]}

    # The feedback a student reads: the grader's message in each failing cell (the edited one
    # restored), the verdict in the passing ones.
    graded = nbformat.read(course / "autograded" / "partial" / "s1_11" / f"{SOFTMAX}.ipynb", as_version=4)
    errors = {c.metadata["nbgrader"]["grade_id"]: o for c in graded.cells for o in c.get("outputs", [])
              if o.output_type == "error"}
    assert set(errors) == failed
    assert all(e.ename == "AssertionError" and e.evalue.startswith("✘ ") for e in errors.values())
    assert "large_inputs_stable: 0/2" in errors["test_large_inputs_stable"].evalue


def test_a_test_cell_that_cannot_grade_fails_and_never_grades_the_test_cells(tmp_path, monkeypatch, export):
    from grader import nbgrader_cell

    assert export(str(tmp_path / "course"), "-e", SOFTMAX)[0] == 0
    source = tmp_path / "course" / "source" / "s1_11" / f"{SOFTMAX}.ipynb"
    monkeypatch.chdir(tmp_path)
    with pytest.raises(nbgrader_cell.GradingError, match=f"{SOFTMAX}.ipynb is not in {tmp_path}"):
        nbgrader_cell.verdict(SOFTMAX, "test_book_softmax_examples")
    (tmp_path / f"{SOFTMAX}.ipynb").write_bytes(source.read_bytes())
    monkeypatch.setenv("KATA_COURSE_ROOT", str(tmp_path))
    with pytest.raises(nbgrader_cell.GradingError, match=f"no kata course at {tmp_path}"):
        nbgrader_cell.verdict(SOFTMAX, "test_book_softmax_examples")

    # What the grader receives: the student's cells only, even from a notebook whose test cells
    # lost their kata tags.
    nb = nbformat.read(source, as_version=4)
    for cell in nb.cells:
        cell.metadata.pop("tags", None)
    kept = json.loads(nbgrader_cell.without_test_cells(nbformat.writes(nb).encode()))["cells"]
    assert not any("verdict(" in "".join(c["source"]) for c in kept)
    assert sum(c["metadata"].get("nbgrader", {}).get("solution", False) for c in kept) == 2
    assert nbgrader_cell.without_test_cells(b"{not json") == b"{not json"  # the grader names the fault
