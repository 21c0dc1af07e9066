"""A class graded as N shards (`kata grade DIR --out OUT --shard K/N`), then merged (`kata gradebook
OUT`), gives what one machine gives (issue 29).

All through the real command line, as a scheduler's tasks would run it: N processes at once into one
OUT, or into separate OUTs merged with --merge, on one small exercise (s1_11_matmul) so that a class
grades in seconds. The cluster itself (a one-node Slurm) is tests/test_cluster_slurm.py's.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.instructor.batch.shards import Shard, ShardError, part
from tests.conftest import EXERCISES, ROOT, SOLUTIONS, kata, solution_with

EX = ["-e", "s1_11_matmul"]
WRONG = solution_with(
    "s1_11_matmul", "out[i, j] = (A[i, :] * B[:, j]).sum()", "out[i, j] = (A[i, :] * B[:, j]).sum() + 1"
)
CLASS_FILES = ("gradebook.csv", "canvas.csv", "moodle.csv", "summary.md")
TIMING = re.compile(r'(time|duration_s|worker_startup_s|created|mtime)"?[=:] ?"?[0-9.:TZ-]+"?')


def make_class(root: Path) -> Path:
    """Eleven submissions of every kind a class holds: right, wrong, a stub, a zip, a name clash,
    a folder that is not a submission."""
    cls = root / "class"
    cls.mkdir(parents=True)
    for name in ("alice", "bob", "carol", "dave", "erin", "frank"):
        shutil.copytree(SOLUTIONS, cls / name)
    for name in ("gina", "hank"):
        (cls / name / "ch01").mkdir(parents=True)
        (cls / name / "ch01" / "s1_11_matmul.py").write_text(WRONG)
    shutil.copytree(EXERCISES, cls / "ivan")
    shutil.make_archive(str(cls / "judy"), "zip", SOLUTIONS.parent, SOLUTIONS.name)
    shutil.copytree(SOLUTIONS, cls / "judy")  # judy.zip and judy/: one is graded as judy-2
    (cls / "notes.txt").write_text("not a submission")
    return cls


def comparable(path: Path) -> str:
    return TIMING.sub(r"\1=T", path.read_text(encoding="utf-8"))


def assert_same_results(one: Path, merged: Path) -> None:
    """The class files byte for byte, and every student's report and results, timings aside."""
    for name in CLASS_FILES:
        assert (one / name).read_bytes() == (merged / name).read_bytes(), name
    assert comparable(one / "junit.xml") == comparable(merged / "junit.xml")
    students = sorted(p.name for p in (one / "students").iterdir())
    assert students == sorted(p.name for p in (merged / "students").iterdir())
    for s in students:
        for rel in ("report.json", "gradescope/results.json", "exercism/results.json"):
            assert comparable(one / "students" / s / rel) == comparable(merged / "students" / s / rel), (s, rel)
    a, b = (json.loads((d / "batch.json").read_text()) for d in (one, merged))
    for key in ("kata_version", "course", "exercises", "skipped", "renamed", "public_only", "assignment"):
        assert a[key] == b[key], key


