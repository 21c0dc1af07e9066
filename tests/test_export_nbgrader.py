"""`kata export nbgrader`: the course directory it writes, and the real nbgrader grading it —
`nbgrader generate_assignment`, then `nbgrader autograde` of solved, unsolved and partly
wrong submissions (one with a test cell edited), scores read from nbgrader's gradebook."""

import copy
import json
import re
import shutil

import nbformat
import pytest

from grader.course import manifest as course_mod
from grader.instructor.exports.nbgrader_cell import check_cell_ids
from grader.authoring.stubs import blocks
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
        assert all(
            m["schema_version"] == 3 and not m["grade"] and not m["locked"] for c, m in cells if m.get("solution")
        )
        assert not any("BEGIN SOLUTION" in c.source for c, m in cells if not m.get("solution"))
        first = blocks(solution)[0]
        assert f"# {first.text}" in answer_cells[0].source  # the block's text stays, as a comment above the region

        # One locked test cell per check, worth the check's points: together the exercise's points.
        tests = [(c, m) for c, m in cells if m.get("grade")]
        # A hidden check's cell is named by its rank, its code between nbgrader's hidden-test marks.
        ids = check_cell_ids(ex)
        assert [m["grade_id"] for c, m in tests] == list(ids) and list(ids.values()) == [c.name for c in ex.checks]
        assert [m["points"] for c, m in tests] == [c.points for c in ex.checks]
        assert sum(m["points"] for c, m in tests) == ex.points
        assert all(m["locked"] and not m["solution"] and "kata-check" in c.metadata["tags"] for c, m in tests)
        assert all(
            f"verdict({ex_id!r}, {ids[m['grade_id']]!r})" in c.source and "assert passed" in c.source for c, m in tests
        )
        for (c, m), check in zip(tests, ex.checks):
            assert (
                m["grade_id"] == f"kata_hidden_{sum(x.hidden for x in ex.checks[: ex.checks.index(check) + 1])}"
                if check.hidden
                else m["grade_id"] == check.name
            )
            head = c.source.split("### BEGIN HIDDEN TESTS")[0]
            assert (
                (
                    "### BEGIN HIDDEN TESTS" in c.source
                    and check.name not in head
                    and check.name.removeprefix("test_") not in head
                )
                if check.hidden
                else "HIDDEN" not in c.source
            )
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
    assert "练习 `s1_11_softmax` · 13 分" in cells[0][0].source and "检查" in cells[-1][0].source


NAIVE_SOFTMAX = "    e = torch.exp(x)\n    return e / e.sum(dim=dim, keepdim=True)"  # overflows on large inputs


