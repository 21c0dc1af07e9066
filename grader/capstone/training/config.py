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
    batch_size: int = 32
    lr: float = 5e-4
    weight_decay: float = 0.01
    warmup: float = 0.06  # fraction of all steps
    clip: float = 1.0  # max gradient norm; 0 = no clipping
    val_fraction: float = 0.1
    eval_every: int = 0  # steps between validations; 0 = once per epoch
    max_steps: int = 0  # stop after this many steps (0 = all epochs)
    limit: int = 0  # use at most this many training examples (0 = all)
    pretrain_mlm: int = 0  # masked-language-model pre-training steps before fine-tuning (0 = none; beyond the book)
    seed: int = 0
    device: str = "auto"  # auto, cpu, cuda, mps
    compile: bool = False
    fast_attention: bool = True
    amp: str = "auto"  # auto (bf16 on CUDA), bf16, off
    quiet: bool = False
