"""The Slurm recipe on a real Slurm: a class graded as a job array of 4 shards, then merged, gives
the gradebook one machine gives (issue 29).

A one-node cluster of Debian's slurm-wlm (tests/cluster/slurm.py: munged, slurmctld and slurmd in a
temporary folder) runs recipes/slurm/grade-array.sbatch exactly as an instructor submits it; the
test skips, saying why, where Slurm is not installed (CI installs it: .ci/run) or we are not root.
Three cheap exercises, so that the class grades in a minute or two."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest

from tests.cluster.slurm import one_node_cluster
from tests.conftest import EXERCISES, ROOT, SOLUTIONS, kata, solution_with

pytestmark = pytest.mark.slow

SBATCH = ROOT / "recipes" / "slurm" / "grade-array.sbatch"
EX = ["-e", "s1_11_softmax", "-e", "s1_11_matmul", "-e", "s1_13_causal_mask"]
MISTAKES = {  # one planted mistake each, as the exercises' own tests plant them
    "softmax-whole-sum": ("s1_11_softmax", "return e / e.sum(dim=dim, keepdim=True)", "return e / e.sum()"),
    "matmul-plus-one": (
        "s1_11_matmul",
        "out[i, j] = (A[i, :] * B[:, j]).sum()",
        "out[i, j] = (A[i, :] * B[:, j]).sum() + 1",
    ),
    "mask-upper": ("s1_13_causal_mask", "torch.tril(", "torch.triu("),
}
# what differs between two gradings of the same submission: when, and how long
TIMING = re.compile(r'"(duration_s|time_s|worker_startup_s|created|graded_at|started|finished|mtime)": [^,}\n]+')
STAMP = re.compile(r"\d{4}-\d\d-\d\d[ T]\d\d:\d\d")


def make_class(root: Path) -> Path:
    """Twelve submissions: seven reference solutions (one of them a zip), two stubs, three with one
    planted mistake."""
    cls = root / "class"
    cls.mkdir()
    for name in ("ada", "ben", "chen", "dana", "eli", "fei"):
        shutil.copytree(SOLUTIONS, cls / name)
    shutil.make_archive(str(cls / "gus"), "zip", SOLUTIONS.parent, SOLUTIONS.name)
    for name in ("hui", "ines"):
        shutil.copytree(EXERCISES, cls / name)
    for name, (exercise, old, new) in MISTAKES.items():
        shutil.copytree(SOLUTIONS, cls / name)
        (cls / name / "ch01" / f"{exercise}.py").write_text(solution_with(exercise, old, new))
    return cls


def report(out: Path, student: str) -> str:
    return TIMING.sub(r'"\1": T', (out / "students" / student / "report.json").read_text(encoding="utf-8"))


def summary(out: Path) -> list[str]:
    return [line for line in (out / "summary.md").read_text(encoding="utf-8").splitlines() if not STAMP.search(line)]


def test_a_job_array_of_four_shards_on_slurm_merges_to_the_gradebook_of_one_machine(tmp_path):
    with one_node_cluster(tmp_path) as cluster:  # first: skips before a minute of grading
        cls = make_class(tmp_path)
        one = tmp_path / "one"
        proc = kata("grade", str(cls), "--out", str(one), *EX, "--jobs", "1")
        assert proc.returncode == 0, proc.stdout + proc.stderr

        out2, logs = tmp_path / "out2", tmp_path / "logs"
        logs.mkdir()
        # the two commands of the recipe's header: the array (one CPU per task here: this machine has
        # two), then the merge once every task has ended
        array = cluster.run(
            "sbatch",
            "--parsable",
            "--array=0-3",
            "--cpus-per-task=1",
            f"--output={logs}/%A_%a.out",
            str(SBATCH),
            str(cls),
            str(out2),
            *EX,
            cwd=tmp_path,
            env={"KATA_LANG": "en"},
        )
        assert array.returncode == 0, array.stderr
        job = array.stdout.strip().split(";")[0]
        merge = cluster.run(
            "sbatch",
            "--wait",
            f"--dependency=afterany:{job}",
            f"--output={logs}/merge.log",
            "--wrap",
            f"{ROOT}/.venv/bin/kata gradebook {out2}",
            cwd=tmp_path,
            timeout=1200,
            env={"KATA_LANG": "en"},
        )
        task_logs = {int(p.stem.rsplit("_", 1)[1]): p.read_text() for p in logs.glob("*.out")}
        merged = (logs / "merge.log").read_text() if (logs / "merge.log").exists() else ""
        assert merge.returncode == 0, merge.stderr + merged + str(task_logs) + cluster.logs()
        states = re.findall(r"JobState=(\w+)", cluster.run("scontrol", "show", "job", job).stdout)
        assert states == ["COMPLETED"] * 4, (states, task_logs)  # and the merge ran after all four

    assert sorted(task_logs) == [0, 1, 2, 3]
    graded = 0
    for task, text in task_logs.items():  # each task graded its own part, with the course's kata
        assert f"{ROOT}/.venv/bin/kata grade {cls} --out {out2} --shard {task + 1}/4 --jobs 1" in text, text
        m = re.search(rf"Shard {task + 1}/4: (\d+) submissions", text)
        assert m, text
        graded += int(m[1])
    assert graded == 12  # the four parts are the class, each student once

    assert "for 12 students" in merged, merged  # kata gradebook OUT2, run by Slurm after the array
    for name in ("gradebook.csv", "canvas.csv", "moodle.csv"):
        assert (out2 / name).read_bytes() == (one / name).read_bytes(), name
    book = {r["student"]: r for r in csv.DictReader(io.StringIO((one / "gradebook.csv").read_text()))}
    assert len(book) == 12 and {r["status"] for r in book.values()} == {"graded"}
    assert book["ada"]["percent"] != book["softmax-whole-sum"]["percent"] != book["hui"]["percent"]
    assert summary(out2) == summary(one)
    students = sorted(p.name for p in (one / "students").iterdir())
    assert students == sorted(p.name for p in (out2 / "students").iterdir())
    for student in students:
        assert report(out2, student) == report(one, student), student
        assert json.loads(report(out2, student).replace(": T", ": 0"))["score"] is not None