@pytest.mark.slow
def test_nbgrader_autograde_gives_the_kata_scores(tmp_path, export):
    pytest.importorskip(
        "nbgrader", reason="nbgrader is an extra: .venv/bin/pip install -e '.[nbgrader]' (setup.sh does)"
    )
    course = tmp_path / "course"
    assert export(str(course), "-e", SOFTMAX, "-e", MATMUL)[0] == 0

    proc = nbgrader(course, "generate_assignment", "s1_11")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    release, source = course / "release" / "s1_11", course / "source" / "s1_11"
    released = (release / f"{SOFTMAX}.ipynb").read_text()
    assert "BEGIN SOLUTION" not in released and "x.amax(" not in released and "raise NotImplementedError()" in released
    for n in (SOFTMAX, MATMUL):  # the notebooks students are given name no hidden check
        text = (release / f"{n}.ipynb").read_text()
        hidden = [c.name for c in COURSE.get(n).checks if c.hidden]
        assert hidden and "kata_hidden_1" in text
        assert not [h for h in hidden if h.removeprefix("test_") in text], hidden

    key = {n: answers(source / f"{n}.ipynb") for n in (SOFTMAX, MATMUL)}
    submit(course, "solved", "s1_11", {n: solve(release / f"{n}.ipynb", key[n]) for n in key})
    submit(course, "unsolved", "s1_11", {n: solve(release / f"{n}.ipynb", {}) for n in key})
    # A softmax that overflows on large inputs, whose author also edited the test cell of the
    # check it fails into `pass` (nbgrader restores test cells); no matmul handed in.
    naive = {**key[SOFTMAX], "softmax": re.sub(r"(?s)    shifted =.*", NAIVE_SOFTMAX, key[SOFTMAX]["softmax"])}
    assert "torch.exp(x)" in naive["softmax"]
    partial_nb = solve(release / f"{SOFTMAX}.ipynb", naive)
    edited = [
        c for c in partial_nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "test_large_inputs_stable"
    ]
    assert len(edited) == 1
    edited[0].source = "pass"
    partial = submit(course, "partial", "s1_11", {SOFTMAX: partial_nb})

    proc = nbgrader(course, "autograde", "s1_11")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    got, full = scores(course, "s1_11"), max_scores(course, "s1_11")
    assert full == {SOFTMAX: 13, MATMUL: 5, "total": 18}
    assert got["solved"] == full
    assert got["unsolved"] == {SOFTMAX: 0, MATMUL: 0, "total": 0}

    # The partial softmax scores in nbgrader what `kata grade` gives the same notebook.
    kata_sub = tmp_path / "partial-kata" / "ch01"
    kata_sub.mkdir(parents=True)
    (kata_sub / f"{SOFTMAX}.ipynb").write_bytes((partial / f"{SOFTMAX}.ipynb").read_bytes())
    ours = grade(kata_sub.parent, "-e", SOFTMAX)
    failed = {c["name"] for c in ours["checks"] if c["status"] == "failed"}
    assert "test_large_inputs_stable" in failed and 0 < ours["score"] < 13
    assert got["partial"] == {SOFTMAX: ours["score"], MATMUL: 0, "total": ours["score"]}

    # The feedback a student reads: the grader's message in each failing cell (the edited one
    # restored), the verdict in the passing ones.
    graded = nbformat.read(course / "autograded" / "partial" / "s1_11" / f"{SOFTMAX}.ipynb", as_version=4)
    ids = check_cell_ids(COURSE.get(SOFTMAX))
    errors = {
        ids[c.metadata["nbgrader"]["grade_id"]]: o
        for c in graded.cells
        for o in c.get("outputs", [])
        if o.output_type == "error"
    }
    assert set(errors) == failed
    assert all(e.ename == "AssertionError" and e.evalue.startswith("✘ ") for e in errors.values())
    assert "large_inputs_stable: 0/2" in errors["test_large_inputs_stable"].evalue


def test_a_test_cell_that_cannot_grade_fails_and_never_grades_the_test_cells(tmp_path, monkeypatch, export):
    from grader.instructor.exports import nbgrader_cell

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

    # Run by nbgrader's own Execute (a course whose nbgrader_config.py did not load), the cell
    # refuses: a kernel's say-so never scores.
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    with pytest.raises(nbgrader_cell.GradingError, match="nbgrader_config.py .* did not load"):
        nbgrader_cell.verdict(SOFTMAX, "test_book_softmax_examples")