def shards_at_once(cls: Path, outs: list[Path], n: int, *extra: str) -> list[subprocess.CompletedProcess]:
    """The N shards as N processes started together, as a job array's tasks are."""
    env = {**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT)}
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader",
                "grade",
                str(cls),
                "--out",
                str(outs[k - 1]),
                *EX,
                "--jobs",
                "1",
                "--shard",
                f"{k}/{n}",
                *extra,
            ],
            cwd=ROOT,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for k in range(1, n + 1)
    ]
    done = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        done.append(subprocess.CompletedProcess(p.args, p.returncode, out, err))
    return done


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded on one machine, and as 3 shards at once into one OUT, merged."""
    root = tmp_path_factory.mktemp("shards")
    cls = make_class(root)
    one = root / "one"
    proc = kata("grade", str(cls), "--out", str(one), *EX, "--jobs", "2", "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = root / "sharded"
    runs = shards_at_once(cls, [out] * 3, 3)
    merge = kata("gradebook", str(out))
    return cls, one, out, runs, merge


def test_three_shards_at_once_into_one_out_merge_to_the_one_machine_results(graded):
    cls, one, out, runs, merge = graded
    for k, run in enumerate(runs, 1):
        assert run.returncode == 0, run.stdout + run.stderr
        assert "Traceback" not in run.stderr
        assert re.search(rf"Shard {k}/3: \d+ submissions of the class", run.stdout), run.stdout
        assert f"kata gradebook {out}" in run.stdout
    # no shard wrote a class file: the merge writes them
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert "Merged 3 shard(s) of 3: 1-of-3, 2-of-3, 3-of-3." in merge.stdout
    assert_same_results(one, out)
    meta = json.loads((out / "batch.json").read_text())
    assert meta["shards"] == ["1-of-3", "2-of-3", "3-of-3"]
    # each student in exactly one shard, the one its entry's name hashes to
    entries = {}
    for k in (1, 2, 3):
        shard = json.loads((out / "shards" / f"{k}-of-3.json").read_text())
        assert all(part(source, 3) == k for source in shard["entries"].values())
        entries.update(shard["entries"])
    assert sorted(entries) == sorted(p.name for p in (one / "students").iterdir())


def test_shards_in_separate_outs_merge_with_merge(graded, tmp_path):
    cls, one, _, _, _ = graded
    outs = [tmp_path / f"part{k}" for k in (1, 2)]
    for run in shards_at_once(cls, outs, 2):
        assert run.returncode == 0, run.stdout + run.stderr
    for o in outs:
        assert not (o / "gradebook.csv").exists()
    proc = kata("gradebook", str(tmp_path / "all"), "--merge", *map(str, outs))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Copied 11 students' results from" in proc.stdout and "Merged 2 shard(s) of 2" in proc.stdout
    assert_same_results(one, tmp_path / "all")
    # the same part twice is no clash; another class's student of the same name is
    again = kata("gradebook", str(tmp_path / "all"), "--merge", str(outs[0]))
    assert again.returncode == 0, again.stdout + again.stderr
    other = tmp_path / "other"
    shutil.copytree(outs[0], other)
    name = next(p.name for p in (other / "students").iterdir())
    report = other / "students" / name / "report.json"
    doc = json.loads(report.read_text())
    doc["student"]["fingerprint"] = "0" * 64
    report.write_text(json.dumps(doc))
    clash = kata("gradebook", str(tmp_path / "all"), "--merge", str(other))
    assert clash.returncode == 2 and f"{name} is in both" in clash.stderr, clash.stderr


def test_a_missing_shard_is_named_with_its_students_and_the_merge_says_so(graded, tmp_path):
    cls, one, _, _, _ = graded
    out = tmp_path / "out"
    for k in (1, 3):  # shard 2 of 3 never ran
        proc = kata("grade", str(cls), "--out", str(out), *EX, "--jobs", "1", "--shard", f"{k}/3")
        assert proc.returncode == 0, proc.stdout + proc.stderr
    proc = kata("gradebook", str(out))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "Not run yet: shard 2/3." in proc.stderr
    missing = sorted(p.name for p in cls.iterdir() if p.name != "notes.txt" and part(p.name, 3) == 2)
    assert missing and all(m in proc.stderr for m in missing), proc.stderr
    assert (out / "gradebook.csv").exists()  # what there is, written; the exit status says it is not all


def test_a_shard_with_other_settings_is_refused_and_the_merge_names_it(graded, tmp_path):
    cls, _, _, _, _ = graded
    out = tmp_path / "out"
    assert kata("grade", str(cls), "--out", str(out), *EX, "--jobs", "1", "--shard", "1/2").returncode == 0
    other = kata("grade", str(cls), "--out", str(out), "-e", "s1_11_softmax", "--jobs", "1", "--shard", "2/2")
    assert other.returncode == 2, other.stdout + other.stderr
    assert "holds shards graded with another course version or other settings than shard 2/2" in other.stderr
    assert "exercises: ['s1_11_matmul'] (1-of-2)" in other.stderr
    split = kata("grade", str(cls), "--out", str(out), *EX, "--jobs", "1", "--shard", "2/3")
    assert split.returncode == 2 and "split another way (1-of-2)" in split.stderr, split.stderr
    forced = kata(
        "grade", str(cls), "--out", str(out), "-e", "s1_11_softmax", "--jobs", "1", "--shard", "2/2", "--force"
    )
    assert forced.returncode == 0, forced.stdout + forced.stderr
    merge = kata("gradebook", str(out))
    assert merge.returncode == 2, merge.stdout + merge.stderr
    assert "cannot be merged" in merge.stderr and "shard 2-of-2: exercises: ['s1_11_softmax'] (2-of-2)" in merge.stderr
    assert not (out / "gradebook.csv").exists()


def test_a_killed_shard_resumes_and_the_merge_is_whole(graded, tmp_path):
    cls, one, _, _, _ = graded
    out = tmp_path / "out"
    env = {**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT)}
    first = subprocess.Popen(
        [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), *EX, "--jobs", "1", "--shard", "1/1"],
        cwd=ROOT,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    while not list(out.glob("students/*/report.json")) and time.monotonic() < deadline:
        time.sleep(0.1)
    os.killpg(first.pid, signal.SIGKILL)  # the scheduler's kill: the task and its grading processes
    first.wait()
    done = len(list(out.glob("students/*/report.json")))
    assert 1 <= done < 11
    again = kata("grade", str(cls), "--out", str(out), *EX, "--jobs", "1", "--shard", "1/1")
    assert again.returncode == 0, again.stdout + again.stderr
    assert f"{done} of 11 submissions already graded" in again.stdout, again.stdout
    merge = kata("gradebook", str(out))
    assert merge.returncode == 0, merge.stdout + merge.stderr
    assert_same_results(one, out)
    assert not list(out.rglob(".*.part"))


def test_one_out_takes_shards_or_a_whole_run_never_both(graded, tmp_path):
    cls, _, out, _, _ = graded
    whole = kata("grade", str(cls), "--out", str(out), *EX)  # settings the same: a whole run may follow
    assert whole.returncode == 0 and "already graded" in whole.stdout, whole.stdout + whole.stderr
    from grader.instructor.batch import shards, store

    with shards.locked(out, Shard(1, 3)):  # a shard at work: neither a whole run nor a merge may write
        busy = kata("grade", str(cls), "--out", str(out), *EX)
        assert busy.returncode == 2 and "is writing into" in busy.stderr, busy.stderr
        merge = kata("gradebook", str(out))
        assert merge.returncode == 2 and "is writing into" in merge.stderr, merge.stderr
        same = kata("grade", str(cls), "--out", str(out), *EX, "--shard", "1/3")
        assert same.returncode == 2 and "shard 1/3 is already being graded" in same.stderr, same.stderr
        beside = kata("grade", str(cls), "--out", str(out), *EX, "--shard", "2/3")
        assert beside.returncode == 0, beside.stdout + beside.stderr
    with store.locked(out):  # a whole run at work: no shard
        shard = kata("grade", str(cls), "--out", str(out), *EX, "--shard", "2/3")
        assert shard.returncode == 2 and "already being graded" in shard.stderr, shard.stderr


def test_shard_options_are_checked_before_anything_runs(tmp_path):
    for bad in ("0/3", "4/3", "3", "a/b", "1/0", "1/100000"):
        proc = kata("grade", str(tmp_path), "--out", str(tmp_path / "o"), "--shard", bad)
        assert proc.returncode == 2 and f"--shard {bad}: give K/N" in proc.stderr, proc.stderr
    proc = kata("grade", str(tmp_path), "--out", str(tmp_path / "o"), "--shard", "1/2", "--lms-assignment", "A (1)")
    assert proc.returncode == 2 and "--lms-assignment: a shard grades part of the class" in proc.stderr
    assert not (tmp_path / "o").exists()


def test_parts_are_stable_and_a_late_student_moves_nobody():
    names = [f"student{i:04d}" for i in range(2000)]
    for n in (1, 2, 4, 16):
        parts = {s: part(s, n) for s in names}
        assert all(1 <= p <= n for p in parts.values())
        assert all(sum(Shard(k, n).holds(s) for k in range(1, n + 1)) == 1 for s in names[:50])
        counts = [list(parts.values()).count(k) for k in range(1, n + 1)]
        assert max(counts) - min(counts) <= 6 * (len(names) / n) ** 0.5  # balanced as a fair draw is
        late = {s: part(s, n) for s in names + ["zoe-late"]}
        assert all(late[s] == parts[s] for s in names)
    assert part("alice.zip", 4) == part("alice.zip", 4) and Shard.parse(" 2 / 4 ") == Shard(2, 4)
    with pytest.raises(ShardError):
        Shard.parse("5/4")
