"""How fast a class is graded, serially and in parallel, in one run.

    python benchmarks/grade_class.py                 # 24 submissions, the §1.9–1.12 slice, --jobs 1 and 2
    python benchmarks/grade_class.py --all           # every exercise (slow: about 35 s a submission)
    python benchmarks/grade_class.py --subprocess    # also: one `kata grade ONE --json` process per submission
    python benchmarks/grade_class.py --repeat 2      # --jobs 1, 2, 2, 1: medians, fairer on a shared machine

Generates 24 submissions from the reference solutions: correct ones, partly wrong ones (some
exercises put back to their stubs, others with a wrong answer), and broken ones (a syntax error,
an exercise only as a notebook with invalid JSON, a damaged zip, a project-shaped zip), then
grades the same class folder with `kata grade DIR --out OUT --jobs 1` and `--jobs 2`, each a
fresh `kata` process into a fresh OUT, and prints seconds per submission and the speedup
(target: --jobs 2 takes at most 0.6x the time of --jobs 1 on a 2-core machine). The two
gradebooks must be equal. The load average, and how long two busy loops take against one, are
printed before and after: on a shared machine they say how much of the second core was free.

--subprocess also grades each submission with its own `python -m grader grade ONE --json`, two at
a time: the design batch grading did not choose (each pays a new interpreter and its torch import),
measured for comparison.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course import manifest as course_mod  # noqa: E402

SLICE = ("1.9", "1.10", "1.11", "1.12")
N = 24


def _wrong(source: str) -> str:
    """A plausible wrong answer: the first `return X` of the student's part returns X * 1.5."""
    lines = source.splitlines()
    inside = False
    for i, line in enumerate(lines):
        if "# BEGIN SOLUTION" in line:
            inside = True
        elif inside and line.strip().startswith("return ") and not line.strip().startswith("return None"):
            indent = line[: len(line) - len(line.lstrip())]
            lines[i] = f"{indent}return _kata_scale({line.strip()[len('return ') :]})"
            lines.append(
                "\n\ndef _kata_scale(x):\n    try:\n        return x * 1.5\n    except Exception:\n        return x\n"
            )
            break
    return "\n".join(lines) + "\n"


