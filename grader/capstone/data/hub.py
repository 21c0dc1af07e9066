"""IMDb from the Hugging Face hub: `datasets.load_dataset("imdb")`, as listing 1.23 does.

The download and its Arrow files go to .kata/cache/datasets. Offline (paths.is_offline()) datasets
asks no server: the call is served from that cache, or fails at once. Online, a hub that does not
answer within HUB_TIMEOUT_S seconds per request fails instead of hanging, and when the hub's name
does not resolve (a machine without a network) datasets is asked in offline mode, for what its
cache holds, instead of retrying the hub with back-off for about 25 s.
"""

from __future__ import annotations

import contextlib
import os
import socket
import urllib.parse

from ...course.messages import Msg, code, joined
from ..gpt2 import socket_timeout
from .corpus import LABEL, UNSUPERVISED, Corpus, column, validate_labels
from .errors import DataError
from .library import cache_only, hf_datasets
from .paths import datasets_cache_dir, is_offline

HUB_NAME = "imdb"
HUB_TIMEOUT_S = 20.0
IMDB_SIZES = (25_000, 25_000)  # train, test: the dataset card's sizes, printed by listing 1.23
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy")


def _unresolvable() -> str | None:
    """Why the hub's host cannot be reached, when its name does not resolve here (no network, no
    DNS); None when it resolves, or when a proxy is set (the proxy resolves names, not this machine)."""
    import huggingface_hub.constants

    if any(os.environ.get(name) for name in PROXY_VARIABLES):
        return None
    host = urllib.parse.urlsplit(huggingface_hub.constants.ENDPOINT).hostname or ""
    try:
        with socket_timeout(HUB_TIMEOUT_S):
            socket.getaddrinfo(host, 443)
    except OSError as e:
        return f"cannot resolve {host} ({e})"
    return None


def load_from_hub(name: str = HUB_NAME, unlabelled: bool = False) -> Corpus:
    """`datasets.load_dataset(name)`: its train and test splits (labels checked, relabelled
    negative/positive), and its "unsupervised" split as text when `unlabelled`. DataError when
    the hub cannot be reached (offline: when the cache does not hold it); the original exception
    is chained."""
    hf = hf_datasets()
    why = None if is_offline() else _unresolvable()
    try:
        with cache_only() if why else contextlib.nullcontext(), socket_timeout(HUB_TIMEOUT_S):
            found = hf.load_dataset(name, cache_dir=str(datasets_cache_dir()))
    except Exception as e:  # no network, DNS failure, a proxy's error page, offline and not cached, ...
        how = (
            Msg.key("data_hub_cache_only", why=why)
            if why
            else Msg.key("data_hub_offline")
            if is_offline()
            else code("")
        )
        raise DataError(
            Msg.key("data_hub_failed", name=repr(name), how=how, error=f"{type(e).__name__}: {str(e)[:300]}")
        ) from e
    missing = [s for s in ("train", "test") if s not in found]
    if missing:
        raise DataError(
            Msg.key(
                "data_hub_no_split",
                name=name,
                missing=joined(map(code, missing), " or ", " 或 "),
                found=joined(map(code, found), ", ", "、") if found else Msg.key("data_none"),
            )
        )
    splits = {}
    for split in ("train", "test"):
        validate_labels(column(found[split], "label"), f"hub {name} {split}")
        splits[split] = found[split].select_columns(["text", "label"]).cast_column("label", LABEL)
    notes = []
    if unlabelled and UNSUPERVISED in found:
        splits[UNSUPERVISED] = found[UNSUPERVISED].select_columns(["text"])
        notes.append(f"the hub's {UNSUPERVISED} split: {len(splits[UNSUPERVISED]):,} unlabelled reviews")
    return Corpus(splits, source=Msg.key("data_source_hub", name=repr(name)), notes=notes)
