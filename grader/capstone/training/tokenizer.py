"""The tokenizer `kata train` uses: the s1_23_tokenizer exercise's own, from the same code as the model.

`load_tokenizer(code_dir, max_len, truncation)` imports `<code_dir>/ch01/s1_23_tokenizer.py`
(solutions/ for `--code reference`, exercises/ for `--code student`, or the folder given) and
builds its tokenizer as the file says, `from_file(<assets>/gpt2.tiktoken, max_len=...,
truncation=...)`: the student's tokenizer trains the student's model, and the reference
solution's the reference model (the checks show both give the same ids). Like the model, it
runs in this process: `kata train` is a tool for one's own code, not a grading path.

Before any text is encoded, a short review is, and the ids and special ids are looked at, so
that an unfinished or broken tokenizer is named (file and line) at once, not half-way through
a corpus. The token-id cache (grader.capstone.data.tokenize, datasets' own) is keyed by the file's
text, the ranks, the settings and tiktoken's version: editing the tokenizer recomputes the ids.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import types
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ...course.messages import t
from .model import _line_in, import_file

TOKENIZER_FILE = "ch01/s1_23_tokenizer.py"
EXERCISE = "s1_23_tokenizer"
PROBE = "This movie is slow, but the acting is excellent."  # §1.23's sample review
CACHE_KEY_VERSION = "kata-train-tokenizer-1"
THREADS_FROM = 512  # texts; tiktoken releases the GIL, so a pool of threads encodes a corpus faster


class TokenizerError(RuntimeError):
    """The tokenizer file cannot be used for training; the message names the file and what to do."""


class Tokenizer:
    """The exercise's BertTokenizer (`impl`) with what training needs: its special ids and sizes
    (checked to be ints), `encode_batch` (unpadded ids of many texts), the cache key, and the
    text of one token for the attention figure."""

    def __init__(self, impl, path: Path, key: str, hint: str):
        self.impl, self.path, self.key, self._hint = impl, path, key, hint
        self.pad_id, self.cls_id, self.sep_id = impl.pad_id, impl.cls_id, impl.sep_id
        self.vocab_size = impl.vocab_size
        self.max_len, self.truncation, self.head_len = impl.max_len, impl.truncation, impl.head_len

    @property
    def base(self):
        """The base encoding (the exercise's given `load_gpt2`: a tiktoken Encoding)."""
        return self.impl.base

    @property
    def name(self) -> str:
        return str(getattr(self.impl.base, "name", "?"))

    def encode(self, text: str, pad: bool = True) -> list[int]:
        return self.impl.encode(text, pad=pad)

    def encode_batch(self, texts: list[str]) -> list[list[int]]:
        """encode(text, pad=False) of every text; TokenizerError naming the text that failed."""
        texts = list(texts)

        def one(item):
            i, text = item
            try:
                ids = self.impl.encode(text, pad=False)
            except Exception as e:
                raise TokenizerError(_failure(self.path, e, f"encode(text #{i}, pad=False)", self._hint)) from e
            if not isinstance(ids, list) or not ids or ids[0] != self.cls_id or ids[-1] != self.sep_id:
                raise TokenizerError(
                    t(
                        "train_tokenizer_bad",
                        where=self.path,
                        call=f"encode(text #{i}, pad=False)",
                        got=_short(ids),
                        hint=self._hint,
                    )
                )
            return ids

        if len(texts) < THREADS_FROM:
            return [one(item) for item in enumerate(texts)]
        with ThreadPoolExecutor(max_workers=min(8, os.cpu_count() or 1)) as pool:
            return list(pool.map(one, enumerate(texts)))

    def token_text(self, token_id: int) -> str:
        """How one id reads in a figure: [CLS], [SEP], [PAD] or its text ("␣" for blanks)."""
        special = {self.cls_id: "[CLS]", self.sep_id: "[SEP]", self.pad_id: "[PAD]"}
        if token_id in special:
            return special[token_id]
        try:
            return self.impl.base.decode([token_id]).strip() or "␣"
        except Exception:
            return str(token_id)


def _short(value, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _failure(path: Path, e: BaseException, call: str, hint: str) -> str:
    where = f"{path}{_line_in(e, path)}"
    if isinstance(e, NotImplementedError):
        return t("train_tokenizer_stub", where=where, call=call, error=str(e) or "NotImplementedError", hint=hint)
    return t("train_tokenizer_failed", where=where, call=call, error=f"{type(e).__name__}: {e}", hint=hint)


def _import(path: Path, hint: str) -> types.ModuleType:
    try:
        return import_file(path, "kata_train_tokenizer")
    except Exception as e:  # the student's file: say where it broke
        raise TokenizerError(_failure(path, e, "import", hint)) from e


def cache_key(source: bytes, ranks: bytes, max_len: int, truncation: str, head_len) -> str:
    """What decides the unpadded ids: the tokenizer file's text, the ranks, the settings, tiktoken."""
    try:
        tiktoken_version = importlib.metadata.version("tiktoken")
    except importlib.metadata.PackageNotFoundError:
        tiktoken_version = "?"
    h = hashlib.sha256(CACHE_KEY_VERSION.encode())
    for part in (source, ranks, repr((max_len, truncation, head_len, tiktoken_version)).encode()):
        h.update(len(part).to_bytes(8, "big") + part)
    return h.hexdigest()


def load_tokenizer(
    code_dir: str | Path, max_len: int, truncation: str = "head", ranks_path: str | Path | None = None, hint: str = ""
) -> Tokenizer:
    """The tokenizer of `<code_dir>/ch01/s1_23_tokenizer.py` on GPT-2's ranks (see the module's
    docstring). `hint` ends the error messages (what else the user may do). TokenizerError
    when the file is missing, unfinished or gives ids training cannot use."""
    from ...course import pins
    from .. import gpt2

    path = (Path(code_dir) / TOKENIZER_FILE).resolve()
    if not path.is_file():
        raise TokenizerError(t("train_tokenizer_missing", path=path, hint=hint))
    if ranks_path is None:  # the course's asset: only as pinned, named without the host's path
        ranks_path = gpt2.asset_path()
        if not pins.matches(ranks_path, gpt2.ASSET_NAME):
            raise TokenizerError(t("asset_unavailable", name=gpt2.ASSET_NAME))
    ranks_path = Path(ranks_path)
    if not ranks_path.is_file():
        raise TokenizerError(t("asset_missing", name=ranks_path.name, folder=ranks_path.parent))
    module = _import(path, hint)
    from_file = getattr(module, "from_file", None)
    if not callable(from_file):
        raise TokenizerError(
            t(
                "train_tokenizer_failed",
                where=path,
                call="from_file(...)",
                error=t("train_tokenizer_no_from_file"),
                hint=hint,
            )
        )
    call = f"from_file({str(ranks_path)!r}, max_len={max_len}, truncation={truncation!r})"
    try:
        impl = from_file(str(ranks_path), max_len=max_len, truncation=truncation)
    except Exception as e:
        raise TokenizerError(_failure(path, e, call, hint)) from e
    numbers = {}
    for name in ("pad_id", "cls_id", "sep_id", "vocab_size", "max_len", "head_len"):
        value = getattr(impl, name, None)
        if type(value) is not int:
            raise TokenizerError(
                t("train_tokenizer_bad", where=path, call=f"{call}.{name}", got=_short(value), hint=hint)
            )
        numbers[name] = value
    special = (numbers["pad_id"], numbers["cls_id"], numbers["sep_id"])
    if len(set(special)) != 3 or not all(0 <= i < numbers["vocab_size"] for i in special):
        raise TokenizerError(
            t(
                "train_tokenizer_bad",
                where=path,
                call=f"{call}: pad_id, cls_id, sep_id, vocab_size",
                got=_short(special + (numbers["vocab_size"],)),
                hint=hint,
            )
        )
    tok = Tokenizer(
        impl,
        path,
        cache_key(path.read_bytes(), ranks_path.read_bytes(), max_len, truncation, numbers["head_len"]),
        hint,
    )
    probe = tok.encode_batch([PROBE])[0]  # names a stub of encode (or of what it calls) before any corpus is read
    if not all(type(i) is int and 0 <= i < tok.vocab_size for i in probe) or len(probe) > max_len:
        raise TokenizerError(
            t("train_tokenizer_bad", where=path, call=f"encode({PROBE!r}, pad=False)", got=_short(probe), hint=hint)
        )
    return tok
