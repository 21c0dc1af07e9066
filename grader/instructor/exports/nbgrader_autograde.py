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
the sandbox, every comparison on the trusted side; see grader/instructor/exports/nbgrader_cell.py), and writes into
each test cell the outcome of its check: a line on stdout when it passed, an error output with
the check's message when it failed. nbgrader's own scoring (SaveAutoGrades) then reads exactly
the kata's verdicts. The test cells' source is never run here.

An exercise that imports an earlier one (`from s1_23_encoder import BERTEncoder`) is graded with
the same student's file of that exercise: from this assignment's submitted folder, else from
their other assignments' (with `kata export nbgrader --by exercise` each exercise is an
assignment of its own), never through a link; one found nowhere is named in autograde's log and
in the first test cell's output, and the checks then fail on the missing import.

It fails closed: a notebook that is not one of the course's exercises, or that the grader could
not grade (no course, a grader fault, a timeout), raises, so nbgrader records no score for that
submission, says why and exits non-zero (fix, then run autograde again); a test cell that is no
check of the exercise gets an error output, so it scores 0 rather than the full points an empty
output would give.

Imported by nbgrader's process only (it needs nbgrader), never in a kernel.
"""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_output
from nbgrader import utils
from nbgrader.api import MissingEntry
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import ClearHiddenTests, NbGraderPreprocessor, OverwriteCells
from traitlets import Bool

from ...course import files
from ...course.messages import t
from .nbgrader_cell import check_cell_ids, check_outcome, grade_notebook, graded_line


def _cell_ids(ex_id: str) -> dict[str, str]:
    """{grade_id: check name} of the exported test cells of `ex_id` (hidden checks by rank)."""
    from ...course.manifest import load
    from .nbgrader_cell import course_root

    course = load(course_root(), require_stubs=False)
    return check_cell_ids(course.get(ex_id))


def is_test_cell(cell) -> bool:
    """An autograded test cell: nbgrader scores it by its outputs."""
    return cell.cell_type == "code" and utils.is_grade(cell) and not utils.is_solution(cell)


def _points(cell) -> float | None:
    """What a test cell is worth in nbgrader's metadata (None: not a number)."""
    try:
        return float(cell.metadata["nbgrader"]["points"])
    except (KeyError, TypeError, ValueError):
        return None


def error_output(message: str):
    return new_output("error", ename="AssertionError", evalue=message, traceback=[f"AssertionError: {message}"])


def _coursedir(pre) -> CourseDirectory:
    """The converter's course directory (the preprocessor's exporter's parent), else one read
    from the same configuration."""
    here = pre
    while here is not None:
        found = getattr(here, "coursedir", None)
        if isinstance(found, CourseDirectory):
            return found
        here = getattr(here, "parent", None)
    return CourseDirectory(config=pre.config)


def submitted_places(coursedir: CourseDirectory, student: str, assignment: str) -> list[Path]:
    """Where a student's earlier exercises are: this assignment's submitted folder, then their
    other assignments' (by name); only real folders, never a link."""
    own = Path(coursedir.format_path(coursedir.submitted_directory, student, assignment))
    top = own.parent
    others = sorted(Path(e.path) for e in files.walk_dirs(top) if e.name != assignment)
    return [own, *others]


def _gradebook_flags(gradebook, grade_id: str, notebook: str, assignment: str) -> dict | None:
    """{"cell_type", "grade", "solution", "locked"} of the gradebook's cell `grade_id` (None: no such cell)."""
    try:
        source = gradebook.find_source_cell(grade_id, notebook, assignment)
    except MissingEntry:
        return None
    found = {}
    for flag, find in (("grade", gradebook.find_graded_cell), ("solution", gradebook.find_solution_cell)):
        try:
            find(grade_id, notebook, assignment)
            found[flag] = True
        except MissingEntry:
            found[flag] = False
    return {"cell_type": source.cell_type, "locked": bool(source.locked), **found}


def _flags(cell) -> dict:
    nbg = cell.metadata.get("nbgrader", {})
    return {
        "cell_type": cell.cell_type,
        "grade": bool(nbg.get("grade")),
        "solution": bool(nbg.get("solution")),
        "locked": bool(nbg.get("locked")),
    }


