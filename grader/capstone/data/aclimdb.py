"""IMDb's original archive as a folder tree (aclImdb_v1.tar.gz from Stanford, unpacked):

    <root>/train/neg/<id>_<rating>.txt    one review per file; neg = 0, pos = 1
    <root>/train/pos/...
    <root>/train/unsup/...                 50,000 unlabelled reviews (only with unlabelled=True)
    <root>/test/neg/...  <root>/test/pos/...

Each split lists the negatives first, files in numeric order of <id> (then by name); other files
(urls_*.txt, imdb.vocab, ...) are ignored. Files that are not UTF-8 are decoded with
errors='replace' and named in the corpus's notes. The rows are built in memory
(`Dataset.from_dict`); their token ids are cached like any corpus's (tokens.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ...course.messages import Msg
from .corpus import UNSUPERVISED, Corpus, decode, labelled, replaced_note, texts_only
from .errors import DataError


def is_aclimdb(root: Path) -> bool:
    return (root / "train").is_dir() or (root / "test").is_dir()


def load_aclimdb(root: str | os.PathLike, unlabelled: bool = False) -> Corpus:
    """The train and test reviews of an aclImdb folder (and train/unsup as the "unsupervised"
    split when `unlabelled` and the folder has it)."""
    root = Path(root)
    replaced: list[str] = []
    splits = {}
    for split in ("train", "test"):
        texts, labels = [], []
        for label, sub in ((0, "neg"), (1, "pos")):
            folder = root / split / sub
            if not folder.is_dir():
                raise DataError(Msg.key("data_aclimdb_missing", path=root, part=f"{split}/{sub}"))
            found = _reviews(folder, f"{split}/{sub}", replaced)
            texts += found
            labels += [label] * len(found)
        if not texts:
            raise DataError(Msg.key("data_aclimdb_empty", path=root, split=split))
        splits[split] = labelled(texts, labels, f"{root}/{split}")
    notes = []
    if unlabelled and (root / "train" / "unsup").is_dir():
        splits[UNSUPERVISED] = texts_only(_reviews(root / "train" / "unsup", "train/unsup", replaced))
        notes.append(f"train/unsup: {len(splits[UNSUPERVISED]):,} unlabelled reviews (the {UNSUPERVISED} split)")
    return Corpus(
        splits,
        source=Msg.key("data_source_aclimdb", path=root),
        notes=notes + replaced_note(replaced),
        replaced=replaced,
    )


def _reviews(folder: Path, where: str, replaced: list[str]) -> list[str]:
    return [
        decode(f.read_bytes(), f"{where}/{f.name}", replaced) for f in sorted(folder.glob("*.txt"), key=_review_order)
    ]


def _review_order(path: Path):
    m = re.match(r"(\d+)", path.stem)
    return (0, int(m.group(1)), path.name) if m else (1, 0, path.name)
