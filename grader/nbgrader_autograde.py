"""`nbgrader autograde` of a course written by `kata export nbgrader`: the kata decides, no kernel runs.

nbgrader's own autograde executes a submitted notebook in a kernel, the student's cells first,
then the test cells, and scores each test cell by its outputs (an error: 0; nothing: full
points). Whatever a test cell calls in that kernel the student's cells can replace first (the
module it imports, `builtins.__import__`, IPython's exception handlers, the notebook file it
reads), and a kernel that exits or dies takes the verdicts with it.

So the export's nbgrader_config.py puts `KataGrade` where nbgrader's `Execute` was in
`Autograde.autograde_preprocessors`: nbgrader runs no cell of a submitted notebook at all.
`KataGrade` takes the notebook as nbgrader's sanitizing step left it (outputs cleared, test cells
restored from the gradebook), grades the student's cells with the kata's grader, outside any
kernel and exactly as `kata grade` does (`python -m grader grade` in a subprocess, the code in
the sandbox, every comparison on the trusted side; see grader/nbgrader_cell.py), and writes into
each test cell the outcome of its check: a line on stdout when it passed, an error output with
the check's message when it failed. nbgrader's own scoring (SaveAutoGrades) then reads exactly
the kata's verdicts. The test cells' source is never run here.

It fails closed: a notebook that is not one of the course's exercises, or that the grader could
not grade (no course, a grader fault, a timeout), raises, so nbgrader records no score for that
submission, says why and exits non-zero (fix, then run autograde again); a test cell that is no
check of the exercise gets an error output, so it scores 0 rather than the full points an empty
output would give.

Imported by nbgrader's process only (it needs nbgrader), never in a kernel.
"""
from __future__ import annotations

import nbformat
from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.preprocessors import NbGraderPreprocessor

from .messages import t
from .nbgrader_cell import check_outcome, grade_notebook


def is_test_cell(cell) -> bool:
    """An autograded test cell: nbgrader scores it by its outputs."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def error_output(message: str):
    return new_output("error", ename="AssertionError", evalue=message,
                      traceback=[f"AssertionError: {message}"])


class KataGrade(NbGraderPreprocessor):
    """In place of nbgrader's Execute: the kata's verdict of each check as its test cell's output."""

    def preprocess(self, nb, resources):
        ex_id = resources["nbgrader"]["notebook"]  # the notebook's name, which the gradebook knows
        for cell in nb.cells:  # nothing the student handed in stays as an output
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        doc = grade_notebook(ex_id, nbformat.writes(nb).encode("utf-8"))
        rows = {c["name"]: c for c in doc["checks"] if c["exercise"] == ex_id}
        summary = t("nbg_graded", file=f"{ex_id}.ipynb", score=f"{doc['score']:g}", max=f"{doc['max_score']:g}")
        self.log.info("%s", summary)
        first = True
        for cell in nb.cells:
            if not is_test_cell(cell):
                continue
            gid = cell.metadata["nbgrader"]["grade_id"]
            if gid not in rows:
                cell.outputs = [error_output(t("nbg_not_a_check", id=ex_id, cell=gid))]
                continue
            passed, message = check_outcome(rows[gid])
            cell.outputs = [error_output(message)] if not passed else [
                new_output("stream", name="stdout", text=message + "\n")]
            if first:
                cell.outputs.insert(0, new_output("stream", name="stdout", text=summary + "\n"))
                first = False
        return nb, resources

