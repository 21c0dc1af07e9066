"""How fast the grader is on this machine: worker start-up and grading the whole slice.

    python benchmarks/grade_speed.py [--repeat N]

Prints the median of N runs for: the sandboxed worker's start-up (bubblewrap + Python + torch
import, until the fork server answers), one fresh worker process (fork + import of an exercise),
grading the reference solutions in-process, and `kata grade solutions` as a user runs it
(a new Python process, imports included), for the first slice (§1.9–1.12, the foundation's
target: <= 5 s) and for the whole course. Worker start-up target: <= 2 s.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course import manifest as course_mod  # noqa: E402
from grader.checking import runner  # noqa: E402
from grader.checking.submission import open_submission  # noqa: E402
from grader.worker.client import Sandbox  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    c = course_mod.load(ROOT)
    starts, spawns, inproc, cli, cli_all = [], [], [], [], []
    slice_ids = [ex.id for ex in c.exercises if ex.section in ("1.9", "1.10", "1.11", "1.12")]
    slice_ex = [c.get(i) for i in slice_ids]
    kind = "?"
    with open_submission(c.solutions_dir) as sub:
        for _ in range(args.repeat):
            box = Sandbox(sub.root)
            t0 = time.perf_counter()
            box.start()
            starts.append(time.perf_counter() - t0)
            kind = box.kind
            for _ in range(5):
                t1 = time.perf_counter()
                w = box.spawn()
                w.request({"op": "import", "module": "s1_11_softmax", "path": "ch01/s1_11_softmax.py"})
                spawns.append(time.perf_counter() - t1)
                w.close()
            box.close()
        runner.run(c, sub, slice_ex)  # warm the check modules' imports once
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            res = runner.run(c, sub, slice_ex)
            inproc.append(time.perf_counter() - t0)
            assert res.score == res.max_score, "the reference solutions must score full marks"
    only = [a for i in slice_ids for a in ("-e", i)]
    for _ in range(args.repeat):
        for args_, times in ((only, cli), ([], cli_all)):
            t0 = time.perf_counter()
            proc = subprocess.run(
                [sys.executable, "-m", "grader", "grade", str(c.solutions_dir), "--quiet", *args_], cwd=ROOT
            )
            times.append(time.perf_counter() - t0)
            assert proc.returncode == 0
    n_checks = len(res.results)
    n_all = sum(len(ex.checks) for ex in c.exercises)
    print(
        f"sandbox: {kind}; slice §1.9–1.12: {len(slice_ids)} exercises, {n_checks} checks; "
        f"course: {len(c.exercises)} exercises, {n_all} checks; median of {args.repeat} runs"
    )
    print(f"worker start-up (bwrap + python + torch, until ready): {statistics.median(starts):.2f} s   (target <= 2 s)")
    print(f"fresh worker process per check (fork + import):       {statistics.median(spawns) * 1000:.1f} ms")
    print(f"grade the slice, in-process (warm):                   {statistics.median(inproc):.2f} s")
    print(f"grade the slice, `kata grade solutions -e ...`:       {statistics.median(cli):.2f} s   (target <= 5 s)")
    print(f"grade the whole course, `kata grade solutions`:       {statistics.median(cli_all):.2f} s")


if __name__ == "__main__":
    main()
