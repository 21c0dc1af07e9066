"""Labelled tables: CSV and parquet files read with `datasets.load_dataset("csv" | "parquet")`.

    one file                  columns text and label (0/1), and optionally split: "train" and "test"
                              rows make those splits, "unsupervised" rows (any label) are unlabelled
                              text, other rows are left out (noted); without a split column a
                              stratified 20% of the rows (seed 0) becomes the test split
    a folder                  train*.csv|parquet and test*.csv|parquet anywhere below it (the hub's
                              plain_text/ folder), and unsupervised*.csv|parquet for unlabelled text

Each file is loaded on its own, so that a bad label names its file and row ("bad.csv: label #1
is '2'", rows counted from 0 after the header). A CSV's cells are read as text (no "NA" turned
into a missing value); a CSV that is not UTF-8 is decoded with errors='replace' and named in the
notes. datasets keeps the Arrow copy of each file in .kata/cache/datasets, keyed by its path and
modification time.
"""

from __future__ import annotations

import os
from pathlib import Path

from ...course.messages import Msg, code, joined
from .corpus import FEATURES, TEXT_ONLY, UNSUPERVISED, Corpus, column, datasets, holdout, label_value, replaced_note
from .errors import DataError
from .library import hf_datasets
from .paths import datasets_cache_dir

FORMATS = {".csv": "csv", ".parquet": "parquet"}
CSV_OPTIONS = {
    "keep_default_na": False,
    "converters": {"text": str, "label": str, "split": str},
    "encoding": "utf-8-sig",
    "encoding_errors": "replace",
}
SPLIT_FILES = ("train", "test", UNSUPERVISED)  # a folder's file names start with these