def test_autograde_runs_no_cell_and_scores_each_test_cell_by_the_kata_s_verdict(tmp_path, monkeypatch, export):
    """The exported configuration puts the kata's grading where nbgrader's Execute was, and the
    outputs it writes make nbgrader's own scoring give the kata's points, cell by cell."""
    pytest.importorskip("nbgrader", reason="nbgrader is an extra")
    from nbgrader.converters import Autograde
    from nbgrader.utils import determine_grade
    from traitlets.config.loader import PyFileConfigLoader

    from grader.instructor.exports import nbgrader_autograde, nbgrader_cell

    assert export(str(tmp_path / "course"), "-e", SOFTMAX)[0] == 0
    monkeypatch.setenv("KATA_COURSE_ROOT", str(ROOT))  # what the file sets by default, restored after
    config = PyFileConfigLoader("nbgrader_config.py", path=str(tmp_path / "course")).load_config()
    default = [f"{p.__module__.rsplit('.', 1)[0]}.{p.__name__}" for p in Autograde().autograde_preprocessors]
    ours = Autograde(config=config).autograde_preprocessors
    assert "nbgrader.preprocessors.Execute" in default and not any("Execute" in str(p) for p in ours)
    assert ours == [
        "grader.instructor.exports.nbgrader_autograde.KataGrade" if p.endswith(".Execute") else p for p in default
    ]

    nb = nbformat.read(tmp_path / "course" / "source" / "s1_11" / f"{SOFTMAX}.ipynb", as_version=4)
    for cell in nb.cells:  # whatever was handed in as outputs is replaced
        if cell.cell_type == "code":
            cell.outputs = [nbformat.v4.new_output("execute_result", {"text/plain": "100"}, execution_count=1)]
    extra = nbformat.v4.new_code_cell(
        "pass",
        metadata={
            "nbgrader": {"grade": True, "solution": False, "locked": False, "grade_id": "my_own_test", "points": 5}
        },
    )
    nb.cells.append(extra)
    checks = COURSE.get(SOFTMAX).checks
    failing = {checks[0].name: "wrong values", checks[-1].name: ""}
    seen = []

    def fake_grade(ex_id, data, places=()):
        seen.append((ex_id, data))
        rows = [
            {
                "exercise": ex_id,
                "name": c.name,
                "visibility": "hidden" if c.hidden else "public",
                "status": "failed" if c.name in failing else "passed",
                "message": failing.get(c.name, ""),
                "score": 0.0 if c.name in failing else c.points,
                "max_score": c.points,
            }
            for c in checks
        ]
        return {"score": sum(r["score"] for r in rows), "max_score": 13.0, "checks": rows}

    monkeypatch.setattr(nbgrader_autograde, "grade_notebook", fake_grade)
    resources = {"nbgrader": {"notebook": SOFTMAX}}
    nb, _ = nbgrader_autograde.KataGrade().preprocess(nb, resources)
    assert [ex_id for ex_id, _ in seen] == [SOFTMAX]
    assert "verdict(" not in json.loads(nbgrader_cell.without_test_cells(seen[0][1]))["cells"].__repr__()
    ids = {**check_cell_ids(COURSE.get(SOFTMAX)), "my_own_test": "my_own_test"}
    points = {
        ids[c.metadata["nbgrader"]["grade_id"]]: determine_grade(c)[0]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade")
    }
    assert points == {**{c.name: 0 if c.name in failing else c.points for c in checks}, "my_own_test": 0}
    assert all(not c.outputs for c in nb.cells if c.cell_type == "code" and "nbgrader" not in c.metadata)
    errors = {
        ids[c.metadata["nbgrader"]["grade_id"]]: c.outputs[-1]
        for c in nb.cells
        if c.metadata.get("nbgrader", {}).get("grade") and c.outputs[-1].output_type == "error"
    }
    assert "wrong values" in errors[checks[0].name].evalue and "my_own_test" in errors["my_own_test"].evalue

    # A notebook the kata cannot grade is no score at all: nbgrader records the failure.
    monkeypatch.setattr(nbgrader_autograde, "grade_notebook", nbgrader_cell.grade_notebook)
    with pytest.raises(nbgrader_cell.GradingError, match="cannot grade not_an_exercise"):
        nbgrader_autograde.KataGrade().preprocess(nb, {"nbgrader": {"notebook": "not_an_exercise"}})


# Code a student can put in a notebook to fake nbgrader's verdict from the kernel, each in a cell
# of its own after the (unsolved) answer cells: none of it solves anything, so each notebook must
# score in nbgrader exactly what `kata grade` gives it: 0.
FAKE = 'lambda ex, check: (True, "")'
KERNEL_ATTACKS = {
    "patched_module": f"try:\n    import grader.instructor.exports.nbgrader_cell as c\n    c.verdict = {FAKE}\nexcept ImportError:\n    pass",
    "import_hook": (
        "import builtins, types\n_real = builtins.__import__\n"
        f"_fake = types.ModuleType('grader.instructor.exports.nbgrader_cell')\n_fake.verdict = {FAKE}\n"
        "def _import(name, *a, **k):\n"
        "    return _fake if name.startswith('grader') else _real(name, *a, **k)\n"
        "builtins.__import__ = _import"
    ),
    "exception_handler": "get_ipython().set_custom_exc((BaseException,), lambda *a, **k: None)",
    "sys_exit": "import sys\nsys.exit()",
    "killed_kernel": "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)",
    "os_exit": "import os\nos._exit(0)",
    # The notebook on disk rewritten with the reference answer before the test cells read it.
    "rewritten_notebook": (
        "import json, pathlib\np = pathlib.Path('s1_11_softmax.ipynb')\ntry:\n"
        "    nb = json.loads(p.read_text())\n"
        "    for cell in nb['cells']:\n"
        "        if cell['metadata'].get('nbgrader', {}).get('grade_id') == 'softmax':\n"
        "            cell['source'] = ANSWER\n"
        "    p.write_text(json.dumps(nb))\nexcept OSError:\n    pass"
    ),
    "fake_outputs": "",  # every test cell handed in with a passing output and a full-marks value
}


