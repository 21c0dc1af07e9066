"""What the randomness statistics (grader/checking/draws.py) cost in one grading of the whole
course: one input to issue 35's whole-course target.

    python benchmarks/draws_cost.py [--out DIR] [--keep]

Grades the reference solutions in one lane (KATA_GRADE_LANES=1, as a class's `--jobs` grades each
submission) with draws.bernoulli_findings, region_findings and category_findings wrapped so that
each call's arguments are saved (a few hundred MB in --out, a temporary folder by default), then
calls them all again in this process, one torch thread as in a lane, and prints the seconds each
function took in total beside a bare `python -c "import torch"` timed in the same run, and the
grading's own wall time. Every call's findings are compared with what the grading got: a speed-up
that changed a verdict would show here as a mismatch (exit status 1).
"""

from __future__ import annotations

import argparse
import collections
import glob
import os
import pickle
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NAMES = ("bernoulli_findings", "region_findings", "category_findings")

RECORD = """
import itertools, os, pickle, sys
from grader.checking import draws
out, counter = sys.argv.pop(1), itertools.count()
def wrap(name):
    f = getattr(draws, name)
    def g(*a, **k):
        found = f(*a, **k)
        with open(os.path.join(out, f"{name}-{os.getpid()}-{next(counter)}.pkl"), "wb") as fh:
            pickle.dump((a, k, found), fh)
        return found
    setattr(draws, name, g)
for n in %r:
    wrap(n)
from grader.cli import main
sys.argv[0] = "kata"
sys.exit(main())
""" % (NAMES,)


def import_torch_s() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "import torch"], check=True)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", help="where the calls' arguments go (default: a temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep them afterwards")
    args = ap.parse_args(argv)
    out = Path(args.out or tempfile.mkdtemp(prefix="draws-cost-"))
    out.mkdir(parents=True, exist_ok=True)
    unit = import_torch_s()
    env = dict(os.environ, KATA_GRADE_LANES="1")
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", RECORD, str(out), "grade", str(ROOT / "solutions"), "-q"], cwd=ROOT, env=env, check=True
    )
    graded = time.perf_counter() - t0
    sys.path.insert(0, str(ROOT))
    import torch

    from grader.checking import draws

    torch.set_num_threads(1)
    spent: collections.Counter = collections.Counter()
    calls: collections.Counter = collections.Counter()
    mismatches = 0
    for path in sorted(glob.glob(str(out / "*.pkl"))):
        name = Path(path).name.split("-")[0]
        with open(path, "rb") as fh:
            a, k, found = pickle.load(fh)
        t = time.perf_counter()
        again = getattr(draws, name)(*a, **k)
        spent[name] += time.perf_counter() - t
        calls[name] += 1
        if [(f.kind, f.got, f.want, f.detail) for f in again] != [(f.kind, f.got, f.want, f.detail) for f in found]:
            mismatches += 1
            print(f"mismatch: {Path(path).name}")
    unit = min(unit, import_torch_s())
    total = sum(spent.values())
    print(f"import torch (the unit): {unit:.2f} s")
    print(f"grading of the reference, one lane, the recording included: {graded:.1f} s ({graded / unit:.1f}x)")
    for name in NAMES:
        print(f"  {name:20s} {calls[name]:4d} calls  {spent[name]:6.2f} s")
    print(
        f"  statistics in all     {sum(calls.values()):4d} calls  {total:6.2f} s ({total / unit:.1f}x; "
        f"{100 * total / graded:.0f}% of the grading)"
    )
    print("findings: all equal to the grading's" if not mismatches else f"findings: {mismatches} differ")
    if not args.keep and not args.out:
        shutil.rmtree(out, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