def read_table(path: Path, replaced: list[str], needs: tuple[str, ...] = ("text", "label")) -> "datasets.Dataset":
    """One CSV or parquet file as datasets loads it; DataError when it cannot be read or lacks a
    column of `needs`."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise DataError(Msg.key("data_unknown_type", path=path, suffix=repr(path.suffix)))
    options = CSV_OPTIONS if fmt == "csv" else {}
    if fmt == "csv" and not _is_utf8(path):
        replaced.append(path.name)
    try:
        table = hf_datasets().load_dataset(
            fmt, data_files=[str(path)], split="train", cache_dir=str(datasets_cache_dir()), **options
        )
    except Exception as e:
        cause = e.__cause__ or e  # datasets wraps a reader's error in DatasetGenerationError
        raise DataError(
            Msg.key("data_unreadable_table", path=path, format=fmt, error=f"{type(cause).__name__}: {str(cause)[:300]}")
        ) from e
    missing = [c for c in needs if c not in table.column_names]
    if missing:
        raise DataError(
            Msg.key("data_missing_columns", path=path, missing=_names(missing), found=_names(table.column_names))
        )
    kind = table.features["text"]
    if not (isinstance(kind, datasets.Value) and kind.dtype in ("string", "large_string", "null")):
        raise DataError(Msg.key("data_text_not_strings", path=path, kind=kind))
    return table


def labelled_rows(table: "datasets.Dataset", path: Path, rows: list[int] | None = None) -> "datasets.Dataset":
    """The rows `rows` (all when None) of a table as text and a ClassLabel label, labels checked
    first (the error names the file and the row)."""
    labels = column(table, "label")
    for row in range(len(labels)) if rows is None else rows:
        if label_value(labels[row]) is None:
            raise DataError(Msg.key("data_bad_label", where=path, row=row, value=repr(labels[row])))
    if rows is not None:
        table = table.select(rows)
    return table.map(
        _normalise,
        batched=True,
        features=FEATURES,
        remove_columns=[c for c in table.column_names if c not in ("text", "label")],
    )


def text_rows(table: "datasets.Dataset", rows: list[int] | None = None) -> "datasets.Dataset":
    """The text of the rows `rows` (all when None), labels dropped."""
    if rows is not None:
        table = table.select(rows)
    return table.map(
        _normalise_text, batched=True, features=TEXT_ONLY, remove_columns=[c for c in table.column_names if c != "text"]
    )


def _normalise(batch: dict) -> dict:
    return {"text": _texts(batch["text"]), "label": [label_value(y) for y in batch["label"]]}


def _normalise_text(batch: dict) -> dict:
    return {"text": _texts(batch["text"])}


def _texts(values: list) -> list[str]:
    return ["" if t is None else t for t in values]  # a parquet file's missing text


def _names(names: list[str]) -> Msg:
    """Column names as a list for a message ("none" when there are none)."""
    return joined(map(code, names), ", ", "、") if names else Msg.key("data_none")


def _is_utf8(path: Path) -> bool:
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def load_table(path: str | os.PathLike, test_fraction: float = 0.2, seed: int = 0, unlabelled: bool = False) -> Corpus:
    """One CSV or parquet file (see the module's docstring)."""
    path = Path(path)
    replaced: list[str] = []
    table = read_table(path, replaced)
    notes, splits = [], {}
    if "split" in table.column_names:
        where = [str(s).strip().lower() for s in column(table, "split")]
        rows = {name: [i for i, s in enumerate(where) if s == name] for name in SPLIT_FILES}
        for name in ("train", "test"):
            splits[name] = labelled_rows(table, path, rows[name])
        if unlabelled and rows[UNSUPERVISED]:
            splits[UNSUPERVISED] = text_rows(table, rows[UNSUPERVISED])
        other = len(where) - sum(len(r) for r in rows.values())
        if other:
            notes.append(f"{other} row(s) with a split other than train/test/{UNSUPERVISED} were left out")
        if rows[UNSUPERVISED] and not unlabelled:
            notes.append(f"{len(rows[UNSUPERVISED])} {UNSUPERVISED} row(s) left out (unlabelled text)")
    else:
        splits["train"], splits["test"] = holdout(labelled_rows(table, path), test_fraction, seed)
        notes.append(f"no split column: a stratified {test_fraction:.0%} of the rows (seed {seed}) is the test split")
    if not len(splits["train"]) or not len(splits["test"]):
        raise DataError(Msg.key("data_split_empty", path=path))
    return Corpus(
        splits, source=Msg.key("data_source_table", path=path), notes=notes + replaced_note(replaced), replaced=replaced
    )


def table_files(root: Path) -> dict[str, list[Path]]:
    """A folder's train*, test* and unsupervised* tables, by split (any depth, sorted)."""
    return {split: sorted(f for ext in FORMATS for f in root.rglob(f"{split}*{ext}")) for split in SPLIT_FILES}


def load_table_folder(
    root: str | os.PathLike, files: dict[str, list[Path]] | None = None, unlabelled: bool = False
) -> Corpus:
    """A folder of train*/test* tables, each file loaded and checked on its own, then joined."""
    root = Path(root)
    files = files or table_files(root)
    replaced: list[str] = []
    splits = {}
    for name in ("train", "test"):
        if not files[name]:
            raise DataError(Msg.key("data_no_split_file", path=root, name=name))
        splits[name] = _joined([labelled_rows(read_table(f, replaced), f) for f in files[name]])
    notes = []
    if unlabelled and files[UNSUPERVISED]:
        splits[UNSUPERVISED] = _joined(
            [text_rows(read_table(f, replaced, needs=("text",))) for f in files[UNSUPERVISED]]
        )
        notes.append(
            f"{len(splits[UNSUPERVISED]):,} unlabelled row(s) from {', '.join(f.name for f in files[UNSUPERVISED])}"
        )
    return Corpus(
        splits,
        source=Msg.key("data_source_table_folder", path=root),
        notes=notes + replaced_note(replaced),
        replaced=replaced,
    )


def _joined(parts: list["datasets.Dataset"]) -> "datasets.Dataset":
    return parts[0] if len(parts) == 1 else hf_datasets().concatenate_datasets(parts)
