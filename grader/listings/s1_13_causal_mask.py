"""Listings 1.9–1.12 (§1.13) run with the student's causal-mask code (`kata run 1.9` ... `kata run 1.12`)."""

import math

import torch

from grader.checking import book
from grader.listings import figure, listing
from grader.listings.plots import Heatmap, check_matrix, label


def _scaled_scores() -> torch.Tensor:
    """Listing 1.11's input: the scores of listing 1.5 (seed 123, W_query, W_key drawn in order) / sqrt(d_k)."""
    torch.manual_seed(123)
    d_in, d_out = 8, 4
    w_query, w_key = torch.randn(d_in, d_out), torch.randn(d_in, d_out)
    inputs = book.inputs()
    attn_scores = (inputs @ w_query) @ (inputs @ w_key).T
    return attn_scores / math.sqrt(d_out)


@listing(
    "1.9",
    book="""A:
tensor([[1., 2., 3.],
[4., 5., 6.],
[7., 8., 9.]])
torch.tril(A):
tensor([[1., 0., 0.],
[4., 5., 0.],
[7., 8., 9.]])
Lower-triangular mask from ones:
tensor([[1., 1., 1.],
[1., 1., 1.],
[1., 1., 1.]]).tril()
tensor([[1., 0., 0.],
[1., 1., 0.],
[1., 1., 1.]])
A * mask_ones:
tensor([[1., 0., 0.],
[4., 5., 0.],
[7., 8., 9.]])""",
    errata=["E-1.13-d"],
)
def listing_1_9(sub, show):
    A = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
    show("A:")
    show(A)
    show("\ntorch.tril(A):")
    show(torch.tril(A))
    mask_ones = sub.causal_mask(3, dtype=A.dtype)  # the book: torch.tril(torch.ones_like(A))
    show("\nLower-triangular mask from ones:")
    show(mask_ones)
    show("\nA * mask_ones:")
    show(A * mask_ones)


@listing(
    "1.10",
    book="""Causal mask (True = allowed, False = masked):
tensor([[ True, False, False, False, False],
[ True, True, False, False, False],
[ True, True, True, False, False],
[ True, True, True, True, False],
[ True, True, True, True, True]])""",
)
def listing_1_10(sub, show):
    seq_len = 5
    causal_mask = sub.causal_mask(seq_len)
    show("Causal mask (True = allowed, False = masked):")
    show(causal_mask)


@listing(
    "1.11",
    book="""Scaled scores (unmasked):
tensor([[0.5000, 1.0000, 1.5000, 2.0000, 2.5000],
[0.7500, 1.2500, 1.7500, 2.2500, 2.7500],
[1.0000, 1.5000, 2.0000, 2.5000, 3.0000],
[1.2500, 1.7500, 2.2500, 2.7500, 3.2500],
[1.5000, 2.0000, 2.5000, 3.0000, 3.5000]])
Scaled scores with causal mask:
tensor([[0.5000, -inf, -inf, -inf, -inf],
[0.7500, 1.2500, -inf, -inf, -inf],
[1.0000, 1.5000, 2.0000, -inf, -inf],
[1.2500, 1.7500, 2.2500, 2.7500, -inf],
[1.5000, 2.0000, 2.5000, 3.0000, 3.5000]])""",
    errata=["E-1.13-n", "E-1.13-o"],
)
def listing_1_11(sub, show):
    scaled_scores = _scaled_scores()
    show("Scaled scores (unmasked):")
    show(scaled_scores)
    masked_scaled_scores = sub.mask_future(scaled_scores)
    show("\nScaled scores with causal mask:")
    show(masked_scaled_scores)


@listing(
    "1.12",
    book="""Causal attention weights:
tensor([[1.0000, 0.0000, 0.0000, 0.0000, 0.0000],
[0.3777, 0.6223, 0.0000, 0.0000, 0.0000],
[0.1863, 0.3072, 0.5065, 0.0000, 0.0000],
[0.1015, 0.1674, 0.2760, 0.4551, 0.0000],
[0.0580, 0.0956, 0.1577, 0.2599, 0.4288]])
Row sums: tensor([1.0000, 1.0000, 1.0000, 1.0000, 1.0000])""",
    errata=["E-1.13-p"],
)
def listing_1_12(sub, show):
    attn_weights_causal = sub.causal_attention_weights(_scaled_scores())
    show("Causal attention weights:")
    show(attn_weights_causal)
    show("\nRow sums:", attn_weights_causal.sum(dim=-1))


@listing(
    "1.13/neg-inf",
    book="""[2, -inf, -inf] -> [1.0000, 0.0000, 0.0000]
[2, 3, -inf]    -> [0.2689, 0.7311, 0.0000]
[2, 3, 5]       -> [0.0420, 0.1142, 0.8438]""",
    errata=["E-1.13-k", "E-1.13-l", "E-1.13-m"],
)
def neg_inf_example(sub, show):
    """Softmax of [2, 3, 5] after causal masking: [2, -inf, -inf], [2, 3, -inf], [2, 3, 5]."""
    scores = torch.tensor([[2.0, 3.0, 5.0]] * 3)
    show(sub.mask_future(scores))
    show(sub.causal_attention_weights(scores))


@listing(
    "1.13/renormalize",
    book="""[[1.00, 0.00, 0.00, 0.00, 0.00],
 [0.46, 0.54, 0.00, 0.00, 0.00],
 [0.34, 0.38, 0.28, 0.00, 0.00],
 [0.28, 0.30, 0.24, 0.19, 0.00],
 [0.22, 0.26, 0.18, 0.15, 0.18]]""",
    errata=["E-1.13-h", "E-1.13-i", "E-1.13-j"],
)
def renormalize_example(sub, show):
    """Zero the future weights, then divide each row by its sum (0.20 ... 0.98)."""
    lower = [[0.20], [0.23, 0.27], [0.22, 0.25, 0.18], [0.22, 0.24, 0.19, 0.15], [0.22, 0.25, 0.18, 0.15, 0.18]]
    w = torch.full((5, 5), 0.2)
    for i, row in enumerate(lower):
        w[i, : len(row)] = torch.tensor(row)
    show(sub.renormalize_masked(w, torch.tril(torch.ones(5, 5, dtype=torch.bool))))


@figure("1.12")
def causal_heatmap(sub):
    """Listing 1.12's causal attention weights: zero above the diagonal, each row summing to 1."""
    weights = check_matrix(
        "causal_attention_weights(scaled_scores)", sub.causal_attention_weights(_scaled_scores()), 5, 5
    )
    return [
        Heatmap(
            "causal-weights",
            label("plot_attention_112"),
            weights,
            xlabel=label("plot_key"),
            ylabel=label("plot_query"),
            xticks=book.WORDS,
            yticks=book.WORDS,
            annotate=True,
        )
    ]
