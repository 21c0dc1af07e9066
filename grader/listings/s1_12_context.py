"""Listing 1.7 and the 'day' hand example, re-run with the student's code."""

import torch

from grader.checking import book
from grader.listings import listing


@listing("1.12/day", book="[1.57, 1.47, 1.64, 2.27]", errata=["E-1.12-m", "E-1.12-n", "E-1.12-o"])
def day_example(sub, show):
    """The context vector of 'day' from its weights and the hand value matrix."""
    show(sub.context_vectors(torch.tensor(book.DAY_WEIGHTS), torch.tensor(book.DAY_VALUES)))


@listing(
    "1.7",
    book="""\
Context vectors:
tensor([[ 2.2118, 2.4971, -0.2800, 0.8843],
[ 2.2038, 2.4754, -0.2794, 0.8741],
[ 2.2062, 2.4855, -0.2796, 0.8797],
[ 2.2100, 2.4933, -0.2802, 0.8884],
[ 2.2229, 2.5209, -0.2808, 0.9064]])
context.shape: torch.Size([5, 4])
Context vector for 'next':
tensor([ 2.2038, 2.4754, -0.2794, 0.8741])
""",
    errata=["E-1.12-j", "E-1.12-k", "E-1.12-l"],
)
def listing_1_7(sub, show):
    """Compute context vectors from attention weights."""
    _, (queries, keys, values) = book.qkv()
    attn_weights = torch.softmax(queries @ keys.T / 2, dim=-1)
    context = sub.context_vectors(attn_weights, values)
    show("Context vectors:")
    show(context)
    show("context.shape:", context.shape)
    show("\nContext vector for 'next':")
    show(sub.context_vectors(attn_weights[1], values))
