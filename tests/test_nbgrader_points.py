"""nbgrader shows an assignment's points as nbgrader counts them, and says nothing false about an
honest notebook (issue 26, part 6).

An assignment's checks are scaled (course.toml [[assignment]] week2: 100 points over 92 raw ones,
so s1_11_matmul's checks of 2, 2 and 1 raw points are test cells worth 2.17, 2.17 and 1.09: each
check's share in hundredths, the week's cells adding up to 100 exactly, grader/course/points.py).
The cells' texts, their outputs and the autograde log show those points to two decimals as every
report does (grader/course/points.py), never the raw `2/2` or `5 / 5`; nbgrader's metadata keeps
them as stored.

The course directory is what `kata export nbgrader -a week2` writes (export_nbgrader.plan), its
matmul notebook only, driven through the real nbgrader 0.9 (`nbgrader generate_assignment`, its
gradebook, OverwriteCells and `nbgrader autograde`) as tests/nbgrader_course.py drives it.
nbgrader.utils.compute_checksum is the oracle for what nbgrader takes for a changed cell.
"""

from __future__ import annotations

import logging
import re

import nbformat
import pytest

from grader.course import manifest as course_mod
from grader.course.commandline import select
from grader.instructor.exports.nbgrader_cell import check_cell_ids
from tests.conftest import ROOT
from tests.nbgrader_course import answers, nbgrader, scores, solve, submit

MATMUL = "s1_11_matmul"
COURSE = course_mod.load(ROOT)
WEEK2 = COURSE.assignments[1]


