"""Given objects the checks build from the runtime's own code, not from the submission's file.

A helper marked "Given (not part of the exercise)" lives in the student's file, which the
student can rewrite; where a check judges the student's code through such an object (a
next-token table, whether there is a GPU), it asks the worker
for this copy instead (op "given"). A helper whose use a check measures (the encoder whose calls
s1_23_dataset counts) is answered by the grader itself, call by call (Forwarded, op "forward").
Nothing here is the answer of any exercise.
"""

from __future__ import annotations

import contextlib

import torch


class Forwarded:
    """A given helper whose every call the grader answers: the call's arguments go over the wire
    to the trusted side during the grader's pending request (serve.Session.ask_grader), which
    computes the answer, counts and logs the call, and replies. Code in the worker can rewrite
    anything the worker holds (a counter, this class, the runtime module itself), so what a check
    measures of a helper's use (how often the student's code called it, on what) is kept where it
    cannot write: the grader's side. This object holds no state worth forging."""

    def __init__(self, key: int, ask):
        self._key, self._ask = int(key), ask

    def __call__(self, *args, **kwargs):
        return self._ask(self._key, list(args), dict(kwargs))


class WordEncoder(Forwarded):
    """s1_23_dataset's given WordEncoder as the checks hand it over: encode(text) -> list[int].
    The grader encodes the text (with its own labelling of the vocabulary, different in every
    check, so no copy of the encoder in the worker gives the same ids) and counts the call."""


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
        features = datasets.Features(
            {"text": datasets.Value("string"), "label": datasets.ClassLabel(names=list(label_names))}
        )
    return datasets.Dataset.from_dict(dict(columns), features=features)


def cuda_available() -> bool:
    """s1_23_tokenizer's given cuda_available: whether torch sees a CUDA GPU in the worker."""
    return bool(torch.cuda.is_available())


GIVEN = {"LogitsTable": LogitsTable, "cuda_available": cuda_available, "hf_dataset": hf_dataset}
# Helpers whose calls the grader answers (and counts): sub.forward(name, helper) in a check.
FORWARDED = {"WordEncoder": WordEncoder}


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
    if isinstance(logits, torch.Tensor) and logits.shape == grad_logits.shape and logits.dtype == grad_logits.dtype:
        # the same gradient, bit for bit, without backward(tensor)'s first-call import of sympy (0.3 s a worker)
        (logits * grad_logits).sum().backward()
    else:
        logits.backward(grad_logits)  # what backward says of a wrong shape or dtype
    grad = token_embedding.weight.grad
    return (None if grad is None else grad.detach().clone()), logits.detach()


GIVEN.update({"generator": generator, "embedding": embedding, "after_call": after_call, "tied_gradient": tied_gradient})


# Dropout's reads at the course's training size: the student's code runs as it does inside a model
# being trained, which a plain call over the wire is not (the wire carries no requires_grad).
def as_in_training(fn, *args, bf16_autocast: bool = False, **kwargs):
    """fn(*args, **kwargs) as `kata train` runs it: grad enabled, every floating tensor argument an
    activation of the graph (computed from a leaf that requires grad: requires_grad, a grad_fn, not
    a leaf), and with `bf16_autocast` under torch.autocast(bfloat16), the course's regime on a GPU
    (here on the CPU). A rule keyed on requires_grad, grad_fn, is_leaf, grad mode or autocast meets
    it. The result crosses the wire as every result does: detached."""
    with torch.enable_grad():
        args = [
            a.detach().requires_grad_(True).clone() if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in args
        ]
    amp = torch.autocast("cpu", dtype=torch.bfloat16) if bf16_autocast else contextlib.nullcontext()
    with torch.enable_grad(), amp:
        return fn(*args, **kwargs)


GIVEN["as_in_training"] = as_in_training
