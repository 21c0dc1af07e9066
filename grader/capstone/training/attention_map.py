"""Where a trained classifier's [CLS] token looks: its attention row, per layer and head.

The [CLS] output feeds the classifier (listing 1.35), so its attention weights show which
tokens of a review the decision was built from. They are recomputed from each attention
module's input and its `qkv` weights (listing 1.31's names), so the figure does not depend on
how the module's forward is written.
"""

from __future__ import annotations

import math
from pathlib import Path

import torch

from ...course.figure_text import label, rc_params
from .model import attention_modules


def cls_attention(model: torch.nn.Module, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """(layers, heads, T): the softmax weights of query position 0 over all keys, for the first row
    of the batch, in evaluation mode; padding keys get 0."""
    modules = attention_modules(model)
    if not modules:
        raise ValueError("no MultiHeadSelfAttention with qkv and heads (listing 1.31's names) in this model")
    rows: list[torch.Tensor] = []

    def hook(module, args, kwargs, output):
        x = args[0] if args else kwargs["x"]
        m = args[1] if len(args) > 1 else kwargs["mask"]
        B, T, C = x.shape
        h = module.heads
        q, k, _ = module.qkv(x).view(B, T, 3, h, C // h).permute(2, 0, 3, 1, 4)
        scores = (q[:, :, :1] @ k.transpose(-2, -1)) / math.sqrt(C // h)
        scores = scores.masked_fill((m == 0)[:, None, None, :], float("-inf"))
        rows.append(torch.softmax(scores.float(), dim=-1)[0, :, 0])

    handles = [m.register_forward_hook(hook, with_kwargs=True) for m in modules]
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            model(ids[:1], mask[:1])
    finally:
        for handle in handles:
            handle.remove()
        model.train(was_training)
    return torch.stack(rows)


def attention_title(review: int, label_id: int, predicted: int) -> str:
    """cls_attention.png's title in the figures' language: which test review, its label and the prediction."""
    names = [label("train_fig_negative"), label("train_fig_positive")]
    return label("train_fig_attention_title", review=review, label=names[label_id], predicted=names[predicted])


def plot_cls_attention(path: str | Path, weights: torch.Tensor, tokens: list[str], title: str) -> Path:
    """A heatmap per layer: heads down, tokens across (the review's own text). The other texts are
    in the figures' language, drawn with its font (grader/course/figure_text.py)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .outputs import save_figure

    layers, heads, T = weights.shape
    with matplotlib.rc_context(rc_params()):  # around the saving too: fonts are looked up when drawing
        fig, axes = plt.subplots(
            layers,
            1,
            figsize=(max(6, 0.32 * T + 2), 0.45 * heads * layers + 1.6),
            squeeze=False,
            constrained_layout=True,
        )
        for layer, ax in enumerate(axes[:, 0]):
            im = ax.imshow(weights[layer].cpu().numpy(), aspect="auto", cmap="viridis", vmin=0)
            ax.set_yticks(range(heads), [label("train_fig_head", head=h) for h in range(heads)], fontsize=7)
            ax.set_ylabel(label("train_fig_layer", layer=layer), fontsize=8)
            ax.set_xticks(range(T), tokens if layer == layers - 1 else [""] * T, rotation=90, fontsize=7)
            fig.colorbar(im, ax=ax, fraction=0.02)
        axes[0, 0].set_title(title, fontsize=9)
        return save_figure(path, fig)
