"""Per-exercise limits in course.toml (issue 7, item 5): call time, memory and output, with
defaults in [course.defaults]; when one is hit the student reads which, and how much, in plain
words ("your code took longer than the 1 s limit", "used more than 1024 MB of memory", ...)."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time

import pytest

from grader.course import manifest as course
from grader.worker import uids
from grader.cli import main
from tests.conftest import ROOT, checks_of, make_submission


def _set(root, exercise: str, line: str) -> None:
    """Add `line` to the [[exercise]] table of `exercise` in root/course.toml."""
    p = root / "course.toml"
    text = p.read_text()
    anchor = f'id = "{exercise}"\n'
    assert text.count(anchor) == 1
    p.write_text(text.replace(anchor, anchor + line + "\n"))


def test_limits_have_defaults_and_per_exercise_values(tmp_course):
    meta = course.load(ROOT)
    default = meta.get("s1_11_softmax")
    assert (default.time_limit_s, default.memory_mb, default.output_mb) == (10, 6144, 16)
    assert meta.get("s1_23_training").time_limit_s == 60  # set in its own table
    _set(tmp_course, "s1_11_matmul", "time_limit_s = 1\nmemory_mb = 1024\noutput_mb = 2")
    (tmp_course / "course.toml").write_text(
        (tmp_course / "course.toml")
        .read_text()
        .replace(
            "defaults = { time_limit_s = 10, memory_mb = 6144, output_mb = 16 }",
            "defaults = { time_limit_s = 7, memory_mb = 4096, output_mb = 8 }",
        )
    )
    changed = course.load(tmp_course, check_files=False)
    ex = changed.get("s1_11_matmul")
    assert (ex.time_limit_s, ex.memory_mb, ex.output_mb) == (1, 1024, 2)
    other = changed.get("s1_11_softmax")
    assert (other.time_limit_s, other.memory_mb, other.output_mb) == (7, 4096, 8)


def test_each_limit_hit_is_named_with_its_value(tmp_course, tmp_path, monkeypatch):
    """Lower limits for three exercises in the manifest, and code that goes past each: the
    messages name the limit and its value from course.toml, not the defaults."""
    _set(tmp_course, "s1_11_matmul", "time_limit_s = 1")
    _set(tmp_course, "s1_12_context", "output_mb = 1")
    _set(tmp_course, "s1_12_scaled_attention", "memory_mb = 1024")
    sub = make_submission(
        tmp_path,
        {
            "s1_11_matmul": "import time\n\ndef matmul(A, B):\n    time.sleep(5)\n    return A\n",
            "s1_12_context": "def context_vectors(w, v):\n    print('x' * (3 << 20))\n    return w @ v\n",
            "s1_12_scaled_attention": "import torch\n\n"
            "def scale_scores(scores, d_k):\n    return torch.empty(1 << 29) and scores\n\n"
            "def attention_weights(scores, d_k):\n    return [bytes(1 << 26) for _ in range(64)]\n",
        },
    )
    out = tmp_path / "r.json"
    monkeypatch.chdir(tmp_course)
    monkeypatch.setenv("KATA_LANG", "en")
    assert (
        main(
            [
                "grade",
                str(sub),
                "--json",
                str(out),
                "--quiet",
                "--course",
                str(tmp_course),
                "-e",
                "s1_11_matmul",
                "-e",
                "s1_12_context",
                "-e",
                "s1_12_scaled_attention",
            ]
        )
        == 0
    )
    report = json.loads(out.read_text())
    for ex, words in (
        ("s1_11_matmul", "your code took longer than the 1 s limit"),
        ("s1_12_context", "printed or wrote more than 1 MB of output"),
        ("s1_12_scaled_attention", "used more than 1024 MB of memory"),
    ):
        checks = checks_of(report, ex)
        assert checks and all(c["score"] == 0 and words in c["message"] for c in checks), [
            (c["name"], c["message"]) for c in checks
        ]


def _cgroups_usable() -> bool:
    from grader.worker import cgroups

    group = cgroups.Group.create(f"kata-probe-{os.getpid()}", max_tasks=8)
    if group is None:
        return False
    group.remove()
    return shutil.which("bwrap") is not None


def _anon_mb_of_sandboxes() -> float:
    """Anonymous memory of every process running as a sandbox uid, in MB: each page shared by a
    fork counted once (proportional set size), as the kernel charges it."""
    total = 0
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if not uids.FIRST <= os.stat(f"/proc/{pid}").st_uid < uids.FIRST + uids.COUNT:
                continue
            with open(f"/proc/{pid}/smaps_rollup") as f:
                for line in f:
                    if line.startswith("Pss_Anon:"):
                        total += int(line.split()[1])
        except (OSError, ValueError):
            pass
    return total / 1024


# Four children of one call, each within its own address-space limit, together far past it.
CHILDREN_TOGETHER = """
import os, time, torch

