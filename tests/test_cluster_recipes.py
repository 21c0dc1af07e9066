"""The cluster recipes (recipes/slurm, recipes/kubernetes) run the right `kata grade --shard` command.

Each script is executed as its scheduler would run it (Slurm's environment for an array task, the
Indexed Job's JOB_COMPLETION_INDEX) with a fake `kata` that records its arguments; the real
scheduler runs the Slurm script in tests/test_cluster_slurm.py (slow)."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import yaml

from tests.conftest import ROOT

SBATCH = ROOT / "recipes" / "slurm" / "grade-array.sbatch"
INDEXED_JOB = ROOT / "recipes" / "kubernetes" / "grade-indexed-job.yaml"
FAKE_KATA = """#!/usr/bin/env bash
printf '%s\\n' "$@" > "$(dirname "$0")/argv"
exit "${FAKE_EXIT:-0}"
"""


def fake_kata(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    kata = folder / "kata"
    kata.write_text(FAKE_KATA)
    kata.chmod(0o755)
    return kata


def argv_of(kata: Path) -> list[str] | None:
    record = kata.parent / "argv"
    return record.read_text().splitlines() if record.exists() else None


def array_task(task: int, count: int, cpus: int | None = 4, minimum: int = 0, maximum: int | None = None) -> dict:
    """The variables Slurm sets for one task of `sbatch --array=MIN-MAX` (as slurmd 22.05 does)."""
    env = {
        "SLURM_JOB_ID": str(100 + task),
        "SLURM_ARRAY_JOB_ID": "100",
        "SLURM_ARRAY_TASK_ID": str(task),
        "SLURM_ARRAY_TASK_COUNT": str(count),
        "SLURM_ARRAY_TASK_MIN": str(minimum),
        "SLURM_ARRAY_TASK_MAX": str(count - 1 if maximum is None else maximum),
        "SLURM_ARRAY_TASK_STEP": "1",
    }
    if cpus is not None:
        env["SLURM_CPUS_PER_TASK"] = str(cpus)
    return env


def run_script(script: Path, args: list[str], env: dict, cwd: Path) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "KATA"))}
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, cwd=cwd, env={**base, **env}, timeout=60
    )


def test_the_sbatch_script_is_valid_bash_and_slurm_reads_all_its_options():
    assert subprocess.run(["bash", "-n", str(SBATCH)], capture_output=True, text=True).returncode == 0
    lines = SBATCH.read_text().splitlines()
    assert lines[0].startswith("#!")
    # sbatch reads #SBATCH lines only up to the first line that is not a comment or blank
    first_command = next(i for i, line in enumerate(lines) if line.strip() and not line.startswith("#"))
    directives = [line for line in lines if line.startswith("#SBATCH")]
    assert directives and all(lines.index(d) < first_command for d in directives)
    options = {}
    for line in directives:
        m = re.fullmatch(r"#SBATCH --([a-z][a-z-]*)=(\S+)", line)
        assert m, f"not an sbatch option: {line!r}"
        options[m[1]] = m[2]
    assert int(options["cpus-per-task"]) >= 1
    assert re.fullmatch(r"(\d+-)?\d{1,2}:\d\d:\d\d", options["time"])
    assert "%A" in options["output"] and "%a" in options["output"]  # one log per array task
    assert re.fullmatch(r"\d+[KMGT]?", options["mem-per-cpu"])


def test_each_array_task_grades_its_own_shard_with_its_cpus(tmp_path):
    kata = fake_kata(tmp_path / "venv" / "bin")
    for task in range(4):
        proc = run_script(
            SBATCH,
            ["class", "out", "-e", "s1_11_softmax", "--budget", "600"],
            {**array_task(task, 4), "KATA": str(kata)},
            tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        assert argv_of(kata) == [
            "grade",
            "class",
            "--out",
            "out",
            "--shard",
            f"{task + 1}/4",
            "--jobs",
            "4",
            "-e",
            "s1_11_softmax",
            "--budget",
            "600",
        ]
        assert f"--shard {task + 1}/4" in proc.stdout  # the task's log says which part it graded
    proc = run_script(SBATCH, ["class", "out"], {**array_task(0, 2, cpus=None), "KATA": str(kata)}, tmp_path)
    assert proc.returncode == 0 and argv_of(kata)[-2:] == ["--jobs", "1"]  # no --cpus-per-task: one at a time


def test_the_script_finds_the_venv_of_its_own_checkout_though_slurm_runs_a_copy(tmp_path):
    """slurmd runs a copy of the script from its spool folder; the original is the job's Command,
    which `scontrol show job` gives followed by the script's arguments."""
    checkout = tmp_path / "my course"
    (checkout / "recipes" / "slurm").mkdir(parents=True)
    shutil.copy(SBATCH, checkout / "recipes" / "slurm" / "grade-array.sbatch")
    kata = fake_kata(checkout / ".venv" / "bin")
    spool = tmp_path / "spool" / "job00101"
    spool.mkdir(parents=True)
    shutil.copy(SBATCH, spool / "slurm_script")
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "scontrol").write_text(
        f"#!/bin/sh\necho 'JobId=101 ArrayJobId=100 ArrayTaskId=1'\n"
        f"echo '   Command={checkout}/recipes/slurm/grade-array.sbatch /srv/class /srv/out "
        "-e s1_11_matmul'\n"
        "echo '   WorkDir=/home/teacher'\n"
    )
    (bin_ / "scontrol").chmod(0o755)
    env = {**array_task(1, 2), "PATH": f"{bin_}:{os.environ['PATH']}"}
    args = ["/srv/class", "/srv/out", "-e", "s1_11_matmul"]
    proc = run_script(spool / "slurm_script", args, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert argv_of(kata) == [
        "grade",
        "/srv/class",
        "--out",
        "/srv/out",
        "--shard",
        "2/2",
        "--jobs",
        "4",
        "-e",
        "s1_11_matmul",
    ]
    assert f"{checkout}/.venv/bin/kata grade /srv/class" in proc.stdout
    # a checkout without a venv: the kata on PATH (sbatch passes on the environment it ran in)
    shutil.rmtree(checkout / ".venv")
    on_path = fake_kata(tmp_path / "activated" / "bin")
    env["PATH"] = f"{on_path.parent}:{env['PATH']}"
    proc = run_script(spool / "slurm_script", args, env, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert argv_of(on_path)[:6] == ["grade", "/srv/class", "--out", "/srv/out", "--shard", "2/2"]


def test_a_task_outside_a_whole_array_from_zero_is_refused_before_anything_is_graded(tmp_path):
    kata = fake_kata(tmp_path / "bin")
    for env in (
        array_task(2, 1, minimum=2, maximum=2),  # sbatch --array=2: would grade shard 1/1
        array_task(1, 4, minimum=1, maximum=4),  # --array=1-4: shard 5/4
        {k: v for k, v in array_task(0, 1).items() if "ARRAY" not in k},
    ):  # no --array at all
        proc = run_script(SBATCH, ["class", "out"], {**env, "KATA": str(kata)}, tmp_path)
        assert proc.returncode == 2 and "--array=0-(N-1)" in proc.stderr, proc.stderr
        assert argv_of(kata) is None
    proc = run_script(SBATCH, ["class"], {**array_task(0, 1), "KATA": str(kata)}, tmp_path)
    assert proc.returncode == 2 and "usage: sbatch --array=0-3" in proc.stderr
    proc = run_script(SBATCH, ["class", "out"], {**array_task(0, 1), "KATA": str(tmp_path / "nothing")}, tmp_path)
    assert proc.returncode == 2 and "no kata at" in proc.stderr and "KATA=" in proc.stderr


def _documents():
    return {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(INDEXED_JOB.read_text()) if d}


def test_the_indexed_job_runs_one_pod_per_shard_over_a_shared_volume():
    docs = _documents()
    job = docs["Job", "kata-grade"]["spec"]
    assert job["completionMode"] == "Indexed"
    assert job["completions"] == job["parallelism"]
    pod = job["template"]["spec"]
    (container,) = pod["containers"]
    env = {e["name"]: e.get("value") for e in container["env"]}
    assert int(env["SHARDS"]) == job["completions"]
    script = container["args"][0]
    assert "JOB_COMPLETION_INDEX + 1" in script and "--shard" in script
    claim = pod["volumes"][0]["persistentVolumeClaim"]["claimName"]
    assert docs["PersistentVolumeClaim", claim]["spec"]["accessModes"] == ["ReadWriteMany"]
    assert container["securityContext"]  # bubblewrap's namespaces (see the manifest's comment)
    merge = docs["Job", "kata-gradebook"]["spec"]
    assert merge["suspend"] is True  # held until the grading is complete: it locks OUT for itself
    merge_pod = merge["template"]["spec"]
    assert merge_pod["containers"][0]["command"][1:] == ["gradebook", "/grading/out"]
    assert merge_pod["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim


def test_each_pod_grades_its_shard_and_only_a_real_failure_fails_it(tmp_path):
    container = _documents()["Job", "kata-grade"]["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"] if "value" in e}
    kata = fake_kata(tmp_path / "bin")
    script = tmp_path / "pod.sh"
    script.write_text(container["args"][0])
    assert container["command"] == ["bash", "-c"]
    for index in range(int(env["SHARDS"])):
        proc = run_script(
            script, [], {**env, "KATA": str(kata), "JOBS": "4", "JOB_COMPLETION_INDEX": str(index)}, tmp_path
        )
        assert proc.returncode == 0, proc.stderr
        assert argv_of(kata) == [
            "grade",
            "/grading/class",
            "--out",
            "/grading/out",
            "--shard",
            f"{index + 1}/{env['SHARDS']}",
            "--jobs",
            "4",
        ]
    pod = {**env, "KATA": str(kata), "JOBS": "4", "JOB_COMPLETION_INDEX": "0"}
    # 1: graded, some submissions refused (their rows say why): the pod is done, not retried
    assert run_script(script, [], {**pod, "FAKE_EXIT": "1"}, tmp_path).returncode == 0
    # 3: OUT could not be written (a full volume): the index fails and is run again
    assert run_script(script, [], {**pod, "FAKE_EXIT": "3"}, tmp_path).returncode == 3
