"""The §1.11 matrix multiplication example, re-run with the student's code."""

import torch

from grader.checking import book
from grader.listings import listing


@listing("1.11/matmul", book="(1, 1) = 27\n(2, 1) = 61", errata=["E-1.11-a"])
def matmul_example(sub, show):
    """A (3x2) times B (2x3)."""
    out = sub.matmul(torch.tensor(book.MATMUL_A), torch.tensor(book.MATMUL_B))
    show(out)
    show(f"(1, 1) = {float(out[0, 0]):g}")
    show(f"(2, 1) = {float(out[1, 0]):g}")
