"""The same students' work graded by nbgrader and by the kata, in one run: seconds per submission.

    python benchmarks/nbgrader_compare.py [--students N] [--with-export] [--json FILE] [--keep DIR]

The work: §1.9–1.12, eight exercises (s1_09_input_embeddings s1_10_qkv s1_11_matmul
s1_11_attention_scores s1_11_softmax s1_12_scaled_attention s1_12_context s1_12_self_attention),
handed in by N students (default 12), in turn solved, half solved (the first four exercises in
book order) and unsolved. Each student's code is laid out for every grader:

- nbgrader as instructors ordinarily use it (tests/nbgrader_course.py): one notebook in eight
  parts, each a solution cell and test cells that `assert` in the student's kernel (torch
  imported there, no sandbox), one test cell per public check of the kata with its points (37 in
  all), its inputs, its expected values and its tolerance. `nbgrader generate_assignment`
  releases it; each student's notebook is the released one with their solved parts' cells
  filled in; timed: `nbgrader autograde`, all N students in one command (a kernel per notebook);
- the kata: the same code as a class folder, `<class>/<student>/ch01/<id>.py` (an exercise not
  solved is the kata's stub, exercises/ch01/<id>.py); timed: `kata grade <class> --out OUT
  --jobs 2 -e ID ...` and the same with `--jobs 1`, one command each. It runs every check,
  the 27 points of hidden checks too (63 in all), so it does more work than the notebook;
- with `--with-export` (slow, so opt-in): the kata's own nbgrader export (`kata export
  nbgrader`: one assignment per section, a notebook per exercise, autograded by the kata's
  sandboxed grader in place of a kernel, every check: 63 points); the same students' notebooks;
  timed: `nbgrader autograde` of the four assignments, one command each.

It checks that the scores agree: the in-kernel notebook's score equals the kata's score on its
public checks for every student, the export's equals the kata's total, solved students have full
marks and unsolved ones 0 everywhere. It prints the scores side by side, seconds per submission
of each grader and the ratios in-kernel nbgrader / `kata grade --jobs 2` (target: the kata at
least 3x faster per submission) and export / `kata grade --jobs 2`; `--json FILE` writes them
with the machine's load. Exit status 1 when the scores disagree.
Needs nbgrader (`.venv/bin/pip install -e '.[nbgrader]'`).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

KINDS = ["solved", "half", "unsolved"]
TARGET = 3.0  # in-kernel nbgrader / kata grade --jobs 2, per submission


def kata(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KATA_LANG": "en"},
    )


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t0


def load() -> float:
    return round(os.getloadavg()[0], 2)


def kata_batch(class_dir: Path, out: Path, jobs: int, ids: list[str]) -> tuple[float, dict, str]:
    """`kata grade CLASS --out OUT --jobs N -e ID ...`: seconds, student -> scores, the sandbox used."""
    only = [a for i in ids for a in ("-e", i)]
    proc, seconds = timed(kata, "grade", str(class_dir), "--out", str(out), "--jobs", str(jobs), *only, "--quiet")
    assert proc.returncode == 0, f"kata grade --jobs {jobs} failed ({proc.returncode}): {proc.stderr[-2000:]}"
    got, sandbox = {}, ""
    for record in sorted((out / "students").glob("*/report.json")):
        r = json.loads(record.read_text())
        assert r["student"]["status"] == "graded", (record, r["student"])
        public = [c for c in r["checks"] if c["visibility"] == "public"]
        got[r["student"]["name"]] = {
            "total": r["score"],
            "max": r["max_score"],
            "public": sum(c["score"] for c in public),
            "public_max": sum(c["max_score"] for c in public),
        }
        sandbox = r.get("sandbox", "")
    return seconds, got, sandbox


def inkernel_race(course, work: Path, students: dict[str, str]) -> tuple[float, dict, float]:
    """Build and release the in-kernel assignment, hand in every student's notebook, lay their code
    out for the kata in work/class; time `nbgrader autograde`: seconds, student -> score, max."""
    from tests import nbgrader_course as nbc

    course_dir = work / "inkernel"
    nbc.write_inkernel_course(course, course_dir)
    proc = nbc.nbgrader(course_dir, "generate_assignment", nbc.INKERNEL_ASSIGNMENT)
    assert proc.returncode == 0, proc.stderr[-2000:]
    nbc.inkernel_students(course_dir, work / "class", students)
    proc, seconds = timed(nbc.nbgrader, course_dir, "autograde", nbc.INKERNEL_ASSIGNMENT, timeout=3600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = {s: row["total"] for s, row in nbc.scores(course_dir, nbc.INKERNEL_ASSIGNMENT).items()}
    return seconds, got, nbc.max_scores(course_dir, nbc.INKERNEL_ASSIGNMENT)["total"]


def export_race(course, work: Path, students: dict[str, str], ids: list[str]) -> tuple[float, dict, float, int]:
    """`kata export nbgrader` of the exercises (an assignment per section), every student's notebooks
    (the released ones, their solved exercises' answer cells filled in); time `nbgrader autograde`
    of each assignment: seconds in all, student -> score over the assignments, max, assignments."""
    from grader.instructor.exports.export_nbgrader import assignment_of
    from tests import nbgrader_course as nbc

    course_dir = work / "export"
    proc = kata("export", "nbgrader", str(course_dir), *[a for i in ids for a in ("-e", i)])
    assert proc.returncode == 0, proc.stderr[-2000:]
    assignments: dict[str, list[str]] = {}
    for i in ids:
        assignments.setdefault(assignment_of(course.get(i), "section"), []).append(i)
    for a in assignments:
        proc = nbc.nbgrader(course_dir, "generate_assignment", a)
        assert proc.returncode == 0, proc.stderr[-2000:]
    for student, kind in students.items():
        done = nbc.solved_ids(kind, ids)
        for a, members in assignments.items():
            nbc.submit(
                course_dir,
                student,
                a,
                {
                    i: nbc.solve(
                        course_dir / "release" / a / f"{i}.ipynb",
                        nbc.answers(course_dir / "source" / a / f"{i}.ipynb") if i in done else {},
                    )
                    for i in members
                },
            )
    seconds = 0.0
    for a in assignments:
        proc, s = timed(nbc.nbgrader, course_dir, "autograde", a, timeout=3600)
        assert proc.returncode == 0, proc.stderr[-3000:]
        seconds += s
    got = {s: 0.0 for s in students}
    top = 0.0
    for a in assignments:
        for s, row in nbc.scores(course_dir, a).items():
            got[s] += row["total"]
        top += nbc.max_scores(course_dir, a)["total"]
    return seconds, got, top, len(assignments)


def agreement(
    students: dict[str, str],
    inkernel: dict,
    inkernel_max: float,
    ours: dict,
    export: dict | None,
    export_max: float | None,
) -> list[str]:
    """What disagrees (empty: the scores agree)."""
    bad = []
    for s, kind in students.items():
        k = ours[s]
        if abs(inkernel[s] - k["public"]) > 1e-9:
            bad.append(f"{s}: in-kernel nbgrader {inkernel[s]:g} != the kata's public checks {k['public']:g}")
        if export is not None and abs(export[s] - k["total"]) > 1e-9:
            bad.append(f"{s}: our nbgrader export {export[s]:g} != kata grade {k['total']:g}")
        full = [inkernel[s] == inkernel_max, k["total"] == k["max"]] + ([export[s] == export_max] if export else [])
        zero = [inkernel[s] == 0, k["total"] == 0] + ([export[s] == 0] if export else [])
        if kind == "solved" and not all(full):
            bad.append(f"{s} (solved) has not full marks everywhere")
        if kind == "unsolved" and not all(zero):
            bad.append(f"{s} (unsolved) has not 0 everywhere")
    return bad


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--students", type=int, default=12, help="number of submissions (default 12)")
    ap.add_argument("--with-export", action="store_true", help="also time nbgrader on `kata export nbgrader` (slow)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--keep", metavar="DIR", help="work in DIR and keep it (default: a temporary folder)")
    args = ap.parse_args()
    if importlib.util.find_spec("nbgrader") is None:
        print("nbgrader is not installed: .venv/bin/pip install -e '.[nbgrader]'", file=sys.stderr)
        return 2
    import nbgrader
    import torch

    from grader.course import manifest as course_mod
    from tests.nbgrader_course import INKERNEL_IDS

    course = course_mod.load(ROOT)
    ids = INKERNEL_IDS
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="kata-nbgrader-bench-"))
    if work.exists() and any(work.iterdir()):
        print(f"{work} is not empty", file=sys.stderr)
        return 2
    work.mkdir(parents=True, exist_ok=True)
    students = {f"student{s + 1:02d}": KINDS[s % len(KINDS)] for s in range(args.students)}
    n = len(students)
    loads = {"start": load()}
    try:
        print(
            f"{n} submissions of §1.9–1.12 ({len(ids)} exercises): "
            + ", ".join(f"{sum(k == kind for k in students.values())} {kind}" for kind in KINDS)
            + f"; {os.cpu_count()} CPUs, load average {loads['start']}",
            flush=True,
        )
        inkernel_s, inkernel, inkernel_max = inkernel_race(course, work, students)
        print(f"nbgrader autograde, in-kernel asserts: {inkernel_s:.1f} s for {n}", flush=True)
        loads["kata_jobs2"] = load()
        j2_s, ours, sandbox = kata_batch(work / "class", work / "kata-j2", 2, ids)
        print(f"kata grade --jobs 2: {j2_s:.1f} s for {n}", flush=True)
        loads["kata_jobs1"] = load()
        j1_s, ours1, _ = kata_batch(work / "class", work / "kata-j1", 1, ids)
        print(f"kata grade --jobs 1: {j1_s:.1f} s for {n}", flush=True)
        assert ours1 == ours, "kata grade --jobs 1 and --jobs 2 gave different scores"
        export = export_s = export_max = None
        commands = 0
        if args.with_export:
            loads["export"] = load()
            export_s, export, export_max, commands = export_race(course, work, students, ids)
            print(f"nbgrader autograde of our export: {export_s:.1f} s for {n}", flush=True)
        loads["end"] = load()
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)

    kata_max, public_max = next(iter(ours.values()))["max"], next(iter(ours.values()))["public_max"]
    bad = agreement(students, inkernel, inkernel_max, ours, export, export_max)
    print()
    head = f"{'student':<12}{'kind':<10}{'nbgrader in-kernel':>20}{'kata public':>13}{'kata all':>10}"
    print(head + (f"{'our export':>12}" if export else ""))
    for s, kind in students.items():
        cols = [(inkernel[s], inkernel_max, 20), (ours[s]["public"], public_max, 13), (ours[s]["total"], kata_max, 10)]
        cols += [(export[s], export_max, 12)] if export else []
        print(f"{s:<12}{kind:<10}" + "".join(f"{f'{got:g}/{top:g}':>{width}}" for got, top, width in cols))
    print("scores agree" if not bad else "scores DISAGREE:\n  " + "\n  ".join(bad))
    print()
    per = {"nbgrader_inkernel": inkernel_s / n, "kata_jobs2": j2_s / n, "kata_jobs1": j1_s / n}
    if export is not None:
        per["nbgrader_kata_export"] = export_s / n
    names = {
        "nbgrader_inkernel": "nbgrader autograde, in-kernel asserts (1 command)",
        "kata_jobs2": "kata grade --jobs 2 (1 command)",
        "kata_jobs1": "kata grade --jobs 1 (1 command)",
        "nbgrader_kata_export": f"nbgrader autograde, our export ({commands} commands)",
    }
    print(f"{'grader':<52}{'total s':>9}{'s/submission':>14}{'/ kata -j2':>12}")
    for key, s in per.items():
        print(f"{names[key]:<52}{s * n:9.1f}{s:14.2f}{s / per['kata_jobs2']:11.1f}x")
    ratios = {
        "nbgrader_inkernel_over_kata_jobs2": per["nbgrader_inkernel"] / per["kata_jobs2"],
        "nbgrader_inkernel_over_kata_jobs1": per["nbgrader_inkernel"] / per["kata_jobs1"],
    }
    if export is not None:
        ratios["nbgrader_kata_export_over_kata_jobs2"] = per["nbgrader_kata_export"] / per["kata_jobs2"]
        ratios["nbgrader_kata_export_over_kata_jobs1"] = per["nbgrader_kata_export"] / per["kata_jobs1"]
    met = ratios["nbgrader_inkernel_over_kata_jobs2"] >= TARGET
    print(
        f"\nin-kernel nbgrader / kata grade --jobs 2 = {ratios['nbgrader_inkernel_over_kata_jobs2']:.1f}x per "
        f"submission ({'meets' if met else 'below'} the {TARGET:g}x target)"
    )
    if export is not None:
        print(
            f"our nbgrader export / kata grade --jobs 2 = {ratios['nbgrader_kata_export_over_kata_jobs2']:.1f}x "
            "per submission"
        )
    else:
        print("our nbgrader export: not timed (--with-export)")
    print(f"load average: {' '.join(f'{k} {v}' for k, v in loads.items())}")

    if args.json:
        doc = {
            "command": " ".join([Path(sys.executable).name, *sys.argv]),
            "students": n,
            "exercises": ids,
            "machine": {
                "cpus": os.cpu_count(),
                "platform": platform.platform(),
                "python": platform.python_version(),
                "torch": torch.__version__,
                "nbgrader": nbgrader.__version__,
                "kata_sandbox": sandbox,
                "load_average_1min": loads,
            },
            "max_score": {
                "nbgrader_inkernel": inkernel_max,
                "kata": kata_max,
                "kata_public": public_max,
                "nbgrader_kata_export": export_max,
            },
            "scores": {
                s: {
                    "kind": kind,
                    "nbgrader_inkernel": inkernel[s],
                    "kata": ours[s]["total"],
                    "kata_public": ours[s]["public"],
                    "nbgrader_kata_export": export[s] if export else None,
                }
                for s, kind in students.items()
            },
            "scores_agree": not bad,
            "disagreements": bad,
            "seconds": {k: round(v * n, 3) for k, v in per.items()},
            "seconds_per_submission": {k: round(v, 4) for k, v in per.items()},
            "ratios": {k: round(v, 3) for k, v in ratios.items()},
            "target": {"nbgrader_inkernel_over_kata_jobs2": TARGET, "met": met},
        }
        Path(args.json).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0 if not bad else 1


if __name__ == "__main__":
    raise SystemExit(main())
