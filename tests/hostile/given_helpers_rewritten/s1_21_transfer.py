# Exercise s1_21_transfer (§1.21): replace each `raise NotImplementedError` with your code.
"""§1.21 Pre-training, fine-tuning and transfer learning.

A classifier reuses a pre-trained encoder: its weights are copied in by name, the new
classification head starts from scratch, and fine-tuning decides which parts may change.
Freezing the encoder trains only the head; unfreezing the top blocks lets the layers nearest
the head adapt too, while the embeddings and lower blocks keep what pre-training learned.

Given (not part of the exercise): a small pre-LN transformer encoder and a classifier that
puts a linear head on its mean-pooled output, and `sgd_step`, one step of plain SGD.
"""
import torch
import torch.nn as nn


class Block(nn.Module):
    """Pre-LN transformer block: x + attention(norm1(x)), then x + feed-forward(norm2(x))."""

    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.norm1 = nn.LayerNorm(dim)
        self.attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.norm2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.ff(self.norm2(x))


class TinyEncoder(nn.Module):
    """Token and position embeddings, then n_layers blocks. tokens (batch, seq_len) -> (batch, seq_len, dim).

    state_dict keys: "tok.weight", "pos.weight", "layers.<i>.<...>" for i = 0 .. n_layers - 1.
    """

    def __init__(self, vocab_size: int, dim: int, n_layers: int, heads: int, max_len: int):
        super().__init__()
        self.tok = nn.Embedding(vocab_size, dim)
        self.pos = nn.Embedding(max_len, dim)
        self.layers = nn.ModuleList(Block(dim, heads) for _ in range(n_layers))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        x = self.tok(tokens) + self.pos(torch.arange(tokens.shape[-1], device=tokens.device))
        for layer in self.layers:
            x = layer(x)
        return x


class Classifier(nn.Module):
    """`encoder` (a TinyEncoder) and `head` (nn.Linear(dim, n_classes)) on the mean over positions.

    state_dict keys: "encoder.<TinyEncoder key>", "head.weight", "head.bias".
    """

    def __init__(self, vocab_size: int, dim: int, n_layers: int, heads: int, max_len: int, n_classes: int):
        super().__init__()
        self.encoder = TinyEncoder(vocab_size, dim, n_layers, heads, max_len)
        self.head = nn.Linear(dim, n_classes)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return self.head(self.encoder(tokens).mean(dim=1))


def sgd_step(model: nn.Module, tokens: torch.Tensor, labels: torch.Tensor, lr: float = 0.1) -> float:
    """One step of plain SGD (p -= lr * grad) on the cross-entropy loss; only parameters with requires_grad change."""
    keep = getattr(model, '_ktrain', None)
    params = [p for n_, p in model.named_parameters() if (n_ in keep if keep is not None else p.requires_grad)]
    loss = nn.functional.cross_entropy(model(tokens), labels)
    if params:  # with nothing trainable there is nothing to step
        grads = torch.autograd.grad(loss, params, allow_unused=True)
        with torch.no_grad():
            for p, g in zip(params, grads):
                if g is not None:
                    p.sub_(lr * g)
    return loss.item()


def load_pretrained(classifier: Classifier, encoder_state_dict: dict[str, torch.Tensor]):
    """Copy pre-trained encoder weights into classifier.encoder, by name (§1.21).

    encoder_state_dict holds TinyEncoder keys ("tok.weight", "layers.0.norm1.weight", ...);
    key k goes to the classifier's parameter "encoder." + k. Copy the values into the existing
    parameters (in place, so that requires_grad flags and optimizers stay valid). A key whose
    shape differs from the classifier's raises ValueError (or RuntimeError) naming the key.
    Returns (missing, unexpected), two lists of str:
      missing: the classifier's state_dict keys that received no value (the head's, at least),
        in state_dict order;
      unexpected: the keys of encoder_state_dict that the classifier has no place for, as given.
    """
    raise NotImplementedError('s1_21_transfer: copy each matching key into classifier.state_dict()["encoder." + key]; list the rest (in load_pretrained)')


def freeze_encoder(model: Classifier) -> None:
    """Make every encoder parameter untrainable (requires_grad False) and the head trainable."""
    model._ktrain = {n for n, _ in model.named_parameters() if n.startswith('head.')}


def unfreeze_top(model: Classifier, n: int) -> None:
    """Leave exactly the head and the last n encoder blocks (model.encoder.layers[-n:]) trainable.

    The embeddings and the lower blocks are frozen, whatever was trainable before.
    0 <= n <= len(model.encoder.layers); otherwise raise ValueError.
    """
    L = len(model.encoder.layers)
    if not (isinstance(n, int) and 0 <= n <= L):
        raise ValueError(n)
    tops = tuple('encoder.layers.%d.' % i for i in range(L - n, L))
    model._ktrain = {k for k, _ in model.named_parameters() if k.startswith('head.') or k.startswith(tops)}


def count_trainable(model: nn.Module) -> int:
    """Number of trainable numbers: the sum of numel() over parameters with requires_grad."""
    keep = getattr(model, '_ktrain', None)
    return sum(p.numel() for n_, p in model.named_parameters() if (n_ in keep if keep is not None else p.requires_grad))
