"""Worked example of §1.2 run with the student's code: the three stages of figure 1.11 and the
shape of the data at each, for a batch of 2 sequences of 4 tokens through a GPT-2-small-sized model."""

import torch

from grader.checks.test_s1_02_anatomy import BOOK_CONFIG
from grader.listings import listing

FIGURE_1_11 = """[figure 1.11, a diagram] input stage (tokenization and embeddings) -> processing stage
(transformer blocks) -> output stage (linear layer and softmax for next-token prediction)"""
INPUT = ("token_ids", "token_embeddings", "position_embeddings", "block_input")


@listing("1.2/stages", book=FIGURE_1_11)
def listing_stages(sub, show):
    shapes = sub.stage_shapes(**BOOK_CONFIG)
    show("Config:", ", ".join(f"{k}={v}" for k, v in BOOK_CONFIG.items()))
    for name, shape in shapes.items():
        phase = "input" if name in INPUT else "processing" if name.startswith("block_") else "output"
        show(f"  {phase:<10} {name:<20} {shape}")
    g = torch.Generator().manual_seed(0)
    hidden = torch.randn(2, 4, 16, generator=g)
    W_out = torch.randn(16, 10, generator=g) / 4
    probs = sub.next_token_probs(hidden, W_out)
    show("Output stage on a toy (2, 4, 16) block output with a (16, 10) layer:")
    show("  next_token_probs shape:", tuple(probs.shape), " row sums:", [round(s, 4) for s in probs.sum(-1).tolist()])
