"""The wheels `setup.sh` installs, downloaded for a stated Python and platform
(`kata assets pack FILE --with-wheels`), so that lab machines install with no package index.

setup.sh installs with pip, in two steps: torch, pinned in pyproject.toml, with
$KATA_TORCH_PIP_ARGS (where PyPI's build of the pin would be CUDA's, that variable names the
CPU index), then the kata itself, `-e ".[nbgrader]"`: pyproject.toml's dependencies and its
nbgrader extra, built by its build-system requirements. `download` runs `pip download` the same
two ways, wheels only (`--only-binary=:all:`: a lab machine then builds nothing but the kata),
using whatever index, find-links and cache pip has here: torch first, then everything else with
torch pinned to the very wheel the first step got (so no other index gives a CUDA build). The
kata itself is not downloaded: setup.sh installs it from the course folder.

On the lab machine `kata assets unpack` (or `KATA_ASSETS_FILE=FILE ./setup.sh`, which runs it with
the system Python before any venv exists) puts the wheels in `wheels_dir()`, and setup.sh installs
from there with `pip install --no-index --find-links DIR`.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..course.messages import t

EXTRAS = ("nbgrader",)  # setup.sh: pip install -e ".[nbgrader]"
TORCH = "torch"
MANIFEST = "kata-wheels.json"  # in wheels_dir(): what an unpacked archive's wheels are for


class WheelsError(Exception):
    """pip could not download a wheel; the message names the package and pip's reason."""


@dataclass(frozen=True)
class Target:
    """The lab machines' Python ("3.11") and pip platform tags; empty: this interpreter's."""

    python_version: str | None = None
    platforms: tuple[str, ...] = ()

    def pip_options(self) -> list[str]:
        options = ["--python-version", self.python_version] if self.python_version else []
        for platform in self.platforms:
            options += ["--platform", platform]
        return options

    def describe(self) -> dict:
        return {
            "python": self.python_version or f"{sys.version_info.major}.{sys.version_info.minor}",
            "platforms": list(self.platforms) or [sysconfig.get_platform()],
        }

    def words(self) -> dict:
        """The fields {python} and {platform} of the messages that name the target."""
        described = self.describe()
        return {"python": described["python"], "platform": ", ".join(described["platforms"])}


def wheels_dir() -> Path:
    """Where unpacked wheels live: $KATA_WHEELS, else .kata/wheels (next to the assets folder)."""
    from .gpt2 import assets_dir

    env = os.environ.get("KATA_WHEELS")
    return Path(env) if env else assets_dir().parent / "wheels"


def requirements(pyproject: Path) -> tuple[str, list[str]]:
    """(torch's pinned requirement, everything else setup.sh's second pip install needs), read
    from pyproject.toml: the dependencies, the extras setup.sh names and the build requirements."""
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise WheelsError(f"{pyproject}: {type(e).__name__}: {e}") from None
    project = data.get("project", {})
    wanted = list(project.get("dependencies", []))
    for extra in EXTRAS:
        wanted += project.get("optional-dependencies", {}).get(extra, [])
    wanted += data.get("build-system", {}).get("requires", [])
    torch = [r for r in wanted if _name(r) == TORCH]
    if len(torch) != 1 or "==" not in torch[0]:
        raise WheelsError(t("wheels_no_torch_pin", file=pyproject))
    return torch[0], [r for r in wanted if _name(r) != TORCH]


def _name(requirement: str) -> str:
    return re.split(r"[\s\[<>=!~;@(]", requirement.strip(), maxsplit=1)[0].lower().replace("_", "-")


def _pip(args: list[str], what: str, target: Target, log) -> None:
    """`pip download` with `args`; a failure names the package pip could not get (else `what`)."""
    cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--only-binary=:all:", *args]
    log("$ " + shlex.join(["pip", *cmd[3:]]))
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        err = proc.stderr or ""
        found = re.findall(r"(?:No matching distribution found for|satisfies the requirement) (\S+)", err)
        errors = [line.strip() for line in err.splitlines() if line.startswith("ERROR")]
        reason = " ".join(errors[-2:]) or err.strip()[-600:] or f"exit status {proc.returncode}"
        raise WheelsError(t("wheels_failed", package=found[-1] if found else what, reason=reason, **target.words()))


