"""An exercise as a Jupyter notebook, and a notebook's code back as the exercise file.

`kata notebook ID` writes `exercises/<chapter>/<id>.ipynb` beside `<id>.py`: a markdown intro
(title, section, points, listings), the exercise's current code split into cells by jupytext's
"light" format, and a last cell that runs the exercise's public checks. `kata notebook ID --to-py`
brings the notebook's code back into the .py. Both directions go through jupytext's light
format, so .py -> .ipynb -> .py gives the same file back, byte for byte.

Grading reads a notebook with `code_of`: the kata's own cells (intro, checks) and cells tagged
`kata-skip` are dropped, and so are cell magics whose body is not Python (`%%bash`,
`%%writefile`, ...); shell lines (`!kata check`), line magics (`%timeit`) and help lines
(`softmax?`) become comments (jupytext's escaping, which knows about strings), so they never
run and line numbers stay those of the .py that `--to-py` writes. Student markdown cells
become comment blocks. A notebook that cannot be read raises NotebookError naming the file.
The .py a notebook becomes is UTF-8, and is read back as Python reads it, like any .py
(grader/course/source_text.py): a first cell that starts with `# coding: utf-7` makes a .py Python
would decode as UTF-7, and grading refuses it, naming the notebook.

Neither direction overwrites code without a backup in `.kata/backups/<time>/`, and neither
replaces edits newer than its source unless forced.
"""

from __future__ import annotations

import json
import re
import shutil
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..course import atomic
from ..course.messages import language, t
from ..course.source_text import decode

INTRO_TAG = "kata-intro"
CHECK_TAG = "kata-check"
SKIP_TAG = "kata-skip"
# Cell magics whose body is Python: their first line becomes a comment, the body runs.
PYTHON_CELL_MAGICS = {"time", "timeit", "capture", "prun", "debug"}
CELL_MAGIC = re.compile(r"^\s*%%(\w+)")
# Light format, and no notebook or cell metadata in the .py: the same .py comes back.
JUPYTEXT = {"main_language": "python", "notebook_metadata_filter": "-all", "cell_metadata_filter": "-all"}
KERNEL = {
    "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"},
    "language_info": {"name": "python"},
}


class NotebookError(Exception):
    """A notebook that cannot be read; the message names the file and says why."""


def notebook_path(course, ex) -> Path:
    """exercises/<chapter>/<id>.ipynb, beside the exercise's .py."""
    return course.exercises_dir / Path(ex.file).with_suffix(".ipynb")


# -- reading ---------------------------------------------------------------------------------
def read(text: str | bytes, name: str):
    """Parse a notebook (nbformat 4). Raises NotebookError naming `name` and the place."""
    import nbformat

    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise NotebookError(t("nb_not_utf8", file=name, pos=e.start)) from None
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as e:
        raise NotebookError(t("nb_not_json", file=name, line=e.lineno, col=e.colno, reason=e.msg)) from None
    except RecursionError:  # nested deeper than the parser goes: no notebook is
        raise NotebookError(t("nb_not_notebook", file=name, reason="JSON nested too deeply")) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("cells"), list):
        raise NotebookError(t("nb_not_notebook", file=name, reason="no list of 'cells'"))
    for i, cell in enumerate(doc["cells"], 1):
        if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
            raise NotebookError(t("nb_not_notebook", file=name, reason=f"cell {i} has no cell_type"))
        source = cell.get("source", "")
        if not isinstance(source, (str, list)):
            raise NotebookError(t("nb_not_notebook", file=name, reason=f"cell {i}: 'source' is not text"))
        for part in [source] if isinstance(source, str) else source:
            bad = next((c for c in part if 0xD800 <= ord(c) <= 0xDFFF), None) if isinstance(part, str) else None
            if bad is not None:  # "\ud800" in the JSON: a str Python cannot write as UTF-8
                raise NotebookError(t("nb_surrogate", file=name, cell=i, code=ord(bad)))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # missing cell ids and the like: fixed on read
            return nbformat.reads(text, as_version=4)
    except Exception as e:  # nbformat raises many kinds; any of them means "not readable"
        raise NotebookError(t("nb_not_notebook", file=name, reason=f"{type(e).__name__}: {e}"[:300])) from None


