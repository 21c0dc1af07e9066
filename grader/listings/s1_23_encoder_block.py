"""Listing 1.33 (§1.23), run with the student's s1_23_encoder_block."""

import torch

from grader.checks import bert_reference as R
from grader.listings import listing


@listing(
    "1.33",
    book="""(listing 1.33 prints nothing; listing 1.36 prints each block as)
TransformerBlock(
  (attn): MultiHeadSelfAttention(
    (qkv): Linear(in_features=256, out_features=768, bias=True)
    (out): Linear(in_features=256, out_features=256, bias=True)
    (attn_dropout): Dropout(p=0.1, inplace=False)
    (out_dropout): Dropout(p=0.1, inplace=False)
  )
  (ff): FeedForward(
    (net): Sequential(
      (0): Linear(in_features=256, out_features=1024, bias=True)
      (1): GELU(approximate='none')
      (2): Dropout(p=0.1, inplace=False)
      (3): Linear(in_features=1024, out_features=256, bias=True)
      (4): Dropout(p=0.1, inplace=False)
    )
  )
  (norm1): LayerNorm((256,), eps=1e-05, elementwise_affine=True)
  (norm2): LayerNorm((256,), eps=1e-05, elementwise_affine=True)
)""",
    errata=["E-1.23-j", "E-1.23-k"],
)
def listing_1_33(sub, show):
    sub.seed(123)
    block = sub.new("TransformerBlock", 256, 4, 1024)
    show(R.remote_repr(block))
    block.eval()
    x = torch.randn(2, 6, 256, generator=torch.Generator().manual_seed(133))
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]])
    out = block(x, mask)
    show("x:", tuple(x.shape), "-> output:", tuple(out.shape))
    # Pre-LN keeps the shortcut: the output stays close to its input at initialisation.
    show(
        "mean |output - x| at initialisation:",
        f"{(out - x).abs().mean().item():.3f}",
        " mean |x|:",
        f"{x.abs().mean().item():.3f}",
    )
