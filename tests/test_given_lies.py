"""A point is earned only by solving, even where the student's file holds given code.

Helpers marked "Given (not part of the exercise)" live in the student's own file, which the
student can rewrite. A check that judges behaviour through them (the given model's forward, the
given `sgd_step`) can be made to pass without solving. These are an outside attacker's two
submissions (tests/hostile/given_helpers_rewritten/, the stubs with one file changed), and a variant of each that
keeps the given code honest until the moment it matters; each scores 0 on the checks it
targets: the grader measures with its own model and reads requires_grad itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import SOLUTIONS, checks_of, grade

ATTACKS = Path(__file__).resolve().parent / "hostile" / "given_helpers_rewritten"
LEARNING = ("test_overfit_one_batch", "test_learns_synthetic_task", "test_learns_another_task")
FREEZING = ("test_freeze_encoder", "test_unfreeze_top", "test_unfreeze_top_from_trainable", "test_count_trainable")


def _checks(report, exercise):
    return {c["name"]: c for c in checks_of(report, exercise)}


def _replace(source: str, old: str, new: str) -> str:
    assert old in source, old
    return source.replace(old, new)


def test_training_measured_through_a_rewritten_given_model_scores_nothing(submission):
    # TinyBERT.forward returns Naive-Bayes logits from token counts train collected, its blocks
    # return their input, train and train_step never step (they add 1e-3 to every parameter)
    ex = "s1_23_training"
    report = grade(submission({ex: (ATTACKS / f"{ex}.py").read_text()}, from_stubs=True), "-e", ex)
    checks = _checks(report, ex)
    for name in LEARNING:
        assert checks[name]["score"] == 0, f"{name}: {checks[name]['message']}"
    # only the training-mode check (train does call model.train()) may pass
    assert sum(c["score"] for c in checks.values()) <= 1, {n: c["score"] for n, c in checks.items()}


def test_given_model_that_lies_only_after_training_scores_nothing(submission):
    # The real blocks, and the given forward honest until train has counted tokens: the model
    # the student's code builds computes TinyBERT at first, then answers from the counts.
    ex = "s1_23_training"
    source = (ATTACKS / f"{ex}.py").read_text()
    block = source[source.index("class TransformerBlock(") : source.index("_MEM = ")]
    source = _replace(source, block, "from s1_23_encoder_block import TransformerBlock\n")
    source = _replace(
        source,
        "        return _nb_logits(ids, mask) + 0 * self.classifier(x[:, 0])",
        "        if _MEM['c'] is None:\n"
        "            return self.classifier(x[:, 0])\n"
        "        return _nb_logits(ids, mask) + 0 * self.classifier(x[:, 0])",
    )
    report = grade(submission({ex: source}), "-e", ex)
    checks = _checks(report, ex)
    for name in LEARNING:
        assert checks[name]["score"] == 0, f"{name}: {checks[name]['message']}"
    assert "50% is guessing" in checks["test_learns_synthetic_task"]["message"]


def test_freezing_through_a_rewritten_sgd_step_scores_nothing(submission):
    # freeze_encoder and unfreeze_top store names in model._ktrain and never touch requires_grad;
    # the given sgd_step and count_trainable follow that set
    ex = "s1_21_transfer"
    report = grade(submission({ex: (ATTACKS / f"{ex}.py").read_text()}, from_stubs=True), "-e", ex)
    checks = _checks(report, ex)
    assert sum(c["score"] for c in checks.values()) == 0, {n: c["message"] for n, c in checks.items()}


def test_freezing_is_read_from_requires_grad_not_from_the_given_step(submission):
    # the reference's load_pretrained (its points are earned), the attacker's freezing
    ex = "s1_21_transfer"
    attack = (ATTACKS / f"{ex}.py").read_text()
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    for name in ("def sgd_step(", "def freeze_encoder(", "def unfreeze_top(", "def count_trainable("):
        start = attack.index(name)
        end = attack.find("\ndef ", start + 1)
        theirs = attack[start : end if end != -1 else len(attack)].rstrip() + "\n"
        start = source.index(name)
        end = source.find("\ndef ", start + 1)
        source = source[:start] + theirs + (source[end:] if end != -1 else "")
    assert "_ktrain" in source and "requires_grad_(False)" not in source
    report = grade(submission({ex: source}), "-e", ex)
    checks = _checks(report, ex)
    for name in FREEZING:
        assert checks[name]["score"] == 0, f"{name}: {checks[name]['message']}"
    assert checks["test_load_matching_checkpoint"]["score"] == 2
    assert "requires_grad" in checks["test_freeze_encoder"]["message"]


DATASET_LIES = """

