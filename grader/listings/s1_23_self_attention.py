"""Listing 1.31 (§1.23), run with the student's s1_23_self_attention."""

import torch

from grader.checks import bert_reference as R
from grader.listings import listing


@listing(
    "1.31",
    book="""(listing 1.31 prints nothing; listing 1.36 prints this layer as)
(attn): MultiHeadSelfAttention(
  (qkv): Linear(in_features=256, out_features=768, bias=True)
  (out): Linear(in_features=256, out_features=256, bias=True)
  (attn_dropout): Dropout(p=0.1, inplace=False)
  (out_dropout): Dropout(p=0.1, inplace=False)
)""",
    errata=["E-1.23-h", "E-1.23-l"],
)
def listing_1_31(sub, show):
    sub.seed(123)
    attn = sub.new("MultiHeadSelfAttention", 256, 4)
    show(R.remote_repr(attn))
    show("heads:", attn.attr("heads"), " features per head d:", attn.attr("d"))
    attn.eval()
    g = torch.Generator().manual_seed(131)
    x = torch.randn(2, 6, 256, generator=g)
    mask = torch.tensor([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]])
    out = attn(x, mask)
    show("x:", tuple(x.shape), " mask:", mask.tolist(), "-> output:", tuple(out.shape))
    x2 = x.clone()
    x2[1, 4:] = 100 * torch.randn(2, 256, generator=g)  # change only the padded positions
    moved = (attn(x2, mask)[1, :4] - out[1, :4]).abs().max().item()
    show("largest change at the real positions after rewriting the padded ones:", f"{moved:.2e}")
    try:
        sub.new("MultiHeadSelfAttention", 256, 6)
        show("MultiHeadSelfAttention(256, 6): built (it should have refused: 256 % 6 = 4)")
    except Exception as e:  # the student's error, reported in plain words
        show("MultiHeadSelfAttention(256, 6):", str(e).splitlines()[0])
