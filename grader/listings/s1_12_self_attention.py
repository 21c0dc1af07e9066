"""Listing 1.8, re-run with the student's code."""

from grader.checking import book
from grader.listings import listing


@listing(
    "1.8",
    book="""\
torch.Size([5, 4])
""",
    errata=["E-1.12-r"],
)
def listing_1_8(sub, show):
    """Self-attention as a PyTorch module."""
    sub.seed(123)
    sa = sub.new("SelfAttention", d_in=8, d_out=4)
    out = sa(book.inputs())
    show(out.shape)
