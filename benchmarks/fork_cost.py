"""What a fresh worker's fork costs as the fork server imports more: one input to issue 35's
per-check overhead (a worker per check is forked from a server holding torch and its preloads).

    python benchmarks/fork_cost.py [--n 30]

Prints the median time of os.fork() in this process (the parent's side: the page tables of its
anonymous memory are copied) after importing torch, then torch._dynamo (what an optimizer's first
use imports, course.toml's `preload`), then sklearn.metrics (s1_23_evaluation's preload), beside a
bare Python. A sandbox's fork server that has imported a preload pays it on every later fork.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time


def fork_ms(n: int) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            os._exit(0)
        times.append((time.perf_counter() - t0) * 1000)
        os.waitpid(pid, 0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=30)
    args = ap.parse_args(argv)
    bare = subprocess.run(
        [
            sys.executable,
            "-c",
            f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"import fork_cost; print(fork_cost.fork_ms({args.n}))",
        ],
        capture_output=True,
        text=True,
    )
    print(f"bare python        {float(bare.stdout):6.2f} ms" if bare.returncode == 0 else "bare python: failed")
    import torch  # noqa: F401

    print(f"torch              {fork_ms(args.n):6.2f} ms")
    import torch._dynamo  # noqa: F401

    print(f"+ torch._dynamo    {fork_ms(args.n):6.2f} ms")
    import sklearn.metrics  # noqa: F401

    print(f"+ sklearn.metrics  {fork_ms(args.n):6.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
