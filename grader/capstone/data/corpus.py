"""What every loader returns, and the rules every corpus follows.

A `Corpus` is a `datasets.DatasetDict` with the splits "train" and "test", each a
`datasets.Dataset` with the columns `text` (a string) and `label` (a ClassLabel: 0 = negative,
1 = positive), as `load_dataset("imdb")` hands them to listing 1.23 (IMDb's own names are
neg/pos). A loader asked for unlabelled text adds an "unsupervised" split with a `text`
column only (see sources.unlabelled_texts). A corpus also says where it came from (`source`),
what was done on the way (`notes`, lines for the user) and which files or rows were not valid
UTF-8 (`replaced`).

    corpus["train"]            # the datasets.Dataset; corpus["train"]["text"] is its text column
    corpus.train.texts         # the same split as plain Python lists (Split): what the sandbox's
    corpus.train.labels        #   wire carries, and what code written for lists wants

Labels are checked before anything is built: 0 or 1 (or the strings "0"/"1" of a CSV cell), with
an error that names the file or split and the row. Splits are made by datasets'
`train_test_split(stratify_by_column="label", seed=...)`.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Iterable

from ...course.messages import Msg, code
from .errors import DataError
from .library import hf_datasets

datasets = hf_datasets()

LABEL_NAMES = ["negative", "positive"]  # 0, 1
LABEL = datasets.ClassLabel(names=LABEL_NAMES)
FEATURES = datasets.Features({"text": datasets.Value("string"), "label": LABEL})
TEXT_ONLY = datasets.Features({"text": datasets.Value("string")})
UNSUPERVISED = "unsupervised"  # the split name of unlabelled text, as in the hub's imdb


@dataclass
class Split:
    """A split as plain lists: texts and their labels (0 = negative, 1 = positive).
    `split["text"]` works as in the book."""

    texts: list[str]
    labels: list[int]

    @classmethod
    def of(cls, dataset: "datasets.Dataset") -> "Split":
        return cls(column(dataset, "text"), column(dataset, "label"))

    def __len__(self) -> int:
        return len(self.texts)

    def __getitem__(self, column: str):
        if column == "text":
            return self.texts
        if column == "label":
            return self.labels
        raise KeyError(f"a split has the columns 'text' and 'label', not {column!r}")


class Corpus(datasets.DatasetDict):
    """The splits "train" and "test" (and "unsupervised" when asked for), with `source`, `notes`
    and `replaced` (see the module's docstring)."""

    def __init__(self, splits=(), source: str | Msg = "", notes: Iterable[str] = (), replaced: Iterable[str] = ()):
        super().__init__(splits)
        self.source_msg = source if isinstance(source, Msg) else code(source)  # in the reader's language: str()
        self.source = self.source_msg.render("en")  # the same in every run: metrics.json, the figures
        self.notes = list(notes)
        self.replaced = list(replaced)  # files (or rows) decoded with errors="replace"

    @property
    def train(self) -> Split:
        """The train split as plain lists (corpus["train"] is the datasets.Dataset)."""
        return Split.of(self["train"])

    @property
    def test(self) -> Split:
        """The test split as plain lists (corpus["test"] is the datasets.Dataset)."""
        return Split.of(self["test"])

    def summary(self) -> str:
        def counts(split: "datasets.Dataset") -> str:
            pos = sum(column(split, "label"))
            return f"{len(split):,} ({pos:,} positive, {len(split) - pos:,} negative)"

        line = f"{self.source}: train {counts(self['train'])}, test {counts(self['test'])}"
        if UNSUPERVISED in self:
            line += f", {UNSUPERVISED} {len(self[UNSUPERVISED]):,} (unlabelled)"
        return "\n".join([line] + [f"  note: {n}" for n in self.notes])


def column(dataset: "datasets.Dataset", name: str) -> list:
    """One column as a Python list, read at once through Arrow (iterating a datasets.Column
    reads row by row)."""
    return dataset.with_format("arrow")[name].to_pylist() if len(dataset) else []


# ---------------------------------------------------------------- labels


def label_value(label) -> int | None:
    """0 or 1 for an accepted label (see validate_labels), else None."""
    if isinstance(label, str):
        return {"0": 0, "1": 1}.get(label.strip())
    if isinstance(label, bool):
        return None
    if not isinstance(label, int) and hasattr(label, "item"):  # numpy / torch scalars
        try:
            label = label.item()
        except Exception:
            return None
    return label if type(label) is int and label in (0, 1) else None


def validate_labels(labels: Iterable, where: str = "labels", rows: Iterable[int] | None = None) -> list[int]:
    """The labels (those at `rows`, when given) as ints, each 0 or 1; DataError naming `where`
    and the row of the first one that is not.

    Accepted: ints 0/1, and the strings "0"/"1" (a CSV's cells). Not accepted: bools, floats,
    other classes (IMDb's unlabelled reviews carry -1), None."""
    given = list(labels)
    values = []
    for row in range(len(given)) if rows is None else rows:
        value = label_value(given[row])
        if value is None:
            raise DataError(Msg.key("data_bad_label", where=where, row=row, value=repr(given[row])))
        values.append(value)
    return values


def labelled(texts: list[str], labels: Iterable, where: str) -> "datasets.Dataset":
    """A split built in memory (Dataset.from_dict) from texts and checked labels."""
    labels = validate_labels(labels, where)
    n_texts, n_labels = len(texts), len(labels)
    if n_texts != n_labels:
        raise DataError(Msg.key("data_count_mismatch", where=where, texts=n_texts, labels=n_labels))
    for i, text in enumerate(texts):
        if not isinstance(text, str):
            raise DataError(Msg.key("data_text_not_string", where=where, row=i, type=type(text).__name__))
    return datasets.Dataset.from_dict({"text": texts, "label": labels}, features=FEATURES)


def texts_only(texts: list[str]) -> "datasets.Dataset":
    """Texts without labels (the "unsupervised" split), built in memory."""
    return datasets.Dataset.from_dict({"text": texts}, features=TEXT_ONLY)


# ---------------------------------------------------------------- splits


def holdout(dataset: "datasets.Dataset", test_fraction: float, seed: int = 0):
    """(train, test): datasets' stratified `train_test_split`, `test_fraction` of the rows (rounded
    up) to test, each class in proportion; the same seed gives the same rows (and, for a tokenized
    copy of the same rows, the same split). DataError when the
    fraction is not in (0, 1) or a class is too small to be split."""
    if not 0 < test_fraction < 1:
        raise DataError(Msg.key("data_bad_fraction", value=test_fraction))
    try:
        parts = dataset.train_test_split(test_size=test_fraction, stratify_by_column="label", seed=seed)
    except ValueError as e:
        raise DataError(Msg.key("data_cannot_hold_out", fraction=test_fraction, rows=len(dataset), error=e)) from None
    return parts["train"], parts["test"]


def balance(dataset: "datasets.Dataset", seed: int) -> tuple["datasets.Dataset", int]:
    """As many rows of each class as the smaller class has (a seeded choice), in their order;
    and how many rows were left out."""
    labels = column(dataset, "label")
    by_class = [[i for i, y in enumerate(labels) if y == c] for c in (0, 1)]
    n = min(len(rows) for rows in by_class)
    rng = random.Random(seed)
    keep = sorted(i for rows in by_class for i in rng.sample(rows, n))
    return dataset.select(keep), len(dataset) - len(keep)


# ---------------------------------------------------------------- text that is not UTF-8


def decode(data: bytes, name: str, replaced: list[str]) -> str:
    """UTF-8 text (a BOM dropped); bytes that are not UTF-8 become U+FFFD and `name` is recorded."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        replaced.append(name)
        return data.decode("utf-8", errors="replace")


def replaced_note(replaced: list[str]) -> list[str]:
    """The note that tells the user which files or rows were decoded with replacements."""
    if not replaced:
        return []
    shown = ", ".join(replaced[:5]) + (", ..." if len(replaced) > 5 else "")
    return [
        f"{len(replaced)} file(s) or row(s) were not valid UTF-8 and were decoded with "
        f"errors='replace' (U+FFFD for each bad byte): {shown}"
    ]
