"""The kata grading one notebook of an nbgrader export (grader/instructor/exports/export_nbgrader.py), for the
autograde step (grader/instructor/exports/nbgrader_autograde.py) and for a student's preview in their own kernel.

`grade_notebook` hands the notebook's cells, test cells left out, to the kata's grader in a
separate process (`python -m grader grade COPY -e ID --json REPORT`), which runs the student's
code in its sandbox and makes every comparison on its trusted side, hidden checks included.
`nbgrader autograde` calls it from nbgrader's own process, outside any kernel, and writes each
check's outcome into its test cell (grader/instructor/exports/nbgrader_autograde.py): no cell of a submitted
notebook runs there, so nothing a student's cell does can reach a verdict.

`verdict` is what a test cell calls when the student runs it in their own kernel: a preview of
that check on the notebook as saved. It decides nothing; the student's code can replace it, and
only fools its author. Under `nbgrader autograde` (NBGRADER_EXECUTION=autograde: nbgrader's own
Execute step running the test cells, which the export's nbgrader_config.py replaces) it refuses,
so a course whose configuration did not load scores 0 and says why, never a kernel's say-so.

An exercise that imports an earlier one (`from s1_23_encoder import BERTEncoder`) is graded with
the same student's notebook or .py of that exercise beside it, and those it imports in turn:
`grade_notebook` takes the folders to look in (`places`: under nbgrader, the student's submitted
folder of this assignment first, then their other assignments' submitted folders; in a kernel,
the notebook's own folder). Only regular files are read, never through a link (grader/course/files.py);
an earlier exercise found nowhere is named in the report's notes (and its
`earlier_missing`).

A notebook is graded once per content: the first test cell runs the grader, the others read
the same report (kept in this module, keyed by the file's sha256). Anything that stops the
grading (no course, a crash, a timeout) raises GradingError: the cells fail closed.

The grader needs the kata's project folder (course.toml, solutions/): `$KATA_COURSE_ROOT`,
which the export's nbgrader_config.py sets, else the folder `kata` itself would use.

Standard library only (with grader.course.manifest and grader.course.messages, themselves standard library
only): importing this module in a kernel costs nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from ...course import files
from ...course.manifest import CourseError, find_root, load
from ...course.messages import t
from ...course.points import pts
from ...course.scan import imported
from ...course.source_text import decode, of_text

ENV_ROOT = "KATA_COURSE_ROOT"
KATA_TAGS = {"kata-check", "kata-intro"}
_reports: dict[str, dict] = {}
MAX_SIBLING = 8 * 1024 * 1024  # bytes of one earlier exercise's file read (as a submission's file limit)


class GradingError(RuntimeError):
    """The notebook could not be graded; the cell fails and scores 0."""


HIDDEN_CELL = "kata_hidden_{n}"


def check_cell_ids(ex) -> dict[str, str]:
    """{grade_id: check name} of the exercise's test cells, in its checks' order. A public check's
    cell is named by the check; a hidden one's only by its rank ("kata_hidden_2"), so the notebook
    a student is given names no hidden check (its code sits between nbgrader's hidden-test marks)."""
    out, n = {}, 0
    for check in ex.checks:
        if check.hidden:
            n += 1
            out[HIDDEN_CELL.format(n=n)] = check.name
        else:
            out[check.name] = check.name
    return out


def grading_timeout(ex) -> float:
    """Seconds one exercise's grading may take at most: start-up, then every check at twice its
    call time limit (a check makes a few calls). nbgrader's cell timeout is set above it."""
    return 120 + 2 * ex.time_limit_s * max(1, len(ex.checks))


def course_root() -> Path:
    given = os.environ.get(ENV_ROOT)
    if given:
        root = Path(given)
        if not (root / "course.toml").is_file():
            raise GradingError(t("nbg_no_course", root=root, var=ENV_ROOT))
        return root
    try:
        return find_root()
    except CourseError:
        raise GradingError(t("nbg_no_course_found", var=ENV_ROOT)) from None


def without_test_cells(data: bytes) -> bytes:
    """The notebook with its test and intro cells left out: the code graded is the student's
    only, whatever the tags say. Unreadable JSON is left as it is (the grader names the fault)."""
    try:
        nb = json.loads(data)
        cells = nb["cells"]
    except (ValueError, KeyError, TypeError):
        return data

    def ours(cell) -> bool:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        if not isinstance(meta, dict):
            return False
        nbg = meta.get("nbgrader") if isinstance(meta.get("nbgrader"), dict) else {}
        tags = meta.get("tags") if isinstance(meta.get("tags"), list) else []
        return bool(nbg.get("grade") and not nbg.get("solution")) or bool(KATA_TAGS & set(map(str, tags)))

    if not isinstance(cells, list):
        return data
    nb["cells"] = [c for c in cells if not ours(c)]
    return json.dumps(nb, ensure_ascii=False).encode("utf-8")


def imports_of(data: bytes, notebook: bool) -> set[str]:
    """The modules a notebook's code cells (or a .py) import by name; shell and magic lines aside."""
    if not notebook:  # the text Python runs (grader/course/source_text.py), BOM and coding line honoured
        return imported(decode(data).text or "")
    try:
        cells = json.loads(data)["cells"]
    except (ValueError, KeyError, TypeError, RecursionError):
        return set()
    code: list[str] = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict) or cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list) and all(isinstance(part, str) for part in source):
            source = "".join(source)
        if isinstance(source, str):
            code.append("\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in source.splitlines()))
    # the cells as one text, read as Python reads the graded .py they become (a coding line in the
    # first cell is honoured, as it is there): grader/course/source_text.py
    out: set[str] = set()
    found = of_text("\n\n".join(code))
    if found.text is not None:
        out = imported(found.text)
    if found.kind in ("syntax", "too_large"):  # one cell that does not parse hides no other cell's imports
        for cell_code in code:
            out |= imported(of_text(cell_code).text or "")
    return out


def _read_regular(place: Path, name: str) -> tuple[bytes, float] | None:
    """(bytes, mtime) of the regular file `place/name`, reached without a link, within the limit."""
    found = files.lookup(place, name) if files.kind(place) == "dir" else None
    if found is None or found.st.st_size > MAX_SIBLING:
        return None
    try:
        with open(found.path, "rb", opener=files.open_no_follow) as f:
            data = f.read(MAX_SIBLING + 1)
    except OSError:
        return None
    return (data, found.st.st_mtime) if len(data) <= MAX_SIBLING else None


def earlier_files(course, ex_id: str, data: bytes, places) -> tuple[dict[str, tuple[bytes, float]], list[str]]:
    """The earlier exercises' files that notebook `data` of `ex_id` imports, directly or through
    one another: ({file name: (bytes, mtime)}, [modules found in no place]). Each module is taken
    from the first place holding its `.ipynb` or `.py` (both, when both are there: the grader
    picks as usual); notebooks lose their test cells."""
    modules = {e.module for e in course.exercises}
    found: dict[str, tuple[bytes, float]] = {}
    missing: list[str] = []
    seen = {ex_id}
    todo = [(data, True)]
    while todo:
        blob, notebook = todo.pop()
        for module in sorted(imports_of(blob, notebook) & modules - seen):
            seen.add(module)
            for place in places:
                here = {suffix: _read_regular(Path(place), module + suffix) for suffix in (".ipynb", ".py")}
                if any(here.values()):
                    break
            else:
                missing.append(module)
                continue
            for suffix, hit in here.items():
                if hit is not None:
                    content = without_test_cells(hit[0]) if suffix == ".ipynb" else hit[0]
                    found[module + suffix] = (content, hit[1])
                    todo.append((content, suffix == ".ipynb"))
    return found, missing


def grade_notebook(ex_id: str, data: bytes, places=()) -> dict:
    """The kata's report (`kata grade --json`) of notebook `data` as exercise `ex_id`, its test cells
    left out, with the earlier exercises it imports taken from `places` (see the module doc; an
    earlier exercise found nowhere is named in the report's notes); GradingError when it cannot be
    graded."""
    root = course_root()
    try:
        course = load(root, require_stubs=False)
        ex = course.get(ex_id)
    except (CourseError, KeyError) as e:
        raise GradingError(t("nbg_bad_course", root=root, id=ex_id, reason=e)) from None
    with tempfile.TemporaryDirectory(prefix="kata-nbgrader-") as tmp:
        folder = Path(tmp, "submission", course.chapter)
        folder.mkdir(parents=True)
        earlier, missing = earlier_files(course, ex_id, data, places)
        for name, (content, mtime) in earlier.items():
            (folder / name).write_bytes(content)
            os.utime(folder / name, (mtime, mtime))  # which of a .py and its notebook is newer
        (folder / f"{ex_id}.ipynb").write_bytes(without_test_cells(data))
        out = Path(tmp, "report.json")
        cmd = [sys.executable, "-m", "grader", "grade", str(folder.parent), "-e", ex_id, "--json", str(out), "--quiet"]
        limit = grading_timeout(ex)
        try:
            proc = subprocess.run(
                cmd, cwd=root, capture_output=True, text=True, timeout=limit, stdin=subprocess.DEVNULL
            )
        except subprocess.TimeoutExpired:
            raise GradingError(t("nbg_timeout", id=ex_id, seconds=f"{limit:g}")) from None
        if proc.returncode != 0 or not out.is_file():
            tail = (proc.stderr or proc.stdout).strip()[-1500:]
            raise GradingError(t("nbg_grader_failed", id=ex_id, code=proc.returncode, output=tail))
        doc = json.loads(out.read_text(encoding="utf-8"))
        doc["earlier_missing"] = [t("nbg_earlier_missing", id=ex_id, module=m) for m in missing]
        doc["notes"] = doc["earlier_missing"] + list(doc.get("notes", []))
        return doc


def report(ex_id: str, folder: Path | None = None) -> dict:
    """The grader's report of `<ex_id>.ipynb` in `folder` (default: the kernel's working folder,
    which nbgrader sets to the notebook's), graded once per content."""
    path = Path(folder or Path.cwd()) / f"{ex_id}.ipynb"
    if not path.is_file():
        raise GradingError(t("nbg_no_notebook", file=path.name, folder=path.parent))
    data = path.read_bytes()
    key = f"{ex_id}:{hashlib.sha256(data).hexdigest()}"
    if key not in _reports:
        doc = grade_notebook(ex_id, data, [path.parent])
        doc["cell_points"] = cell_points(data, ex_id)
        _reports[key] = doc
        print(graded_line(doc, ex_id, path.name, doc["cell_points"]))
    return _reports[key]


def cell_points(data: bytes, ex_id: str) -> dict[str, float]:
    """{check name: the points of its test cell} in notebook `data`, as nbgrader's metadata gives
    them (an assignment's scaled points: 3.2609 for a check of 3 raw points); {} when the notebook
    or the course cannot say."""
    try:
        cells = json.loads(data)["cells"]
        ids = check_cell_ids(load(course_root(), require_stubs=False).get(ex_id))
    except (ValueError, KeyError, TypeError, RecursionError, CourseError, GradingError):
        return {}
    out: dict[str, float] = {}
    for cell in cells if isinstance(cells, list) else []:
        meta = cell.get("metadata") if isinstance(cell, dict) else None
        nbg = meta.get("nbgrader") if isinstance(meta, dict) else None
        if not isinstance(nbg, dict) or not nbg.get("grade") or nbg.get("solution"):
            continue
        try:
            points = float(nbg.get("points"))
        except (TypeError, ValueError):
            continue
        if nbg.get("grade_id") in ids:
            out[ids[nbg["grade_id"]]] = points
    return out


def scaled(row: dict, points: float | None) -> tuple[float, float]:
    """(score, max) of one check of a report as its test cell counts it: the kata's raw points
    scaled to the cell's `points` (None: as graded)."""
    score, full = float(row["score"]), float(row["max_score"])
    if points is None:
        return score, full
    return (score / full * points if full else 0.0), float(points)


def graded_line(doc: dict, ex_id: str, file: str, points: dict[str, float]) -> str:
    """ "The kata graded F as saved: S / M points.", in the points of the notebook's test cells
    (`points`: check name -> cell points) where it has them, as nbgrader records them."""
    rows = [c for c in doc.get("checks", []) if c.get("exercise") == ex_id and c.get("name") in points]
    if rows:
        got = [scaled(r, points[r["name"]]) for r in rows]
        score, full = sum(g[0] for g in got), sum(g[1] for g in got)
    else:
        score, full = doc["score"], doc["max_score"]
    return t("nbg_graded", file=file, score=pts(score), max=pts(full))


def check_outcome(row: dict, points: float | None = None) -> tuple[bool, str]:
    """(passed, the line a student reads) of one check of a report: passed only with all its points.
    `points`: what its test cell is worth (nbgrader's metadata), shown instead of the raw points."""
    name = row["name"].removeprefix("test_")
    if row["visibility"] == "hidden":
        name = t("nbg_hidden_name", name=name)
    score, full = scaled(row, points)
    points = dict(score=pts(score), max=pts(full))
    if row["status"] != "passed" or row["score"] < row["max_score"]:
        return False, t("nbg_check_failed", name=name, message=row["message"] or row["status"], **points)
    return True, t("nbg_check_passed", name=name, **points)


def verdict(ex_id: str, check: str) -> tuple[bool, str]:
    """(passed, message) of check `check` of exercise `ex_id` on this notebook as saved: the
    student's preview. The test cell asserts on it, so a failure's traceback is the cell's one
    line and the grader's message."""
    if os.environ.get("NBGRADER_EXECUTION") == "autograde":
        raise GradingError(t("nbg_cell_in_autograde"))
    doc = report(ex_id)
    rows = [c for c in doc["checks"] if c["exercise"] == ex_id and c["name"] == check]
    if not rows:
        raise GradingError(t("nbg_check_unknown", id=ex_id, check=check))
    passed, message = check_outcome(rows[0], doc.get("cell_points", {}).get(check))
    if not passed:
        return False, message
    print(message)
    return True, ""