def item(ds, idx):
    return ds.ids[idx], ds.labels[idx]


def size(ds):
    return len(ds.ids)


def batches(loader):
    ds = loader.dataset
    return [tuple(loader.collate_fn([(ds.ids[i], ds.labels[i]) for i in idx])) for idx in loader.batch_sampler]
"""


def test_dataset_read_through_rewritten_given_helpers_scores_nothing(submission):
    # __len__ and __getitem__ left as stubs; the given item, size and batches read the stored ids
    # themselves (the checks used to index datasets and iterate loaders through them)
    ex = "s1_23_dataset"
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    source = _replace(source, "        return len(self.ids)\n", "        raise NotImplementedError\n")
    source = _replace(source, "        return self.ids[idx], self.labels[idx]\n", "        raise NotImplementedError\n")
    given = source[source.index("\ndef item(") :]
    source = source.replace(given, DATASET_LIES)
    report = grade(submission({ex: source}), "-e", ex)
    checks = _checks(report, ex)
    for name in (
        "test_listing_1_23_1_28_dataset",
        "test_ids_computed_once",
        "test_listing_1_29_loaders",
        "test_label_validation",
        "test_shuffle_each_pass",
        "test_short_and_long_texts",
    ):
        assert checks[name]["score"] == 0, f"{name}: {checks[name]['message']}"


def test_evaluation_mode_judged_through_a_given_model_without_dropout_scores_nothing(submission):
    # evaluate and collect_predictions never call model.eval(); the given TinyBERT was changed to
    # drop nothing, so training mode predicts like evaluation mode
    ex = "s1_23_evaluation"
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    source = _replace(source, "    model.eval()\n", "")
    source = _replace(
        source,
        "                 heads: int = 2, ff_dim: int = 64, dropout: float = 0.1):\n        super().__init__()\n",
        "                 heads: int = 2, ff_dim: int = 64, dropout: float = 0.1):\n        super().__init__()\n"
        "        dropout = 0.0\n",
    )
    report = grade(submission({ex: source}), "-e", ex)
    check = _checks(report, ex)["test_evaluation_mode"]
    assert check["score"] == 0, check["message"]


def test_greedy_judged_through_a_rewritten_logits_table_scores_nothing(submission):
    # greedy_generate takes the smallest logit; the given LogitsTable returns the table negated
    ex = "s1_01_next_token"
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    source = _replace(
        source, "        out.append(int(torch.argmax(model(out))))", "        out.append(int(torch.argmin(model(out))))"
    )
    source = _replace(
        source,
        "    def __call__(self, ids: list[int]) -> torch.Tensor:\n        return self.table[ids[-1]]",
        "    def __call__(self, ids: list[int]) -> torch.Tensor:\n        return -self.table[ids[-1]]",
    )
    report = grade(submission({ex: source}), "-e", ex)
    check = _checks(report, ex)["test_greedy_fresh"]
    assert check["score"] == 0, check["message"]


def test_device_judged_through_a_rewritten_cuda_available_scores_nothing(submission):
    # choose_device always says "cuda"; the given cuda_available always says True
    import torch

    if torch.cuda.is_available():
        return  # "cuda" is then the right answer: nothing to forge here
    ex = "s1_23_tokenizer"
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    source = _replace(source, '    return "cuda" if torch.cuda.is_available() else "cpu"', '    return "cuda"')
    source = _replace(source, "    return torch.cuda.is_available()", "    return True")
    report = grade(submission({ex: source}), "-e", ex)
    check = _checks(report, ex)["test_setup_and_device"]
    assert check["score"] == 0, check["message"]


# ----------------------------------------------------------------------------- the general rule
# A check may hand a given object of the student's file to the student's code, or build one, only
# where what it concludes does not rest on that object telling the truth. Each such use is listed
# here with the reason; any other use of a given helper by a check fails the test below, so a new
# check that trusts given code is caught before it ships.
TRUSTED_ANYWAY = {
    ("s1_04_bpe_train", "pair_counts"): "count_pairs as rows (tuple keys cannot cross the wire); counts written "
    "there are the exercise solved, and are compared with the grader's own",
    (
        "s1_04_byte_bpe",
        "from_file",
    ): "constructs the student's GPT2Tokenizer; its outputs are compared with the grader's",
    (
        "s1_04_byte_bpe",
        "from_rows",
    ): "constructs the student's GPT2Tokenizer; its outputs are compared with the grader's",
    ("s1_04_byte_bpe", "merge_bytes"): "bpe_merge on bytes (which cannot cross); merging written there is the "
    "exercise solved, compared with the grader's merges",
    ("s1_21_transfer", "Classifier"): "the model; its requires_grad flags are read by the runtime (trainable_of), "
    "its logits compared with the grader's",
    ("s1_23_evaluation", "TinyBERT"): "held to bert_reference.tiny_bert_problem (and its dropout) where its "
    "behaviour decides; predictions compared with the grader's",
    (
        "s1_23_evaluation",
        "make_loader",
    ): "batches the grader's data; the labels collected are compared with the grader's",
    ("s1_23_inference", "TinyBERT"): "predictions and saved weights are compared with the grader's values",
    (
        "s1_23_tokenizer",
        "from_file",
    ): "constructs the student's BertTokenizer; its outputs are compared with the grader's",
    (
        "s1_23_tokenizer",
        "from_rows",
    ): "constructs the student's BertTokenizer; its outputs are compared with the grader's",
    ("s1_23_training", "TinyBERT"): "held to bert_reference.tiny_bert_problem; what training achieved is measured "
    "with bert_reference.tiny_bert and the trained state_dict",
    ("s1_23_training", "make_loader"): "feeds the student's train; the result is measured by the grader's model",
    ("s1_23_training", "make_sgd"): "the step's result is compared with parameters computed by the grader",
}


def _given(stub: Path) -> tuple[set[str], set[str]]:
    """The given functions and classes of a stub (no stub raise in them), and the given methods of
    its exercise classes."""
    import ast

    from tests.generic_answers import _is_stub_raise

    def solved(node):
        return not any(_is_stub_raise(n) for n in ast.walk(node))

    top, methods = set(), set()
    for node in ast.parse(stub.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and solved(node):
            top.add(node.name)
        elif isinstance(node, ast.ClassDef):
            methods |= {
                m.name
                for m in node.body
                if isinstance(m, ast.FunctionDef) and solved(m) and not m.name.startswith("__")
            }
    return top, methods


def _uses(check_source: str, top: set[str], methods: set[str]) -> set[str]:
    """The given names a check module calls on the student's side (make_fixtures, which runs the
    reference solution in the grader, left out)."""
    import ast
    import re

    tree = ast.parse(check_source)
    tree.body = [n for n in tree.body if not (isinstance(n, ast.FunctionDef) and "fixtures" in n.name)]
    text = ast.unparse(tree)
    found = {n for n in top if re.search(rf"\bsub\.{n}\(|\bsub\.(new|get)\(['\"]{n}['\"]", text)}
    return found | {m for m in methods if re.search(rf"\.{m}\(", text)}


def test_no_check_trusts_given_code_of_the_students_file():
    from tests.conftest import EXERCISES, ROOT

    used = set()
    for stub in sorted((EXERCISES / "ch01").glob("s1_*.py")):
        checks = ROOT / "grader" / "checks" / f"test_{stub.stem}.py"
        if checks.exists():
            used |= {(stub.stem, name) for name in _uses(checks.read_text(), *_given(stub))}
    assert used - set(TRUSTED_ANYWAY) == set(), "checks that judge through given code of the student's file"
    # the detector sees what it must: the dataset's given helpers, and a check that would use them
    top, _ = _given(EXERCISES / "ch01" / "s1_23_dataset.py")
    assert {"WordEncoder", "item", "size", "batches"} <= top
    assert _uses('ds = sub.new("IMDBDataset", t, y, enc)\nx = sub.item(ds, 0)', top, set()) == {"item"}


# ----------------------------------------------------- what checks read is measured on the trusted side
# The s1_23_dataset checks count the encoder's calls to see that ids are computed once, in
# __init__. The encoder used to live in the worker, with its counter: code that re-encoded in
# __getitem__ and set the counter back gained 6 points. Now every call is answered (and counted)
# by the grader, under a labelling of the vocabulary the worker cannot know.
COUNTED = {
    "test_listing_1_23_1_28_dataset": 2,
    "test_ids_computed_once": 1,
    "test_datasets_split": 2,
    "test_datasets_split_loaders": 1,
}  # the checks that measure the encoder's use, and their points


def _dataset_class(body: str) -> str:
    """The solution of s1_23_dataset with its IMDBDataset replaced by `body` (a class named IMDBDataset)."""
    source = (SOLUTIONS / "ch01" / "s1_23_dataset.py").read_text()
    start = source.index("class IMDBDataset(Dataset):")
    end = source.index("\ndef collate(")
    return source[:start] + body.strip("\n") + "\n\n" + source[end:]


CHECKED = """
    def _check(self, texts, labels):
        texts, labels = list(texts), list(labels)
        if len(texts) != len(labels) or any(y not in (0, 1) for y in labels):
            raise ValueError("one label, 0 or 1, per text")
        return texts, labels
