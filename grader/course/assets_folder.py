"""Which folder of data files (GPT-2's merge ranks, `gpt2.tiktoken`) a course gets: the one the
sandbox binds read-only as /assets and the checks read. The capstone's gpt2.py fetches into it."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from .pins import pin

ASSET_NAME = "gpt2.tiktoken"
SHA256 = pin(ASSET_NAME)  # the course's pin (pins.py)
MAX_ASSET_BYTES = 4 * 1024 * 1024  # the file is 835,554 bytes


def _verified(path: Path) -> bool:
    """The file exists, is not oversized and has the expected sha256."""
    try:
        return (
            path.is_file()
            and path.stat().st_size <= MAX_ASSET_BYTES
            and hashlib.sha256(path.read_bytes()).hexdigest() == SHA256
        )
    except OSError:
        return False


def course_root() -> Path:
    """The folder that holds the `grader` package and course.toml (a checkout or an editable
    install); for a package installed into site-packages, the course folder the command runs in."""
    here = Path(__file__).resolve().parents[2]  # this file is <course root>/grader/course/assets_folder.py
    if (here / "course.toml").is_file():
        return here
    cwd = Path.cwd().resolve()  # the nearest folder holding course.toml, as manifest.find_root looks
    return next((d for d in (cwd, *cwd.parents) if (d / "course.toml").is_file()), here)


_COURSE: Path | None = None  # the course the command works on (use_course), when not the kata's own


def use_course(root: str | os.PathLike | None) -> None:
    """The course folder the assets are looked up for from now on (manifest.load sets it): a copy of
    the course, graded or checked by the kata installed from the original, is not the kata's own."""
    global _COURSE
    _COURSE = Path(root).resolve() if root is not None else None


def own_assets_dir(root: str | os.PathLike | None = None) -> Path:
    """The course folder's own assets folder: $KATA_ASSETS_DIR, else <root>/.kata/assets."""
    env = os.environ.get("KATA_ASSETS_DIR")
    return Path(env) if env else Path(root or _COURSE or course_root()) / ".kata" / "assets"


def assets_dir(root: str | os.PathLike | None = None) -> Path:
    """The assets folder of the course at `root` (default: the course in use, else the kata's own),
    the one the sandbox gets and the checks read: $KATA_ASSETS_DIR when set; else the course's own
    .kata/assets when it holds GPT-2's ranks; else, for a copy of the course made without .kata/
    (how students and TAs copy it), the kata's own course's, when that holds them (every file there
    is sha256-checked before use); else the course's own, which `kata assets fetch` run in the
    course folder fills."""
    own = own_assets_dir(root)
    if os.environ.get("KATA_ASSETS_DIR") or _verified(own / ASSET_NAME):
        return own
    lender = course_root() / ".kata" / "assets"
    if lender != own and _verified(lender / ASSET_NAME):
        return lender
    return own
