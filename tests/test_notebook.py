"""`kata notebook` through the real command line: .py <-> .ipynb without losing work, and a
notebook graded exactly like the .py it holds."""

import json
import os
import re
import shutil
import time
import zipfile
from pathlib import Path

import nbformat
import pytest

from tests.conftest import ROOT, SOLUTIONS, checks_of, grade, kata

SOFTMAX = "s1_11_softmax"


@pytest.fixture(autouse=True)
def this_checkout(monkeypatch):
    """`python -m grader` run from a course copy imports this checkout's grader."""
    monkeypatch.setenv("PYTHONPATH", str(ROOT))


def later(path: Path, seconds: float = 5) -> None:
    """Make `path` look saved `seconds` after now (file times decide which form is newer)."""
    stamp = time.time() + seconds
    os.utime(path, (stamp, stamp))


def code_cells(nb) -> str:
    return "\n".join(
        c.source for c in nb.cells if c.cell_type == "code" and "kata-check" not in c.metadata.get("tags", [])
    )


def test_notebook_and_back_keep_the_students_work(tmp_course):
    ch = tmp_course / "exercises" / "ch01"
    py, ipynb = ch / f"{SOFTMAX}.py", ch / f"{SOFTMAX}.ipynb"
    shutil.copy(SOLUTIONS / "ch01" / f"{SOFTMAX}.py", py)  # the student's work, not the stub
    work = py.read_bytes()

    proc = kata("notebook", SOFTMAX, cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    assert f"wrote exercises/ch01/{SOFTMAX}.ipynb" in proc.stdout
    nb = nbformat.read(ipynb, as_version=4)
    intro, check = nb.cells[0], nb.cells[-1]
    assert intro.cell_type == "markdown" and "§1.11" in intro.source and "numerically stable softmax" in intro.source
    assert "1.11/softmax" in intro.source and "13 points" in intro.source
    assert "torch.exp(shifted)" in code_cells(nb) and "NotImplementedError" not in code_cells(nb)
    assert check.cell_type == "code" and f"-m grader check {SOFTMAX}" in check.source

    # Back again: the very same .py, so nothing is written.
    proc = kata("notebook", SOFTMAX, "--to-py", cwd=tmp_course)
    assert proc.returncode == 0 and "nothing to do" in proc.stdout, proc.stderr
    assert py.read_bytes() == work

    # The student works in the notebook: an edit, a scratch cell, a magic.
    cell = next(c for c in nb.cells if "torch.exp(shifted)" in c.source)
    cell.source = cell.source.replace("torch.exp(shifted)", "shifted.exp()")
    nb.cells.insert(-1, nbformat.v4.new_code_cell('print("scratch")', metadata={"tags": ["kata-skip"]}))
    nb.cells.insert(-1, nbformat.v4.new_code_cell("%timeit softmax(torch.randn(4))"))
    nbformat.write(nb, ipynb)
    later(ipynb)
    edited = ipynb.read_bytes()

    # .py -> notebook would lose that edit: refused, notebook untouched.
    proc = kata("notebook", SOFTMAX, cwd=tmp_course)
    assert proc.returncode == 1
    assert f"exercises/ch01/{SOFTMAX}.ipynb holds code saved after" in proc.stderr and "--to-py" in proc.stderr
    assert ipynb.read_bytes() == edited

    # notebook -> .py: the .py gets the notebook's code, the old .py goes to .kata/backups/.
    proc = kata("notebook", SOFTMAX, "--to-py", cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    code = py.read_text()
    assert "shifted.exp()" in code and "scratch" not in code and "# %timeit softmax" in code
    backup = tmp_course / proc.stdout.split("kept in ")[1].split()[0]
    assert backup.is_relative_to(tmp_course / ".kata" / "backups") and backup.read_bytes() == work

    # Now the .py is edited last: --to-py refuses; `kata notebook` replaces the notebook, keeping it.
    py.write_text(code.replace("shifted.exp()", "torch.exp(shifted)"))
    later(py, 10)
    proc = kata("notebook", SOFTMAX, "--to-py", cwd=tmp_course)
    assert proc.returncode == 1 and f"exercises/ch01/{SOFTMAX}.py holds code saved after" in proc.stderr
    assert "torch.exp(shifted)" in py.read_text()
    proc = kata("notebook", SOFTMAX, cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    backup = tmp_course / proc.stdout.split("kept in ")[1].split()[0]
    assert backup.read_bytes() == edited and backup.suffix == ".ipynb"
    assert "torch.exp(shifted)" in code_cells(nbformat.read(ipynb, as_version=4))


def test_every_exercise_survives_the_round_trip(tmp_course):
    ch = tmp_course / "exercises" / "ch01"
    before = {p.name: p.read_bytes() for p in ch.glob("*.py")}
    proc = kata("notebook", "--all", cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    assert len(list(ch.glob("*.ipynb"))) == len(before) == 38
    proc = kata("notebook", "--all", "--to-py", cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("nothing to do") == 38
    assert {p.name: p.read_bytes() for p in ch.glob("*.py")} == before
    assert not (tmp_course / ".kata" / "backups").exists()


def test_unreadable_notebook_is_named_and_kept(tmp_course):
    ch = tmp_course / "exercises" / "ch01"
    bad = ch / "s1_12_context.ipynb"
    bad.write_text('{"cells": [\n  {"cell_type": "code", "source": "x = 1"\n')  # cut off mid-save
    py_before = (ch / "s1_12_context.py").read_bytes()

    proc = kata("notebook", "s1_12_context", "--to-py", cwd=tmp_course)
    assert proc.returncode == 2
    assert "exercises/ch01/s1_12_context.ipynb: not a readable notebook: invalid JSON at line 3" in proc.stderr
    assert (ch / "s1_12_context.py").read_bytes() == py_before

    proc = kata("notebook", "s1_12_context", cwd=tmp_course)
    assert proc.returncode == 2 and "--force" in proc.stderr and "s1_12_context.ipynb" in proc.stderr
    assert bad.read_text().startswith('{"cells": [')

    proc = kata("notebook", "s1_12_context", "--force", cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    backup = tmp_course / proc.stdout.split("kept in ")[1].split()[0]
    assert backup.read_text().startswith('{"cells": [')
    nbformat.read(bad, as_version=4)  # a real notebook now

    proc = kata("notebook", cwd=tmp_course)
    assert proc.returncode == 2 and "--all" in proc.stderr
    proc = kata("notebook", "s1_11_sofmax", cwd=tmp_course)
    assert proc.returncode == 2 and "Did you mean s1_11_softmax" in proc.stderr


GRADED = ["s1_09_input_embeddings", "s1_10_qkv", "s1_11_softmax", "s1_12_context", "s1_13_causal_mask"]


def test_notebook_submission_graded_like_the_py(tmp_course, tmp_path):
    """Solved notebooks score what the solved .py files score; an unreadable notebook fails only its
    own exercise, with a message naming it; when both forms differ, the one saved last counts."""
    ch = tmp_course / "exercises" / "ch01"
    assert kata("notebook", "s1_09_input_embeddings", cwd=tmp_course).returncode == 0  # of the stub
    for ex in GRADED:
        shutil.copy(SOLUTIONS / "ch01" / f"{ex}.py", ch / f"{ex}.py")
    assert kata("notebook", *GRADED[1:], cwd=tmp_course).returncode == 0
    # The check cell's shell line must not reach the graded code: add a magic and a shell line too.
    nb = nbformat.read(ch / "s1_13_causal_mask.ipynb", as_version=4)
    nb.cells.insert(-1, nbformat.v4.new_code_cell("!ls\n%time causal_mask(3)"))
    nbformat.write(nb, ch / "s1_13_causal_mask.ipynb")

    by_py = tmp_path / "py"
    shutil.copytree(SOLUTIONS, by_py)
    by_nb = tmp_path / "nb" / "ch01"
    shutil.copytree(SOLUTIONS / "ch01", by_nb)
    for ex in ("s1_11_softmax", "s1_13_causal_mask"):  # notebook only
        (by_nb / f"{ex}.py").unlink()
        shutil.copy(ch / f"{ex}.ipynb", by_nb)
    (by_nb / "s1_12_context.py").unlink()  # an unreadable notebook only
    (by_nb / "s1_12_context.ipynb").write_text("{ not json")
    stub = (ROOT / "exercises" / "ch01" / "s1_10_qkv.py").read_text()
    (by_nb / "s1_10_qkv.py").write_text(stub)  # the stub, saved before the solved notebook
    shutil.copy(ch / "s1_10_qkv.ipynb", by_nb)
    later(by_nb / "s1_10_qkv.ipynb")
    shutil.copy(ch / "s1_09_input_embeddings.ipynb", by_nb)  # the stub's notebook, saved before the solved .py
    later(by_nb / "s1_09_input_embeddings.py")

    args = [a for ex in GRADED for a in ("-e", ex)]
    reference = grade(by_py, *args)
    assert reference["score"] == reference["max_score"] > 0
    as_zip = tmp_path / "nb.zip"
    with zipfile.ZipFile(as_zip, "w") as zf:
        for p in sorted(by_nb.iterdir()):
            zf.write(p, f"exercises/ch01/{p.name}")  # keeps the file times

    for report in (grade(by_nb.parent, *args), grade(as_zip, *args)):
        for ex in GRADED:
            if ex == "s1_12_context":
                continue
            ours = {c["name"]: (c["status"], c["score"]) for c in checks_of(report, ex)}
            assert ours == {c["name"]: (c["status"], c["score"]) for c in checks_of(reference, ex)}, ex
        broken = checks_of(report, "s1_12_context")
        assert broken and all(c["status"] == "failed" and c["score"] == 0 for c in broken)
        assert (
            "ch01/s1_12_context.ipynb: not a readable notebook: invalid JSON at line 1, column 3"
            in broken[0]["message"]
        )
        notes = "\n".join(report["notes"])
        assert "ch01/s1_10_qkv.ipynb and ch01/s1_10_qkv.py hold different code: graded the notebook" in notes
        assert (
            "ch01/s1_09_input_embeddings.ipynb and ch01/s1_09_input_embeddings.py hold different code: graded the .py"
            in notes
        )
        assert "ch01/s1_11_softmax.ipynb: graded its code cells" in notes
        assert report["score"] == reference["score"] - sum(c["max_score"] for c in broken)


@pytest.mark.slow
def test_check_cell_runs_in_a_real_kernel(tmp_course, monkeypatch):
    """The notebook as Jupyter runs it: the student's cells, then the check cell's output."""
    nbclient = pytest.importorskip("nbclient")
    ch = tmp_course / "exercises" / "ch01"
    shutil.copy(SOLUTIONS / "ch01" / f"{SOFTMAX}.py", ch / f"{SOFTMAX}.py")
    assert kata("notebook", SOFTMAX, cwd=tmp_course).returncode == 0
    nb = nbformat.read(ch / f"{SOFTMAX}.ipynb", as_version=4)
    nb.cells.insert(-1, nbformat.v4.new_code_cell("print(softmax(torch.tensor([1.0, 2.0, 3.0, 6.0])))"))
    monkeypatch.setenv("KATA_LANG", "en")
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(ch)}}).execute()

    def out(cell) -> str:  # Jupyter shows the check's colours (ANSI codes); the text is what we read
        return re.sub(r"\x1b\[[0-9;]*m", "", "".join(o.get("text", "") for o in cell.outputs))

    assert "tensor([0.0063, 0.0170, 0.0463, 0.9304])" in out(nb.cells[-2])  # the student's code ran
    assert "4 of 4 public checks pass · 8/8 points" in out(nb.cells[-1]) and "✔" in out(nb.cells[-1])
    assert json.loads(nbformat.writes(nb))["cells"][-1]["outputs"]


def test_a_student_who_works_only_in_notebooks_is_seen_working(tmp_course):
    """`kata list` (and `kata watch`, which reads the same status) counts a notebook as the
    student's work: alone, or saved after its .py, it is what grading reads."""
    ch = tmp_course / "exercises" / "ch01"
    py, ipynb = ch / f"{SOFTMAX}.py", ch / f"{SOFTMAX}.ipynb"
    assert kata("notebook", SOFTMAX, cwd=tmp_course).returncode == 0  # from the untouched stub

    def status():
        proc = kata("list", "--json", cwd=tmp_course)
        assert proc.returncode == 0, proc.stderr
        return {e["id"]: e for e in json.loads(proc.stdout)["exercises"]}[SOFTMAX]

    py.unlink()  # the notebook alone, as a notebook-only student has it
    assert status()["status"] == "not_started"
    nb = nbformat.read(ipynb, as_version=4)
    solution = (SOLUTIONS / "ch01" / f"{SOFTMAX}.py").read_text()
    nb.cells = [nb.cells[0], nbformat.v4.new_code_cell(solution), nb.cells[-1]]  # intro, the work, the check cell
    nbformat.write(nb, ipynb)
    got = status()
    assert got["status"] == "passing" and got["public_points_passed"] == got["public_points"], got

    shutil.copy(tmp_course / "exercises" / "ch01" / "s1_11_matmul.py", py)  # an older .py of other code
    os.utime(py, (time.time() - 60, time.time() - 60))
    assert status()["status"] == "passing"  # the notebook was saved last: it is what counts
