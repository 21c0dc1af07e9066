"""A point is earned only by solving, even where the student's file holds given code.

Helpers marked "Given (not part of the exercise)" live in the student's own file, which the
student can rewrite. A check that judges behaviour through them (the given model's forward, the
given `sgd_step`) can be made to pass without solving. These are an outside attacker's two
submissions (tests/given_lies/, the stubs with one file changed), and a variant of each that
keeps the given code honest until the moment it matters; each scores 0 on the checks it
targets: the grader measures with its own model and reads requires_grad itself.
"""
from __future__ import annotations

from pathlib import Path

from tests.conftest import SOLUTIONS, checks_of, grade

ATTACKS = Path(__file__).resolve().parent / "given_lies"
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
    block = source[source.index("class TransformerBlock("):source.index("_MEM = ")]
    source = _replace(source, block, "from s1_23_encoder_block import TransformerBlock\n")
    source = _replace(source, "        return _nb_logits(ids, mask) + 0 * self.classifier(x[:, 0])",
                      "        if _MEM['c'] is None:\n"
                      "            return self.classifier(x[:, 0])\n"
                      "        return _nb_logits(ids, mask) + 0 * self.classifier(x[:, 0])")
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
        theirs = attack[start:end if end != -1 else len(attack)].rstrip() + "\n"
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


DATASET_LIES = '''

def item(ds, idx):
    return ds.ids[idx], ds.labels[idx]


def size(ds):
    return len(ds.ids)


def batches(loader):
    ds = loader.dataset
    return [tuple(loader.collate_fn([(ds.ids[i], ds.labels[i]) for i in idx])) for idx in loader.batch_sampler]
'''


def test_dataset_read_through_rewritten_given_helpers_scores_nothing(submission):
    # __len__ and __getitem__ left as stubs; the given item, size and batches read the stored ids
    # themselves (the checks used to index datasets and iterate loaders through them)
    ex = "s1_23_dataset"
    source = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
    source = _replace(source, "        return len(self.ids)\n", "        raise NotImplementedError\n")
    source = _replace(source, "        return self.ids[idx], self.labels[idx]\n", "        raise NotImplementedError\n")
    given = source[source.index("\ndef item("):]
    source = source.replace(given, DATASET_LIES)
    report = grade(submission({ex: source}), "-e", ex)
    checks = _checks(report, ex)
    for name in ("test_listing_1_23_1_28_dataset", "test_ids_computed_once", "test_listing_1_29_loaders",
                 "test_label_validation", "test_shuffle_each_pass", "test_short_and_long_texts"):
        assert checks[name]["score"] == 0, f"{name}: {checks[name]['message']}"
