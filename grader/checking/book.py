"""Inputs and printed values taken from the chapter's listings, for checks and `kata run --book`.

Printed values are kept as the book prints them; whether each reproduces is recorded in
ERRATA.md. Checks assert only the ones that do (see the entries' "Proved by").
"""

import torch

# Listing 1.1: "The next day is bright", 8-dimensional input embeddings.
WORDS = ["The", "next", "day", "is", "bright"]
INPUT_VECTORS = [
    [0.32, 0.21, 0.43, 0.21, 0.86, 0.67, 0.98, 0.23],
    [0.43, 0.56, 0.43, 0.56, 0.69, 0.21, 0.56, 0.21],
    [0.56, 0.21, 0.43, 0.21, 0.54, 0.12, 0.89, 0.98],
    [0.87, 0.34, 0.18, 0.32, 0.75, 0.12, 0.54, 0.92],
    [0.76, 0.21, 0.85, 0.34, 0.98, 0.23, 0.68, 0.34],
]


def inputs() -> torch.Tensor:
    return torch.tensor(INPUT_VECTORS, dtype=torch.float32)


# §1.11 matrix multiplication example (figure 1.54): entries (1,1) = 27 and (2,1) = 61.
MATMUL_A = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
MATMUL_B = [[7.0, 8.0, 9.0], [10.0, 11.0, 12.0]]

# §1.11 softmax worked examples: (scores, values to assert, tolerance). The first two are
# asserted as printed (3 decimals); for the "next" row the book's 0.152 and 0.336 are wrong
# (ERRATA E-1.11-y, E-1.11-ab, E-1.11-ac), so the true values are asserted to 4 decimals.
SOFTMAX_EXAMPLES = [
    ([1.0, 2.0, 3.0, 6.0], [0.006, 0.017, 0.046, 0.930], "printed3"),
    ([1.0, 2.0, -3.0, 5.0], [0.017, 0.047, 0.0003, 0.936], "printed3"),
    ([11.0, 10.2, 10.1, 10.4, 11.2], [0.2758, 0.1239, 0.1121, 0.1513, 0.3368], "printed4"),
]
BOOK_NEXT_ROW_PRINTED = [0.276, 0.124, 0.112, 0.152, 0.336]
NORMALIZE_EXAMPLES = [
    ([1.0, 2.0, 3.0, 6.0], [1 / 12, 2 / 12, 3 / 12, 6 / 12]),
    ([1.0, 2.0, -3.0, 5.0], [0.2, 0.4, -0.6, 1.0]),
]

# §1.12 hand example: an illustrative 5x5 score matrix and the same divided by sqrt(4) = 2.
HAND_SCORES = [
    [10.7, 10.0, 9.9, 10.3, 11.0],
    [11.0, 10.2, 10.1, 10.4, 11.2],
    [12.6, 11.7, 11.5, 12.0, 12.8],
    [13.2, 12.2, 12.0, 12.3, 13.4],
    [12.5, 11.5, 11.4, 11.5, 12.7],
]
HAND_SCALED = [
    [5.35, 5.00, 4.95, 5.15, 5.50],
    [5.50, 5.10, 5.05, 5.20, 5.60],
    [6.30, 5.85, 5.75, 6.00, 6.40],
    [6.60, 6.10, 6.00, 6.15, 6.70],
    [6.25, 5.75, 5.70, 5.75, 6.35],
]

# §1.12 hand example: the context vector of "day" from its weights and a 5x4 value matrix.
DAY_WEIGHTS = [0.28, 0.12, 0.09, 0.16, 0.35]
DAY_VALUES = [
    [1.5, 1.2, 1.6, 2.4],
    [1.4, 1.2, 1.7, 2.1],
    [1.4, 1.5, 1.5, 2.1],
    [1.6, 1.6, 1.8, 2.0],
    [1.7, 1.7, 1.6, 2.4],
]
DAY_CONTEXT = [1.57, 1.47, 1.64, 2.27]


def qkv():
    """Listings 1.3–1.4 as the book's code runs them: seeded W_query, W_key, W_value, then Q, K, V."""
    torch.manual_seed(123)
    w = [torch.randn(8, 4) for _ in range(3)]
    x = inputs()
    return w, (x @ w[0], x @ w[1], x @ w[2])
