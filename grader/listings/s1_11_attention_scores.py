"""Listing 1.5, re-run with the student's code."""

from grader.checking import book
from grader.listings import listing


@listing(
    "1.5",
    book="""\
Attention scores matrix:
tensor([[10.3564, 10.4507, 10.9581, 11.3706, 11.7368],
[10.0395, 10.1182, 10.6117, 11.0026, 11.3353],
[10.2672, 10.3379, 10.8698, 11.2815, 11.6372],
[10.5471, 10.6268, 11.1764, 11.5984, 11.9785],
[11.0007, 11.1326, 11.7058, 12.2208, 12.6405]])
Attention scores for 'next':
""",
    errata=["E-1.11-t", "E-1.11-u", "E-1.11-v"],
)
def listing_1_5(sub, show):
    """Compute raw attention scores (all tokens, and 'next' alone)."""
    _, (queries, keys, _values) = book.qkv()
    attn_scores = sub.attention_scores(queries, keys)
    show("Attention scores matrix:")
    show(attn_scores)
    attn_scores_next = sub.attention_scores(queries[1], keys)
    show("\nAttention scores for 'next':")
    show(attn_scores_next)