@pytest.fixture(autouse=True)
def this_checkout(monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("KATA_LANG", "en")
    monkeypatch.setenv("KATA_COURSE_ROOT", str(ROOT))


def week2_course(folder):
    """`kata export nbgrader FOLDER -a week2`, with only its matmul notebook: (config, notebook)."""
    from grader.instructor.exports.export_nbgrader import plan

    files, _ = plan(COURSE, select(COURSE, [], WEEK2.id), assignment=WEEK2)
    rel = f"source/{WEEK2.id}/{MATMUL}.ipynb"
    for name in ("nbgrader_config.py", rel):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(files[name], encoding="utf-8")
    return folder / "nbgrader_config.py", folder / rel


def raw_report(passed: set[str]) -> dict:
    """The kata's report of the matmul notebook (raw points, as `kata grade -e s1_11_matmul` gives)."""
    rows = [
        {
            "exercise": MATMUL,
            "name": c.name,
            "visibility": "hidden" if c.hidden else "public",
            "status": "passed" if c.name in passed else "failed",
            "message": "" if c.name in passed else "wrong",
            "score": c.points if c.name in passed else 0.0,
            "max_score": c.points,
        }
        for c in COURSE.get(MATMUL).checks
    ]
    return {"score": sum(r["score"] for r in rows), "max_score": sum(r["max_score"] for r in rows), "checks": rows}


def test_test_cells_and_the_log_show_the_assignment_s_scaled_points(tmp_path, monkeypatch, capsys):
    pytest.importorskip("nbgrader", reason="nbgrader is an extra")
    from grader.instructor.exports import nbgrader_autograde, nbgrader_cell

    _, path = week2_course(tmp_path)
    checks = COURSE.get(MATMUL).checks
    assert [c.points for c in checks] == [2.0, 2.0, 1.0] and [c.hidden for c in checks] == [False, True, False]
    public, hidden_check, shape_check = (c.name for c in checks)
    nb = nbformat.read(path, as_version=4)
    cells = [c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")]
    assert [c.metadata["nbgrader"]["points"] for c in cells] == [2.17, 2.17, 1.09]  # stored as scaled, in hundredths
    text = "\n".join(c.source for c in nb.cells)
    assert "5.43 points" in nb.cells[0].source and "2.17 point(s)" in text and "1.09 point(s)" in text
    assert "2.1739" not in text and "5.4348" not in text

    # nbgrader autograde: the kata's raw report, each cell's outcome in the cell's points
    report = raw_report({public, shape_check})
    monkeypatch.setattr(nbgrader_autograde, "grade_notebook", lambda ex_id, data, places=(): report)
    nb, _ = nbgrader_autograde.KataGrade().preprocess(nb, {"nbgrader": {"notebook": MATMUL}})
    ids = check_cell_ids(COURSE.get(MATMUL))
    shown = {
        ids[c.metadata["nbgrader"]["grade_id"]]: "\n".join(o.get("text", "") or o.get("evalue", "") for o in c.outputs)
        for c in cells
    }
    assert "The kata graded s1_11_matmul.ipynb as saved: 3.26 / 5.43 points." in shown[public]
    assert "✔ book_example_27_61: 2.17/2.17" in shown[public]
    assert "✘ random_shapes (hidden): 0/2.17" in shown[hidden_check]
    assert "✔ shape_mismatch_raises: 1.09/1.09" in shown[shape_check]
    assert not re.search(r"(?<![\d.])[0-5] ?/ ?[0-5](?![\d.])", "\n".join(shown.values()))  # no raw 2/2, 0/2, 3 / 5

    # the student's preview in their own kernel reads the notebook's cells the same way
    (tmp_path / f"{MATMUL}.ipynb").write_bytes(path.read_bytes())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(nbgrader_cell, "grade_notebook", lambda ex_id, data, places=(): dict(report))
    assert nbgrader_cell.verdict(MATMUL, public) == (True, "")
    passed, message = nbgrader_cell.verdict(MATMUL, hidden_check)
    out = capsys.readouterr().out
    assert "as saved: 3.26 / 5.43 points." in out and "✔ book_example_27_61: 2.17/2.17" in out
    assert not passed and message.startswith("✘ random_shapes (hidden): 0/2.17")


def _overwrite(cls, course, nb, logger):
    pre = cls(log=logger)
    resources = {
        "nbgrader": {"notebook": MATMUL, "assignment": WEEK2.id, "db_url": f"sqlite:///{course / 'gradebook.db'}"}
    }
    return pre.preprocess(nb, resources)[0]


def test_a_hidden_test_cell_handed_in_as_released_is_no_changed_cell(tmp_path, caplog):
    """generate_assignment saves a hidden-test cell's checksum before it removes the hidden tests:
    nbgrader's OverwriteCells then computes another checksum for every released hidden cell and
    warns "Attribute 'checksum' for cell kata_hidden_1 has changed!" (jupyter/nbgrader#1961). The
    exported configuration's OverwriteCells restores such a cell without a word, and still reports
    and undoes a real change."""
    pytest.importorskip("nbgrader", reason="nbgrader is an extra")
    from nbgrader.api import Gradebook
    from nbgrader.preprocessors import OverwriteCells
    from nbgrader.utils import compute_checksum
    from traitlets.config.loader import PyFileConfigLoader

    from grader.instructor.exports.nbgrader_autograde import KataOverwriteCells

    course = tmp_path / "course"
    week2_course(course)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    assert "grader.instructor.exports.nbgrader_autograde.KataOverwriteCells" in config.Autograde.sanitize_preprocessors
    proc = nbgrader(course, "generate_assignment", WEEK2.id)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    released = nbformat.read(course / "release" / WEEK2.id / f"{MATMUL}.ipynb", as_version=4)
    hidden = [c for c in released.cells if c.metadata.get("nbgrader", {}).get("grade_id", "").startswith("kata_hidden")]
    assert len(hidden) == 1 and all("BEGIN HIDDEN TESTS" not in c.source for c in hidden)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gb:
        stored = {
            c.metadata.nbgrader["grade_id"]: gb.find_source_cell(
                c.metadata.nbgrader["grade_id"], MATMUL, WEEK2.id
            ).checksum
            for c in hidden
        }
    # the cause, by nbgrader's own checksum: the gradebook holds the cell with its hidden tests
    assert all(compute_checksum(c) != stored[c.metadata.nbgrader["grade_id"]] for c in hidden)

    logger = logging.getLogger("kata-test-overwrite")
    with caplog.at_level(logging.WARNING, logger=logger.name):
        _overwrite(OverwriteCells, course, nbformat.from_dict(released), logger)
    assert "Attribute 'checksum' for cell kata_hidden_1 has changed!" in caplog.text  # nbgrader's own
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=logger.name):
        nb = _overwrite(KataOverwriteCells, course, nbformat.from_dict(released), logger)
    assert caplog.text == ""
    restored = {c.metadata.nbgrader["grade_id"]: c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    assert all(
        "BEGIN HIDDEN TESTS" in restored[gid].source and compute_checksum(restored[gid]) == stored[gid]
        for gid in stored
    )

    # a hidden cell the student did edit is still reported and put back
    edited = nbformat.from_dict(released)
    target = next(c for c in edited.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "kata_hidden_1")
    target.source += "\nassert True"
    with caplog.at_level(logging.WARNING, logger=logger.name):
        nb = _overwrite(KataOverwriteCells, course, edited, logger)
    assert "Attribute 'checksum' for cell kata_hidden_1 has changed!" in caplog.text
    assert "kata_hidden_2" not in caplog.text
    back = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "kata_hidden_1")
    assert compute_checksum(back) == stored["kata_hidden_1"]


@pytest.mark.slow
def test_nbgrader_autograde_of_an_honest_notebook_logs_the_scaled_points_and_no_warning(tmp_path):
    pytest.importorskip("nbgrader", reason="nbgrader is an extra")
    course = tmp_path / "course"
    _, source = week2_course(course)
    proc = nbgrader(course, "generate_assignment", WEEK2.id)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    release = course / "release" / WEEK2.id / f"{MATMUL}.ipynb"
    submit(course, "solved", WEEK2.id, {MATMUL: solve(release, answers(source))})
    proc = nbgrader(course, "autograde", WEEK2.id)
    log = proc.stdout + proc.stderr
    assert proc.returncode == 0, log[-3000:]
    assert "has changed!" not in log, log[-3000:]
    assert "The kata graded s1_11_matmul.ipynb as saved: 5.43 / 5.43 points." in log
    assert scores(course, WEEK2.id)["solved"][MATMUL] == pytest.approx(5.43)
    graded = nbformat.read(course / "autograded" / "solved" / WEEK2.id / f"{MATMUL}.ipynb", as_version=4)
    outputs = "\n".join(o.get("text", "") for c in graded.cells for o in c.get("outputs", []))
    assert "✔ book_example_27_61: 2.17/2.17" in outputs and "✔ random_shapes (hidden): 2.17/2.17" in outputs
