"""A class graded as N parts, on N machines or N jobs of a scheduler (`kata grade DIR --out OUT
--shard K/N`), then merged (`kata gradebook OUT`).

Which part an entry falls in depends on its name in the class folder alone (a stable hash of it):
adding a late student moves nobody else, and every shard, looking at the same folder, agrees on
who is whose. Each shard names every student as a whole run would (discover.assign_names over all
the entries), so the names, and the files under them, are those of a one-machine run.

Several shards may write into one OUT at once (a shared filesystem): each holds OUT's lock shared
(a whole run, or `kata gradebook`, holds it alone) and its own shard's lock alone, writes only its
students' folders and its own record of the run, and no class-wide file:

    OUT/shards/K-of-N.json     the shard's run: batch.json's keys, plus "shard" and "entries"
                               (name -> entry of the students it grades)

or into separate OUTs, merged by `kata gradebook OUT --merge OUT1 OUT2 ...`. The merge refuses
shards graded with other settings (naming them), says which shards have not run and which
students have no record yet, and writes batch.json and every class file from all the records.
The term policy (formats/late.py) is one for the class: a --due or --missing given to the shards
must be the same on every one (`term` and `late` are compared), and what a `kata gradebook OUT`
gave (--due, --missing, --extensions) is kept over the shards' own by every later merge.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from ...course import atomic
from ...course.messages import t
from . import store
from .records import status_of

SHARDS = "shards"
SHARD_KEYS = store.COMPARABLE + ("late", "term", "gradescope_hidden", "budget_s", "budget_cpu_s")
_NAME = re.compile(r"^([1-9][0-9]*)-of-([1-9][0-9]*)\.json$")
MAX_N = 10_000


class ShardError(ValueError):
    """A --shard that cannot be read, or shards that cannot be merged: the message says why."""


@dataclass(frozen=True)
class Shard:
    k: int  # 1 .. n
    n: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        m = re.fullmatch(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*", text or "")
        if not m or not (1 <= int(m.group(1)) <= int(m.group(2)) <= MAX_N):
            raise ShardError(t("shard_bad", value=text, max=MAX_N))
        return cls(int(m.group(1)), int(m.group(2)))

    def __str__(self) -> str:
        return f"{self.k}/{self.n}"

    @property
    def name(self) -> str:
        return f"{self.k}-of-{self.n}"

    def holds(self, source: str) -> bool:
        """Whether the entry named `source` in the class folder is this shard's."""
        return part(source, self.n) == self.k

    def meta_path(self, out: Path) -> Path:
        return Path(out) / SHARDS / f"{self.name}.json"


def part(source: str, n: int) -> int:
    """The part (1 .. n) of the entry named `source`: sha256 of the name, not Python's hash(),
    which changes from one process to the next."""
    digest = hashlib.sha256(source.encode("utf-8", "surrogateescape")).digest()
    return int.from_bytes(digest[:8], "big") % n + 1


