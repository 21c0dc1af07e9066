"""What `kata train` leaves in its output folder, each file written atomically (grader/course/atomic.py):

    best.safetensors   the weights of the best validation accuracy so far (safetensors: no pickle)
    best.json          what is needed to use them: model configuration, tokenizer facts, epoch, accuracy
    metrics.json       the whole run: configuration, per-evaluation history, best, test results
    curves.png         loss and accuracy against training steps (matplotlib), its texts in the figures'
                       language (grader/course/figure_text.py: Chinese where a CJK font is found)

A run stopped at any moment (Ctrl-C, a kill) leaves the previous best checkpoint whole.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from ...course import atomic
from ...course.figure_text import label, rc_params, text_language
from ...course.messages import Msg, t

METRICS_SCHEMA = 1


def save_checkpoint(out: Path, state_dict: dict, info: dict) -> Path:
    """best.safetensors (weights first, then) best.json: a reader that finds best.json finds its weights."""
    from safetensors.torch import save_file

    tensors = {k: v.detach().to("cpu").contiguous().clone() for k, v in state_dict.items()}
    weights = Path(out) / "best.safetensors"
    with atomic.replacing(weights) as tmp:
        save_file(tensors, str(tmp), metadata={"format": "pt"})
    atomic.write_json(Path(out) / "best.json", info)
    return weights


def load_checkpoint(out: str | Path) -> tuple[dict, dict[str, torch.Tensor]]:
    """(info, state_dict) of a run's best checkpoint."""
    from safetensors.torch import load_file

    out = Path(out)
    info_path, weights = out / "best.json", out / "best.safetensors"
    if not info_path.is_file() or not weights.is_file():
        raise FileNotFoundError(t("train_no_checkpoint", out=out))
    return json.loads(info_path.read_text(encoding="utf-8")), load_file(str(weights))


def curves_title(dim: int, layers: int, heads: int, source: str | Msg) -> str:
    """curves.png's title in the figures' language; the data source (a Msg: rendered in that
    language) is cut to 60 characters."""
    lang = text_language()
    source = source.render(lang) if isinstance(source, Msg) else source
    return t("train_fig_title", lang=lang, dim=dim, layers=layers, heads=heads, source=source[:60])


def plot_curves(path: Path, history: list[dict], title: str) -> Path:
    """Loss (training and validation) and validation accuracy against the training step; its texts
    in the figures' language, drawn with its font (grader/course/figure_text.py)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    steps = [h["step"] for h in history]
    with matplotlib.rc_context(rc_params()):  # around the saving too: fonts are looked up when drawing
        fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4), constrained_layout=True)
        ax_loss.plot(steps, [h["train_loss"] for h in history], "o-", label=label("train_fig_training"))
        ax_loss.plot(steps, [h["val_loss"] for h in history], "s-", label=label("train_fig_validation"))
        ax_loss.set_xlabel(label("train_fig_step"))
        ax_loss.set_ylabel(label("train_fig_loss"))
        ax_loss.legend()
        ax_loss.grid(alpha=0.3)
        ax_acc.plot(steps, [100 * h["val_accuracy"] for h in history], "s-", color="tab:green")
        ax_acc.set_xlabel(label("train_fig_step"))
        ax_acc.set_ylabel(label("train_fig_accuracy"))
        ax_acc.grid(alpha=0.3)
        fig.suptitle(title)
        return save_figure(path, fig)


def save_figure(path: Path, fig) -> Path:
    """Write a matplotlib figure as PNG, atomically, and close it."""
    import matplotlib.pyplot as plt

    try:
        with atomic.replacing(path) as tmp:
            fig.savefig(tmp, format="png", dpi=100)
    finally:
        plt.close(fig)
    return Path(path)
