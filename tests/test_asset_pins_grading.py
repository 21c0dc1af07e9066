"""Issue 37: grading fails closed when an asset a check reads is missing or does not match the
course's pin (grader/course/pins.py): no check is skipped to 0 points, `kata grade` stops with the
reason and the repairing command, a class batch records an error its next run grades again, and no
message names the host path of the assets folder."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, SOLUTIONS
from tests.test_assets import _swap_two_ranks

REAL = ROOT / ".kata" / "assets"
EX = ["-e", "s1_04_byte_bpe"]
pytestmark = pytest.mark.skipif(
    not (REAL / "gpt2.tiktoken").is_file(), reason="the course's .kata/assets is not fetched (`kata assets fetch`)"
)


def _assets(tmp_path: Path, ranks: bytes | None, link: bool = False) -> Path:
    """A copy of the course's assets folder whose gpt2.tiktoken is `ranks` (None: not there), or
    (`link`) a link to a good copy elsewhere on the host."""
    assets = tmp_path / "workshop" / "assets"
    shutil.copytree(REAL, assets)
    if ranks is None:
        (assets / "gpt2.tiktoken").unlink()
    elif link:
        (tmp_path / "elsewhere.tiktoken").write_bytes(ranks)
        (assets / "gpt2.tiktoken").unlink()
        (assets / "gpt2.tiktoken").symlink_to(tmp_path / "elsewhere.tiktoken")
    else:
        (assets / "gpt2.tiktoken").write_bytes(ranks)
    return assets


def _kata(assets: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "KATA_LANG": "en",
        "PYTHONPATH": str(ROOT),
        "KATA_ASSETS_DIR": str(assets),
        "KATA_OFFLINE": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True, timeout=600, env=env
    )


def _no_host_path(text: str, assets: Path) -> None:
    for host in (str(assets), str(assets.parent), str(ROOT)):
        assert host not in text, text


@pytest.mark.parametrize("damage", ["two ranks swapped", "missing", "a link to a good copy"])
def test_grading_stops_with_the_reason_when_the_ranks_are_damaged_or_missing(tmp_path, damage):
    """The outside attack of issue 37: a link to a good copy passed the pin, dangled at /assets in
    the sandbox, and the reference scored 3/18 with exit 0."""
    good = (REAL / "gpt2.tiktoken").read_bytes()
    assets = _assets(
        tmp_path,
        None if damage == "missing" else good if damage.startswith("a link") else _swap_two_ranks(good),
        link=damage.startswith("a link"),
    )
    report = tmp_path / "report.json"
    proc = _kata(assets, "grade", str(SOLUTIONS), *EX, "--json", str(report))
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2, said
    assert "grading stopped, nothing was scored: the checks of s1_04_byte_bpe read gpt2.tiktoken" in proc.stderr
    assert "does not match the sha256 the course pins" in proc.stderr and "kata assets fetch" in proc.stderr
    assert "kata assets unpack FILE" in proc.stderr
    assert not report.exists()  # no score at all, rather than 3/18
    _no_host_path(said, assets)


def test_a_batch_records_an_error_and_grades_it_once_the_ranks_are_repaired(tmp_path):
    assets = _assets(tmp_path, _swap_two_ranks((REAL / "gpt2.tiktoken").read_bytes()))
    cls, out = tmp_path / "class", tmp_path / "out"
    shutil.copytree(SOLUTIONS, cls / "alice")
    shutil.copytree(SOLUTIONS, cls / "bob")
    first = _kata(assets, "grade", str(cls), "--out", str(out), *EX)
    assert first.returncode != 0, first.stdout + first.stderr
    records = {p.parent.name: json.loads(p.read_text()) for p in out.glob("students/*/report.json")}
    assert set(records) == {"alice", "bob"}
    for record in records.values():
        student = record["student"]
        assert student["status"] == "error", student
        assert "gpt2.tiktoken" in student["reason"] and "kata assets fetch" in student["reason"]
        assert not record.get("checks")
    _no_host_path(first.stdout + first.stderr, assets)
    for p in out.rglob("*"):
        if p.is_file():
            _no_host_path(p.read_text(errors="replace"), assets)

    shutil.copy(REAL / "gpt2.tiktoken", assets / "gpt2.tiktoken")  # repaired: the next run grades them
    second = _kata(assets, "grade", str(cls), "--out", str(out), *EX)
    assert second.returncode == 0, second.stdout + second.stderr
    for name in ("alice", "bob"):
        record = json.loads((out / "students" / name / "report.json").read_text())
        assert record["student"]["status"] == "graded"
        assert record["score"] == record["max_score"] > 0, record


# The outside attack on issue 37's fix: the ranks replaced once `kata grade` had looked at them (a
# concurrent `kata assets unpack`, a shared disk) skipped the checks that read them afterwards, and
# the reference scored 14/34 with exit 0 (a class batch recorded it as graded). Each script below
# grades with the first look passing and the ranks damaged from then on: in the sandbox's copy
# (made when it starts) and on the trusted side (read at the first check that needs them).
AFTER_THE_LOOK = """
import sys
from pathlib import Path
from grader.checking import asset_gate, lanes
from grader.checking.submission import open_submission
from grader.course import manifest
from grader.capstone import gpt2

