"""Issue 35's speed targets in one run, each path as a ratio to a bare `python -c "import torch"`
timed in the same run (the machine may be busy: the ratio is what is compared, not the seconds).

    python benchmarks/speed_targets.py [--quick] [--ids ID,ID] [--reps N] [--json FILE]

Runs in a private copy of the course (benchmarks/check_latency.py's make_project) whose exercises
are the reference solutions, i.e. one complete submission; the checkout's own exercises/ are never
touched. Measured, in this order:

  import torch           `python -c "import torch"`, the median of a few runs at the start and
                         a few at the end (the unit of every ratio)
  first check            the session's first `kata check ID` (starts the warm grader)  <= 3x
  check ID (warm)        `kata check ID` with the warm grader running, median of --reps, for every
                         exercise (s1_23_training and s1_23_dataset included)     <= 1.5x each
  submit                 `kata submit` right after those checks                    <= 2x
  grade (whole course)   `kata grade <copy>/solutions --json` (a new Python process) <= 6x
  grade, one lane        the same with KATA_GRADE_LANES=1, as a class's `--jobs` grades each
                         submission (no target): where the time goes is read from this one
  budget                 course.toml's budget_s <= 300 and budget_cpu_s <= 600, and the reference's
                         grading (the report's duration_s) under a third of 300 s; its CPU seconds
                         are shown without a verdict (the rusage of reaped children: a lower
                         bound, the sandbox's processes may not be counted)

and prints a table: path, seconds, ratio, target, PASS/FAIL; then where the one-lane grade's time goes, from
its JSON report (README "The JSON report (schema 1)"): the process start and imports (the wall
time less the report's duration_s), the sandbox's start (worker_startup_s), each exercise's public
checks (their duration_s; a hidden check's time is null in every report, so the hidden checks are
counted together with collection and the forbidden-API scans), and the reads at the training size:
the public checks of the exercises whose checks read more when grading (`if grading():`) run again
with `--public-only` (which leaves those reads out) and the difference taken.

--quick: three exercises, one run each, and the grade of those three exercises only (no target:
a smoke run). Exit status 1 when a target fails.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from check_latency import env_for, kata_argv, make_project, time_check  # noqa: E402
from grader.course import manifest as course_mod  # noqa: E402

QUICK_IDS = ["s1_11_softmax", "s1_16_multihead", "s1_23_dataset"]
TARGETS = {"grade": 6.0, "check": 1.5, "first": 3.0, "submit": 2.0}
BUDGET_S, BUDGET_CPU_S = 300.0, 600.0


def time_import_torch(n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import torch"], check=True)
        out.append(time.perf_counter() - t0)
    return out


def children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def kata_run(
    project: Path, env: dict, *args: str, timeout: float = 1800
) -> tuple[subprocess.CompletedProcess, float, float]:
    """`kata ARGS` in the private course: (process, wall seconds, CPU seconds of it and its children)."""
    cpu0, t0 = children_cpu(), time.perf_counter()
    proc = subprocess.run([*kata_argv(), *args], cwd=project, env=env, capture_output=True, text=True, timeout=timeout)
    return proc, time.perf_counter() - t0, children_cpu() - cpu0


def grade(project: Path, env: dict, json_path: Path, ids: list[str], public_only: bool = False):
    only = [a for i in ids for a in ("-e", i)]
    proc, wall, cpu = kata_run(
        project,
        env,
        "grade",
        str(project / "solutions"),
        "--course",
        str(project),
        "--json",
        str(json_path),
        "--quiet",
        *only,
        *(["--public-only"] if public_only else []),
    )
    if proc.returncode != 0:
        raise SystemExit(f"kata grade failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
    doc = json.loads(json_path.read_text())
    if doc["score"] != doc["max_score"]:
        failed = [f"{c['exercise']}::{c['name']}" for c in doc["checks"] if c["status"] != "passed"]
        raise SystemExit(f"the reference solutions did not score full marks: {failed}")
    return doc, wall, cpu


def reads_exercises(course) -> list[str]:
    """Exercises whose check module reads more when grading (`if grading():`): the training-size reads."""
    return [ex.id for ex in course.exercises if "grading()" in course.check_file(ex).read_text()]


def breakdown(doc: dict, wall: float, reads: dict | None) -> list[str]:
    per_ex: dict[str, list] = {}
    for c in doc["checks"]:
        row = per_ex.setdefault(c["exercise"], [0.0, 0, 0])
        if c["duration_s"] is None:
            row[2] += 1
        else:
            row[0] += c["duration_s"]
            row[1] += 1
    public = sum(r[0] for r in per_ex.values())
    inside = float(doc["duration_s"])  # whole seconds: the runner, from the sandbox's launch to the last check
    lines = [
        f"where `kata grade` spent {wall:.1f} s (report: duration_s {inside:.0f} s, "
        f"worker_startup_s {doc['worker_startup_s']:.2f} s, {len(doc['checks'])} checks):",
        f"  {'process start, imports, opening the submission, writing the report':68s} {wall - inside:6.1f} s"
        "  (wall - duration_s, ±0.5 s)",
        f"  {'sandbox start (worker_startup_s, overlaps collection)':68s} {doc['worker_startup_s']:6.2f} s",
        f"  {'public checks, summed':68s} {public:6.1f} s",
        f"  {'hidden checks + collection + forbidden-API scans (duration_s - public)':68s} {inside - public:6.1f} s"
        "  (hidden checks' times are null in the report)",
    ]
    if reads is not None:
        lines.append(
            f"  {'  of the public checks: reads at the training size (grade - --public-only)':68s} "
            f"{reads['total']:6.1f} s  ({', '.join(f'{k} {v:.1f}' for k, v in reads['by_exercise'].items())})"
        )
    lines.append("  each exercise's public checks (seconds, public/hidden checks), slowest first:")
    for ex_id, (s, n_pub, n_hid) in sorted(per_ex.items(), key=lambda kv: -kv[1][0]):
        lines.append(f"    {ex_id:28s} {s:6.2f} s  ({n_pub} public, {n_hid} hidden)")
    return lines


def training_reads(project: Path, env: dict, base: Path, full_doc: dict, ids: list[str]) -> dict:
    """Per exercise: the public checks' seconds when grading less the same checks with --public-only."""
    doc, _, _ = grade(project, env, base / "public-only.json", ids, public_only=True)
    without = {(c["exercise"], c["name"]): c["duration_s"] or 0.0 for c in doc["checks"]}
    by_ex: dict[str, float] = {}
    for c in full_doc["checks"]:
        key = (c["exercise"], c["name"])
        if c["exercise"] in ids and c["duration_s"] is not None and key in without:
            by_ex[c["exercise"]] = by_ex.get(c["exercise"], 0.0) + c["duration_s"] - without[key]
    return {"total": sum(by_ex.values()), "by_exercise": {k: round(v, 2) for k, v in by_ex.items()}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a smoke run: three exercises, one run each")
    ap.add_argument("--ids", default="", help="comma-separated exercise ids (default: every exercise)")
    ap.add_argument("--reps", type=int, default=None, help="runs of each warm `kata check` (default 3; --quick 1)")
    ap.add_argument("--json", metavar="FILE", help="also write every figure as JSON")
    ap.add_argument(
        "--no-reads", action="store_true", help="skip the --public-only grade that measures the training-size reads"
    )
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the warm grader on the way out
    reps = args.reps or (1 if args.quick else 3)
    course = course_mod.load(ROOT)
    all_ids = [ex.id for ex in course.exercises]
    ids = args.ids.split(",") if args.ids else (QUICK_IDS if args.quick else all_ids)
    unknown = [i for i in ids if i not in all_ids]
    if unknown:
        raise SystemExit(f"unknown exercise ids: {unknown}")
    whole = not args.quick and not args.ids
    base = Path(tempfile.mkdtemp(prefix="kata-speed-"))
    warm_dir = Path(tempfile.mkdtemp(prefix="kw-"))
    os.chmod(warm_dir, 0o700)
    project = make_project(base)
    for ex in course.exercises:  # one complete submission: the student's exercises are the solutions
        shutil.copy(ROOT / "solutions" / ex.file, project / "exercises" / ex.file)
    warm, cold = env_for(True, warm_dir), env_for(False, warm_dir)
    load0 = os.getloadavg()[0]
    print(
        f"load average at start: {load0:.2f} ({os.cpu_count()} CPUs); {len(ids)} exercises, {reps} run(s) each",
        flush=True,
    )
    rows: list[dict] = []  # path, seconds, target ratio (None: no target)
    torch_s = time_import_torch(3)
    print(f"import torch: {' '.join(f'{x:.2f}' for x in torch_s)} s", flush=True)
    out: dict = {"load_start": load0, "cpus": os.cpu_count(), "reps": reps, "ids": ids}
    try:
        t = time_check(project, ids[0], warm)  # the first command of the session starts the warm grader
        rows.append({"path": f"first check ({ids[0]}, starts the warm grader)", "s": t, "target": TARGETS["first"]})
        print(f"first check: {t:.2f} s", flush=True)
        for ex_id in ids:
            xs = [time_check(project, ex_id, warm) for _ in range(reps)]
            rows.append(
                {"path": f"check {ex_id} (warm)", "s": statistics.median(xs), "runs": xs, "target": TARGETS["check"]}
            )
            print(f"check {ex_id}: {' '.join(f'{x:.2f}' for x in xs)} s", flush=True)
        proc, t, _ = kata_run(project, warm, "submit", "--out", str(base / "kata-submission.zip"))
        if proc.returncode != 0:
            raise SystemExit(f"kata submit failed ({proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
        rows.append(
            {
                "path": f"submit (after checking {'every exercise' if set(ids) == set(all_ids) else f'{len(ids)} exercise(s)'})",
                "s": t,
                "target": TARGETS["submit"],
            }
        )
        print(f"submit: {t:.2f} s", flush=True)
    finally:
        subprocess.run(
            [
                sys.executable,
                "-c",
                "from grader.course import manifest; from grader.student.warm import client;"
                " client.stop(manifest.load())",
            ],
            cwd=project,
            env=warm,
            capture_output=True,
            timeout=60,
        )
    try:
        graded = all_ids if whole else ids
        doc, wall, cpu = grade(project, cold, base / "grade.json", [] if whole else ids)
        label = "grade (whole course)" if whole else f"grade ({len(ids)} exercise(s): no target)"
        rows.append({"path": label, "s": wall, "target": TARGETS["grade"] if whole else None})
        print(f"grade: {wall:.2f} s (CPU {cpu:.1f} s)", flush=True)
        # where the time goes, from a grade in one lane (as a class's --jobs grades each submission):
        # in two lanes the checks' times overlap and no longer add up to the wall time
        one = dict(cold, KATA_GRADE_LANES="1")
        doc1, wall1, _ = grade(project, one, base / "grade-one-lane.json", [] if whole else ids)
        rows.append({"path": "grade, one lane (as each submission of a class)", "s": wall1, "target": None})
        print(f"grade in one lane: {wall1:.2f} s", flush=True)
        reads = None
        if not args.no_reads:
            chosen = [i for i in reads_exercises(course) if i in graded]
            if chosen:
                reads = training_reads(project, one, base, doc1, chosen)
        torch_s += time_import_torch(3)
        unit = statistics.median(torch_s)
        toml = tomllib.loads((ROOT / "course.toml").read_text())["course"]
        budget = [
            ("budget_s in course.toml", toml.get("budget_s"), BUDGET_S),
            ("budget_cpu_s in course.toml", toml.get("budget_cpu_s"), BUDGET_CPU_S),
        ]
        if whole:
            budget += [
                ("reference grading, report duration_s", doc["duration_s"], BUDGET_S / 3),
                ("reference grading in one lane, duration_s", doc1["duration_s"], BUDGET_S / 3),
                # the rusage of reaped children only: a lower bound, so shown without a verdict
                ("reference grading, CPU s (reaped children: lower bound)", round(cpu, 1), None),
            ]
    finally:
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(warm_dir, ignore_errors=True)

    failed = 0
    print()
    print(
        f"import torch (the unit): median {unit:.2f} s of {len(torch_s)} runs "
        f"({min(torch_s):.2f}-{max(torch_s):.2f}); load average now {os.getloadavg()[0]:.2f}"
    )
    print(f"{'path':58s} {'seconds':>8s} {'ratio':>7s} {'target':>8s}  verdict")
    for r in rows:
        r["ratio"] = r["s"] / unit
        verdict = "" if r["target"] is None else ("PASS" if r["ratio"] <= r["target"] else "FAIL")
        failed += verdict == "FAIL"
        r["verdict"] = verdict
        target = "-" if r["target"] is None else f"<= {r['target']:g}x"
        print(f"{r['path']:58s} {r['s']:8.2f} {r['ratio']:6.2f}x {target:>8s}  {verdict}")
    for name, value, limit in budget:
        if limit is None:
            print(f"{name:58s} {value!s:>8s} {'':7s} {'-':>8s}")
            continue
        ok = value is not None and value <= limit
        failed += not ok
        print(f"{name:58s} {value!s:>8s} {'':7s} {'<= ' + format(limit, 'g'):>8s}  {'PASS' if ok else 'FAIL'}")
    print()
    lines = breakdown(doc1, wall1, reads)
    print("\n".join(lines))
    if args.json:
        out.update(
            import_torch_s=torch_s,
            unit_s=unit,
            rows=rows,
            grade_cpu_s=cpu,
            grade_report={k: doc[k] for k in ("duration_s", "worker_startup_s", "sandbox", "score", "max_score")},
            grade_one_lane_report={k: doc1[k] for k in ("duration_s", "worker_startup_s")},
            checks=[{k: c[k] for k in ("exercise", "name", "visibility", "duration_s")} for c in doc["checks"]],
            training_reads=reads,
            budget=[{"name": n, "value": v, "limit": lim} for n, v, lim in budget],
            breakdown=lines,
            load_end=os.getloadavg()[0],
        )
        Path(args.json).write_text(json.dumps(out, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
