"""The §1.11 normalisation and softmax worked examples, re-run with the student's code."""

import torch

from grader.checking import book
from grader.listings import listing


@listing(
    "1.11/normalize",
    book="[1, 2, 3, 6] -> 0.083, 0.167, 0.250, 0.500\n[1, 2, -3, 5] -> 0.20, 0.40, -0.60, 1.00",
    errata=["E-1.11-m", "E-1.11-n"],
)
def normalize_examples(sub, show):
    """Simple normalisation of [1, 2, 3, 6] and [1, 2, -3, 5]."""
    for scores, _ in book.NORMALIZE_EXAMPLES:
        show(scores, "->", sub.simple_normalize(torch.tensor(scores)))


@listing(
    "1.11/softmax",
    book=(
        "[1, 2, 3, 6] -> 0.006, 0.017, 0.046, 0.930\n"
        "[1, 2, -3, 5] -> 0.017, 0.047, 0.0003, 0.936\n"
        "[11.0, 10.2, 10.1, 10.4, 11.2] -> 0.276, 0.124, 0.112, 0.152, 0.336"
    ),
    errata=["E-1.11-p", "E-1.11-q", "E-1.11-s", "E-1.11-y", "E-1.11-z", "E-1.11-ab", "E-1.11-ac"],
)
def softmax_examples(sub, show):
    """Softmax of [1, 2, 3, 6], [1, 2, -3, 5] and [11.0, 10.2, 10.1, 10.4, 11.2]."""
    for scores, _, _ in book.SOFTMAX_EXAMPLES:
        show(scores, "->", sub.softmax(torch.tensor(scores)))
