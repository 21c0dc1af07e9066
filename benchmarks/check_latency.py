"""How long a student waits for a verdict: `kata check ID` and a save in `kata watch`, today's path
(each command grades in its own process: KATA_WARM=0) beside the warm grader (grader/student/warm/).

    python benchmarks/check_latency.py [--reps 5] [--ids s1_11_softmax,s1_16_multihead] [--no-watch]

Runs in a private copy of the course whose exercises are the stubs, as a student's are. For each
exercise of §1.1–1.22 (or --ids), with the reference solution in place of the stub:

  check cold   `kata check ID` with KATA_WARM=0: a new Python, torch, a new sandbox, the checks
  check warm   `kata check ID` with the course's warm grader already running
  watch warm   `kata watch ID` in a terminal (a pty): the time from writing the file to the
               screen showing "N of N public checks pass"; the file was the stub before
  watch cold   the same with KATA_WARM=0 (the watch grades in its own process, a new sandbox per save)

and prints the median and p90 of each, per exercise and over all of them. Targets (issue 14,
on an idle 2-core machine): watch warm <= 1.0 s median for every exercise, `kata check
s1_11_softmax` warm <= 1.5 s. Every check still runs in a fresh sandboxed worker process.
"""

from __future__ import annotations

import argparse
import os
import pty
import re
import select
import shutil
import signal
import statistics
import struct
import subprocess
import sys
import tempfile
import termios
import time
import fcntl
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader.course import manifest as course_mod  # noqa: E402

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\r")
SUMMARY = re.compile(r"(\d+) of (\d+) public checks pass")


def kata_argv() -> list[str]:
    script = Path(sys.executable).with_name("kata")
    return [str(script)] if script.exists() else [sys.executable, "-m", "grader"]


def make_project(base: Path) -> Path:
    project = base / "course"
    project.mkdir()
    for name in ("course.toml", "solutions", "exercises", "locale", "ERRATA.md"):
        src = ROOT / name
        if src.exists():
            (shutil.copytree if src.is_dir() else shutil.copy)(src, project / name)
    assets = ROOT / ".kata" / "assets"
    if assets.is_dir():
        shutil.copytree(assets, project / ".kata" / "assets")
    return project


def env_for(warm: bool, warm_dir: Path) -> dict:
    return {
        **os.environ,
        "KATA_LANG": "en",
        "COLUMNS": "200",
        "PYTHONPATH": str(ROOT),
        "KATA_WARM": "1" if warm else "0",
        "KATA_WARM_DIR": str(warm_dir),
        "KATA_WARM_IDLE": "900",
    }


def time_check(project: Path, ex_id: str, env: dict) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(
        [*kata_argv(), "check", ex_id], cwd=project, env=env, capture_output=True, text=True, timeout=600
    )
    took = time.perf_counter() - t0
    m = SUMMARY.search(proc.stdout)
    if proc.returncode != 0 or not m or m.group(1) != m.group(2):
        raise SystemExit(f"kata check {ex_id} did not pass:\n{proc.stdout}\n{proc.stderr}")
    return took


class Terminal:
    """`kata watch ID` on a pseudo-terminal of 200 columns, its screen read as plain text."""

    def __init__(self, project: Path, ex_id: str, env: dict):
        pid, fd = pty.fork()
        if pid == 0:
            os.chdir(project)
            argv = [*kata_argv(), "watch", ex_id]
            os.execvpe(argv[0], argv, env)
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
        self.pid, self.fd, self.text = pid, fd, ""

    def wait_for(self, pattern: re.Pattern, since: int, timeout: float = 120.0) -> re.Match:
        deadline = time.perf_counter() + timeout
        while True:
            m = pattern.search(self.text, since)
            if m:
                return m
            left = deadline - time.perf_counter()
            if left <= 0:
                raise SystemExit(f"kata watch showed no {pattern.pattern!r} in {timeout:.0f} s:\n{self.text[-3000:]}")
            ready, _, _ = select.select([self.fd], [], [], min(left, 0.5))
            if ready:
                try:
                    data = os.read(self.fd, 65536)
                except OSError:
                    data = b""
                if not data:
                    raise SystemExit(f"kata watch ended:\n{self.text[-3000:]}")
                self.text += ANSI.sub("", data.decode("utf-8", "replace"))

    def close(self) -> None:
        try:
            os.write(self.fd, b"q")
            deadline = time.perf_counter() + 10
            while time.perf_counter() < deadline:
                done, _ = os.waitpid(self.pid, os.WNOHANG)
                if done:
                    break
                time.sleep(0.05)
            else:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
        except (OSError, ChildProcessError):
            pass
        os.close(self.fd)


