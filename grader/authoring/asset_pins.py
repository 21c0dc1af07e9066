"""`kata verify`'s look at what the course pins: the exercises pins.NEEDED_BY names exist, and
wheels.lock names a wheel for every requirement setup.sh installs, torch at its pinned version."""

from __future__ import annotations

from pathlib import Path

from ..capstone import wheels, wheels_lock
from ..course import pins
from ..course.messages import t


def problems(course) -> tuple[list[str], list[str]]:
    """(problems, facts)."""
    out, facts = [], []
    ids = {ex.id for ex in course.exercises}
    for name, needed_by in pins.NEEDED_BY.items():
        out += [t("assetpins_not_an_exercise", name=name, id=ex_id) for ex_id in needed_by if ex_id not in ids]
    lock = Path(course.root) / wheels_lock.LOCK
    try:
        locked = wheels_lock.read(lock)
        torch, rest = wheels.requirements(Path(course.root) / "pyproject.toml")
    except (wheels_lock.LockError, wheels.WheelsError) as e:
        return out + [t("assetpins_lock_error", error=e)], facts
    names = [wheels._name(r) for r in (torch, *rest)]
    out += [t("assetpins_no_wheel", lock=wheels_lock.LOCK, name=n) for n in wheels_lock.missing(locked, names)]
    version = torch.split("==", 1)[1].strip()
    torches = sorted(v for n, v in locked if n == wheels.TORCH)
    if torches and not all(v.split("+")[0] == version for v in torches):
        out.append(t("assetpins_torch_version", lock=wheels_lock.LOCK, locked=", ".join(torches), version=version))
    if not out:
        facts.append(
            t(
                "verify_fact_pins",
                assets=len(pins.ASSETS),
                path="grader/course/pins.py",
                lock=wheels_lock.LOCK,
                wheels=sum(len(h) for h in locked.values()),
            )
        )
    return out, facts