"""


def _vocab_literal() -> str:
    from grader.checks.test_s1_23_dataset import VOCAB

    return repr(list(VOCAB))


DATASET_ATTACKS = {
    # re-encodes in __getitem__, then sets the counter back
    "counter set back": """
class IMDBDataset(Dataset):
    def __init__(self, texts, labels, encode):
        self.texts, self.labels = self._check(texts, labels)
        self.encode = encode
        for text in self.texts:
            encode(text)

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        ids = self.encode(self.texts[idx])
        try:
            self.encode.calls -= 1
        except AttributeError:
            pass
        return torch.tensor(ids, dtype=torch.long), torch.tensor(self.labels[idx], dtype=torch.long)
"""
    + CHECKED,
    # wraps the encoder's class once __init__ is done, so that later calls do not count
    "class patched": """
class IMDBDataset(Dataset):
    def __init__(self, texts, labels, encode):
        self.texts, self.labels = self._check(texts, labels)
        self.encode = encode
        for text in self.texts:
            encode(text)
        cls = type(encode)
        if not getattr(cls, "_quiet", False):
            original = cls.__call__

            def quiet(enc, *args, **kwargs):
                out = original(enc, *args, **kwargs)
                try:
                    enc.calls -= 1
                except AttributeError:
                    pass
                return out
            cls.__call__, cls._quiet = quiet, True

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        ids = self.encode(self.texts[idx])
        return torch.tensor(ids, dtype=torch.long), torch.tensor(self.labels[idx], dtype=torch.long)