# Issue 37: a notebook's nbgrader metadata is the student's to write. A grade_id held twice, a
# test cell's id on an answer cell, an id the gradebook does not know, {} or another schema
# version: nbgrader's DeduplicateIds kept the last cell of an id and left the others' metadata {},
# which stopped the whole `nbgrader autograde` run (every later student ungraded), and a test
# cell handed in as an answer failed its notebook on a checksum. Each is graded as the kata grades
# the code: the unsolved notebook 0, the solved 13.
def _tamper(nb, kind: str):
    ti = [
        i
        for i, c in enumerate(nb.cells)
        if c.metadata.get("nbgrader", {}).get("grade") and not c.metadata["nbgrader"].get("solution")
    ]
    first = nb.cells[ti[0]]
    meta = copy.deepcopy(first.metadata["nbgrader"])
    cell = nbformat.v4.new_code_cell("pass")
    cell.metadata["nbgrader"] = meta
    if kind == "id_on_an_answer_after":
        meta.update(solution=True, locked=False)
        nb.cells.insert(ti[0] + 1, cell)
    elif kind == "id_on_an_answer_before":
        meta.update(solution=True, locked=False)
        nb.cells.insert(ti[0], cell)
    elif kind == "test_cell_copied":
        nb.cells.insert(ti[0] + 1, copy.deepcopy(first))
    elif kind == "test_cell_replaced":
        meta.update(solution=True, locked=False)
        nb.cells[ti[0]] = cell
    elif kind == "unknown_id":
        meta.update(grade_id="kata_full_marks", points=100)
        nb.cells.insert(ti[0] + 1, cell)
    elif kind == "empty_metadata":
        cell.metadata["nbgrader"] = {}
        nb.cells.insert(ti[0] + 1, cell)
    elif kind == "newer_schema":
        meta.update(solution=True, locked=False, schema_version=99)
        nb.cells.insert(ti[0] + 1, cell)
    elif kind == "test_cells_deleted":  # the cells say autograding runs none of them
        nb.cells = [c for i, c in enumerate(nb.cells) if i not in ti]
    elif kind == "test_cells_metadata_taken_off":
        for i in ti:
            nb.cells[i].metadata = {}
    return nb


METADATA_ATTACKS = [
    "id_on_an_answer_after",
    "id_on_an_answer_before",
    "test_cell_copied",
    "test_cell_replaced",
    "unknown_id",
    "empty_metadata",
    "newer_schema",
    "test_cells_deleted",
    "test_cells_metadata_taken_off",
]
# an honest copy of a test cell loses nothing; nor does a solved notebook whose test cells were deleted
# or stripped of their metadata (the outside attack of issue 37: 0 / 13 while the log said 13 / 13)
METADATA_SOLVED = ["id_on_an_answer_after", "test_cell_copied", "test_cells_deleted", "test_cells_metadata_taken_off"]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    """One nbgrader course, one student per attack (the softmax notebook only) and two controls
    (solved; half solved with the module patched), one autograde: (autograde's process,
    nbgrader's scores, the kata's score of each student's notebook)."""
    pytest.importorskip(
        "nbgrader", reason="nbgrader is an extra: .venv/bin/pip install -e '.[nbgrader]' (setup.sh does)"
    )
    from grader.instructor.exports.export_nbgrader import export

    work = tmp_path_factory.mktemp("attacks")
    course = work / "course"
    export(COURSE, [COURSE.get(SOFTMAX)], course)
    proc = nbgrader(course, "generate_assignment", "s1_11")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    release = course / "release" / "s1_11" / f"{SOFTMAX}.ipynb"
    key = answers(course / "source" / "s1_11" / f"{SOFTMAX}.ipynb")
    naive = {**key, "softmax": re.sub(r"(?s)    shifted =.*", NAIVE_SOFTMAX, key["softmax"])}
    students = {name: ({}, code) for name, code in KERNEL_ATTACKS.items()}
    students |= {"solved": (key, ""), "naive_patched": (naive, KERNEL_ATTACKS["patched_module"])}
    students |= {kind: ({}, "") for kind in METADATA_ATTACKS}
    students |= {f"{kind}_solved": (key, "") for kind in METADATA_SOLVED}
    for name, (answer, code) in students.items():
        nb = solve(release, answer)
        kind = name.removesuffix("_solved")
        if kind in METADATA_ATTACKS:
            nb = _tamper(nb, kind)
        at = max(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("solution")) + 1
        if code:
            nb.cells.insert(at, nbformat.v4.new_code_cell(code.replace("ANSWER", repr(key["softmax"]))))
        if name == "fake_outputs":
            for cell in nb.cells:
                if cell.metadata.get("nbgrader", {}).get("grade"):
                    cell.execution_count = 1
                    cell.outputs = [
                        nbformat.v4.new_output("stream", name="stdout", text="✔ passed\n"),
                        nbformat.v4.new_output("execute_result", {"text/plain": "100"}, execution_count=1),
                    ]
        folder = submit(course, name, "s1_11", {SOFTMAX: nb})
        (work / "kata" / name / "ch01").mkdir(parents=True)
        (work / "kata" / name / "ch01" / f"{SOFTMAX}.ipynb").write_bytes((folder / f"{SOFTMAX}.ipynb").read_bytes())
    proc = nbgrader(course, "autograde", "s1_11")
    got = scores(course, "s1_11")
    kata = {
        name: grade(work / "kata" / name, "-e", SOFTMAX)["score"]
        for name in students
        if name.removesuffix("_solved") not in METADATA_ATTACKS
    }
    kata |= {
        name: 13 if name.endswith("_solved") else 0
        for name in students  # as written: no new grading
        if name.removesuffix("_solved") in METADATA_ATTACKS
    }
    return proc, got, kata


