"""GPT-2's BPE tokenizer for the trusted side, and its ranks file for the sandbox (§1.4).

tiktoken's "gpt2" encoding downloads vocab.bpe and encoder.json on first use, which fails
without a network. The same ranks ship on PyPI: the source distribution of openai-whisper
holds whisper/assets/gpt2.tiktoken, byte-identical to tiktoken's r50k_base.tiktoken (same
ranks, pattern and <|endoftext|> = 50256 as "gpt2", hence the same ids). So:

    python -m grader.capstone.gpt2 fetch    # once (setup.sh does it): <course root>/.kata/assets/gpt2.tiktoken
    python -m grader.capstone.gpt2 which    # which encoding `encoding()` gives on this machine

`encoding()` returns tiktoken's "gpt2" where the hub (or tiktoken's own cache) has it and
otherwise, offline, "r50k_base" loaded from a TIKTOKEN_CACHE_DIR that holds the fetched file
under the name tiktoken expects (the sha1 of its URL). `SOURCE` says which one was used.
The sandboxed worker reads the same file (the student's encoder loads it); tiktoken is used
only here, in the trusted process.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import os
import socket
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from ..course import atomic
from ..course.assets_folder import (
    ASSET_NAME,
    MAX_ASSET_BYTES,
    SHA256,
    assets_dir,  # noqa: F401
    course_root,  # noqa: F401
    own_assets_dir,  # noqa: F401
    use_course,  # noqa: F401
)
from ..course.messages import t
from .pypi import downloaded

# Where the assets live is the course's business (course/assets_folder.py, whose folder the manifest
# gives the sandbox); ASSET_NAME, assets_dir and the rest are re-exported above for our callers.
R50K_URL = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"
R50K_CACHE_KEY = "0ea1e91bbb3a60f729a8dc8f777fd2fc07cd8df4"  # sha1(R50K_URL): tiktoken's cache file name
PYPI_PACKAGE = "openai-whisper"
MEMBER_SUFFIX = "/whisper/assets/gpt2.tiktoken"
HUB_TIMEOUT_S = 10.0

# Filled by encoding(): "gpt2 (tiktoken's own download)" or "r50k_base (offline, from ...)".
SOURCE = ""


class AssetMissing(RuntimeError):
    """gpt2.tiktoken is not there and the hub is not reachable."""


def asset_path() -> Path:
    return assets_dir() / ASSET_NAME


def sha256_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _good(path: Path) -> bytes | None:
    """The file's bytes if it exists and has the expected sha256."""
    try:
        if path.is_file() and not path.is_symlink() and path.stat().st_size <= MAX_ASSET_BYTES:  # a link is not it
            data = path.read_bytes()
            if sha256_of(data) == SHA256:
                return data
    except OSError:
        pass
    return None


def have_asset() -> bool:
    return _good(asset_path()) is not None


def _local_copies() -> list[Path]:
    """Places that may already hold the file: an installed whisper, tiktoken's caches."""
    found = []
    with contextlib.suppress(ImportError, ValueError):
        spec = importlib.util.find_spec("whisper")
        if spec and spec.origin:
            found.append(Path(spec.origin).parent / "assets" / ASSET_NAME)
    for var in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if os.environ.get(var):
            found.append(Path(os.environ[var]) / R50K_CACHE_KEY)
    found.append(Path(tempfile.gettempdir()) / "data-gym-cache" / R50K_CACHE_KEY)
    found.append(assets_dir().parent / "tiktoken-cache" / R50K_CACHE_KEY)
    return found


def _from_pypi(log) -> bytes:
    """Download openai-whisper's source distribution with pip and read the one file out of it."""
    with downloaded(
        PYPI_PACKAGE,
        "*.tar.gz",
        binary=False,
        error=AssetMissing,
        log=lambda msg: log(t("gpt2_log", message=msg, asset=ASSET_NAME)),
    ) as archive:
        with tarfile.open(archive, "r:gz") as tar:
            for member in tar:  # read the member's bytes; nothing is extracted to disk
                if member.isfile() and member.name.endswith(MEMBER_SUFFIX) and member.size <= MAX_ASSET_BYTES:
                    f = tar.extractfile(member)
                    if f is not None:
                        return f.read()
        raise AssetMissing(f"{archive.name} holds no {MEMBER_SUFFIX.lstrip('/')}")


