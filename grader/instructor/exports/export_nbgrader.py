"""`kata export nbgrader DIR`: the course as an nbgrader course directory.

    DIR/nbgrader_config.py                 course id, where the kata project is, the cell timeout
    DIR/source/<assignment>/<id>.ipynb     one notebook per exercise

One assignment per section (`s1_11` holds the three exercises of §1.11), since nbgrader's
unit of release, collection and deadline is an assignment and a section is one sitting of the
chapter; 37 one-notebook assignments would be 37 deadlines. `--by exercise` makes one per
exercise instead. Either way each notebook is one exercise, named by its id, so a notebook
handed in is also a valid `kata grade` submission (`ch01/<id>.ipynb`).

A notebook is made from the exercise's solution file, the single source:
- a locked intro cell (section, title, points, listings, how it is graded);
- the solution's code, split into cells as `kata notebook` splits it (jupytext's light format);
  each `# BEGIN SOLUTION text` / `# END SOLUTION` block becomes nbgrader's `### BEGIN SOLUTION`
  / `### END SOLUTION` region, with `text` kept as a comment above it, and a cell holding one is
  an autograded answer cell (nbgrader metadata solution: true, a grade_id from its function);
  `nbgrader generate_assignment` replaces each region with its stub;
- one autograded test cell per check (grade: true, locked, points = the check's points, so the
  cells add up to the exercise's points; for an assignment, its share of the assignment's points
  in hundredths, the shares adding up to them exactly, grader/course/points.py). `nbgrader autograde` runs none of them: the exported
  nbgrader_config.py replaces nbgrader's Execute step with grader.instructor.exports.nbgrader_autograde.KataGrade,
  which grades the notebook with the kata outside any kernel and writes each check's outcome as
  its cell's output, what nbgrader scores. The cell's code (grader.instructor.exports.nbgrader_cell.verdict) is
  only the student's preview in their own kernel.

Files that exist with other content are refused unless `force`; then they are first copied to
DIR/.kata-backups/<time>/.
"""

from __future__ import annotations

import re
import shutil
import textwrap
import time
from dataclasses import dataclass, field
from pathlib import Path

from ...authoring.stubs import BEGIN, END, blocks
from ...checking.notebook import CHECK_TAG, INTRO_TAG, KERNEL
from ...course import atomic
from ...course.messages import t
from ...course.points import apportion_groups, cents, pts
from .nbgrader_cell import ENV_ROOT, check_cell_ids, grading_timeout

SCHEMA_VERSION = 3  # nbgrader's cell metadata schema (nbgrader 0.9)
COURSE_ID = "transformer-kata"


class ExportError(Exception):
    """The export cannot be written; the message names the file."""


def assignment_of(ex, by: str) -> str:
    """`s1_11` for every exercise of §1.11, `s1_01` for §1.1 (by section: the ids' prefix, so
    assignments sort in book order), or the exercise's id (by exercise)."""
    return ex.id if by == "exercise" else "_".join(ex.id.split("_")[:2])


def _nbgrader(grade_id: str, *, solution=False, grade=False, locked=False, points=None) -> dict:
    meta = {
        "grade": grade,
        "grade_id": grade_id,
        "locked": locked,
        "schema_version": SCHEMA_VERSION,
        "solution": solution,
    }
    if grade:
        meta["points"] = points
    return meta


def solution_source(source: str, filename: str) -> str:
    """The solution with each kata block turned into nbgrader's solution region."""
    blocks(source, filename)  # the same validation as `kata stubs`: each block closed, inside a function
    out = []
    for line in source.splitlines():
        m = BEGIN.match(line)
        if m:
            text = m.group("text").strip(" :-")
            if text:
                out.append(f"{m.group('indent')}# {text}")
            out.append(f"{m.group('indent')}### BEGIN SOLUTION")
        elif END.match(line):
            out.append(line[: len(line) - len(line.lstrip())] + "### END SOLUTION")
        else:
            out.append(line)
    return "\n".join(out) + "\n"


def _grade_id(name: str, taken: set[str]) -> str:
    base = re.sub(r"\W+", "_", name).strip("_") or "cell"
    gid, n = base, 2
    while gid in taken:
        gid, n = f"{base}_{n}", n + 1
    taken.add(gid)
    return gid


