"""A deterministic, learnable toy sentiment corpus for fast tests (`synthetic_corpus(n, seed)`).

The texts are made with the standard library (`synthetic_split`, which the checks use without
building a Dataset); `synthetic_corpus` wraps them as a Corpus (`Dataset.from_dict`).
"""

from __future__ import annotations

import random

from ...course.messages import Msg
from .errors import DataError

POSITIVE_WORDS = [
    "good",
    "great",
    "wonderful",
    "brilliant",
    "excellent",
    "moving",
    "delightful",
    "superb",
    "charming",
    "fun",
    "beautiful",
    "clever",
    "gripping",
    "touching",
    "enjoyable",
    "fantastic",
]
NEGATIVE_WORDS = [
    "bad",
    "awful",
    "boring",
    "terrible",
    "dull",
    "weak",
    "clumsy",
    "tedious",
    "poor",
    "silly",
    "painful",
    "bland",
    "messy",
    "lifeless",
    "dreadful",
    "forgettable",
]
NEUTRAL_WORDS = [
    "the",
    "movie",
    "film",
    "plot",
    "story",
    "actor",
    "actress",
    "scene",
    "director",
    "music",
    "script",
    "ending",
    "cast",
    "camera",
    "dialogue",
    "was",
    "is",
    "felt",
    "seemed",
    "and",
    "but",
    "with",
    "a",
    "an",
    "of",
    "in",
    "this",
    "that",
    "it",
    "very",
    "quite",
    "rather",
    "overall",
    "at",
    "times",
    "second",
    "half",
    "first",
    "act",
    "characters",
    "sound",
    "pacing",
    "costumes",
    "effects",
    "screenplay",
    "performance",
    "I",
    "we",
    "they",
    "thought",
]


def synthetic_split(count: int, seed: int, split: str) -> tuple[list[str], list[int]]:
    """`count` reviews of 8 to 24 words and their labels, from the random stream named by `split`
    ("train", "test" or "unsupervised") and `seed`: neutral filler with one to three sentiment
    words of the label's polarity and fewer of the other. Labels are balanced within one of even."""
    rng = random.Random(f"kata-synthetic-{split}-{seed}")
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
    return texts, labels


def synthetic_corpus(n: int, seed: int = 0, test_n: int | None = None, unlabelled: bool = False):
    """`n` training and `test_n` (default n // 4) test reviews (synthetic_split). The label is the
    polarity with more words, so a bag of words decides it and a model that ignores its input
    scores about 50%. Same (n, seed, test_n), same corpus; the test split does not change with n.
    With `unlabelled`, an "unsupervised" split of n more reviews from their own stream (labels
    dropped): deterministic unlabelled text for pre-training."""
    from .corpus import UNSUPERVISED, Corpus, labelled, texts_only  # datasets, on first use only

    if n < 0 or (test_n is not None and test_n < 0):
        raise DataError(Msg.key("data_synthetic_sizes"))
    test_n = n // 4 if test_n is None else test_n
    splits = {
        name: labelled(*synthetic_split(count, seed, name), f"synthetic {name}")
        for name, count in (("train", n), ("test", test_n))
    }
    if unlabelled:
        splits[UNSUPERVISED] = texts_only(synthetic_split(n, seed, UNSUPERVISED)[0])
    return Corpus(splits, source=Msg.key("data_source_synthetic", n=n, test_n=test_n, seed=seed))
