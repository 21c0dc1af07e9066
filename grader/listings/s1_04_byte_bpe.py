"""§1.4 GPT-2's vocabulary (figure 1.25), run with the student's tokenizer (`kata run 1.4/gpt2`)."""

from grader.capstone import gpt2
from grader.listings import listing


@listing(
    "1.4/gpt2",
    book="""50,000 merges, 50,257 tokens
Building -> 25954
<|endoftext|> -> 50256""",
    errata=["E-1.4-l", "E-1.4-m", "E-1.4-n", "E-1.4-o"],
)
def gpt2_vocabulary(sub, show):
    try:
        folder = object.__getattribute__(sub, "assets")  # the worker's path of the assets folder
    except AttributeError:
        raise RuntimeError("this grader gives the sandbox no assets folder (sub.assets)") from None
    if not gpt2.have_asset():
        raise RuntimeError(f"{gpt2.asset_path()} is missing: run `python -m grader.capstone.gpt2 fetch`")
    tok = sub.from_file(f"{folder}/{gpt2.ASSET_NAME}")
    show(f"{tok.num_merges():,} merges, {tok.vocab_size():,} tokens")
    for text in ("Building", "<|endoftext|>"):
        ids = tok.encode(text)
        show(f"{text} -> {ids[0] if len(ids) == 1 else ids}")
    ids = tok.encode("Hello, world!")
    show(f"'Hello, world!' -> {ids} -> {tok.decode(ids)!r}")
