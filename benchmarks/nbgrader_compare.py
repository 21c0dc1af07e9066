"""The same submissions graded by nbgrader and by the kata, in one run: seconds per submission.

    python benchmarks/nbgrader_compare.py [--students N] [-e ID ...] [--keep DIR]

Exports the exercises (default: the three of §1.11, one assignment) with `kata export nbgrader`,
releases them with `nbgrader generate_assignment`, and makes N students' submissions from the
released notebooks (in turn: solved, half solved, unsolved). Then it grades them:

- nbgrader: `nbgrader autograde ASSIGNMENT`, all N students in one command, as an instructor
  runs it (no kernel: the export's configuration grades each notebook with the kata's sandboxed
  grader in a subprocess and writes the outcomes into its test cells);
- the kata: the same notebooks (laid out as `<student>/ch01/<id>.ipynb`), graded by
  `kata grade <student> -e ID ... --json` once per submission, a new process each time;
- the kata in one process: the grader's runner called once per submission, the imports and the
  course paid once, as a batch run pays them (`kata grade DIR --jobs 1`, where that command
  exists, is timed too).

It checks that nbgrader and the kata give every student the same score, and prints seconds
per submission each way and the ratio (target: the kata >= 5x faster per submission).
Needs nbgrader (`.venv/bin/pip install -e '.[nbgrader]'`).
"""
from __future__ import annotations

import argparse
import os
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.nbgrader_course import answers, nbgrader, scores, solve, submit  # noqa: E402

DEFAULT = ["s1_11_matmul", "s1_11_attention_scores", "s1_11_softmax"]
KINDS = ["solved", "half", "unsolved"]


def kata(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "grader", *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "KATA_LANG": "en"})


def make_submissions(course: Path, assignment: str, ids: list[str], n: int, kata_dir: Path) -> dict[str, str]:
    """N students' notebooks, handed in to nbgrader and laid out for `kata grade`: student -> kind."""
    release, source = course / "release" / assignment, course / "source" / assignment
    key = {i: answers(source / f"{i}.ipynb") for i in ids}
    students = {}
    for s in range(n):
        kind, student = KINDS[s % len(KINDS)], f"student{s + 1:02d}"
        notebooks = {}
        for i in ids:
            code = key[i] if kind == "solved" else dict(list(key[i].items())[:1]) if kind == "half" else {}
            notebooks[i] = solve(release / f"{i}.ipynb", code)
        folder = submit(course, student, assignment, notebooks)
        (kata_dir / student / "ch01").mkdir(parents=True)
        for i in ids:
            shutil.copy(folder / f"{i}.ipynb", kata_dir / student / "ch01" / f"{i}.ipynb")
        students[student] = kind
    return students


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=6)
    ap.add_argument("--exercise", "-e", action="append", help=f"exercise(s) of one section (default: {' '.join(DEFAULT)})")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder)")
    args = ap.parse_args()
    ids = args.exercise or DEFAULT
    import importlib.util

    if importlib.util.find_spec("nbgrader") is None:
        print("nbgrader is not installed: .venv/bin/pip install -e '.[nbgrader]'", file=sys.stderr)
        return 2
    from grader.course import manifest as course_mod
    from grader.checking import runner
    from grader.instructor.exports.export_nbgrader import assignment_of
    from grader.checking.submission import open_submission

    c = course_mod.load(ROOT)
    assignments = {assignment_of(c.get(i), "section") for i in ids}
    if len(assignments) != 1:
        print(f"choose exercises of one section (these make assignments {sorted(assignments)})", file=sys.stderr)
        return 2
    assignment = assignments.pop()
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kata-nbgrader-bench-"))
    if work.exists() and any(work.iterdir()):
        print(f"{work} is not empty", file=sys.stderr)
        return 2
    course, kata_dir = work / "course", work / "kata"
    only = [a for i in ids for a in ("-e", i)]
    try:
        proc = kata("export", "nbgrader", str(course), *only)
        assert proc.returncode == 0, proc.stderr
        proc = nbgrader(course, "generate_assignment", assignment)
        assert proc.returncode == 0, proc.stderr[-2000:]
        students = make_submissions(course, assignment, ids, args.students, kata_dir)
        n = len(students)
        print(f"{n} submissions of {assignment} ({', '.join(ids)}): "
              + ", ".join(f"{sum(k == kind for k in students.values())} {kind}" for kind in KINDS), flush=True)

        t0 = time.perf_counter()
        proc = nbgrader(course, "autograde", assignment, timeout=3600)
        nbg_s = time.perf_counter() - t0
        assert proc.returncode == 0, proc.stderr[-3000:]
        nbg_scores = {s: row["total"] for s, row in scores(course, assignment).items()}
        print(f"nbgrader autograde: {nbg_s:.1f} s for {n}", flush=True)

        ours_cli, kata_scores = [], {}
        for student in students:
            out = work / f"{student}.json"
            t0 = time.perf_counter()
            proc = kata("grade", str(kata_dir / student), *only, "--json", str(out), "--quiet")
            ours_cli.append(time.perf_counter() - t0)
            assert proc.returncode == 0, proc.stderr
            kata_scores[student] = json.loads(out.read_text())["score"]
        print(f"kata grade, a process per submission: {sum(ours_cli):.1f} s for {n}", flush=True)

        exercises = [c.get(i) for i in ids]
        t0 = time.perf_counter()
        for student in students:
            with open_submission(kata_dir / student, c.chapter) as sub:
                res = runner.run(c, sub, exercises)
            assert res.score == kata_scores[student], (student, res.score, kata_scores[student])
        ours_inproc = time.perf_counter() - t0
        print(f"kata's runner, one process for all: {ours_inproc:.1f} s for {n}", flush=True)

        batch = None
        if "--jobs" in kata("grade", "--help").stdout:
            t0 = time.perf_counter()
            proc = kata("grade", str(kata_dir), *only, "--jobs", "1", "--out", str(work / "batch"), "--quiet")
            batch = time.perf_counter() - t0 if proc.returncode == 0 else None
            if batch is None:
                print(f"kata grade DIR --jobs 1 failed ({proc.returncode}): {proc.stderr[-500:]}", file=sys.stderr)

        agree = all(abs(nbg_scores[s] - kata_scores[s]) < 1e-9 for s in students)
        print()
        print(f"{'student':<12}{'kind':<10}{'nbgrader':>10}{'kata':>8}")
        for s, kind in students.items():
            print(f"{s:<12}{kind:<10}{nbg_scores[s]:>10g}{kata_scores[s]:>8g}")
        print(f"scores agree: {agree}")
        print()
        per_nbg = nbg_s / n
        rows = [("kata grade, a process per submission", sum(ours_cli) / n),
                ("kata's runner, one process for all", ours_inproc / n)]
        if batch is not None:
            rows.append(("kata grade DIR --jobs 1", batch / n))
        print(f"{'nbgrader autograde':<40}{per_nbg:8.2f} s per submission")
        for name, per in rows:
            print(f"{name:<40}{per:8.2f} s per submission   nbgrader / kata = {per_nbg / per:5.1f}x"
                  f"  ({'meets' if per_nbg / per >= 5 else 'below'} the 5x target)")
        return 0 if agree else 1
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
