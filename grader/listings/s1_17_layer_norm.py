"""The §1.17 worked example (figure 1.118), run with the student's s1_17_layer_norm."""

import torch

from grader.listings import listing

SIX = [0.78, 1.05, 0.44, 0.73, 0.65, 0.28]


# The book states these numbers in the text and figure 1.118; it prints no program output.
@listing(
    "1.17/six-values",
    book="""mean ≈ 0.6
variance ≈ 0.07
normalized ≈ 0.44, 1.48, −0.85, 0.28, −0.01, −1.33
mean 0.0, variance 1.00""",
    errata=["E-1.17-a", "E-1.17-b", "E-1.17-c", "E-1.17-d", "E-1.17-e"],
)
def six_values(sub, show):
    x = torch.tensor(SIX)
    mean, var = sub.mean_and_variance(x)
    show(f"mean = {mean.item():.4f}")
    show(f"variance = {var.item():.4f}")
    y = sub.normalize(x, eps=0.0)
    show("normalized =", [round(v, 3) for v in y.tolist()])
    m2, v2 = sub.mean_and_variance(y)
    show(f"mean {m2.item():.1f}, variance {v2.item():.2f}")
