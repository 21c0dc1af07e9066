"""The §1.18 worked examples (figures 1.120–1.122), run with the student's s1_18_feed_forward."""

import torch

from grader.listings import listing


# Figure 1.122 compares GELU with ReLU; the book prints no numbers.
@listing(
    "1.18/gelu-relu",
    book="""(figure 1.122: GELU is smooth at 0 and slightly negative for small negative x;
ReLU is exactly 0 for every negative x)""",
    errata=["E-1.18-c"],
)
def gelu_relu(sub, show):
    x = torch.tensor([-3.0, -2.0, -1.0, -0.75, -0.5, 0.0, 0.5, 1.0, 2.0, 3.0])
    g = sub.gelu(x)
    show("x         ", [round(v, 2) for v in x.tolist()])
    show("ReLU(x)   ", [round(v, 4) for v in torch.relu(x).tolist()])
    show("GELU(x)   ", [round(v, 4) for v in g.tolist()])
    show("GELU-ReLU ", [round(v, 4) for v in (g - torch.relu(x)).tolist()])
    show("tanh GELU ", [round(v, 4) for v in sub.gelu_tanh(x).tolist()])


# Figures 1.120-1.121: sizes only; the book prints no program output.
@listing(
    "1.18/ffn",
    book="""(2, 3, 768) -> Linear 768 x 3072 -> GELU -> Linear 3072 x 768 -> (2, 3, 768)""",
    errata=["E-1.18-a", "E-1.18-b"],
)
def ffn(sub, show):
    sub.seed(123)
    m = sub.new("FeedForward", 768)
    for name, t in m.state_dict().items():
        show(f"{name:10s} {tuple(t.shape)}")
    x = torch.randn(2, 3, 768, generator=torch.Generator().manual_seed(123))
    show("input shape: ", tuple(x.shape))
    show("output shape:", tuple(m(x).shape))