def build(course, ex, lang: str | None = None, factor: float = 1.0, shares: dict | None = None):
    """The nbgrader source notebook of exercise `ex`; `shares`: {(exercise, check, 0): points} of
    an assignment's checks (`points.apportion_groups`, as `kata grade -a ID` scales them: hundredths that
    add up to the assignment's points); else every check's points times `factor`."""
    import jupytext
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    source = (course.solutions_dir / ex.file).read_text(encoding="utf-8")
    owners = {b.start: b.owner for b in blocks(source, ex.file)}
    taken: set[str] = set()
    nb = jupytext.reads(solution_source(source, ex.file), fmt="py:light")
    first_owner = iter(owners[k] for k in sorted(owners))  # blocks in file order = regions in cell order
    worth = check_points(ex, factor, shares)
    cells = [
        new_markdown_cell(
            intro(course, ex, lang, factor, worth),
            metadata={"tags": [INTRO_TAG], "nbgrader": _nbgrader(_grade_id("kata_intro", taken), locked=True)},
        )
    ]
    for cell in nb.cells:
        regions = cell.source.count("### BEGIN SOLUTION") if cell.cell_type == "code" else 0
        if not regions:
            cells.append(new_code_cell(cell.source) if cell.cell_type == "code" else new_markdown_cell(cell.source))
            continue
        names = [next(first_owner) for _ in range(regions)]
        cells.append(
            new_code_cell(
                cell.source,
                metadata={
                    "nbgrader": _nbgrader(
                        _grade_id(names[0].split(".")[0] if len(names) > 1 else names[0], taken), solution=True
                    )
                },
            )
        )
    cells.append(new_markdown_cell(t("nbg_tests_heading", lang), metadata={"tags": [INTRO_TAG]}))
    by_name = {c.name: c for c in ex.checks}
    for gid, check_name in check_cell_ids(ex).items():
        check = by_name[check_name]
        points = worth[check.name]
        name = check.name.removeprefix("test_")
        label = t("nbg_hidden_name", lang, name=name) if check.hidden else name
        where = t("nbg_cell_listings", lang, listings=", ".join(check.listings)) if check.listings else ""
        comment = t("nbg_cell_comment", lang, name=label, points=pts(points), where=where)
        code = (
            "".join(f"# {line}\n" for line in textwrap.wrap(comment, 96))
            + f"from grader.instructor.exports.nbgrader_cell import verdict\n"
            f"passed, message = verdict({ex.id!r}, {check.name!r})\n"
            f"assert passed, message"
        )
        if check.hidden:  # generate_assignment keeps only the first line: no name, no listing
            public = t("nbg_hidden_cell", lang, n=gid.rsplit("_", 1)[1], points=pts(points))
            code = (
                "".join(f"# {line}\n" for line in textwrap.wrap(public, 96))
                + "### BEGIN HIDDEN TESTS\n"
                + code
                + "\n### END HIDDEN TESTS"
            )
        taken.add(gid)
        cells.append(
            new_code_cell(
                code, metadata={"tags": [CHECK_TAG], "nbgrader": _nbgrader(gid, grade=True, locked=True, points=points)}
            )
        )
    for i, cell in enumerate(cells):  # stable ids: the same course exports the same bytes
        cell.id = cell.metadata.get("nbgrader", {}).get("grade_id", f"cell-{i}")[:64]
    return new_notebook(cells=cells, metadata={**KERNEL, "kata": {"exercise": ex.id}})


def check_points(ex, factor: float = 1.0, shares: dict | None = None) -> dict[str, float]:
    """{check name: what its test cell is worth}: its share of the assignment (`shares`), else its
    points times `factor` in hundredths."""
    if shares is not None:
        return {c.name: shares[(ex.id, c.name, 0)] for c in ex.checks}
    return {c.name: round(c.points * factor, 2) for c in ex.checks}


def intro(course, ex, lang: str | None = None, factor: float = 1.0, worth: dict | None = None) -> str:
    titles = {lst.id: lst.title for lst in course.listings}
    listings = "\n".join(f"- {lst}: {titles.get(lst, '')}" for lst in ex.listings) or "-"
    worth = worth if worth is not None else check_points(ex, factor)
    points = sum(cents(p) for p in worth.values()) / 100
    return t(
        "nbg_intro",
        lang,
        section=ex.section,
        title=ex.title,
        id=ex.id,
        points=pts(points),
        listings=listings,
        checks=len(ex.checks),
        hidden=sum(c.hidden for c in ex.checks),
    )


# nbgrader 0.9's Autograde.autograde_preprocessors with its first, Execute (which runs the notebook
# in a kernel), replaced by the kata's grading. Names, not classes: the file loads even where
# `grader` does not import, and autograde then fails naming it rather than run the cells.
AUTOGRADE_PREPROCESSORS = [
    "grader.instructor.exports.nbgrader_autograde.KataGrade",
    "nbgrader.preprocessors.IgnorePattern",
    "nbconvert.preprocessors.ClearMetadataPreprocessor",
    "nbgrader.preprocessors.LimitOutput",
    "nbgrader.preprocessors.SaveAutoGrades",
    "nbgrader.preprocessors.AssignLatePenalties",
    "nbgrader.preprocessors.CheckCellMetadata",
]