def time_watch(project: Path, ex, env: dict) -> float:
    """One save of the solution over the stub in a running `kata watch`: seconds until the verdict."""
    target = project / "exercises" / ex.file
    shutil.copy(ROOT / "exercises" / ex.file, target)
    term = Terminal(project, ex.id, env)
    try:
        term.wait_for(SUMMARY, 0)  # the first screen: the stub's verdict
        time.sleep(0.3)  # watchfiles is watching
        since = len(term.text)
        t0 = time.perf_counter()
        shutil.copy(ROOT / "solutions" / ex.file, target)
        n = len(ex.checks) - sum(c.hidden for c in ex.checks)
        term.wait_for(re.compile(rf"\b{n} of {n} public checks pass"), since)
        return time.perf_counter() - t0
    finally:
        term.close()
        shutil.copy(ROOT / "exercises" / ex.file, target)


def stats(xs: list[float]) -> tuple[float, float]:
    xs = sorted(xs)
    p90 = xs[min(len(xs) - 1, int(round(0.9 * (len(xs) - 1))))]
    return statistics.median(xs), p90


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--ids", default="", help="comma-separated exercise ids (default: every exercise of §1.1–1.22)")
    ap.add_argument("--no-watch", action="store_true", help="time `kata check` only")
    ap.add_argument("--no-cold", action="store_true", help="skip today's path (KATA_WARM=0)")
    args = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # `timeout` too: stop the warm grader on the way out
    course = course_mod.load(ROOT)
    chosen = [ex for ex in course.exercises if not ex.section.startswith("1.23")]
    if args.ids:
        wanted = args.ids.split(",")
        chosen = [ex for ex in course.exercises if ex.id in wanted]
    base = Path(tempfile.mkdtemp(prefix="kata-latency-"))
    warm_dir = Path(tempfile.mkdtemp(prefix="kw-"))
    os.chmod(warm_dir, 0o700)
    project = make_project(base)
    warm, cold = env_for(True, warm_dir), env_for(False, warm_dir)
    print(
        f"load average at start: {os.getloadavg()[0]:.2f} ({os.cpu_count()} CPUs); {args.reps} runs each; "
        f"{len(chosen)} exercises"
    )
    columns = ["check cold", "check warm", "watch cold", "watch warm"]
    rows: dict[str, dict[str, list[float]]] = {}
    try:
        first = chosen[0]
        shutil.copy(ROOT / "solutions" / first.file, project / "exercises" / first.file)
        t0 = time.perf_counter()
        time_check(project, first.id, warm)  # starts the course's warm grader
        print(f"the warm grader's start with the first check: {time.perf_counter() - t0:.2f} s")
        shutil.copy(ROOT / "exercises" / first.file, project / "exercises" / first.file)
        for ex in chosen:
            row = rows[ex.id] = {c: [] for c in columns}
            shutil.copy(ROOT / "solutions" / ex.file, project / "exercises" / ex.file)
            for _ in range(args.reps):
                if not args.no_cold:
                    row["check cold"].append(time_check(project, ex.id, cold))
                row["check warm"].append(time_check(project, ex.id, warm))
            shutil.copy(ROOT / "exercises" / ex.file, project / "exercises" / ex.file)
            if not args.no_watch:
                for _ in range(args.reps):
                    if not args.no_cold:
                        row["watch cold"].append(time_watch(project, ex, cold))
                    row["watch warm"].append(time_watch(project, ex, warm))
            shown = "  ".join(f"{c} {stats(row[c])[0]:5.2f}/{stats(row[c])[1]:5.2f}" for c in columns if row[c])
            print(f"{ex.id:26s} {shown}", flush=True)
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
        shutil.rmtree(base, ignore_errors=True)
        shutil.rmtree(warm_dir, ignore_errors=True)
    print()
    print("seconds, median/p90 over every run:")
    for c in columns:
        xs = [x for row in rows.values() for x in row[c]]
        if xs:
            med, p90 = stats(xs)
            worst = max(rows, key=lambda i: statistics.median(rows[i][c]) if rows[i][c] else 0)
            print(
                f"  {c:11s} {med:5.2f} / {p90:5.2f}   slowest exercise by median: {worst} "
                f"({statistics.median(rows[worst][c]):.2f} s)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