"""
    + CHECKED,
    # calls the encoder once per text in __init__ (the count is right) and throws the ids away;
    # __getitem__ encodes again with its own copy of the encoder (the course's vocabulary is public)
    "own copy of the encoder": """
class IMDBDataset(Dataset):
    def __init__(self, texts, labels, encode):
        self.texts, self.labels = self._check(texts, labels)
        for text in self.texts:
            encode(text)
        self.mine = WordEncoder(VOCAB, max_len=getattr(encode, "max_len", 32))

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        ids = self.mine(self.texts[idx])
        return torch.tensor(ids, dtype=torch.long), torch.tensor(self.labels[idx], dtype=torch.long)
"""
    + CHECKED,
    # encodes lazily, once per text object (a cache keyed on id(text)), and forges the count __init__ should have made
    "lazy cache, count forged": """
class IMDBDataset(Dataset):
    def __init__(self, texts, labels, encode):
        self.texts, self.labels = self._check(texts, labels)
        self.encode, self.cache = encode, {}
        try:
            encode.calls += len(self.texts)
        except AttributeError:
            pass

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, idx):
        text = self.texts[idx]
        if id(text) not in self.cache:
            self.cache[id(text)] = self.encode(text)
            try:
                self.encode.calls -= 1
            except AttributeError:
                pass
        return torch.tensor(self.cache[id(text)], dtype=torch.long), torch.tensor(self.labels[idx], dtype=torch.long)
"""
    + CHECKED,
}


@pytest.mark.parametrize("attack", sorted(DATASET_ATTACKS))
def test_dataset_that_encodes_again_scores_nothing_on_the_checks_that_count(submission, attack):
    ex = "s1_23_dataset"
    source = _dataset_class(DATASET_ATTACKS[attack]).replace(
        "PAD_ID = 50257", f"PAD_ID = 50257\nVOCAB = {_vocab_literal()}"
    )
    checks = _checks(grade(submission({ex: source}), "-e", ex), ex)
    assert {name: checks[name]["score"] for name in COUNTED} == dict.fromkeys(COUNTED, 0), {
        name: checks[name]["message"] for name in COUNTED
    }
    assert checks["test_collate"]["score"] == 2  # graded as usual elsewhere


DATASET_HONEST = {
    # the ids of every text in one padded tensor, with their lengths
    "one padded tensor": """