@pytest.mark.slow
@pytest.mark.parametrize(
    "attack",
    [*KERNEL_ATTACKS, "naive_patched", "solved", *METADATA_ATTACKS, *(f"{kind}_solved" for kind in METADATA_SOLVED)],
)
def test_a_kernel_side_attack_scores_in_nbgrader_what_kata_grade_gives(attacked, attack):
    proc, got, kata = attacked
    if attack == "solved" or attack.endswith("_solved"):  # the controls: the kata's grading works here
        assert kata[attack] == 13
    elif attack == "naive_patched":  # the kernel-side patch is code in the softmax exercise's notebook:
        assert (
            kata[attack] == 0
        )  # it imports what a "write it yourself" exercise may not (grader/course/scan_escapes.py)
    else:
        assert kata[attack] == 0  # the attack solves nothing
    assert got.get(attack, {}).get(SOFTMAX) == kata[attack], got.get(attack)
    assert f"for student '{attack}'" not in proc.stdout + proc.stderr  # autograde failed on no notebook
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


@pytest.mark.slow
def test_a_notebook_the_kata_cannot_grade_gets_no_autograde_score_and_the_next_run_grades_it(tmp_path, export):
    """Fail closed: a grader fault (here no course where KATA_COURSE_ROOT points) is no zero
    charged to the student: autograde names it, exits non-zero, leaves the cells to review, and
    once fixed the same command grades them."""
    pytest.importorskip("nbgrader", reason="nbgrader is an extra")
    from nbgrader.api import Gradebook

    course = tmp_path / "course"
    assert export(str(course), "-e", SOFTMAX)[0] == 0
    assert nbgrader(course, "generate_assignment", "s1_11").returncode == 0
    key = answers(course / "source" / "s1_11" / f"{SOFTMAX}.ipynb")
    submit(course, "alice", "s1_11", {SOFTMAX: solve(course / "release" / "s1_11" / f"{SOFTMAX}.ipynb", key)})

    proc = nbgrader(course, "autograde", "s1_11", env={"KATA_COURSE_ROOT": str(tmp_path / "nowhere")})
    assert proc.returncode != 0 and f"no kata course at {tmp_path / 'nowhere'}" in proc.stdout + proc.stderr
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}", "transformer-kata") as gb:
        grades = [g for nb in gb.find_submission("s1_11", "alice").notebooks for g in nb.grades]
        assert grades and all(g.auto_score is None and g.needs_manual_grade for g in grades)
    assert not (course / "autograded" / "alice" / "s1_11").exists()

    proc = nbgrader(course, "autograde", "s1_11")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert scores(course, "s1_11")["alice"] == {SOFTMAX: 13, "total": 13}


BLOCK = "s1_23_encoder_block"
BLOCK_NEEDS = ("s1_23_feed_forward", "s1_23_self_attention")