course = manifest.load(Path.cwd())
asset_gate.require = lambda course, exercises: None  # the look before the checks saw good ranks
if sys.argv[1] == "trusted":  # the sandbox's copy is good; the trusted side reads them after the change
    def damaged():
        raise gpt2.AssetMissing(asset_gate.reason(gpt2.ASSET_NAME))
    gpt2.encoding = damaged
exercises = [course.get("s1_04_byte_bpe")]
with open_submission(Path(sys.argv[2]), course.chapter, course.exercises) as sub:
    try:
        result = lanes.run(course, sub, exercises, lanes=int(sys.argv[3]))
    except asset_gate.AssetUnavailable as e:
        print("STOPPED", e)
        raise SystemExit(2)
print("SCORED", sum(r.score for r in result.results), "of", sum(r.max_score for r in result.results))
"""


@pytest.mark.parametrize("where,lanes", [("sandbox", 1), ("trusted", 1), ("trusted", 2), ("link", 1)])
def test_ranks_damaged_after_grading_looked_at_them_stop_it_too(tmp_path, where, lanes):
    """("link": a link to a good copy put in place after the look, which the third outside attack
    saw scored in full: a link is not the pinned file, in the sandbox's copy or on the trusted side.)"""
    good = (REAL / "gpt2.tiktoken").read_bytes()
    assets = _assets(tmp_path, _swap_two_ranks(good) if where == "sandbox" else good, link=where == "link")
    env = {
        **os.environ,
        "KATA_LANG": "en",
        "PYTHONPATH": str(ROOT),
        "KATA_ASSETS_DIR": str(assets),
        "KATA_OFFLINE": "1",
    }
    proc = subprocess.run(
        [sys.executable, "-c", AFTER_THE_LOOK, where, str(SOLUTIONS), str(lanes)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )
    said = proc.stdout + proc.stderr
    assert proc.returncode == 2 and "STOPPED" in proc.stdout, said
    assert "the checks of s1_04_byte_bpe read gpt2.tiktoken" in proc.stdout and "kata assets fetch" in proc.stdout
    _no_host_path(said, assets)


@pytest.mark.parametrize("odd", ["a dangling link", "a link to a pipe"])
def test_an_odd_file_at_the_ranks_place_stops_only_what_reads_them_and_names_no_host_path(tmp_path, odd):
    """The third outside attack: a dangling link (or a link to a FIFO) at assets/gpt2.tiktoken made
    the sandbox's copy of the folder fail with both host paths in the reason of every student of a
    batch, and a traceback for an exercise that does not read the ranks."""
    assets = _assets(tmp_path, None)
    target = tmp_path / "elsewhere"
    if odd == "a link to a pipe":
        os.mkfifo(target)
    (assets / "gpt2.tiktoken").symlink_to(target)
    other = _kata(assets, "grade", str(SOLUTIONS), "-e", "s1_11_softmax", "--json", str(tmp_path / "r.json"))
    assert other.returncode == 0 and "Traceback" not in other.stderr, other.stdout + other.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["score"] == doc["max_score"] > 0
    reading = _kata(assets, "grade", str(SOLUTIONS), *EX)
    assert reading.returncode == 2 and "gpt2.tiktoken" in reading.stderr and "Traceback" not in reading.stderr
    for said in (other.stdout + other.stderr, reading.stdout + reading.stderr):
        _no_host_path(said, assets)
        assert str(target) not in said


def test_an_assets_folder_the_worker_may_not_enter_is_copied_readable(tmp_path):
    """The fourth outside attack: the assets folder at mode 000 (the grader runs as root and copies
    it; the copy kept the mode) shut the sandboxed worker out, and the reference scored 3/18 with
    exit 0. The sandbox's copy is readable by its worker whatever the folder's modes."""
    assets = _assets(tmp_path, (REAL / "gpt2.tiktoken").read_bytes())
    os.chmod(assets, 0)
    try:
        proc = _kata(assets, "grade", str(SOLUTIONS), *EX, "--json", str(tmp_path / "r.json"))
    finally:
        os.chmod(assets, 0o755)
    if os.getuid() != 0:  # without root the grader cannot read the folder either: it stops, saying why
        assert proc.returncode == 2 and "gpt2.tiktoken" in proc.stderr, proc.stdout + proc.stderr
        return
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["score"] == doc["max_score"] > 0, [c for c in doc["checks"] if c["status"] != "passed"][:2]