class IMDBDataset(Dataset):
    def __init__(self, texts, labels, encode):
        texts, labels = self._check(texts, labels)
        encoded = [encode(text) for text in texts]
        self.lengths = [len(ids) for ids in encoded]
        self.ids = torch.zeros(len(encoded), max(self.lengths, default=0), dtype=torch.long)
        for row, ids in enumerate(encoded):
            self.ids[row, :len(ids)] = torch.tensor(ids, dtype=torch.long)
        self.labels = torch.tensor(labels, dtype=torch.long)

    def __len__(self):
        return len(self.lengths)

    def __getitem__(self, idx):
        return self.ids[idx, :self.lengths[idx]], self.labels[idx]
"""
    + CHECKED,
    # a dict from index to (ids, label), the ids kept as lists
    "a dict of lists": """
class IMDBDataset(Dataset):
    def __init__(self, texts, labels, encode):
        texts, labels = self._check(texts, labels)
        self.items = {i: (list(encode(text)), int(label)) for i, (text, label) in enumerate(zip(texts, labels))}

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        ids, label = self.items[idx]
        return torch.tensor(ids, dtype=torch.long), torch.tensor(label, dtype=torch.long)
"""
    + CHECKED,
    # each distinct text encoded once (a cache by text) while __init__ runs; ids shared between equal texts
    "precomputed with a cache by text": """
class IMDBDataset(Dataset):
    def __init__(self, texts, labels, encode):
        texts, labels = self._check(texts, labels)
        seen = {}
        self.ids = []
        for text in texts:
            if text not in seen:
                seen[text] = torch.as_tensor(encode(text), dtype=torch.long)
            self.ids.append(seen[text])
        self.labels = [torch.tensor(y) for y in labels]

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, idx):
        return self.ids[idx], self.labels[idx]
