"""Listings 1.14–1.19 (§1.16), run with the student's s1_16_multihead."""

import contextlib

import torch

from grader.checking import book
from grader.listings import listing

X = [
    [
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],  # "The"
        [6.0, 5.0, 4.0, 3.0, 2.0, 1.0],  # "kid"
        [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    ]
]  # "smiles"


@contextlib.contextmanager
def _three_decimals():
    # The book writes set_printoptions(precision=3, suppress=True); torch has no `suppress`
    # (that is numpy's) and raises TypeError (E-1.16-a). sci_mode=False is torch's spelling.
    torch.set_printoptions(precision=3, sci_mode=False)
    try:
        yield
    finally:
        torch.set_printoptions(profile="default")


def _qkv():
    """Listings 1.14–1.15: the input, then W_q, W_k, W_v drawn after torch.manual_seed(123)."""
    g = torch.Generator().manual_seed(123)  # the same stream as torch.manual_seed(123), without touching it
    x = torch.tensor(X)
    W_q, W_k, W_v = (torch.randn(6, 6, generator=g) for _ in range(3))
    return x, x @ W_q, x @ W_k, x @ W_v


# A worked example from figures 1.106-1.114: the book states these shapes in prose, it prints no output.
@listing(
    "1.16/two-heads",
    book="""Q1, K1, V1: (5, 2)   Q2, K2, V2: (5, 2)
attention scores per head: (5, 5)
context per head: (5, 2)
concatenated context: (5, 4)""",
    errata=["E-1.16-k"],
)
def two_heads(sub, show):
    g = torch.Generator().manual_seed(1106)
    x = book.inputs().unsqueeze(0)  # "The next day is bright": 5 tokens x 8 features
    q, k, v = (x @ torch.randn(8, 4, generator=g) for _ in range(3))
    show("head_dim:", sub.head_dim(4, 2))
    qs, ks, vs = (sub.split_heads(t, 2) for t in (q, k, v))
    show("Q1, Q2:", tuple(qs[0, 0].shape), tuple(qs[0, 1].shape))
    weights, context = sub.head_attention(qs, ks, vs)
    show("attention weights per head:", tuple(weights[0, 0].shape), tuple(weights[0, 1].shape))
    show("context per head:", tuple(context[0, 0].shape), tuple(context[0, 1].shape))
    show("concatenated context:", tuple(sub.merge_heads(context)[0].shape))


@listing("1.14", book="""x.shape: torch.Size([1, 3, 6])""", errata=["E-1.16-a", "E-1.16-b"])
def listing_1_14(sub, show):
    x, *_ = _qkv()
    show("x.shape:", x.shape)


@listing(
    "1.15",
    book="""q.shape: torch.Size([1, 3, 6])
k.shape: torch.Size([1, 3, 6])
v.shape: torch.Size([1, 3, 6])""",
    errata=["E-1.16-c"],
)
def listing_1_15(sub, show):
    _, q, k, v = _qkv()
    show("head_dim:", sub.head_dim(6, 2))
    show("q.shape:", q.shape)
    show("k.shape:", k.shape)
    show("v.shape:", v.shape)


@listing(
    "1.16",
    book="""q after view: torch.Size([1, 3, 2, 3])
k after view: torch.Size([1, 3, 2, 3])
v after view: torch.Size([1, 3, 2, 3])""",
    errata=["E-1.16-d"],
)
def listing_1_16(sub, show):
    _, q, k, v = _qkv()
    show("q after view:", sub.view_heads(q, 2).shape)
    show("k after view:", sub.view_heads(k, 2).shape)
    show("v after view:", sub.view_heads(v, 2).shape)


@listing(
    "1.17",
    book="""q after transpose: torch.Size([1, 2, 3, 3])
k after transpose: torch.Size([1, 2, 3, 3])
v after transpose: torch.Size([1, 2, 3, 3])""",
    errata=["E-1.16-e"],
)
def listing_1_17(sub, show):
    _, q, k, v = _qkv()
    show("q after transpose:", sub.split_heads(q, 2).shape)
    show("k after transpose:", sub.split_heads(k, 2).shape)
    show("v after transpose:", sub.split_heads(v, 2).shape)


@listing(
    "1.18",
    book="""scores.shape: torch.Size([1, 2, 3, 3])
weights.shape: torch.Size([1, 2, 3, 3])
weights[0, 0]:
tensor([[0.59 , 0.24 , 0.17 ],
[0.29 , 0.45 , 0.26 ],
[0.22 , 0.31 , 0.47 ]])
context per head shape: torch.Size([1, 2, 3, 3])
context[0, 0]:
tensor([[ 0.564, -3.817, 2.064],
[ 3.116, 9.936, 14.649],
[-2.124, -4.104, 2.056]])""",
    errata=["E-1.16-f", "E-1.16-g", "E-1.16-h"],
)
def listing_1_18(sub, show):
    _, q, k, v = _qkv()
    qs, ks, vs = (sub.split_heads(t, 2) for t in (q, k, v))
    weights, context = sub.head_attention(qs, ks, vs)
    with _three_decimals():
        show("scores.shape:", weights.shape)  # the scores have the shape of the weights
        show("weights.shape:", weights.shape)
        show("weights[0, 0]:")
        show(weights[0, 0])
        show("context per head shape:", context.shape)
        show("context[0, 0]:")
        show(context[0, 0])


@listing(
    "1.19",
    book="""final context.shape: torch.Size([1, 3, 6])
final context:
tensor([[[ 0.564, -3.817, 2.064, 3.116, 9.936, 14.649],
[-2.124, -4.104, 2.056, 3.098, 9.814, 14.479],
[-2.120, -4.099, 2.053, 3.113, 9.915, 14.620]]])""",
    errata=["E-1.16-i", "E-1.16-j"],
)
def listing_1_19(sub, show):
    _, q, k, v = _qkv()
    qs, ks, vs = (sub.split_heads(t, 2) for t in (q, k, v))
    _, context = sub.head_attention(qs, ks, vs)
    final = sub.merge_heads(context)
    with _three_decimals():
        show("final context.shape:", final.shape)
        show("final context:")
        show(final)
