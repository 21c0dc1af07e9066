"""docs/architecture.md stays in step with the tree: its code map names every part of the grader
at the level tests/test_layers.py holds, every folder of the repository, and every path it
mentions exists."""

from __future__ import annotations

import re
import subprocess

from tests.conftest import ROOT
from tests.test_layers import DATA_DIRS, LEVEL, PACKAGE

GUIDE = ROOT / "docs" / "architecture.md"
TEXT = GUIDE.read_text(encoding="utf-8")
ROW = re.compile(r"^\| (\d+) \| `grader/(\w+)/?[^|]*\|", re.M)


def tracked_top_level() -> set[str]:
    """The repository's top-level entries that git tracks (a fresh clone has these and no others)."""
    out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {line.split("/")[0] for line in out.splitlines() if line}


def test_the_code_map_gives_every_part_its_level():
    mapped = {part: int(level) for level, part in ROW.findall(TEXT)}
    mapped["cli"] = mapped.pop("cli", None) or next(
        int(m) for m in re.findall(r"^\| (\d+) \| `grader/cli\.py`", TEXT, re.M)
    )
    assert mapped == LEVEL, {
        p: (mapped.get(p), LEVEL.get(p)) for p in set(mapped) | set(LEVEL) if mapped.get(p) != LEVEL.get(p)
    }


def test_the_code_map_names_every_data_folder_of_the_package():
    data = {
        p.name
        for p in PACKAGE.iterdir()
        if p.is_dir() and p.name in DATA_DIRS and p.name != "__pycache__" and any(f.is_file() for f in p.rglob("*"))
    }
    missing = [d for d in sorted(data) if f"`grader/{d}/`" not in TEXT]
    assert not missing, f"docs/architecture.md: say what grader/{missing[0]}/ holds"


def test_the_code_map_names_every_folder_of_the_repository():
    folders = {name for name in tracked_top_level() if (ROOT / name).is_dir()} - {"grader", "docs"} | {"docs"}
    missing = [f for f in sorted(folders) if f"`{f}/`" not in TEXT]
    assert not missing, f"docs/architecture.md, the rest of the repository: say what {missing[0]}/ holds"


def test_every_path_the_guide_names_exists():
    """Each `path` in backticks that names a file or folder of the repository (a placeholder such as
    <id> matches any name)."""
    named = {p for p in re.findall(r"`([\w.<>/-]+)`", TEXT) if "/" in p or re.search(r"\.(py|toml|md|po)$", p)}
    gone = []
    for path in sorted(named):
        if path.startswith(("$", "/")) or path.endswith("/**"):
            continue
        pattern = re.sub(r"<[^>]+>", "*", path.rstrip("/"))
        if "/" not in pattern and not (ROOT / pattern).exists():  # a bare file name: somewhere in the tree
            if not any(ROOT.glob(f"**/{pattern}")):
                gone.append(path)
            continue
        if not any(ROOT.glob(pattern)):
            gone.append(path)
    assert not gone, f"docs/architecture.md names paths the tree lacks: {gone}"


def test_the_check_of_paths_would_find_a_stale_one(tmp_path, monkeypatch):
    monkeypatch.setattr(__import__(__name__), "TEXT", TEXT + "\n`grader/checking/no_such_module.py`\n")
    try:
        test_every_path_the_guide_names_exists()
    except AssertionError as e:
        assert "no_such_module.py" in str(e)
    else:
        raise AssertionError("a path the tree lacks was not found")
