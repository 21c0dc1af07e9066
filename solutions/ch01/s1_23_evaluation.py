"""§1.23 Evaluating the classifier: accuracy, predictions and scikit-learn's report (listings 1.39-1.40).

Evaluation runs the model in evaluation mode (dropout off) and without gradients, turns each
row of logits into a class with argmax, and compares with the labels. Accuracy alone can hide
a model that favours one class; the classification report gives precision, recall and F1 per
class, and the confusion matrix the four counts they come from.

Given (not part of the exercise): `TinyBERT`, a small version of listing 1.35's classifier
whose blocks are your TransformerBlock, imported from your s1_23_encoder_block.py (finish it,
and the attention and feed-forward network it imports, first), and `make_loader`, which
batches (ids, mask, labels) like listing 1.29. Labels are 0 = Negative and 1 = Positive.
Everything runs on the CPU: the book's `.to(device)` calls are left out.
"""
import torch
import torch.nn as nn
from sklearn.metrics import classification_report, confusion_matrix
from torch.utils.data import DataLoader, TensorDataset

from s1_23_encoder_block import TransformerBlock  # your exercise s1_23_encoder_block (listing 1.33)

PAD_ID, CLS_ID, SEP_ID = 1000, 1001, 1002
VOCAB_SIZE = 1003
MAX_LEN = 64


class TinyBERT(nn.Module):
    """A small BERT-style classifier: model(ids, mask) -> logits (batch, 2), read at position 0 ([CLS]).

    ids (batch, seq_len) int64 with seq_len <= max_len; mask (batch, seq_len), 1 = token, 0 = padding.
    `config` holds the constructor arguments that fix the architecture.
    """

    def __init__(self, vocab_size: int = VOCAB_SIZE, dim: int = 32, max_len: int = MAX_LEN, layers: int = 1,
                 heads: int = 2, ff_dim: int = 64, dropout: float = 0.1):
        super().__init__()
        self.config = dict(vocab_size=vocab_size, dim=dim, max_len=max_len, layers=layers, heads=heads,
                           ff_dim=ff_dim)
        self.token = nn.Embedding(vocab_size, dim, padding_idx=PAD_ID)
        self.position = nn.Embedding(max_len, dim)
        self.norm = nn.LayerNorm(dim)
        self.dropout = nn.Dropout(dropout)
        self.blocks = nn.ModuleList(TransformerBlock(dim, heads, ff_dim, dropout) for _ in range(layers))
        self.classifier = nn.Sequential(nn.Dropout(dropout), nn.Linear(dim, 2))

    def forward(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = self.token(ids) + self.position(torch.arange(ids.shape[1], device=ids.device))
        x = self.dropout(self.norm(x))
        for block in self.blocks:
            x = block(x, mask)
        return self.classifier(x[:, 0])


def make_loader(ids: torch.Tensor, mask: torch.Tensor, labels: torch.Tensor, batch_size: int = 16,
                shuffle: bool = False, seed: int | None = None) -> DataLoader:
    """A DataLoader of (ids, mask, labels) batches, like listing 1.29's; `seed` fixes the shuffling."""
    generator = torch.Generator().manual_seed(seed) if seed is not None else None
    return DataLoader(TensorDataset(ids, mask, labels), batch_size=batch_size, shuffle=shuffle, generator=generator)


CLASS_NAMES = ["Negative", "Positive"]


def evaluate(model: nn.Module, loader) -> float:
    """Listing 1.39: the fraction of examples whose argmax class equals the label, as a Python float.

    loader yields (ids, mask, labels) batches. Switch the model to evaluation mode, run it without
    gradients, and count over examples: the last batch may be smaller than the others.
    """
    # BEGIN SOLUTION eval mode, no_grad, argmax over the two logits, count correct and total examples
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for ids, mask, labels in loader:
            preds = model(ids, mask).argmax(dim=1)
            correct += (preds == labels).sum().item()
            total += labels.size(0)
    return correct / total
    # END SOLUTION


def collect_predictions(model: nn.Module, loader) -> tuple[list[int], list[int]]:
    """Listing 1.40, first part: (labels, preds), two lists of Python ints in the loader's order.

    labels are the true classes, preds the model's argmax classes, in evaluation mode without gradients.
    """
    # BEGIN SOLUTION like evaluate, but keep every label and prediction (.tolist())
    model.eval()
    all_labels, all_preds = [], []
    with torch.no_grad():
        for ids, mask, labels in loader:
            all_preds += model(ids, mask).argmax(dim=1).tolist()
            all_labels += labels.tolist()
    return all_labels, all_preds
    # END SOLUTION


def report(labels: list[int], preds: list[int]) -> str:
    """Listing 1.40: scikit-learn's classification report of preds against the true labels, as text.

    Rows named "Negative" and "Positive" (CLASS_NAMES), two decimals (the default). Both rows
    must be there even when only one class occurs in labels or preds (pass labels=[0, 1]), and a
    class that is never predicted gets precision 0 (zero_division=0) without a warning.
    """
    # BEGIN SOLUTION call classification_report with the true labels first, both classes and their names
    return classification_report(labels, preds, labels=[0, 1], target_names=CLASS_NAMES, zero_division=0)
    # END SOLUTION


def confusion(labels: list[int], preds: list[int]) -> list[list[int]]:
    """The confusion matrix [[TN, FP], [FN, TP]]: row = true class, column = predicted class, as lists of ints.

    Listing 1.21 imports scikit-learn's confusion_matrix; use it with labels=[0, 1].
    """
    # BEGIN SOLUTION confusion_matrix with both classes, converted to a list of lists
    return confusion_matrix(labels, preds, labels=[0, 1]).tolist()
    # END SOLUTION
