"""A class graded as 1, 2 and 4 local shards (`kata grade DIR --out OUT --shard K/N`, then `kata
gradebook OUT`), in one run: wall times and their ratios, and the merged gradebook against the
one-shard one.

    python benchmarks/grade_shards.py                # 24 submissions, the §1.9–1.12 slice
    python benchmarks/grade_shards.py --all          # every exercise (about 50 s a submission)
    python benchmarks/grade_shards.py --shards 1,2,4 --cores 2

Each N runs its N shards as N processes started together into one fresh OUT, as a job array's
tasks on N machines would, but here on one machine: each shard gets --jobs max(1, cores // N), so
the machine's cores are shared out, never oversubscribed. On one machine more shards cannot grade
faster than one run using every core; what the ratios show is what sharding costs (each shard's
own Python, torch import and sandbox, the merge) and how evenly a hash splits the class. On N
machines the shards' times add up to the 1-shard time plus that cost, divided by N.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from grade_class import SLICE, capacity, load, make_class  # noqa: E402

from grader.course import manifest as course_mod  # noqa: E402
from grader.instructor.batch.shards import part  # noqa: E402


def run_shards(folder: Path, out: Path, n: int, cores: int, only: list[str]) -> tuple[float, float, list[int]]:
    """(the shards' wall time, the merge's, how many entries each shard got)."""
    env = {**os.environ, "KATA_LANG": "en"}
    jobs = max(1, cores // n)
    t0 = time.perf_counter()
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "grader",
                "grade",
                str(folder),
                "--out",
                str(out),
                "--jobs",
                str(jobs),
                "--quiet",
                "--shard",
                f"{k}/{n}",
                *only,
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for k in range(1, n + 1)
    ]
    for p in procs:
        stdout, stderr = p.communicate()
        if p.returncode not in (0, 1):
            raise SystemExit(f"shard failed ({p.returncode}):\n{stdout}\n{stderr}")
    shards_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    merge = subprocess.run(
        [sys.executable, "-m", "grader", "gradebook", str(out)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    if merge.returncode not in (0, 5):
        raise SystemExit(f"kata gradebook failed ({merge.returncode}):\n{merge.stdout}\n{merge.stderr}")
    sizes = [sum(part(p.name, n) == k for p in folder.iterdir()) for k in range(1, n + 1)]
    return shards_s, time.perf_counter() - t0, sizes


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", action="store_true", help="grade every exercise, not the §1.9–1.12 slice")
    ap.add_argument("--shards", default="1,2,4", help="the Ns to time, comma-separated (default 1,2,4)")
    ap.add_argument("--cores", type=int, default=len(os.sched_getaffinity(0)), help="cores to share out")
    args = ap.parse_args()
    c = course_mod.load(ROOT)
    ids = [ex.id for ex in c.exercises if args.all or ex.section in SLICE]
    only = [] if args.all else [a for i in ids for a in ("-e", i)]
    tmp = Path(tempfile.mkdtemp(prefix="kata-shards-"))
    try:
        folder = tmp / "class"
        folder.mkdir()
        make_class(c, folder, ids)
        count = len(list(folder.iterdir()))
        print(f"{count} submissions, {len(ids)} exercises, {args.cores} cores; {load()}; {capacity()}")
        rows, first = [], None
        for n in [int(x) for x in args.shards.split(",")]:
            out = tmp / f"out{n}"
            shards_s, merge_s, sizes = run_shards(folder, out, n, args.cores, only)
            book = (out / "gradebook.csv").read_bytes()
            first = first or (n, shards_s + merge_s, book)
            rows.append((n, shards_s, merge_s, sizes, book == first[2]))
        print(
            f"{'shards':>6} {'jobs each':>9} {'grading s':>10} {'merge s':>8} {'total s':>8} {'vs ' + str(first[0]):>6}"
            f"  entries per shard  gradebook.csv"
        )
        for n, shards_s, merge_s, sizes, same in rows:
            total = shards_s + merge_s
            print(
                f"{n:>6} {max(1, args.cores // n):>9} {shards_s:>10.1f} {merge_s:>8.1f} {total:>8.1f} "
                f"{total / first[1]:>5.2f}x  {'/'.join(map(str, sizes)):<17}  "
                f"{'the same as ' + str(first[0]) + ' shard(s)' if same else 'DIFFERS'}"
            )
        print(f"after: {load()}; {capacity()}")
        if not all(same for *_, same in rows):
            raise SystemExit("a merged gradebook.csv differs from the first one")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