class KataDeduplicateIds(NbGraderPreprocessor):
    """nbgrader's DeduplicateIds, keeping the cell the gradebook knows rather than the last one.

    A notebook may hold a grade_id twice: a cell copied in Jupyter keeps its metadata, and a
    student can write any metadata. nbgrader's DeduplicateIds keeps the last cell of each id and
    sets the others' nbgrader metadata to {}, which nbgrader then takes for an old metadata format
    and stops the whole `nbgrader autograde` run, every later student ungraded; and a cell placed
    after a test cell under its id, marked as an answer, replaced that test cell. Here, of the
    cells sharing an id, the first whose type and flags (grade, solution, locked) are the
    gradebook's keeps the id (else the first); the others lose their nbgrader metadata and become
    ordinary cells (a copy of a test cell keeps its tags, which leave it out of the graded code).
    A cell claiming an id the gradebook does not know is an ordinary cell too (nbgrader would keep
    its grade flag without an id). A test cell's verdict is the kata's, whichever cell holds its id."""

    def preprocess(self, nb, resources):
        from nbgrader.api import Gradebook
        from nbgrader.nbgraderformat import SCHEMA_VERSION

        notebook, assignment = resources["nbgrader"]["notebook"], resources["nbgrader"]["assignment"]
        holders: dict[str, list] = {}
        for cell in nb.cells:
            if "nbgrader" not in cell.metadata:
                continue
            nbg = cell.metadata["nbgrader"]
            gid = nbg.get("grade_id") if isinstance(nbg, dict) else None
            if not isinstance(gid, str) or not (nbg.get("grade") or nbg.get("solution") or nbg.get("locked")):
                del cell.metadata["nbgrader"]  # no cell of nbgrader's: {} stopped the whole run as an "old format"
                continue
            holders.setdefault(gid, []).append(cell)
        with Gradebook(resources["nbgrader"]["db_url"]) as gradebook:
            for gid, cells in holders.items():
                known = _gradebook_flags(gradebook, gid, notebook, assignment)
                if known is None:  # no cell of this assignment: not graded, not scored
                    keep = None
                    self.log.warning("Cell id %r is no cell of %s: it is an ordinary cell now", gid, notebook)
                else:
                    keep = next((c for c in cells if _flags(c) == known), cells[0])
                    keep.metadata["nbgrader"]["schema_version"] = SCHEMA_VERSION  # another stopped the run too
                    if len(cells) > 1:
                        self.log.warning(
                            "Cell id %r is held by %d cells: kept the one the gradebook knows, the "
                            "others are ordinary cells now",
                            gid,
                            len(cells),
                        )
                for cell in cells:
                    if cell is not keep:
                        del cell.metadata["nbgrader"]
            self._restore_stripped_tests(nb, gradebook, notebook, assignment, SCHEMA_VERSION)
        return nb, resources

    def _restore_stripped_tests(self, nb, gradebook, notebook, assignment, schema) -> None:
        """A code cell with no nbgrader metadata whose source is a test cell's, as released or as
        stored, while no cell holds that test's id, is that test cell with its metadata taken off
        (`{}`): it gets the gradebook's back. Otherwise its code (an import of the grader) would be
        graded as the student's, and its check would land nowhere."""
        held = {c.metadata["nbgrader"].get("grade_id") for c in nb.cells if "nbgrader" in c.metadata}
        tests: dict[str, tuple[str, float]] = {}
        for graded in gradebook.find_notebook(notebook, assignment).grade_cells:
            source = gradebook.find_source_cell(graded.name, notebook, assignment)
            if graded.name in held or not source.locked or source.cell_type != "code":
                continue
            for text in {source.source, released(source.source, self)} - {None}:
                tests.setdefault(text, (graded.name, float(graded.max_score)))
        for cell in nb.cells:
            if "nbgrader" in cell.metadata or cell.cell_type != "code" or cell.source not in tests:
                continue
            name, points = tests[cell.source]
            if name in held:
                continue
            held.add(name)
            cell.metadata["nbgrader"] = {
                "grade": True,
                "solution": False,
                "locked": True,
                "grade_id": name,
                "points": points,
                "schema_version": schema,
            }
            self.log.warning("Cell %r had its nbgrader metadata taken off: given back from the gradebook", name)


