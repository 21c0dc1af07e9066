"""`kata assets pack FILE --with-wheels`, and setup.sh installing from the archive with no index.

The fast tests run the real `pip download` against a folder of tiny made-up wheels, one per
requirement of pyproject.toml (pip's configuration is switched off and the index with it): the
archive holds exactly what setup.sh installs, with torch pinned to the CPU build that
$KATA_TORCH_PIP_ARGS names, and unpacking installs the wheels where setup.sh looks. The slow test
is the real thing: it packs every wheel from what pip has here (its cache, find-links and index),
then runs setup.sh (the main job too: the reference graded to full marks) in a copy of the course
under /tmp in a folder named with a space and non-ASCII letters, with every package index
unreachable, and runs `kata check` with the venv it made."""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import tomllib
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from grader.cli import main
from tests.conftest import ROOT, SOLUTIONS

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
UNREACHABLE = "http://127.0.0.1:9/simple/"  # the discard port: nothing answers


def wanted() -> list[Requirement]:
    """What setup.sh installs with pip: the dependencies, the nbgrader extra and the build requirements."""
    project = PYPROJECT["project"]
    return [
        Requirement(r)
        for r in (
            *project["dependencies"],
            *project["optional-dependencies"]["nbgrader"],
            *PYPROJECT["build-system"]["requires"],
        )
    ]


def make_wheel(folder: Path, name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
    """A tiny valid wheel: enough for pip to resolve and download it."""
    dist = f"{name.replace('-', '_')}-{version}"
    path = folder / f"{dist}-py3-none-any.whl"
    meta = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {r}\n" for r in requires
    )
    with zipfile.ZipFile(path, "w") as z:
        z.writestr(f"{dist}.dist-info/METADATA", meta)
        z.writestr(
            f"{dist}.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
        )
        z.writestr(f"{dist}.dist-info/RECORD", "")
    return path


@pytest.fixture
def index(tmp_path, monkeypatch) -> tuple[Path, Path]:
    """(the "package index": a find-links folder with one made-up wheel per requirement, torch as
    PyPI's CUDA build; the "CPU index": torch's CPU build). pip reads nothing else."""
    for var in [v for v in os.environ if v.startswith("PIP_")]:
        monkeypatch.delenv(var)
    pypi, cpu = tmp_path / "pypi", tmp_path / "cpu"
    pypi.mkdir()
    cpu.mkdir()
    for req in wanted():
        if req.name == "torch":
            pin = next(iter(req.specifier)).version
            make_wheel(pypi, "torch", pin, ("nvidia-cublas>=13",))
            make_wheel(cpu, "torch", f"{pin}+cpu")
        else:  # a version the requirement allows: one its specifiers name, else any
            make_wheel(
                pypi,
                req.name,
                next(v for v in [*(s.version for s in req.specifier), "999.0"] if req.specifier.contains(v)),
            )
    make_wheel(pypi, "nvidia-cublas", "13.0")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(pypi))
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    for var, where in (("KATA_ASSETS_DIR", "assets"), ("KATA_DATA_DIR", "data"), ("KATA_WHEELS", "wheels")):
        monkeypatch.setenv(var, str(tmp_path / "cache" / where))
    monkeypatch.setenv("KATA_OFFLINE", "1")
    monkeypatch.setenv("KATA_LANG", "en")
    from grader.capstone import wheels_lock

    monkeypatch.setattr(wheels_lock, "path", lambda: tmp_path / "course-wheels.lock")  # the course's lock, here
    return pypi, cpu


