"""Where the data package keeps its files, and whether it may use the network.

Standard library only: `kata assets` imports this, and setup.sh runs its `unpack` with the
system Python before any venv (and so before `datasets`) exists.

    .kata/data/              local copies of corpora ($KATA_DATA_DIR): aclImdb/, imdb/*.parquet
    .kata/cache/datasets/    everything `datasets` writes ($KATA_CACHE_DIR/datasets): the Arrow
                             files of CSV and parquet copies and of the hub's imdb, and tokens/,
                             the token ids of each corpus (grader.capstone.data.tokens)
    .kata/cache/huggingface/ HF_HOME, unless already set: the hub client's own files
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from ..gpt2 import assets_dir

TRUE = ("1", "ON", "YES", "TRUE")  # what datasets and huggingface_hub take for "set" in their flags


def data_dir() -> Path:
    """Where local copies of corpora may live: $KATA_DATA_DIR, else <course root>/.kata/data."""
    env = os.environ.get("KATA_DATA_DIR")
    return Path(env) if env else assets_dir().parent / "data"


def cache_dir() -> Path:
    """$KATA_CACHE_DIR, else <course root>/.kata/cache."""
    env = os.environ.get("KATA_CACHE_DIR")
    return Path(env) if env else assets_dir().parent / "cache"


def datasets_cache_dir() -> Path:
    """The cache_dir every `datasets` call of the kata is given (never ~/.cache)."""
    return cache_dir() / "datasets"


def tokens_dir() -> Path:
    """The token-id files `tokenize` writes (one per corpus split and tokenizer)."""
    return datasets_cache_dir() / "tokens"


def is_offline() -> bool:
    """True when no request may leave the machine: KATA_OFFLINE (any value but 0), or datasets'
    own HF_DATASETS_OFFLINE / HF_HUB_OFFLINE."""
    if os.environ.get("KATA_OFFLINE", "") not in ("", "0"):
        return True
    return any(os.environ.get(name, "").upper() in TRUE for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"))


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