class KataOverwriteCells(OverwriteCells):
    """nbgrader's OverwriteCells, without its false alarm on hidden tests, adding back the test
    cells a notebook lacks (nbgrader's add_missing_cells, off by default: a solved notebook whose
    test cells were deleted scored 0 while autograde's log said 13 / 13).

    `nbgrader generate_assignment` saves a test cell to the gradebook (source and checksum) before
    ClearHiddenTests removes its `### BEGIN HIDDEN TESTS` region, then computes the released
    cell's checksum again. So the gradebook holds the checksum of the cell with its hidden tests,
    the student gets the cell without them, and autograde's OverwriteCells, comparing the two,
    warned "Attribute 'checksum' for cell kata_hidden_1 has changed!" for every hidden check of
    every honest notebook (jupyter/nbgrader#1961). Here a locked cell whose source is exactly the
    gradebook's with its hidden tests removed, as ClearHiddenTests removes them, is the cell as
    released: it gets its hidden tests back first, so nbgrader's own checksum
    (nbgrader.utils.compute_checksum) matches the stored one. Any other change is reported and
    undone as nbgrader does."""

    add_missing_cells = Bool(True, help="Add back the graded cells a notebook lacks (the kata: on)").tag(config=True)

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if isinstance(grade_id, str):
            # a locked cell of the gradebook is the gradebook's, flags included: a test cell handed in
            # marked as an answer (or an answer cell marked as a test) is put back as released, where
            # nbgrader would fail the whole notebook on its checksum ("Inconsistent checksums")
            known = _gradebook_flags(self.gradebook, grade_id, self.notebook_id, self.assignment_id)
            if known is not None and known["locked"]:
                for flag in ("grade", "solution"):
                    cell.metadata.nbgrader[flag] = known[flag]
                if known["grade"] and "points" not in cell.metadata.nbgrader:
                    cell.metadata.nbgrader["points"] = 0  # OverwriteCells puts the gradebook's points back
        if grade_id is not None and utils.is_locked(cell):
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source = None
            if (
                source is not None
                and source.locked
                and cell.cell_type == source.cell_type
                and cell.source != source.source
                and cell.source == self._released(source.source)
            ):
                cell.source = source.source
        return super().preprocess_cell(cell, resources, cell_index)

    def _released(self, source: str) -> str | None:
        return released(source, self)


def released(source: str, parent) -> str | None:
    """A gradebook cell's source as generate_assignment released it (None: it has no well-formed
    hidden-test region)."""
    clear = ClearHiddenTests(parent=parent)
    cell = nbformat.v4.new_code_cell(source)
    try:
        return cell.source if clear._remove_hidden_test_region(cell) else None
    except RuntimeError:  # nested or unclosed regions: generate_assignment refused those
        return None


class KataGrade(NbGraderPreprocessor):
    """In place of nbgrader's Execute: the kata's verdict of each check as its test cell's output."""

    def preprocess(self, nb, resources):
        ex_id = resources["nbgrader"]["notebook"]  # the notebook's name, which the gradebook knows
        for cell in nb.cells:  # nothing the student handed in stays as an output
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        student, assignment = resources["nbgrader"].get("student"), resources["nbgrader"].get("assignment")
        places = submitted_places(_coursedir(self), student, assignment) if student and assignment else []
        handed_in = places[0] / f"{ex_id}.ipynb" if places else None
        if places and not all(files.kind(d) == "dir" for d in (places[0].parent, places[0])):
            # submitted/<student> or its <assignment> folder is a link: another student's work, maybe
            return self._not_graded(nb, resources, t("nbg_link", file=f"{student}/{assignment}"))
        if handed_in is not None and files.kind(handed_in) not in ("file", "missing"):
            # nbgrader copied submitted/ into autograded/ following links: the notebook it hands us
            # may be another student's or the instructor's. Only a regular file is the student's work.
            return self._not_graded(nb, resources, t("nbg_link", file=f"{student}/{assignment}/{ex_id}.ipynb"))
        doc = grade_notebook(ex_id, nbformat.writes(nb).encode("utf-8"), places)
        by_name = {c["name"]: c for c in doc["checks"] if c["exercise"] == ex_id}
        ids = _cell_ids(ex_id)
        rows = {gid: by_name[name] for gid, name in ids.items() if name in by_name}
        points = {}  # check name -> its cell's points, as nbgrader counts them (an assignment's, scaled)
        for cell in nb.cells:
            gid = cell.metadata["nbgrader"]["grade_id"] if is_test_cell(cell) else None
            if gid in rows and _points(cell) is not None:
                points[rows[gid]["name"]] = _points(cell)
        summary = graded_line(doc, ex_id, f"{ex_id}.ipynb", points)
        self.log.info("%s", summary)
        for note in doc.get("earlier_missing", []):  # an earlier exercise it imports, found nowhere
            self.log.warning("%s", note)
            summary += "\n" + note
        first = True
        for cell in nb.cells:
            if not is_test_cell(cell):
                continue
            gid = cell.metadata["nbgrader"]["grade_id"]
            if gid not in rows:
                cell.outputs = [error_output(t("nbg_not_a_check", id=ex_id, cell=gid))]
                continue
            passed, message = check_outcome(rows[gid], _points(cell))
            cell.outputs = (
                [error_output(message)] if not passed else [new_output("stream", name="stdout", text=message + "\n")]
            )
            if first:
                cell.outputs.insert(0, new_output("stream", name="stdout", text=summary + "\n"))
                first = False
        return nb, resources

    def _not_graded(self, nb, resources, reason: str):
        """Every test cell of the notebook fails with `reason`: it scores 0, and the student reads why."""
        self.log.warning("%s", reason)
        for cell in nb.cells:
            if is_test_cell(cell):
                cell.outputs = [error_output(reason)]
        return nb, resources