def download(dest: Path, target: Target, pyproject: Path, log=lambda message: None) -> list[Path]:
    """Download every wheel setup.sh installs into `dest` (see the module's docstring)."""
    torch, rest = requirements(pyproject)
    options = target.pip_options()
    torch_args = shlex.split(os.environ.get("KATA_TORCH_PIP_ARGS", ""))
    _pip(["-d", str(dest), *options, torch, *torch_args], torch, target, log)
    got = sorted(dest.glob("torch-*.whl"))
    if len(got) != 1:
        raise WheelsError(
            t("wheels_failed", package=torch, reason=", ".join(p.name for p in got) or "no wheel", **target.words())
        )
    _say_cuda(got[0], dest, log)
    pinned = f"{TORCH}=={got[0].name.split('-')[1]}"  # e.g. torch==2.13.0+cpu: this wheel and no other
    _pip(["-d", str(dest), "--find-links", str(dest), *options, pinned, *rest], t("wheels_the_rest"), target, log)
    return sorted(dest.glob("*.whl"))


def download_locked(
    dest: Path, target: Target, pins: dict[tuple[str, str], set[str]], log=lambda message: None
) -> list[Path]:
    """Download exactly the wheels the course's lock names (`pins`: wheels_lock.read) into `dest`,
    each by its version and sha256 (pip's hash-checking mode, no dependency resolved again): what
    `kata assets pack --with-wheels` packs, so that a release on PyPI since the lock was written
    (a newer huggingface_hub) changes nothing. torch first, with KATA_TORCH_PIP_ARGS, as `download`."""
    from .wheels_lock import normalize

    def requirements_file(name: str, keys) -> Path:
        path = dest / name
        path.write_text(
            "".join(
                f"{n}=={v}" + "".join(f" --hash=sha256:{d}" for d in sorted(pins[(n, v)])) + "\n"
                for n, v in sorted(keys)
            ),
            encoding="utf-8",
        )
        return path

    options = target.pip_options()
    torch_keys = [k for k in pins if k[0] == normalize(TORCH)]
    rest = [k for k in pins if k[0] != normalize(TORCH)]
    torch_args = shlex.split(os.environ.get("KATA_TORCH_PIP_ARGS", ""))
    if torch_keys:
        _pip(
            [
                "-d",
                str(dest),
                *options,
                "--no-deps",
                "--require-hashes",
                "-r",
                str(requirements_file(".torch-requirements.txt", torch_keys)),
                *torch_args,
            ],
            TORCH,
            target,
            log,
        )
    _pip(
        [
            "-d",
            str(dest),
            "--find-links",
            str(dest),
            *options,
            "--no-deps",
            "--require-hashes",
            "-r",
            str(requirements_file(".requirements.txt", rest)),
        ],
        t("wheels_the_rest"),
        target,
        log,
    )
    got = sorted(dest.glob("*.whl"))
    torch_wheel = next((p for p in got if p.name.startswith(f"{TORCH}-")), None)
    if torch_wheel is not None:  # a lock made with a bare torch: said, as `download` says it
        _say_cuda(torch_wheel, dest, log)
    return got


def _say_cuda(torch_wheel: Path, dest: Path, log) -> None:
    """The CUDA wheels a torch wheel brought into `dest`: what setup.sh would install too, but a lab
    without GPUs needs none of it."""
    cuda = sorted(dest.glob("nvidia_*.whl"))
    if cuda:
        log(
            t(
                "wheels_cuda",
                wheel=torch_wheel.name,
                count=len(cuda),
                mb=f"{sum(p.stat().st_size for p in cuda) / 2**20:,.0f}",
            )
        )