@contextlib.contextmanager
def locked(out: Path, shard: Shard):
    """OUT's lock held shared (other shards may write beside this one; a whole run or `kata
    gradebook` may not), and this shard's own lock alone (the same shard twice may not)."""
    with store.locked(out, shared=True):
        folder = Path(out) / SHARDS
        try:
            folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(folder / f".{shard.name}.lock", os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise atomic.WriteError(folder, e) from e
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise store.Busy(f"{out} (shard {shard})") from None
            yield
        finally:
            os.close(fd)


def read_all(out: Path) -> dict[str, dict]:
    """Every shard record in OUT/shards, by its file name ("2-of-4"); an unreadable one is left out
    (merge() names it as not run)."""
    found = {}
    folder = Path(out) / SHARDS
    if not folder.is_dir():
        return found
    for p in sorted(folder.iterdir(), key=lambda p: [int(x) if x.isdigit() else x for x in re.split(r"(\d+)", p.name)]):
        if not _NAME.match(p.name):
            continue
        try:
            doc = json.loads(p.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(doc, dict) and isinstance(doc.get("entries"), dict):
            found[p.name.removesuffix(".json")] = doc
    return found


def differences(metas: dict[str, dict], settings: dict | None = None) -> list[str]:
    """One line per shard whose settings differ from the first shard's (or from `settings`, the
    run's own, when a shard is about to start): which keys, and how."""
    if not metas:
        return []
    names = list(metas)
    base_name, base = (t("shard_this_run"), settings) if settings is not None else (names[0], metas[names[0]])
    lines = []
    for name in names if settings is not None else names[1:]:
        diffs = [
            f"{k}: {metas[name].get(k)!r} ({name}) ≠ {base.get(k)!r} ({base_name})"
            for k in SHARD_KEYS
            if metas[name].get(k) != base.get(k)
        ]
        if diffs:
            lines.append(t("shard_differs", shard=name, diffs="; ".join(diffs)))
    return lines


@dataclass
class Merged:
    meta: dict  # batch.json of the merged run
    n: int  # the number of parts the class was split into
    shards: list[str]  # the shards found, "1-of-4", ...
    not_run: list[str]  # the shards of 1..N with no record, "3/4"
    missing: list[str]  # students (names, else entries) without a final record


def merge(out: Path, records: dict[str, dict]) -> Merged:
    """batch.json for OUT from its shards' records; ShardError when they cannot be merged (graded
    with other settings, or as parts of different N)."""
    metas = read_all(out)
    if not metas:
        raise ShardError(t("shard_none", out=out))
    ns = {doc.get("shard", [0, 0])[1] for doc in metas.values()}
    if len(ns) != 1:
        raise ShardError(t("shard_mixed_n", out=out, shards=", ".join(metas)))
    problems = differences(metas)
    if problems:
        raise ShardError(t("shard_cannot_merge", out=out, problems="\n".join(problems)))
    (n,) = ns
    ran = {doc["shard"][0] for doc in metas.values()}
    not_run = [f"{k}/{n}" for k in range(1, n + 1) if k not in ran]
    first = next(iter(metas.values()))
    entries: dict[str, str] = {}
    for doc in metas.values():
        entries.update(doc["entries"])
    missing = [name for name in sorted(entries) if status_of(records.get(name, {})) not in store.FINAL]
    if not_run:  # their students are known only from the class folder, when it can still be read
        from .discover import discover

        try:
            found, _ = discover(Path(first.get("class_dir", "")))
            missing += sorted(e.source for e in found if part(e.source, n) not in ran)
        except (OSError, ValueError):
            pass
    meta = {k: v for k, v in first.items() if k not in ("shard", "entries")}
    meta["created"] = max(str(doc.get("created", "")) for doc in metas.values())
    meta["jobs"] = sum(int(doc.get("jobs") or 0) for doc in metas.values())
    meta["shards"] = list(metas)
    meta["renamed"] = sorted({note for doc in metas.values() for note in doc.get("renamed") or []})
    return Merged(meta, n, list(metas), not_run, missing)


def gather(out: Path, sources: list[Path]) -> int:
    """Copy the shards and students of separate OUTs into `out` (`kata gradebook OUT --merge OUT1
    ...`); returns the number of students copied. A student already in `out` from another entry
    or another grading is a ShardError, naming both; nothing is copied then."""
    out = Path(out)
    plan: list[tuple[Path, Path]] = []
    seen: dict[str, Path] = {}
    for src in sources:
        src = Path(src)
        metas = read_all(src)
        if not metas:
            raise ShardError(t("shard_none", out=src))
        for name, doc in store.load_records(src).items():
            here = store.read_record(out, name)
            st = doc.get("student") or {}
            if name in seen or (here and (here.get("student") or {}).get("fingerprint") != st.get("fingerprint")):
                raise ShardError(t("shard_clash", name=name, first=seen.get(name, out), second=src))
            seen[name] = src
            plan.append((store.student_dir(src, name), store.student_dir(out, name)))
        for name in metas:
            target = out / SHARDS / f"{name}.json"
            if target.exists() and target.read_bytes() != (src / SHARDS / f"{name}.json").read_bytes():
                raise ShardError(t("shard_clash", name=f"shard {name}", first=out, second=src))
            plan.append((src / SHARDS / f"{name}.json", target))
    for a, b in plan:
        if a.is_dir():
            shutil.copytree(a, b, dirs_exist_ok=True)
        else:
            store.atomic_write(b, a.read_bytes())
    return len(seen)
