"""Given objects the checks build from the runtime's own code, not from the submission's file.

A helper marked "Given (not part of the exercise)" lives in the student's file, which the
student can rewrite; where a check judges the student's code through such an object (an
encoder that counts its calls, a next-token table, whether there is a GPU), it asks the worker
for this copy instead (op "given").
Nothing here is the answer of any exercise.
"""
from __future__ import annotations

import torch


class WordEncoder:
    """s1_23_dataset's given WordEncoder: lower-cased words stripped of .,!?;:"' become their index
    in `vocab` plus 4 (unknown words: unk_id), framed as [cls_id] ... [sep_id], cut to max_len ids.
    `calls` counts the texts it has encoded."""

    def __init__(self, vocab: list[str], max_len: int = 32, pad_id: int = 0, cls_id: int = 1, sep_id: int = 2,
                 unk_id: int = 3):
        self.index = {word: i + 4 for i, word in enumerate(vocab)}
        self.max_len, self.pad_id, self.cls_id, self.sep_id, self.unk_id = max_len, pad_id, cls_id, sep_id, unk_id
        self.calls = 0

    def __call__(self, text: str) -> list[int]:
        self.calls += 1
        words = [w.strip(".,!?;:\"'") for w in text.lower().split()]
        ids = [self.index.get(w, self.unk_id) for w in words if w][:self.max_len - 2]
        return [self.cls_id] + ids + [self.sep_id]


class LogitsTable:
    """s1_01_next_token's given LogitsTable: logits of the next token from a fixed (V, V) table, row = the
    previous token."""

    def __init__(self, table):
        self.table = torch.as_tensor(table, dtype=torch.float32)

    def __call__(self, ids: list[int]) -> torch.Tensor:
        return self.table[ids[-1]]


def hf_dataset(columns: dict, label_names: list[str] | None = None):
    """A Hugging Face `datasets.Dataset` built in the worker from plain columns, as
    load_dataset("imdb")["train"] hands it to s1_23_dataset: `text` a string column, `label` a
    ClassLabel over `label_names` (None: the type datasets infers, e.g. int64 or float64).
    The trusted side sends only the columns and gets a handle back: the object never leaves the
    worker. `datasets` is imported here, on first use, not by every worker (it costs a worker
    about 0.4-0.9 s), offline and with its cache in the working folder (/tmp/work in bubblewrap,
    emptied after every check), so that it never looks for the hub or a home folder. Only for
    exercises without a forbidden list: the import starts a thread, which their workers refuse."""
    import os

    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("HF_HOME", os.path.join(os.getcwd(), ".cache", "huggingface"))
    import datasets

    features = None
    if label_names is not None:
        features = datasets.Features({"text": datasets.Value("string"),
                                      "label": datasets.ClassLabel(names=list(label_names))})
    return datasets.Dataset.from_dict(dict(columns), features=features)


def cuda_available() -> bool:
    """s1_23_tokenizer's given cuda_available: whether torch sees a CUDA GPU in the worker."""
    return bool(torch.cuda.is_available())


GIVEN = {"WordEncoder": WordEncoder, "LogitsTable": LogitsTable, "cuda_available": cuda_available,
         "hf_dataset": hf_dataset}


# s1_23_mlm: a generator and a token embedding cannot cross the wire, and whether a function
# changed its input, or whether a gradient reached a tied weight, can only be seen in the worker.
def generator(seed: int) -> torch.Generator:
    """A torch.Generator seeded with `seed`, for s1_23_mlm's mask_tokens(..., generator=...)."""
    return torch.Generator().manual_seed(int(seed))


def embedding(num_embeddings: int, dim: int, weight=None, padding_idx=None) -> torch.nn.Embedding:
    """An nn.Embedding for s1_23_mlm's MLMHead to tie to, holding `weight` when one is given."""
    module = torch.nn.Embedding(num_embeddings, dim, padding_idx=padding_idx)
    if weight is not None:
        with torch.no_grad():
            module.weight.copy_(torch.as_tensor(weight, dtype=module.weight.dtype))
    return module


def after_call(fn, *args, **kwargs):
    """(fn(*args, **kwargs), the positional arguments as they are after the call): shows whether
    fn changed, in place, a tensor it was given."""
    result = fn(*args, **kwargs)
    return result, list(args)


def tied_gradient(head, token_embedding, hidden, grad_logits):
    """head(hidden), then one backward pass from `grad_logits` (a gradient with respect to the
    logits), from no gradients: (the gradient that reached token_embedding.weight, None when none
    did; the logits). s1_23_mlm's head must train the embedding it is tied to."""
    token_embedding.zero_grad(set_to_none=True)
    head.zero_grad(set_to_none=True)
    logits = head(hidden)
    logits.backward(grad_logits)
    grad = token_embedding.weight.grad
    return (None if grad is None else grad.detach().clone()), logits.detach()


GIVEN.update({"generator": generator, "embedding": embedding, "after_call": after_call,
              "tied_gradient": tied_gradient})
