"""§1.7-1.8 worked examples run with the student's code: Bahdanau attention, cross vs self."""

import torch

from grader.checks.test_s1_07_additive_attention import ENGLISH, FRENCH, SOURCE, TARGET, example
from grader.listings import listing


@listing(
    "1.7/bahdanau",
    book="""\
"I will eat": encoder states h1, h2, h3; weights after softmax sum to 1
most relevant source word: weight close to 1, the others close to 0""",
    errata=["E-1.7-a", "E-1.7-b", "E-1.7-c"],
)
def bahdanau_i_will_eat(sub, show):
    H, W_s, W_h, v, S = example()
    show("source:", SOURCE, "| target:", TARGET)
    rows = []
    for t, word in enumerate(TARGET):
        context, weights = sub.additive_attention(S[t], H, W_s, W_h, v)
        rows.append(weights)
        show(f"before {word!r}: scores {sub.additive_scores(S[t], H, W_s, W_h, v)}")
        show(f"    weights {weights} (sum {float(weights.sum()):.4f})")
        show(f"    context {context}")
    show("alignment matrix (rows: target words, columns: source words):")
    show(torch.stack(rows))


@listing(
    "1.8/cross-self",
    book="""\
(no printed numbers: the section contrasts attention between two sequences, as in translation,
with self-attention, where one sequence attends to itself)""",
    errata=[],
)
def cross_vs_self(sub, show):
    """Cross- vs self-attention: the shape of the weight matrix."""
    show("self-attention over", ENGLISH, "->", sub.attention_matrix_shape(ENGLISH))
    show("cross-attention,", FRENCH, "over", ENGLISH, "->", sub.attention_matrix_shape(FRENCH, ENGLISH))
