"""The course's lock of the wheels setup.sh may install from a workshop archive: wheels.lock, in the
course folder, a pip requirements file in hash-checking form (`name==version --hash=sha256:...`,
one line per distribution, a --hash per wheel file).

A course developer writes it with `kata assets lock` (the same `pip download` as `kata assets pack
--with-wheels`, for the same Python and platform options) and commits it; `kata verify` checks that
it names every requirement of pyproject.toml. `pack --with-wheels` packs only locked wheels;
`unpack` installs a wheel only when its name, version and sha256 are in the lock, whatever the
archive's manifest says, and leaves `requirements.txt` (the lock's lines for exactly those wheels)
next to them, which setup.sh installs with `pip install --require-hashes`. Standard library only:
setup.sh's system Python runs `unpack` before any venv exists.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

from ..course.messages import t

LOCK = "wheels.lock"
REQUIREMENTS = "requirements.txt"  # in the wheels folder: what setup.sh installs with --require-hashes
_LINE = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)((?:\s+--hash=sha256:[0-9a-f]{64})+)\s*$")


class LockError(Exception):
    """wheels.lock is missing or malformed; the message names the line."""


def path() -> Path:
    """The course's wheels.lock."""
    from ..course.assets_folder import course_root

    return course_root() / LOCK


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def wheel_key(filename: str) -> tuple[str, str] | None:
    """(normalized name, version) of a wheel's file name, None when it is not a wheel's name."""
    parts = filename[:-4].split("-") if filename.endswith(".whl") else []
    return (normalize(parts[0]), parts[1]) if len(parts) in (5, 6) else None


def read(lock: Path | None = None) -> dict[tuple[str, str], set[str]]:
    """(name, version) -> the sha256 of its locked wheels. LockError when missing or malformed."""
    lock = lock or path()
    try:
        text = lock.read_text(encoding="utf-8")
    except OSError as e:
        raise LockError(f"{LOCK}: {e.strerror or e}") from None
    pins: dict[tuple[str, str], set[str]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        if m is None:
            raise LockError(t("lockerr_bad_line", lock=LOCK, number=number, line=line[:120]))
        pins.setdefault((normalize(m[1]), m[2]), set()).update(re.findall(r"[0-9a-f]{64}", m[3]))
    return pins


def locked(pins: dict[tuple[str, str], set[str]], filename: str, digest: str) -> bool:
    """The wheel `filename` with sha256 `digest` is one the lock names."""
    key = wheel_key(filename)
    return key is not None and digest in pins.get(key, ())


def lines(digests: dict[str, str]) -> str:
    """Hash-checking requirements for the wheels `digests` (file name -> sha256), one line per
    distribution, sorted."""
    grouped: dict[tuple[str, str], set[str]] = {}
    for filename, digest in digests.items():
        key = wheel_key(filename)
        if key is None:
            raise LockError(t("lockerr_not_wheel", filename=filename))
        grouped.setdefault(key, set()).add(digest)
    return "".join(
        f"{name}=={version}" + "".join(f" --hash=sha256:{d}" for d in sorted(ds)) + "\n"
        for (name, version), ds in sorted(grouped.items())
    )


def write(lock: Path, wheels: list[Path], target: dict) -> None:
    """Write `lock` for `wheels` (downloaded for `target`: python, platforms)."""
    from ..course import atomic

    digests = {}
    for p in wheels:
        with open(p, "rb") as f:
            digests[p.name] = hashlib.file_digest(f, "sha256").hexdigest()
    head = (
        f"# The wheels setup.sh installs from a workshop archive, for Python {target['python']} on "
        f"{', '.join(target['platforms'])}.\n# Written by `kata assets lock` (same options as "
        "`kata assets pack --with-wheels`); `kata assets unpack` installs no other wheel.\n"
    )
    atomic.write_text(lock, head + lines(digests), mode=0o644)


def missing(pins: dict[tuple[str, str], set[str]], names: list[str]) -> list[str]:
    """The requirement names (pyproject.toml's) that no locked wheel provides."""
    have = {name for name, _ in pins}
    return [n for n in names if normalize(n) not in have]