"""
    + CHECKED,
}


@pytest.mark.parametrize("honest", sorted(DATASET_HONEST))
def test_honest_datasets_keep_full_marks_on_the_checks_that_count(submission, honest):
    ex = "s1_23_dataset"
    report = grade(submission({ex: _dataset_class(DATASET_HONEST[honest])}), "-e", ex)
    checks = _checks(report, ex)
    assert {n: c["score"] for n, c in checks.items()} == {n: c["max_score"] for n, c in checks.items()}, {
        n: c["message"] for n, c in checks.items() if c["score"] != c["max_score"]
    }


def test_a_flood_of_encoder_calls_fails_the_check_and_grading_goes_on(submission):
    # 20,000 calls of the grader's encoder in one call into the worker: more questions than the
    # grader answers in one call (Worker.MAX_QUESTIONS); the worker is ended, the next checks run
    ex = "s1_23_dataset"
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    source = _replace(
        source,
        "        self.ids = [torch.tensor(encode(text), dtype=torch.long) for text in texts]\n",
        "        for _ in range(20_000):\n            encode('good')\n"
        "        self.ids = [torch.tensor(encode(text), dtype=torch.long) for text in texts]\n",
    )
    checks = _checks(grade(submission({ex: source}), "-e", ex), ex)
    assert checks["test_ids_computed_once"]["score"] == 0
    assert (
        "questions" in checks["test_ids_computed_once"]["message"]
        or "valid" in checks["test_ids_computed_once"]["message"]
    ), checks["test_ids_computed_once"]["message"]
    assert checks["test_collate"]["score"] == 2


# The runtime's own given objects (grader/worker/runtime/given.py), which the checks build in the
# worker instead of the student's copies. They live in the worker, so the student's code can change
# them; a check may read back no count, log or state of theirs. Each use is listed here with why
# its verdict does not rest on the object; a helper whose use a check measures is forwarded instead
# (sub.forward: every call answered and counted by the grader).
RUNTIME_GIVEN = {
    ("s1_01_next_token", "LogitsTable"): "an input only: the generated ids are compared with ids the grader computes "
    "from the same table; nothing is read back from the object",
    ("s1_23_dataset", "hf_dataset"): "an input only: the split holds the grader's columns; what the student's "
    "dataset makes of it is read by the runtime's indexing and compared with the "
    "grader's values",
    ("s1_23_mlm", "generator"): "an input only: the draws mask_tokens makes with it are held to statistics the "
    "grader computes",
    ("s1_23_mlm", "embedding"): "an input only: the tied head's logits are compared with the grader's",
    ("s1_23_mlm", "after_call"): "a fact the worker reports (did the call change its argument): SECURITY.md's known "
    "limit on facts the worker reports",
    ("s1_23_mlm", "tied_gradient"): "a fact the worker reports (the gradient that reached the tied weight): "
    "SECURITY.md's known limit on facts the worker reports",
    **{
        (ex, "as_in_training"): "an input only (the regime a call runs in: grad on, floating arguments requiring "
        "grad, bf16 autocast when asked); its result is read like any returned value"
        for ex in (
            "s1_14_dropout",
            "s1_15_attention",
            "s1_23_bert_embedding",
            "s1_23_encoder_block",
            "s1_23_feed_forward",
            "s1_23_self_attention",
        )
    },
    ("s1_23_tokenizer", "cuda_available"): "a fact the worker reports (whether it sees a GPU; in bubblewrap it never "
    "does); code that makes torch.cuda.is_available() lie in the worker "
    "answers both sides of the comparison: SECURITY.md's known limit",
}
FORWARDED = {
    ("s1_23_dataset", "WordEncoder"): "its calls are answered, counted and logged by the check's "
    "TrustedEncoder, under a labelling of its own"
}


def test_no_check_reads_back_a_given_object_of_the_worker():
    import re

    from grader.worker.runtime import given
    from tests.conftest import ROOT

    built, forwarded = set(), set()
    for checks in sorted((ROOT / "grader" / "checks").glob("test_s1_*.py")):
        text = checks.read_text()
        ex = checks.stem.removeprefix("test_")
        built |= {(ex, name) for name in re.findall(r"\bsub\.given\(\s*['\"](\w+)", text)}
        if re.search(r"\bsub\.in_training\(", text):
            built.add((ex, "as_in_training"))
        forwarded |= {(ex, name) for name in re.findall(r"\bsub\.forward\(\s*['\"](\w+)", text)}
    assert built == set(RUNTIME_GIVEN), "given objects the checks build in the worker, unlisted or gone"
    assert forwarded == set(FORWARDED), "forwarded helpers, unlisted or gone"
    assert {name for _, name in built} <= set(given.GIVEN)
    assert {name for _, name in forwarded} <= set(given.FORWARDED) and not set(given.FORWARDED) & set(given.GIVEN)
    # no check reads a counter or log of a given object's: the dataset checks count on the trusted side
    dataset = (ROOT / "grader" / "checks" / "test_s1_23_dataset.py").read_text()
    assert 'attr("calls")' not in dataset and "enc.calls" in dataset


def test_tied_gradient_is_backward_from_the_gradient_bit_for_bit_and_a_wrong_shape_is_backward_s_error():
    """The runtime's tied_gradient reads backward(grad) as sum(logits * grad).backward() (without the
    0.3 s first-call import of sympy that backward(tensor) costs a worker): the same gradient, bit for
    bit; logits of another shape or dtype go to backward(grad) itself: its error for the shape, its
    own cast for the dtype."""
    import torch

    from grader.worker.runtime.given import tied_gradient

    g = torch.Generator().manual_seed(3)
    emb = torch.nn.Embedding(40, 16)
    dense = torch.nn.Linear(16, 16)

    class Head(torch.nn.Module):
        def __init__(self, cut=None, dtype=None):
            super().__init__()
            self.dense, self.cut, self.dtype = dense, cut, dtype

        def forward(self, h):
            out = torch.nn.functional.linear(torch.nn.functional.gelu(self.dense(h)), emb.weight)[..., : self.cut]
            return out if self.dtype is None else out.to(self.dtype)

    head = Head()

    hidden, upstream = torch.randn(2, 6, 16, generator=g), torch.randn(2, 6, 40, generator=g)
    grad, logits = tied_gradient(head, emb, hidden, upstream)
    emb.zero_grad(set_to_none=True)
    head(hidden).backward(upstream)
    assert torch.equal(grad, emb.weight.grad) and torch.equal(logits, head(hidden).detach())
    for wrong in (Head(cut=39), Head(dtype=torch.float64)):  # backward's error; backward's own cast
        try:
            got = tied_gradient(wrong, emb, hidden, upstream)[0]
        except RuntimeError as e:
            got = str(e)
        emb.zero_grad(set_to_none=True)
        try:
            wrong(hidden).backward(upstream)
            want = emb.weight.grad
        except RuntimeError as e:
            want = str(e)
        assert type(got) is type(want) and (got == want if isinstance(got, str) else torch.equal(got, want)), (
            got,
            want,
        )
        assert isinstance(got, str) == (wrong.cut is not None), got