def make_class(c, folder: Path, ids: list[str]) -> dict[str, tuple[str, str]]:
    """N submissions in `folder`; returns name -> (what it is, the exercise concerned)."""
    sol, stub = c.solutions_dir / "ch01", c.exercises_dir / "ch01"
    kinds = {}

    def copy(name: str) -> Path:
        shutil.copytree(c.solutions_dir, folder / name)
        return folder / name / "ch01"

    for k in range(N):
        name = f"student{k:02d}"
        ex = ids[(k * 3 + k // 8) % len(ids)]
        other = ids[(k * 5 + 3) % len(ids)]
        kind = k % 8
        if kind in (0, 1):
            copy(name)
            kinds[name] = ("correct", "")
        elif kind == 2:
            ch = copy(name)
            for i in (ex, other):
                shutil.copy(stub / f"{i}.py", ch / f"{i}.py")
            kinds[name] = ("partly stubs", f"{ex}, {other}")
        elif kind == 3:
            ch = copy(name)
            (ch / f"{ex}.py").write_text(_wrong((sol / f"{ex}.py").read_text()))
            kinds[name] = ("a wrong answer", ex)
        elif kind == 4:
            ch = copy(name)
            (ch / f"{ex}.py").write_text((sol / f"{ex}.py").read_text().replace("def ", "def def ", 1))
            kinds[name] = ("a syntax error", ex)
        elif kind == 5:
            ch = copy(name)
            (ch / f"{ex}.py").unlink()
            (ch / f"{ex}.ipynb").write_text('{"cells": [')
            kinds[name] = ("a notebook with invalid JSON", ex)
        elif kind == 6:
            with zipfile.ZipFile(folder / f"{name}.zip", "w", zipfile.ZIP_DEFLATED) as zf:
                for p in sorted(sol.glob("*.py")):
                    data = p.read_text() if p.stem != other else _wrong(p.read_text())
                    zf.writestr(f"exercises/ch01/{p.name}", data)
            kinds[name] = ("zip with a wrong answer", other)
        else:
            (folder / f"{name}.zip").write_bytes(b"PK\x03\x04" + os.urandom(200))
            kinds[name] = ("damaged zip", "")
    return kinds


def _spin(n: int = 20_000_000) -> None:
    x = 0
    for i in range(n):
        x += i


def capacity() -> str:
    """How much of two cores is free now: two busy loops at once against one (1.0x: both cores free,
    2.0x: one core's worth is left to us)."""
    import multiprocessing

    def timed(k: int) -> float:
        procs = [multiprocessing.Process(target=_spin) for _ in range(k)]
        t0 = time.perf_counter()
        for p in procs:
            p.start()
        for p in procs:
            p.join()
        return time.perf_counter() - t0

    one, two = timed(1), timed(2)
    return f"two busy loops at once took {two / one:.2f}x the time of one (1.00x: two free cores)"


def load() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.2f} (1 min), {five:.2f} (5 min) on {os.cpu_count()} CPUs"


def grade(folder: Path, out: Path, jobs: int, only: list[str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
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
            *only,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - t0
    if proc.returncode not in (0, 1):
        raise SystemExit(f"kata grade --jobs {jobs} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return seconds


def grade_each(folder: Path, tmp: Path, jobs: int, only: list[str]) -> float:
    entries = sorted(p for p in folder.iterdir())

    def one(p: Path) -> None:
        subprocess.run(
            [sys.executable, "-m", "grader", "grade", str(p), "--json", str(tmp / f"{p.name}.json"), "--quiet", *only],
            cwd=ROOT,
            capture_output=True,
        )

    t0 = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, entries))
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--all", action="store_true", help="grade every exercise, not the §1.9–1.12 slice")
    ap.add_argument("--subprocess", action="store_true", help="also time one `kata grade` process per submission")
    ap.add_argument("--repeat", type=int, default=1, help="grade N times with each --jobs (order 1,2,2,1,...; medians)")
    args = ap.parse_args()
    c = course_mod.load(ROOT)
    chosen = c.exercises if args.all else [ex for ex in c.exercises if ex.section in SLICE]
    ids = [ex.id for ex in chosen]
    only = [] if args.all else [a for i in ids for a in ("-e", i)]
    checks = sum(len(ex.checks) for ex in chosen)
    with tempfile.TemporaryDirectory(prefix="kata-bench-") as tmp:
        tmp = Path(tmp)
        folder = tmp / "class"
        folder.mkdir()
        kinds = make_class(c, folder, ids)
        what = "every exercise" if args.all else f"the §{SLICE[0]}–{SLICE[-1]} slice"
        print(
            f"{N} submissions, graded on {what}: {len(ids)} exercises, {checks} checks "
            f"({', '.join(ids) if not args.all else 'all'})"
        )
        counts: dict[str, int] = {}
        for kind, _ in kinds.values():
            counts[kind] = counts.get(kind, 0) + 1
        print("  " + "; ".join(f"{v} {k}" for k, v in counts.items()))
        print(f"before: {load()}; {capacity()}")
        times: dict[int, list[float]] = {1: [], 2: []}
        order = [1, 2] if args.repeat == 1 else [1, 2, 2, 1] * (args.repeat // 2) + [1, 2] * (args.repeat % 2)
        for k, jobs in enumerate(order):  # ABBA: a load that drifts during the run hurts both alike
            out = tmp / f"out{k}-{jobs}"
            times[jobs].append(grade(folder, out, jobs, only))
            same = (out / "gradebook.csv").read_text() == (tmp / "out0-1" / "gradebook.csv").read_text()
            if not same:
                raise SystemExit(f"the --jobs {jobs} gradebook differs from the first one")
        serial, parallel = statistics.median(times[1]), statistics.median(times[2])
        print(f"after:  {load()}; {capacity()}")
        if args.repeat > 1:
            print(
                f"medians of {args.repeat} runs each: --jobs 1 {[round(x, 1) for x in times[1]]}, "
                f"--jobs 2 {[round(x, 1) for x in times[2]]}"
            )
        print(f"--jobs 1: {serial:6.1f} s  ({serial / N:.2f} s per submission)")
        print(f"--jobs 2: {parallel:6.1f} s  ({parallel / N:.2f} s per submission)")
        ratio = parallel / serial
        print(
            f"speedup {serial / parallel:.2f}x: --jobs 2 takes {ratio:.2f}x the serial time "
            f"(target <= 0.60x: {'met' if ratio <= 0.6 else 'NOT met'}); the gradebooks are equal"
        )
        if args.subprocess:
            (tmp / "each").mkdir()
            each = grade_each(folder, tmp / "each", 2, only)
            print(
                f"one `kata grade ONE --json` process per submission, 2 at a time: {each:6.1f} s "
                f"({each / N:.2f} s per submission; {each / parallel:.2f}x the batch's --jobs 2)"
            )
            print(f"after:  {load()}")


if __name__ == "__main__":
    main()