def _graded(cell) -> bool:
    meta = cell.get("metadata")
    tags = meta.get("tags") if isinstance(meta, dict) else None
    if not isinstance(tags, list):  # tags that are not a list of strings are no tags
        tags = []
    if INTRO_TAG in tags or CHECK_TAG in tags or SKIP_TAG in tags:
        return False
    if cell.cell_type == "code":
        m = CELL_MAGIC.match(cell.source)
        if m and m.group(1) not in PYTHON_CELL_MAGICS:
            return False
        return bool(cell.source.strip())
    return cell.cell_type == "markdown"


def code_of(nb) -> str:
    """The exercise's code in a notebook, as the .py that `kata notebook --to-py` writes."""
    import jupytext
    from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

    cells = [(new_code_cell if c.cell_type == "code" else new_markdown_cell)(c.source) for c in nb.cells if _graded(c)]
    out = new_notebook(cells=cells, metadata={"jupytext": dict(JUPYTEXT)})
    text = jupytext.writes(out, fmt="py:light")
    return text if text.endswith("\n") or not text else text + "\n"


def read_code(path: Path, name: str | None = None) -> str:
    """The code of the notebook at `path`. Raises NotebookError naming the file."""
    name = name or str(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise NotebookError(t("nb_not_notebook", file=name, reason=e.strerror or str(e))) from None
    return code_of(read(data, name))


# -- writing ---------------------------------------------------------------------------------
def intro_text(course, ex, lang: str | None = None) -> str:
    from ..course import bundle_assignment

    titles = {lst.id: lst.display_title(lang) for lst in course.listings}
    listings = "\n".join(f"- {lst}: {titles.get(lst, '')}" for lst in ex.listings)
    py = Path("exercises", ex.file).as_posix()
    bundle = bundle_assignment.of(course)  # an assignment's bundle: its points, as `kata check` shows them
    points = ex.points * (bundle.factor_of(ex.id) if bundle is not None else 1.0)
    return t(
        "nb_intro",
        lang,
        section=ex.section,
        title=ex.display_title(lang),
        id=ex.id,
        points=f"{round(points, 2):g}",
        listings=listings or "-",
        py=py,
        nb=Path(py).with_suffix(".ipynb").as_posix(),
        skip=SKIP_TAG,
    )


def check_source(ex, lang: str | None = None) -> str:
    lang = lang or language()
    flag = " --lang zh" if lang == "zh" else ""
    return f"# {t('nb_check_comment', lang)}\nimport sys\n!{{sys.executable}} -m grader{flag} check {ex.id}"


def build(course, ex, code: str, lang: str | None = None):
    """The notebook of exercise `ex` holding `code` (the text of its .py)."""
    import jupytext
    from nbformat.v4 import new_code_cell, new_markdown_cell

    nb = jupytext.reads(code, fmt="py:light")
    nb.cells = [
        new_markdown_cell(intro_text(course, ex, lang), metadata={"tags": [INTRO_TAG]}),
        *nb.cells,
        new_code_cell(check_source(ex, lang), metadata={"tags": [CHECK_TAG]}),
    ]
    nb.metadata = {**KERNEL, "jupytext": dict(JUPYTEXT), "kata": {"exercise": ex.id}}
    return nb


def dumps(nb) -> str:
    import nbformat

    return nbformat.writes(nb)


# -- the two directions, for the `kata notebook` command -----------------------------------
@dataclass
class Outcome:
    exercise: str
    action: str  # "wrote", "same", "refused", "missing", "unreadable"
    path: Path
    message: str
    backup: Path | None = None

    @property
    def ok(self) -> bool:
        return self.action in ("wrote", "same")


class Backups:
    """One folder per command run, .kata/backups/<time>/, holding the files it replaced."""

    def __init__(self, course):
        self.course = course
        self.folder: Path | None = None

    def keep(self, path: Path) -> Path:
        if self.folder is None:
            base = self.course.root / ".kata" / "backups" / time.strftime("%Y%m%d-%H%M%S")
            folder, n = base, 1
            while folder.exists():  # two commands in one second: never mix their backups
                folder, n = base.with_name(f"{base.name}-{n}"), n + 1
            self.folder = folder
        rel = path.relative_to(self.course.exercises_dir)
        target = self.folder / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
        return target


def _rel(course, path: Path) -> str:
    try:
        return path.relative_to(course.root).as_posix()
    except ValueError:
        return str(path)


def _write(path: Path, text: str) -> None:
    """Write atomically: an editor or a grader never sees half a file."""
    atomic.write_text(path, text, mode=0o644, keep_mode=True)


def to_notebook(course, ex, backups: Backups, force: bool = False, lang: str | None = None) -> Outcome:
    """exercises/<id>.py -> exercises/<id>.ipynb. A notebook holding other code is backed up
    first, and kept when it was saved after the .py (unless `force`)."""
    py = course.exercises_dir / ex.file
    nb_path = notebook_path(course, ex)
    rel_py, rel_nb = _rel(course, py), _rel(course, nb_path)
    if not py.is_file():
        return Outcome(ex.id, "missing", py, t("nb_py_missing", py=rel_py, id=ex.id))
    found = decode(py.read_bytes(), rel_py)  # as Python reads it: BOM and coding line honoured
    code = found.text if found.text is not None else py.read_bytes().decode("utf-8", errors="replace")
    backup = None
    if nb_path.exists():
        try:
            same = read_code(nb_path, rel_nb) == code
        except NotebookError as e:
            if not force:
                return Outcome(ex.id, "unreadable", nb_path, t("nb_unreadable_keep", reason=str(e), id=ex.id))
            same = False
        if same:
            return Outcome(ex.id, "same", nb_path, t("nb_same", nb=rel_nb, py=rel_py))
        if nb_path.stat().st_mtime > py.stat().st_mtime and not force:
            return Outcome(ex.id, "refused", nb_path, t("nb_newer", nb=rel_nb, py=rel_py, id=ex.id))
        backup = backups.keep(nb_path)
    _write(nb_path, dumps(build(course, ex, code, lang)))
    return Outcome(ex.id, "wrote", nb_path, t("nb_wrote", nb=rel_nb, py=rel_py), backup)


def to_py(course, ex, backups: Backups, force: bool = False) -> Outcome:
    """exercises/<id>.ipynb -> exercises/<id>.py. The .py is backed up first, and kept when it
    was saved after the notebook (unless `force`)."""
    py = course.exercises_dir / ex.file
    nb_path = notebook_path(course, ex)
    rel_py, rel_nb = _rel(course, py), _rel(course, nb_path)
    if not nb_path.is_file():
        return Outcome(ex.id, "missing", nb_path, t("nb_missing", nb=rel_nb, id=ex.id))
    try:
        code = read_code(nb_path, rel_nb)
    except NotebookError as e:
        return Outcome(ex.id, "unreadable", nb_path, str(e))
    backup = None
    if py.is_file():
        if decode(py.read_bytes(), rel_py).text == code:
            return Outcome(ex.id, "same", py, t("nb_same", nb=rel_nb, py=rel_py))
        if py.stat().st_mtime > nb_path.stat().st_mtime and not force:
            return Outcome(ex.id, "refused", py, t("py_newer", nb=rel_nb, py=rel_py, id=ex.id))
        backup = backups.keep(py)
    py.parent.mkdir(parents=True, exist_ok=True)
    _write(py, code)
    return Outcome(ex.id, "wrote", py, t("py_wrote", nb=rel_nb, py=rel_py), backup)