def fetch_assets(dest_dir: str | os.PathLike | None = None, log=None) -> Path:
    """Make sure `<dest_dir>/gpt2.tiktoken` (default: assets_dir()) exists with the right sha256.

    A good file already there is kept (so re-running is cheap); otherwise a local copy (an installed
    whisper, tiktoken's cache) is used, else openai-whisper's sdist is downloaded with pip.
    """
    log = log or (lambda msg: print(msg, file=sys.stderr))
    dest = Path(dest_dir) / ASSET_NAME if dest_dir is not None else asset_path()
    if _good(dest) is not None:
        return dest
    data = None
    for candidate in _local_copies():
        data = _good(candidate)
        if data is not None:
            log(t("gpt2_copying", path=str(candidate)))
            break
    if data is None:
        data = _from_pypi(log)
    digest = sha256_of(data)
    if digest != SHA256:
        raise AssetMissing(f"{ASSET_NAME} has sha256 {digest}, expected {SHA256}: refusing to use it")
    atomic.write_bytes(dest, data, mode=0o644)
    return dest


def _cache_dir_with_r50k() -> Path:
    """A TIKTOKEN_CACHE_DIR holding gpt2.tiktoken under the name tiktoken looks up for r50k_base."""
    data = _good(asset_path())
    if data is None:
        raise AssetMissing(t("asset_unavailable", name=ASSET_NAME))  # the asset's name: no host path
    for cache in (assets_dir().parent / "tiktoken-cache", Path(tempfile.gettempdir()) / f"kata-tiktoken-{os.getuid()}"):
        target = cache / R50K_CACHE_KEY
        if _good(target) is not None:
            return cache
        with contextlib.suppress(OSError):
            atomic.write_bytes(target, data, mode=0o644)
            return cache
    return Path(tempfile.mkdtemp(prefix="kata-tiktoken-"))  # unreachable in practice: both failed to write


@contextlib.contextmanager
def _env(name: str, value: str):
    old = os.environ.get(name)
    os.environ[name] = value
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = old


@contextlib.contextmanager
def socket_timeout(seconds: float):
    """A default timeout for every socket opened inside (the hub clients take none of their own)."""
    old = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds)
    try:
        yield
    finally:
        socket.setdefaulttimeout(old)


@functools.lru_cache(maxsize=1)
def encoding():
    """tiktoken's "gpt2" encoding where it can be had, else "r50k_base" offline (the same ids).

    Set KATA_OFFLINE=1 to skip the download attempt. Raises AssetMissing when neither works.
    """
    global SOURCE
    import tiktoken

    errors = []
    if os.environ.get("KATA_OFFLINE", "") in ("", "0"):
        try:
            with socket_timeout(HUB_TIMEOUT_S):
                enc = tiktoken.get_encoding("gpt2")
            SOURCE = "gpt2 (tiktoken, from the hub or tiktoken's cache)"
            return enc
        except Exception as e:  # no network, DNS failure, a proxy's error page, ...
            errors.append(f"tiktoken 'gpt2': {type(e).__name__}")
    cache = _cache_dir_with_r50k()
    with _env("TIKTOKEN_CACHE_DIR", str(cache)):
        enc = tiktoken.get_encoding("r50k_base")
    SOURCE = f"r50k_base (offline, the same ranks as gpt2, from {cache / R50K_CACHE_KEY})"
    if errors:
        SOURCE += f"; {'; '.join(errors)}"
    return enc


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args.pop(0) if args else "which"
    if command == "fetch":
        try:
            path = fetch_assets(args[0] if args else None)
        except (AssetMissing, OSError, subprocess.SubprocessError) as e:
            print(f"gpt2: could not fetch {ASSET_NAME}: {e}", file=sys.stderr)
            return 1
        print(f"gpt2: {path} (sha256 {SHA256[:12]}..., verified)")
        return 0
    if command == "which":
        try:
            enc = encoding()
        except AssetMissing as e:
            print(f"gpt2: {e}", file=sys.stderr)
            return 1
        print(f"gpt2: using {SOURCE}; {enc.n_vocab} tokens, 'Building' -> {enc.encode('Building')}")
        return 0
    print("usage: python -m grader.capstone.gpt2 [fetch [DEST_DIR] | which]", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
