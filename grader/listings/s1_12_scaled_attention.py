"""Listing 1.6 and the §1.12 hand example, re-run with the student's code."""

import torch

from grader.checking import book
from grader.listings import figure, listing
from grader.listings.plots import Heatmap, check_matrix, label


@listing(
    "1.12/scaled",
    book="\n".join(" ".join(f"{v:.2f}" for v in row) for row in book.HAND_SCALED),
    errata=["E-1.12-a", "E-1.12-c"],
)
def scaled_example(sub, show):
    """The hand score matrix divided by sqrt(d_k) = 2."""
    show(sub.scale_scores(torch.tensor(book.HAND_SCORES), 4))


@listing(
    "1.6",
    book="""\
Attention weights matrix:
tensor([[0.1331, 0.1401, 0.1781, 0.2413, 0.3074],
[0.1375, 0.1430, 0.1779, 0.2361, 0.3056],
[0.1342, 0.1394, 0.1797, 0.2406, 0.3060],
[0.1307, 0.1352, 0.1776, 0.2426, 0.3139],
[0.1180, 0.1271, 0.1660, 0.2553, 0.3336]])
Row sums: tensor([1., 1., 1., 1., 1.])
Scaled scores for 'next':
tensor([5.0198, 5.0591, 5.3059, 5.5013, 5.6677])
Attention weights for 'next':
tensor([0.1375, 0.1430, 0.1779, 0.2361, 0.3056])
Sum of weights for 'next': tensor(1.)
""",
    errata=["E-1.12-d", "E-1.12-e", "E-1.12-f", "E-1.12-g"],
)
def listing_1_6(sub, show):
    """Scale the scores and compute attention weights."""
    _, (queries, keys, _values) = book.qkv()
    attn_scores = queries @ keys.T
    attn_weights = sub.attention_weights(attn_scores, 4)
    show("Attention weights matrix:")
    show(attn_weights)
    show("\nRow sums:", attn_weights.sum(dim=-1))
    show("\nScaled scores for 'next':")
    show(sub.scale_scores(attn_scores[1], 4))
    attn_weights_next = sub.attention_weights(attn_scores[1], 4)
    show("Attention weights for 'next':")
    show(attn_weights_next)
    show("Sum of weights for 'next':", attn_weights_next.sum())


@figure("1.6")
def attention_heatmap(sub):
    """Listing 1.6's attention weights: one row per query token, one column per key token."""
    _, (queries, keys, _values) = book.qkv()
    weights = check_matrix("attention_weights(scores, 4)", sub.attention_weights(queries @ keys.T, 4), 5, 5)
    return [
        Heatmap(
            "attention-weights",
            label("plot_attention_16"),
            weights,
            xlabel=label("plot_key"),
            ylabel=label("plot_query"),
            xticks=book.WORDS,
            yticks=book.WORDS,
            annotate=True,
        )
    ]
