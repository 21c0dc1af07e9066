"""Listing 1.32 (§1.23), run with the student's s1_23_feed_forward."""

import torch

from grader.checks import bert_reference as R
from grader.listings import listing


@listing(
    "1.32",
    book="""(listing 1.32 prints nothing; listing 1.36 prints this layer as)
(ff): FeedForward(
  (net): Sequential(
    (0): Linear(in_features=256, out_features=1024, bias=True)
    (1): GELU(approximate='none')
    (2): Dropout(p=0.1, inplace=False)
    (3): Linear(in_features=1024, out_features=256, bias=True)
    (4): Dropout(p=0.1, inplace=False)
  )
)""",
    errata=["E-1.23-k"],
)
def listing_1_32(sub, show):
    sub.seed(123)
    ff = sub.new("FeedForward", 256, 1024)
    show(R.remote_repr(ff))
    ff.eval()
    x = torch.randn(2, 6, 256, generator=torch.Generator().manual_seed(132))
    show("x:", tuple(x.shape), "-> output:", tuple(ff(x).shape))
