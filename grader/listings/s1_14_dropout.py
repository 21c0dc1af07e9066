"""Listing 1.13 (§1.14) run with the student's Dropout (`kata run 1.13`).

The mask printed depends on how dropout draws its random numbers, so a correct answer need not
print the book's mask (nor torch.nn.Dropout's): see ERRATA E-1.14-c.
"""

import math

import torch

from grader.checking import book
from grader.listings import listing


def _weights_and_values():
    """The causal weights of listing 1.12 and the values of listing 1.4 (seed 123, W_query, W_key, W_value)."""
    torch.manual_seed(123)
    w_query, w_key, w_value = torch.randn(8, 4), torch.randn(8, 4), torch.randn(8, 4)
    inputs = book.inputs()
    scores = (inputs @ w_query) @ (inputs @ w_key).T / math.sqrt(4)
    mask = torch.tril(torch.ones(5, 5, dtype=torch.bool))
    weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
    return weights, inputs @ w_value


@listing(
    "1.13",
    book="""Causal attention weights before dropout:
tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000],
[0.3777, 0.6223, 0.0000, 0.0000, 0.0000],
[0.1863, 0.3072, 0.5065, 0.0000, 0.0000],
[0.1015, 0.1674, 0.2760, 0.4551, 0.0000],
[0.0580, 0.0956, 0.1577, 0.2599, 0.4288]])
Causal attention weights after dropout (training mode):
tensor([[2.0000, 0.0000, 0.0000, 0.0000, 0.0000],
[0.7554, 0.0000, 0.0000, 0.0000, 0.0000],
[0.3726, 0.6144, 0.0000, 0.0000, 0.0000],
[0.2030, 0.3348, 0.0000, 0.9102, 0.0000],
[0.0000, 0.1912, 0.3154, 0.5198, 0.0000]])
Row sums after dropout:
tensor([2.0000, 0.7554, 0.9870, 1.4480, 1.0264])
Causal context vectors with dropout:
tensor([[ 4.2400, 5.0200, -0.5600, 1.5400],
[ 1.6020, 1.7000, -0.1600, 0.3700],
[ 2.2640, 2.4060, -0.2700, 0.7000],
[ 2.4240, 2.6460, -0.2800, 0.9700],
[ 2.2670, 2.5410, -0.2800, 0.9100]])
context_causal.shape: torch.Size([5, 4])""",
    errata=["E-1.14-b", "E-1.14-c", "E-1.14-d", "E-1.14-e", "E-1.14-f"],
)
def listing_1_13(sub, show):
    attn_weights_causal, values = _weights_and_values()
    dropout = sub.new("Dropout", p=0.5)
    sub.seed(0)  # to get a stable example mask
    attn_weights_causal_drop = dropout(attn_weights_causal)
    show("Causal attention weights before dropout:")
    show(attn_weights_causal)
    show("\nCausal attention weights after dropout (training mode):")
    show(attn_weights_causal_drop)
    show("Row sums after dropout:", attn_weights_causal_drop.sum(dim=-1))
    context_causal = attn_weights_causal_drop @ values
    show("\nCausal context vectors with dropout:")
    show(context_causal)
    show("context_causal.shape:", context_causal.shape)


@listing("1.14/scaling", book="[0.50, 0.00, 0.50, 0.00]", errata=["E-1.14-a"])
def scaling_example(sub, show):
    """Dropout p = 0.5 on [0.25, 0.26, 0.25, 0.24] keeping the first and third weights."""
    show(sub.dropout_with_mask(torch.tensor([0.25, 0.26, 0.25, 0.24]), torch.tensor([True, False, True, False]), 0.5))
