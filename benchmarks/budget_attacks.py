"""How long the four slow-import attacks hold a grader, with and without the grading budget.

Each attack (tests/test_budget.py's ATTACKS: fork 300 sleepers, kill the fork server, sleep 4 s,
burn 4 CPU seconds) is appended to every exercise file of a stub submission, and the submission is
graded with `kata grade` on s1_01 and §1.9-1.12 (49 checks): once with the budget given, once with
a budget too large to matter (how the grader behaved before it had one). "wall s" is the whole
command (interpreter, torch, sandbox start, report); "graded s" the report's own duration.

    python benchmarks/budget_attacks.py                  # budget 20 s, and unbounded
    python benchmarks/budget_attacks.py --budget 300 --no-unbounded --all   # the whole course, default budget
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.test_budget import ATTACKS  # noqa: E402

CHOSEN = ["-e", "s1_01_next_token", "-e", "1.9", "-e", "1.10", "-e", "1.11", "-e", "1.12"]


def grade(sub: Path, budget: float, chosen: list[str]) -> tuple[float, dict]:
    report = sub.parent / f"{sub.name}-{budget:g}.json"
    started = time.monotonic()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "grader",
            "grade",
            str(sub),
            "--json",
            str(report),
            "-q",
            "--budget",
            str(budget),
            *chosen,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "KATA_LANG": "en"},
    )
    took = time.monotonic() - started
    if proc.returncode != 0:
        raise SystemExit(f"kata grade failed: {proc.stderr[-2000:]}")
    return took, json.loads(report.read_text())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--budget", type=float, default=20.0)
    ap.add_argument("--no-unbounded", action="store_true", help="skip the runs without a budget")
    ap.add_argument("--all", action="store_true", help="every exercise, not s1_01 and §1.9-1.12")
    ap.add_argument("--only", choices=sorted(ATTACKS), action="append")
    args = ap.parse_args()
    chosen = [] if args.all else CHOSEN
    budgets = [args.budget] + ([] if args.no_unbounded else [1e6])
    print(f"{'attack':14} {'budget':>8} {'wall s':>8} {'graded s':>9} {'checks cut':>11} {'score':>7}")
    with tempfile.TemporaryDirectory(prefix="kata-budget-") as tmp:
        for name in args.only or ATTACKS:
            sub = Path(tmp) / name
            shutil.copytree(ROOT / "exercises", sub)
            for f in sorted((sub / "ch01").glob("*.py")):
                if f.stem == "s1_01_next_token":
                    f.write_text((ROOT / "solutions" / "ch01" / f.name).read_text())
                else:
                    with open(f, "a") as out:
                        out.write(ATTACKS[name])
            for budget in budgets:
                took, doc = grade(sub, budget, chosen)
                cut = sum(c["kind"] == "budget" for c in doc["checks"])
                shown = "none" if budget >= 1e6 else f"{budget:g}"
                print(
                    f"{name:14} {shown:>8} {took:8.1f} {doc['duration_s']:9g} {cut:>5} / {len(doc['checks']):<4} "
                    f"{doc['score']:7g}",
                    flush=True,
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