def kata(capsys, *args) -> tuple[int, str, str]:
    code = main(["assets", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def manifest_of(archive: Path) -> tuple[dict, dict[str, bytes]]:
    with tarfile.open(archive) as tar:
        manifest = json.loads(tar.extractfile("kata-assets.json").read())
        wheels = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.name.startswith("wheels/")}
    return manifest, wheels


def test_pack_with_wheels_holds_what_setup_sh_installs_with_the_cpu_torch(tmp_path, monkeypatch, capsys, index):
    pypi, cpu = index
    monkeypatch.setenv("KATA_TORCH_PIP_ARGS", f"--find-links {cpu}")  # as setup.sh is told where the CPU build is
    (tmp_path / "cache" / "data").mkdir(parents=True)
    (tmp_path / "cache" / "data" / "notes.txt").write_bytes(b"a data file")
    archive = tmp_path / "workshop.tar.gz"
    code, out, err = kata(capsys, "lock", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64")
    assert code == 0 and "wrote course-wheels.lock" in out, out + err
    code, out, err = kata(
        capsys, "pack", str(archive), "--with-wheels", "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64"
    )
    assert code == 0, out + err
    pin = next(r for r in wanted() if r.name == "torch").specifier
    torch_cpu = f"torch-{next(iter(pin)).version}+cpu-py3-none-any.whl"
    manifest, wheels = manifest_of(archive)
    expected = {f"wheels/{p.name}" for p in pypi.glob("*.whl") if not p.name.startswith(("torch-", "nvidia"))}
    assert set(wheels) == expected | {f"wheels/{torch_cpu}"}  # every requirement, the CPU torch, no CUDA
    assert {k: v["sha256"] for k, v in manifest["files"].items() if k.startswith("wheels/")} == {
        k: hashlib.sha256(v).hexdigest() for k, v in wheels.items()
    }
    assert "data/notes.txt" in manifest["files"]
    assert manifest["wheels"]["python"] == "3.11" and manifest["wheels"]["platforms"] == ["manylinux_2_28_x86_64"]
    assert f"{len(expected) + 1} wheel(s)" in out and "Python 3.11 on manylinux_2_28_x86_64" in out
    assert "KATA_ASSETS_FILE=workshop.tar.gz ./setup.sh" in out
    assert "pip download" in err and "--python-version 3.11" in err  # the commands are shown as they run
    assert not list(tmp_path.glob(".kata-wheels-*"))  # the download folder is gone

    # The lab machine: unpack puts the wheels where setup.sh looks, and status says so.
    code, out, err = kata(capsys, "unpack", str(archive))
    assert code == 0, out + err
    folder = tmp_path / "cache" / "wheels"
    assert {p.name for p in folder.glob("*.whl")} == {n.split("/", 1)[1] for n in wheels}
    assert json.loads((folder / "kata-wheels.json").read_text())["python"] == "3.11"
    assert sorted((folder / "requirements.txt").read_text().splitlines()) == sorted(
        line for line in (tmp_path / "course-wheels.lock").read_text().splitlines() if not line.startswith("#")
    )
    assert re.search(rf"✔ wheels .*{len(wheels)} wheel\(s\) for Python 3.11 on manylinux_2_28_x86_64", out), out

    # A later archive with other wheels replaces them: --find-links would take a newer leftover.
    (folder / "numpy-1000.0-py3-none-any.whl").write_bytes(b"left by an earlier archive")
    assert kata(capsys, "unpack", str(archive))[0] == 0
    assert not (folder / "numpy-1000.0-py3-none-any.whl").exists()


def test_a_bare_torch_brings_cuda_and_pack_says_how_to_avoid_it(tmp_path, monkeypatch, capsys, index):
    archive = tmp_path / "cuda.tar.gz"
    assert kata(capsys, "lock")[0] == 0
    code, out, err = kata(capsys, "pack", str(archive), "--with-wheels")
    assert code == 0, out + err
    _, wheels = manifest_of(archive)
    assert any(n.startswith("wheels/nvidia_cublas-") for n in wheels)
    assert "brings 1 CUDA wheel(s)" in err and "KATA_TORCH_PIP_ARGS=" in err


def test_a_wheel_pip_cannot_get_is_named_and_nothing_is_written(tmp_path, monkeypatch, capsys, index):
    pypi, cpu = index
    monkeypatch.setenv("KATA_TORCH_PIP_ARGS", f"--find-links {cpu}")
    next(pypi.glob("polib-*.whl")).unlink()
    archive = tmp_path / "workshop.tar.gz"
    code, out, err = kata(capsys, "pack", str(archive), "--with-wheels", "--python-version", "3.11")
    assert code == 2, out + err
    assert re.search(r"pip could not download polib\S* for Python 3.11 on .*: ERROR: ", err), err
    assert not archive.exists() and not list(tmp_path.glob(".kata-wheels-*"))


# ---------------------------------------------------------------- issue 37: the course locks the wheels
def _forged(archive: Path, out: Path, name: str, content: bytes) -> Path:
    """`archive` with the member `name` replaced by `content` and its own manifest rewritten to match."""
    with tarfile.open(archive) as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    manifest = json.loads(members.pop("kata-assets.json"))
    members[name] = content
    manifest["files"][name] = {"size": len(content), "sha256": hashlib.sha256(content).hexdigest()}
    with tarfile.open(out, "w:gz") as tar:
        for n, c in [("kata-assets.json", json.dumps(manifest).encode()), *members.items()]:
            info = tarfile.TarInfo(n)
            info.size = len(c)
            tar.addfile(info, io.BytesIO(c))
    return out


def test_a_wheel_the_course_does_not_lock_is_refused(tmp_path, monkeypatch, capsys, index):
    pypi, cpu = index
    monkeypatch.setenv("KATA_TORCH_PIP_ARGS", f"--find-links {cpu}")
    archive = tmp_path / "workshop.tar.gz"
    assert kata(capsys, "lock")[0] == 0
    assert kata(capsys, "pack", str(archive), "--with-wheels")[0] == 0
    _, wheels = manifest_of(archive)
    name = next(n for n in wheels if n.startswith("wheels/polib-"))
    folder = tmp_path / "cache" / "wheels"
    for forged, wheel in (
        (_forged(archive, tmp_path / "changed.tar.gz", name, wheels[name] + b"\0"), name),
        (
            _forged(archive, tmp_path / "added.tar.gz", "wheels/evil-1.0-py3-none-any.whl", wheels[name]),
            "wheels/evil-1.0-py3-none-any.whl",
        ),
    ):
        code, out, err = kata(capsys, "unpack", str(forged))
        assert code == 2, out + err
        assert (
            "archive refused, nothing was installed" in err
            and f"{wheel} is not a wheel the course's wheels.lock names with this sha256" in err
        ), err
        assert not folder.exists()  # no wheel installed

    # pack, too, packs only what the lock names: a newer wheel on the index since the lock was written
    # is not taken (a new huggingface_hub on PyPI once made every `pack --with-wheels` fail): the
    # locked version is, by its sha256
    make_wheel(pypi, "polib", "999.1")
    code, out, err = kata(capsys, "pack", str(tmp_path / "newer.tar.gz"), "--with-wheels")
    assert code == 0, out + err
    _, again = manifest_of(tmp_path / "newer.tar.gz")
    assert name in again and not any("polib-999.1" in n for n in again), sorted(again)

    # What setup.sh installs with --require-hashes: a wheel changed on disk after unpack is refused by pip.
    assert kata(capsys, "unpack", str(archive))[0] == 0
    wheel = next(folder.glob("polib-*.whl"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIP_")}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(folder), PIP_INDEX_URL=UNREACHABLE)
    pip = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "-q",
        "--no-deps",
        "--require-hashes",
        "-r",
        str(folder / "requirements.txt"),
        "-d",
    ]
    ok = subprocess.run([*pip, str(tmp_path / "d1")], env=env, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    bad = subprocess.run([*pip, str(tmp_path / "d2")], env=env, capture_output=True, text=True, timeout=300)
    assert bad.returncode != 0 and "THESE PACKAGES DO NOT MATCH THE HASHES" in bad.stderr, bad.stdout + bad.stderr


def test_setup_sh_installs_what_the_wheels_are_packed_for():
    """wheels.py downloads what setup.sh installs: the pinned torch, then the kata with these extras."""
    from grader.capstone import wheels

    torch = next(r for r in PYPROJECT["project"]["dependencies"] if r.startswith("torch"))
    setup = (ROOT / "setup.sh").read_text()
    installs = re.findall(r"^\.venv/bin/python -m pip install (.*)$", setup, re.M)
    assert len(installs) == 2 and f'"{torch}" ${{KATA_TORCH_PIP_ARGS:-}}' in installs[0]
    assert f'-e ".[{",".join(wheels.EXTRAS)}]"' in installs[1]


def _wheels_block(script: str) -> str:
    """The lines of a setup script that decide where pip finds the wheels (from WHEELS= to its fi)."""
    start = script.index('WHEELS="${KATA_WHEELS:-')
    return script[start : script.index("\nfi\n", start) + 4]


@pytest.mark.parametrize("which", ["setup.sh", "the bundle's setup.sh (kata release)"])
def test_a_course_in_a_folder_with_spaces_installs_from_its_wheels(tmp_path, which):
    """pip splits PIP_FIND_LINKS at whitespace: a course in "My Course é/" once found none of its
    wheels ("No matching distribution found for torch==2.13.0", the slow test's first run). Both
    setup scripts now give the folder as a file: URL; the real pip finds a wheel there with no index."""
    from grader.instructor.release import release

    script = (ROOT / "setup.sh").read_text() if which == "setup.sh" else release.SETUP_SH
    course = tmp_path / "My Course é" / "kata lab"
    wheels = course / ".kata" / "wheels"
    wheels.mkdir(parents=True)
    make_wheel(wheels, "kata-probe", "1.0")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "KATA_"))}
    env.update(PYTHON=sys.executable, PIP_CONFIG_FILE=os.devnull)
    shown = subprocess.run(
        ["bash", "-c", "set -euo pipefail\n" + _wheels_block(script) + '\nprintf %s "$PIP_FIND_LINKS"'],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shown.returncode == 0 and "with no package index" in shown.stderr, shown.stderr
    assert " " not in shown.stdout and shown.stdout.startswith("file://"), shown.stdout
    env.update(PIP_NO_INDEX="1", PIP_FIND_LINKS=shown.stdout, PIP_INDEX_URL=UNREACHABLE)
    got = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(tmp_path / "d"), "kata-probe==1.0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert got.returncode == 0 and list((tmp_path / "d").glob("kata_probe-1.0-*.whl")), got.stdout + got.stderr


@pytest.mark.parametrize("which", ["setup.sh", "the bundle's setup.sh (kata release)"])
def test_a_course_folder_whose_path_pip_cannot_quote_is_refused_before_anything_is_installed(tmp_path, which):
    """Seventh outside attack (B2): in a folder named with `"` or `$`, set-up exited 0 and every
    `kata` then failed ("exec: ...: not found", 127), since pip's #!/bin/sh launcher double-quotes
    the path unescaped; a `$(id -u)` in the name ran at each start. Both scripts now stop first,
    naming the folder and the characters; spaces, `'` and non-ASCII letters are not refused."""
    from grader.instructor.release import release

    script = (ROOT / "setup.sh").read_text() if which == "setup.sh" else release.SETUP_SH
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "KATA_"))}
    for name in ('Kurs "A"', "c$(id -u)x", "a`b`c"):
        course = tmp_path / name
        course.mkdir()
        (course / "setup.sh").write_text(script)
        done = subprocess.run(["bash", "setup.sh"], cwd=course, env=env, capture_output=True, text=True, timeout=60)
        assert done.returncode == 1 and "pip's launchers cannot quote them" in done.stderr, done.stderr
        assert str(course) in done.stderr and sorted(p.name for p in course.iterdir()) == ["setup.sh"]
    block = script[script.index('case "$PWD" in') : script.index("esac\n") + 5]
    for name in ("My Course é", "Bob's kata"):
        (tmp_path / name).mkdir()
        ok = subprocess.run(
            ["bash", "-c", "set -euo pipefail\n" + block + "echo through"],
            cwd=tmp_path / name,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert ok.returncode == 0 and ok.stdout == "through\n", ok.stderr


# ----------------------------------------------------------------------------- the real thing
def _course_copy(dest: Path) -> Path:
    """The course as a lab machine gets it: the working tree, without venv, caches or .git."""
    skip = shutil.ignore_patterns(
        ".git", ".venv", ".kata", "__pycache__", "*.egg-info", ".pytest_cache", ".hypothesis", "build", "dist", "out"
    )
    shutil.copytree(ROOT, dest, ignore=skip)
    return dest


@pytest.mark.slow
def test_setup_sh_installs_from_the_archive_with_every_index_unreachable_in_an_odd_place_under_tmp(tmp_path):
    """Pack every wheel (pip's cache, find-links and index here), then, in a copy of the course in a
    folder under /tmp whose names hold a space and non-ASCII letters, `KATA_ASSETS_FILE=FILE
    ./setup.sh` with pip's configuration off and the index unreachable: torch is the CPU build, the
    main job grades the reference to full marks (issue 26: a clone under /tmp once graded it 400/476
    while setup said OK, the workers' own /tmp hiding its venv), and `kata check` gives the verdicts
    it gives here. One setup.sh for both: each took 150-320 s."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed: the /tmp bug lives in the sandbox")
    from grader.capstone import gpt2

    if not gpt2.have_asset():
        pytest.skip("gpt2.tiktoken is not fetched here (setup.sh fetches it): the reference cannot score full marks")
    started = time.monotonic()
    archive = tmp_path / "workshop.tar.gz"
    pack_env = {
        **os.environ,
        "KATA_LANG": "en",
        "PYTHONPATH": str(ROOT),
        "KATA_ASSETS_DIR": str(tmp_path / "online" / "assets"),
        "KATA_DATA_DIR": str(tmp_path / "online" / "data"),
    }
    if (ROOT / ".kata" / "assets").is_dir():
        shutil.copytree(ROOT / ".kata" / "assets", tmp_path / "online" / "assets")
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "assets", "pack", str(archive), "--with-wheels"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=900,
        env=pack_env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    packed = time.monotonic()
    manifest, _ = manifest_of(archive)
    names = [n for n in manifest["files"] if n.startswith("wheels/")]
    assert any(re.match(r"wheels/torch-[\d.]+\+cpu-", n) for n in names) and not any("nvidia" in n for n in names), (
        names
    )
    assert "assets/gpt2.tiktoken" in manifest["files"], sorted(manifest["files"])

    top = Path(tempfile.mkdtemp(prefix="kata clone é ", dir="/tmp"))
    try:
        course = _course_copy(top / "Kurs für Transformer")
        lab_env = {
            k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "KATA_", "VIRTUAL_ENV", "TIKTOKEN_"))
        }
        lab_env.update(
            PIP_CONFIG_FILE=os.devnull,
            PIP_INDEX_URL=UNREACHABLE,
            PIP_RETRIES="0",
            PIP_TIMEOUT="3",
            KATA_ASSETS_FILE=str(archive),
            KATA_LANG="en",
            KATA_WARM="0",
            TMPDIR="/tmp",
            PYTHON=getattr(sys, "_base_executable", None) or sys.executable,
            PATH=os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if "/.venv/" not in p + "/"),
        )
        proc = subprocess.run(
            ["bash", "setup.sh"], cwd=course, capture_output=True, text=True, timeout=1800, env=lab_env
        )
        out = proc.stdout + proc.stderr
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-5000:]
        # every pip ran with --no-index: one that asked the index (unreachable) would have stopped setup.sh
        assert "installing from the wheels in" in proc.stderr and "with no package index" in proc.stderr
        assert "full marks" in out and "ModuleNotFoundError" not in out, out[-6000:]
        installed = time.monotonic()
        python = course / ".venv" / "bin" / "python"
        torch = subprocess.run(
            [str(python), "-c", "import torch, grader; print(torch.__version__, torch.version.cuda, grader.__file__)"],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=tmp_path,
        )
        version, cuda, where = torch.stdout.strip().split(maxsplit=2)  # the path holds spaces
        assert version.endswith("+cpu") and cuda == "None" and where.startswith(str(course)), (
            torch.stdout + torch.stderr
        )
        assert (course / ".kata" / "assets").is_dir() and (course / ".kata" / "wheels" / "kata-wheels.json").is_file()
        # the kata command runs the course's own interpreter: pip writes it as the shebang, or, for a path
        # with a space (this one), as a `#!/bin/sh` line that execs it by its quoted path
        head = (course / ".venv/bin/kata").read_text(errors="replace").splitlines()[:2]
        assert head[0] == f"#!{course}/.venv/bin/python" or f'"{course}/.venv/bin/python"' in head[1], head

        def check() -> subprocess.CompletedProcess:
            return subprocess.run(
                [str(course / ".venv" / "bin" / "kata"), "check", "s1_11_softmax"],
                cwd=course,
                capture_output=True,
                text=True,
                timeout=600,
                env=lab_env,
            )

        proc = check()
        assert proc.returncode == 1 and re.search(r"\b0 of (\d+) public checks pass", proc.stdout), (
            proc.stdout + proc.stderr
        )
        shutil.copy(SOLUTIONS / "ch01" / "s1_11_softmax.py", course / "exercises" / "ch01")
        proc = check()
        assert proc.returncode == 0 and re.search(r"\b(\d+) of \1 public checks pass", proc.stdout), (
            proc.stdout + proc.stderr
        )
        print(
            f"\npack {packed - started:.0f} s ({archive.stat().st_size / 2**20:.0f} MB, {len(names)} wheels), "
            f"setup.sh {installed - packed:.0f} s, kata check x2 {time.monotonic() - installed:.0f} s"
        )
    finally:
        shutil.rmtree(top, ignore_errors=True)