# nbgrader 0.9's Autograde.sanitize_preprocessors with DeduplicateIds and OverwriteCells replaced by
# the kata's: a grade_id held twice keeps the cell the gradebook knows, and a locked cell is put back
# as released, flags included, with no false alarm on hidden tests (nbgrader_autograde.py).
SANITIZE_PREPROCESSORS = [
    "nbgrader.preprocessors.ClearOutput",
    "grader.instructor.exports.nbgrader_autograde.KataDeduplicateIds",
    "nbgrader.preprocessors.OverwriteKernelspec",
    "grader.instructor.exports.nbgrader_autograde.KataOverwriteCells",
    "nbgrader.preprocessors.CheckCellMetadata",
]


def config_text(course, exercises) -> str:
    timeout = int(max(grading_timeout(ex) for ex in exercises)) + 60
    preprocessors = "".join(f"    {name!r},\n" for name in AUTOGRADE_PREPROCESSORS)
    sanitize = "".join(f"    {name!r},\n" for name in SANITIZE_PREPROCESSORS)
    return f'''"""nbgrader configuration of the kata's course, written by `kata export nbgrader`.

`nbgrader autograde` runs no cell of a submitted notebook: the kata's grading takes the place of
nbgrader's Execute step. It grades the notebook with the kata's sandboxed grader (`python -m
grader grade`, as `kata grade` does), outside any kernel, and writes each test cell's outcome as
its output (passed: a line; failed: an error with the check's message), which nbgrader scores.
So nbgrader must run in the kata's Python environment (it imports `grader`), and the grader
needs the kata project folder (course.toml, solutions/). If the project moves, change
{ENV_ROOT} below or set it in the environment.
"""
import os

c = get_config()  # noqa: F821 (nbgrader defines it when it reads this file)
c.CourseDirectory.course_id = {COURSE_ID!r}
c.CourseDirectory.root = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault({ENV_ROOT!r}, {str(course.root.resolve())!r})
c.Autograde.autograde_preprocessors = [
{preprocessors}]
# nbgrader's own, except that a hidden-test cell handed in as released is no "changed" cell
c.Autograde.sanitize_preprocessors = [
{sanitize}]
# Only for `nbgrader validate` run here, which does run the cells: the first test cell grades
# the whole exercise (every check, each call under its time limit).
c.Execute.timeout = {timeout}
'''


@dataclass
class Export:
    folder: Path
    written: list[Path] = field(default_factory=list)
    unchanged: list[Path] = field(default_factory=list)
    backups: Path | None = None
    assignments: dict[str, list] = field(default_factory=dict)  # assignment -> exercises


def plan(
    course, exercises, by: str = "section", lang: str | None = None, assignment=None
) -> tuple[dict[str, str], dict]:
    """{relative path: text} of every file of the export, and {assignment: [exercises]}. With a
    course.toml `assignment`, every exercise goes into one nbgrader assignment of its id, its
    checks' points scaled so that they add up to the assignment's points."""
    import nbformat

    from ...authoring.stubs import StubError

    files: dict[str, str] = {"nbgrader_config.py": config_text(course, exercises)}
    assignments: dict[str, list] = {}
    factor = assignment.factor(sum(ex.points for ex in exercises)) if assignment is not None else 1.0
    shares = None
    if assignment is not None and assignment.points:  # as `kata grade -a ID` scales (reports/assignment.py)
        shares = apportion_groups(
            [(ex.id, [((ex.id, c.name, 0), c.points) for c in ex.checks]) for ex in exercises], assignment.points
        )
    for ex in exercises:
        a = assignment.id if assignment is not None else assignment_of(ex, by)
        assignments.setdefault(a, []).append(ex)
        try:
            nb = build(course, ex, lang, factor, shares)
        except (StubError, SyntaxError) as e:
            raise ExportError(f"solutions/{ex.file}: {e}") from None
        files[f"source/{a}/{ex.id}.ipynb"] = nbformat.writes(nb) + "\n"
    return files, assignments


def export(
    course, exercises, folder: Path, by: str = "section", force: bool = False, lang: str | None = None, assignment=None
) -> Export:
    """Write the nbgrader course directory; nothing is written when a file would be lost."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise ExportError(t("nbg_not_a_folder", path=folder))
    files, assignments = plan(course, exercises, by, lang, assignment)
    done = Export(folder, assignments=assignments)
    changed = []
    for rel, text in files.items():
        path = folder / rel
        if path.is_file() and path.read_text(encoding="utf-8", errors="replace") == text:
            done.unchanged.append(path)
        elif path.exists():
            changed.append(rel)
    if changed and not force:
        raise ExportError(t("nbg_would_replace", files="\n".join(f"  {folder / r}" for r in changed)))
    if changed:
        base = folder / ".kata-backups" / time.strftime("%Y%m%d-%H%M%S")
        backups, n = base, 1
        while backups.exists():
            backups, n = base.with_name(f"{base.name}-{n}"), n + 1
        for rel in changed:
            (backups / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(folder / rel, backups / rel)
        done.backups = backups
    for rel, text in files.items():
        path = folder / rel
        if path in done.unchanged:
            continue
        atomic.write_text(path, text, mode=0o644, keep_mode=True)
        done.written.append(path)
    return done