def matmul(A, B):
    kids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                block = b"x" * (1 << 30)  # 1 GB, written
                time.sleep(1)
            finally:
                os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
    return (A.unsqueeze(2) * B.unsqueeze(0)).sum(1)
"""
# Four children hold 300 MB each, then the worker itself fills 1.3 GB: by far the biggest process
# in the sandbox when the group runs out, so the one the kernel stops.
WORKER_LAST = """
import os, time, torch

def scale_scores(scores, d_k):
    kids = []
    for _ in range(4):
        pid = os.fork()
        if pid == 0:
            try:
                block = b"x" * (300 << 20)
                time.sleep(30)
            finally:
                os._exit(0)
        kids.append(pid)
    time.sleep(1.5)
    mine = b"y" * (1300 << 20)
    return scores / d_k ** 0.5

def attention_weights(scores, d_k):
    return scale_scores(scores, d_k)
"""


@pytest.mark.slow  # about 30 s of filling memory
@pytest.mark.skipif(os.getuid() != 0 or not _cgroups_usable(), reason="needs root, bubblewrap and a writable cgroup")
def test_a_sandbox_s_processes_together_stay_under_its_memory_limit(tmp_course, tmp_path, monkeypatch):
    """memory_mb bounds all of a sandbox's processes together (a cgroup), not only each one: a
    call whose children take 4 GB between them never holds much more than the limit, and the
    worker the kernel stops for it says why."""
    _set(tmp_course, "s1_11_matmul", "memory_mb = 2048")
    _set(tmp_course, "s1_12_scaled_attention", "memory_mb = 2048")
    sub = make_submission(tmp_path, {"s1_11_matmul": CHILDREN_TOGETHER, "s1_12_scaled_attention": WORKER_LAST})
    out = tmp_path / "r.json"
    monkeypatch.chdir(tmp_course)
    monkeypatch.setenv("KATA_LANG", "en")
    peak, done = [0.0], threading.Event()

    def watch():
        while not done.is_set():
            peak[0] = max(peak[0], _anon_mb_of_sandboxes())
            time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        code = main(
            [
                "grade",
                str(sub),
                "--json",
                str(out),
                "--quiet",
                "--course",
                str(tmp_course),
                "-e",
                "s1_11_matmul",
                "-e",
                "s1_12_scaled_attention",
                "-e",
                "s1_11_softmax",
            ]
        )
    finally:
        done.set()
        watcher.join()
    assert code == 0
    # 2048 MB for the worker's processes + /tmp + the fork server; without a cgroup: 4 GB and more
    assert 1500 < peak[0] < 3500, f"the sandbox held {peak[0]:.0f} MB at its peak"
    report = json.loads(out.read_text())
    killed = [c["message"] for c in checks_of(report, "s1_12_scaled_attention") if c["score"] == 0]
    assert killed and all("your code's processes together used more than 2048 MB of memory" in m for m in killed), (
        killed
    )
    assert all(c["score"] == c["max_score"] for c in checks_of(report, "s1_11_softmax"))
