"""§1.23 listings 1.20–1.22 and 1.24–1.26 run with the student's code (`kata run 1.26`)."""

import importlib.metadata
import importlib.util

from grader.capstone import gpt2
from grader.listings import listing

NOTHING = "(the book prints nothing for this listing)"
REVIEW = "This movie is slow, but the acting is excellent."


def _tokenizer(sub, **settings):
    try:
        folder = object.__getattribute__(sub, "assets")  # the worker's path of the assets folder
    except AttributeError:
        raise RuntimeError("this grader gives the sandbox no assets folder (sub.assets)") from None
    if not gpt2.have_asset():
        raise RuntimeError(f"{gpt2.asset_path()} is missing: run `python -m grader.capstone.gpt2 fetch`")
    return sub.from_file(f"{folder}/{gpt2.ASSET_NAME}", **settings)


@listing("1.20", book=NOTHING)
def listing_1_20(sub, show):
    """pip install torch datasets tiktoken tqdm scikit-learn"""
    for dist, module, role in (
        ("torch", "torch", "needed"),
        ("tiktoken", "tiktoken", "needed"),
        (
            "datasets",
            "datasets",
            "needed: every corpus of grader.capstone.data (IMDb from the hub "
            "when it answers, local copies, the offline corpus)",
        ),
        ("tqdm", "tqdm", "optional: progress bars"),
        ("scikit-learn", "sklearn", "for the classification report of listing 1.40"),
    ):
        if importlib.util.find_spec(module) is None:
            show(f"{dist:13s} not installed ({role})")
        else:
            show(f"{dist:13s} {importlib.metadata.version(dist)}")


@listing("1.21", book=NOTHING)
def listing_1_21(sub, show):
    """import math, os, torch, torch.nn, torch.nn.functional, torch.utils.data, tiktoken, ..."""
    show(
        "import math, os, torch, torch.nn, torch.nn.functional, torch.utils.data, tiktoken: done "
        f"(the exercise module imported in the sandbox; choose_device() -> {sub.choose_device()!r})"
    )


@listing("1.22", book="device(type='cuda')", errata=["E-1.23-a"])
def listing_1_22(sub, show):
    """device = torch.device("cuda" if torch.cuda.is_available() else "cpu"); print(device)"""
    name = sub.choose_device()
    show(name)
    show(f"(print(device) shows the name; the repr, what a notebook cell shows, is device(type={name!r}))")


@listing("1.24", book="50257", errata=["E-1.23-c"])
def listing_1_24(sub, show):
    """tokenizer = tiktoken.get_encoding("gpt2"); base_vocab_size = tokenizer.n_vocab"""
    show(_tokenizer(sub).attr("base_vocab_size"))


@listing("1.25", book="50260", errata=["E-1.23-d"])
def listing_1_25(sub, show):
    """PAD_ID, CLS_ID, SEP_ID = base_vocab_size + 0, 1, 2; VOCAB_SIZE = base_vocab_size + 3"""
    tok = _tokenizer(sub)
    show(tok.attr("vocab_size"))
    show(f"(PAD_ID {tok.attr('pad_id')}, CLS_ID {tok.attr('cls_id')}, SEP_ID {tok.attr('sep_id')})")


@listing("1.26", book=NOTHING, errata=["E-1.23-e", "E-1.23-f"])
def listing_1_26(sub, show):
    """encode(text): [CLS] + the first MAX_LEN - 2 token ids + [SEP], padded with [PAD] to MAX_LEN = 256"""
    tok = _tokenizer(sub)
    ids = tok.encode(REVIEW)
    show(f"encode({REVIEW!r}):")
    show(f"  {len(ids)} ids: {ids[:14]} ... {ids[-3:]}")
    show(f"  decoded back: {tok.decode(ids)!r}")
    long = "I expected little. " * 200 + "But the ending was wonderful."
    for truncation in ("head", "head_tail"):
        t = _tokenizer(sub, truncation=truncation)
        show(
            f"  a {len(long):,}-character review, truncation={truncation!r}: ends with "
            f"{t.decode(t.encode(long))[-40:]!r}"
        )
