"""§1.19 worked example: figure 1.123, gradients with and without shortcut connections."""

import torch

from grader.listings import listing


@listing(
    "1.19/gradients",
    book="""\
figure 1.123, mean gradient of layers 1 and 2:
  without shortcuts: 0.00003, 0.00001
  with shortcuts:    0.45, 0.52""",
    errata=["E-1.19-a", "E-1.19-b", "E-1.19-c", "E-1.19-d"],
)
def listing_1_19_gradients(sub, show):
    x = torch.tensor([[1.0, 0.0, 0.0, -1.0]])
    for title, sizes in (("The figure's two layers", [4, 4, 4]), ("Five layers", [4, 4, 4, 4, 4, 4])):
        show(f"{title}, layer sizes {sizes}, torch.manual_seed(123), target 0:")
        for use_shortcut in (False, True):
            sub.seed(123)
            model = sub.new("ShortcutNet", sizes, use_shortcut)
            grads = sub.layer_gradients(model, x, torch.zeros(1, sizes[-1]))
            label = "with shortcuts   " if use_shortcut else "without shortcuts"
            show(f"  {label}:", "  ".join(f"layer {i + 1}: {g:.6f}" for i, g in enumerate(grads.tolist())))
