"""The settings of `kata train` (kept apart from loop.py so that building the command line
does not import torch)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class TrainConfig:
    code: str = "reference"  # "reference" (solutions/), "student" (exercises/) or a folder holding ch01/
    data: str = "offline"  # grader.capstone.data.load_source: "imdb", "offline", "synthetic[:N]" or a path
    out: str = ""  # output folder; default .kata/runs/<time>
    # listing 1.36 with a head count that divides the width (ERRATA.md)
    dim: int = 256
    layers: int = 4
    heads: int = 4
    ff_dim: int = 1024
    max_len: int = 256
    truncation: str = "head"  # or "head_tail"
    epochs: int = 3
    batch_size: int = 0  # 0 = auto: 64 on CUDA (the issue-27 measurements), 32 elsewhere
    lr: float = 5e-4
    weight_decay: float = 0.01
    warmup: float = 0.06  # fraction of all steps
    clip: float = 1.0  # max gradient norm; 0 = no clipping
    val_fraction: float = 0.1
    eval_every: int = 0  # steps between validations; 0 = once per epoch
    max_steps: int = 0  # stop after this many steps (0 = all epochs)
    limit: int = 0  # use at most this many training examples (0 = all)
    pretrain_mlm: int = 0  # masked-language-model pre-training steps before fine-tuning (0 = none; beyond the book)
    pretrain_batch_size: int = 0  # 0 = the fine-tuning's batch size
    pretrain_lr: float = 0.0  # 0 = the fine-tuning's peak learning rate
    pretrain_warmup: float = 0.06  # fraction of the pre-training steps
    seed: int = 0
    device: str = "auto"  # auto, cpu, cuda, mps
    compile: str = "auto"  # auto (CUDA: cudagraphs, elsewhere off), off, on (torch.compile), cudagraphs
    fast_attention: bool = True
    amp: str = "auto"  # auto (CUDA: bf16 from batch AUTO_BF16_BATCH on, fp32 + TF32 below; elsewhere fp32), bf16, off
    buckets: str = "auto"  # padded lengths: auto (CUDA: AUTO_BUCKETS; elsewhere off), off, or "32,64,128"
    sync_every: int = 0  # steps between two reads of the loss (host synchronisations); 0 = auto: CUDA 50, else 1
    preset: str = ""  # "gpu": the recommended settings (PRESETS), for what was not set on the command line
    quiet: bool = False


AUTO_BF16_BATCH = 256  # issue 27, one H200: at batch 64 fp32 + TF32 beat bf16 (12.7 vs 16.0 ms), at 256 x 256 bf16 won
AUTO_CUDA_BATCH = 64
AUTO_SYNC_EVERY_CUDA = 50

# --preset gpu: more pre-training over the unlabelled texts, larger pre-training batches, a
# fine-tuning learning rate for a pre-trained encoder. Not yet measured on a GPU: gpu_check.sh
# runs it and reports it against TF-IDF + logistic regression on the same split (issue 27, part 4).
PRESETS: dict[str, dict] = {
    "gpu": {
        "pretrain_mlm": 6000,
        "pretrain_batch_size": 256,
        "pretrain_lr": 1e-3,
        "pretrain_warmup": 0.05,
        "batch_size": 64,
        "lr": 1e-4,
        "epochs": 4,
        "warmup": 0.1,
        "eval_every": 100,
    },
}


def apply_preset(cfg: TrainConfig, given: set[str] | None = None) -> TrainConfig:
    """cfg with the preset's settings (cfg.preset, "" = none) for every field not in `given` (the
    settings the user gave; None: those that differ from TrainConfig's defaults)."""
    if not cfg.preset:
        return cfg
    if cfg.preset not in PRESETS:
        raise ValueError(f"unknown preset {cfg.preset!r}: expected one of {', '.join(sorted(PRESETS))}")
    default = TrainConfig()
    for name, value in PRESETS[cfg.preset].items():
        chosen = name in given if given is not None else getattr(cfg, name) != getattr(default, name)
        if not chosen:
            setattr(cfg, name, value)
    return cfg
