"""Drive the real nbgrader on a course written by `kata export nbgrader`: students' submissions
made from the released notebooks, the nbgrader command line, and the gradebook's scores.
Used by tests/test_export_nbgrader.py and benchmarks/nbgrader_compare.py."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import nbformat

ROOT = Path(__file__).resolve().parent.parent
COURSE_ID = "transformer-kata"


def nbgrader(course_dir: Path, *args: str, timeout: float = 600, env: dict | None = None) -> subprocess.CompletedProcess:
    """`nbgrader ARGS` in the course directory, as an instructor runs it. The venv's bin/ comes
    first on PATH (nbgrader calls `alembic` by name) and this checkout's grader is the one
    nbgrader's grading imports (PYTHONPATH); `env` adds to the environment."""
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "KATA_LANG": "en", **(env or {})}
    return subprocess.run([sys.executable, "-m", "nbgrader", *args], cwd=course_dir, env=env,
                          capture_output=True, text=True, timeout=timeout)


def answers(source_notebook: Path) -> dict[str, str]:
    """grade_id -> the solution cell's code, as a student who solved it would type it."""
    nb = nbformat.read(source_notebook, as_version=4)
    return {c.metadata["nbgrader"]["grade_id"]: "\n".join(line for line in c.source.splitlines() if "### " not in line)
            for c in nb.cells if c.metadata.get("nbgrader", {}).get("solution")}


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
