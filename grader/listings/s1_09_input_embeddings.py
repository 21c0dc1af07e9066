"""Listing 1.1, re-run with the student's code."""

from grader.checking import book
from grader.listings import listing


@listing(
    "1.1",
    book="""\
Input Embedding Matrix:
tensor([
[0.3200, 0.2100, 0.4300, 0.2100, 0.8600, 0.6700, 0.9800, 0.2300], [0.4300, 0.5600, 0.4300, 0.5600, 0.6900, 0.2100, 0.5600, 0.2100],
[0.5600, 0.2100, 0.4300, 0.2100, 0.5400, 0.1200, 0.8900, 0.9800],
[0.8700, 0.3400, 0.1800, 0.3200, 0.7500, 0.1200, 0.5400, 0.9200],
[0.7600, 0.2100, 0.8500, 0.3400, 0.9800, 0.2300, 0.6800, 0.3400]
])
Matrix Shape:
torch.Size([5, 8])
""",
    errata=["E-1.9-a", "E-1.9-b"],
)
def listing_1_1(sub, show):
    """Define the input embedding matrix."""
    inputs = sub.input_embedding_matrix(book.INPUT_VECTORS)
    show("Input Embedding Matrix:")
    show(inputs)
    show("\nMatrix Shape:")
    show(inputs.shape)
