"""The `datasets` library, imported and set up as the kata uses it.

`hf_datasets()` returns the module after making sure that
- its caches are under .kata/ (paths.py), never ~/.cache: HF_HOME and HF_DATASETS_CACHE default
  to folders of cache_dir() when the environment does not name others (they are read when
  datasets is first imported), and every call of the kata passes cache_dir= as well;
- it is in offline mode exactly when paths.is_offline() says so (KATA_OFFLINE, HF_DATASETS_OFFLINE
  or HF_HUB_OFFLINE): then `load_dataset("imdb")` is served from that cache or fails at once,
  and no request leaves the machine. The flag is set again at every call, so a change of the
  environment in a running process (a test) takes effect;
- its progress bars and its and the hub client's warnings are off (kata prints its own lines, and
  a failure reaches the user as a DataError).

Every module of the package gets the library from here, never with a bare `import datasets`.
"""

from __future__ import annotations

import contextlib
import os
import types

from ...course.messages import Msg
from .errors import DataError
from .paths import cache_dir, datasets_cache_dir, is_offline


def hf_datasets() -> types.ModuleType:
    """The `datasets` module, with its caches under .kata/ and offline when asked (see above)."""
    os.environ.setdefault("HF_HOME", str(cache_dir() / "huggingface"))
    os.environ.setdefault("HF_DATASETS_CACHE", str(datasets_cache_dir()))
    try:
        import datasets
        import huggingface_hub.constants
        import huggingface_hub.utils
    except ImportError as e:
        raise DataError(Msg.key("data_needs_datasets", error=e)) from None
    quiet = is_offline()
    datasets.config.HF_HUB_OFFLINE = quiet
    datasets.config.HF_DATASETS_OFFLINE = quiet
    huggingface_hub.constants.HF_HUB_OFFLINE = quiet
    datasets.disable_progress_bars()
    datasets.logging.set_verbosity_error()  # a failure reaches the user as a DataError, not as log lines
    huggingface_hub.utils.logging.set_verbosity_error()
    return datasets


@contextlib.contextmanager
def cache_only():
    """datasets and the hub client in offline mode for the block, whatever the environment says:
    load_dataset then serves what the cache holds, or fails at once."""
    datasets = hf_datasets()
    import huggingface_hub.constants as hub

    old = datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE, hub.HF_HUB_OFFLINE
    datasets.config.HF_HUB_OFFLINE = datasets.config.HF_DATASETS_OFFLINE = hub.HF_HUB_OFFLINE = True
    try:
        yield datasets
    finally:
        datasets.config.HF_HUB_OFFLINE, datasets.config.HF_DATASETS_OFFLINE, hub.HF_HUB_OFFLINE = old