@pytest.mark.slow
def test_an_exercise_that_imports_earlier_ones_is_graded_with_the_student_s_own_from_their_other_assignments(
    tmp_path, export
):
    """`--by exercise`: the encoder block imports the student's feed-forward and self-attention,
    each an assignment of its own. nbgrader autograde grades the block with the same student's
    submitted notebooks of those: full marks for a solved set; a student who never submitted the
    self-attention is told which earlier notebook was not found (and scores 0 on the block)."""
    pytest.importorskip("nbgrader", reason="nbgrader is an extra")
    course = tmp_path / "course"
    exported = [BLOCK, *BLOCK_NEEDS]
    assert export(str(course), "--by", "exercise", *[a for n in exported for a in ("-e", n)])[0] == 0
    for name in exported:
        proc = nbgrader(course, "generate_assignment", name)
        assert proc.returncode == 0, proc.stdout + proc.stderr

    def solved(name):
        return solve(course / "release" / name / f"{name}.ipynb", answers(course / "source" / name / f"{name}.ipynb"))

    for name in exported:
        submit(course, "alice", name, {name: solved(name)})
    submit(course, "bob", BLOCK, {BLOCK: solved(BLOCK)})
    submit(course, "bob", BLOCK_NEEDS[0], {BLOCK_NEEDS[0]: solved(BLOCK_NEEDS[0])})

    proc = nbgrader(course, "autograde", BLOCK)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    full = max_scores(course, BLOCK)[BLOCK]
    got = scores(course, BLOCK)
    assert full > 0 and got["alice"][BLOCK] == full
    assert got["bob"][BLOCK] == 0
    said = proc.stdout + proc.stderr
    assert (
        "s1_23_encoder_block imports the earlier exercise s1_23_self_attention: no s1_23_self_attention.ipynb" in said
    )
    graded = nbformat.read(course / "autograded" / "bob" / BLOCK / f"{BLOCK}.ipynb", as_version=4)
    outputs = "\n".join(o.get("text", "") + o.get("evalue", "") for c in graded.cells for o in c.get("outputs", []))
    assert "imports the earlier exercise s1_23_self_attention" in outputs


def test_a_submitted_notebook_that_is_a_link_is_not_graded(tmp_path, monkeypatch, export):
    """nbgrader copies submitted/ into autograded/ following links, so a student's
    `submitted/mallory/s1_11/<id>.ipynb -> ../alice/...` (or -> source/, the instructor's) reached
    the kata as a plain notebook and scored alice's points. Only a regular file is graded."""
    pytest.importorskip("nbgrader", reason="nbgrader is an extra")
    from nbgrader.utils import determine_grade
    from traitlets.config.loader import PyFileConfigLoader

    from grader.instructor.exports import nbgrader_autograde

    course = tmp_path / "course"
    assert export(str(course), "-e", SOFTMAX)[0] == 0
    monkeypatch.setenv("KATA_COURSE_ROOT", str(ROOT))
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    source = course / "source" / "s1_11" / f"{SOFTMAX}.ipynb"
    for student, link in (("alice", False), ("mallory", True)):
        folder = course / "submitted" / student / "s1_11"
        folder.mkdir(parents=True)
        if link:
            (folder / f"{SOFTMAX}.ipynb").symlink_to(source)
        else:
            shutil.copy(source, folder / f"{SOFTMAX}.ipynb")
    # the outside attack of issue 37: a link one or two folders up was followed and scored alice's 13
    (course / "submitted" / "trudy").mkdir()
    (course / "submitted" / "trudy" / "s1_11").symlink_to(course / "submitted" / "alice" / "s1_11")
    (course / "submitted" / "eve").symlink_to(course / "submitted" / "alice")
    graded = []
    monkeypatch.setattr(
        nbgrader_autograde,
        "grade_notebook",
        lambda ex_id, data, places=(): (
            graded.append(ex_id)
            or {
                "score": 13.0,
                "max_score": 13.0,
                "checks": [
                    {
                        "exercise": ex_id,
                        "name": c.name,
                        "visibility": "public",
                        "status": "passed",
                        "message": "",
                        "score": c.points,
                        "max_score": c.points,
                    }
                    for c in COURSE.get(SOFTMAX).checks
                ],
            }
        ),
    )
    scores = {}
    for student in ("alice", "mallory", "trudy", "eve"):
        nb = nbformat.read(source, as_version=4)
        pre = nbgrader_autograde.KataGrade(config=config)
        nb, _ = pre.preprocess(nb, {"nbgrader": {"notebook": SOFTMAX, "student": student, "assignment": "s1_11"}})
        cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
        scores[student] = sum(determine_grade(c)[0] for c in cells)
        if student != "alice":
            assert all("links are never followed" in c.outputs[-1].evalue for c in cells)
    assert graded == [SOFTMAX]  # no link was ever handed to the grader
    assert scores == {"alice": 13, "mallory": 0, "trudy": 0, "eve": 0}
