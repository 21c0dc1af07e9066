"""Graded submissions of s1_21_transfer: plausible wrong answers lose points with a named mistake."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_21_transfer"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
MAX = 11


def _replace(source, old, new):
    assert old in source, old
    return source.replace(old, new)


def _failed(report):
    return {c["name"]: c["message"] for c in checks_of(report, EX) if c["status"] != "passed"}


def test_negative_slice_and_tensor_count(submission):
    wrong = _replace(SOURCE, "for block in layers[len(layers) - n:]:", "for block in layers[-n:]:")
    wrong = _replace(
        wrong,
        "return sum(p.numel() for p in model.parameters() if p.requires_grad)",
        "return sum(1 for p in model.parameters() if p.requires_grad)",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 5
    assert "layers[-0:]" in failed["test_unfreeze_top"]
    assert "numel" in failed["test_freeze_encoder"] and "numel" in failed["test_count_trainable"]


def test_whole_model_frozen_and_no_prefix(submission):
    wrong = _replace(
        SOURCE,
        "    model.encoder.requires_grad_(False)\n    model.head.requires_grad_(True)",
        "    model.requires_grad_(False)",
    )
    wrong = _replace(wrong, 'name = "encoder." + key', "name = key")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= 2
    assert "the head must stay trainable" in failed["test_freeze_encoder"]
    assert "copied nothing" in failed["test_load_matching_checkpoint"]


def test_unfreeze_without_freezing_first(submission):
    wrong = _replace(SOURCE, "    freeze_encoder(model)\n    for block", "    for block")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == {"test_unfreeze_top", "test_unfreeze_top_from_trainable"}  # public, and hidden
    for message in failed.values():
        assert "also freeze the embeddings" in message


def test_other_correct_answer_scores_full_marks(submission):
    body_load = SOURCE[SOURCE.index("    # BEGIN SOLUTION copy each") : SOURCE.index("def freeze_encoder")]
    other = SOURCE.replace(
        body_load,
        (
            "    result = classifier.load_state_dict({'encoder.' + k: v for k, v in encoder_state_dict.items()},\n"
            "                                        strict=False)\n"
            "    return result.missing_keys, [k.removeprefix('encoder.') for k in result.unexpected_keys]\n\n\n"
        ),
    )
    other = _replace(
        other,
        "    model.encoder.requires_grad_(False)\n    model.head.requires_grad_(True)",
        "    for name, p in model.named_parameters():\n        p.requires_grad = not name.startswith('encoder.')",
    )
    other = _replace(
        other,
        "    for block in layers[len(layers) - n:]:\n        block.requires_grad_(True)",
        "    for i, block in enumerate(layers):\n        for p in block.parameters():\n"
        "            p.requires_grad_(i >= len(layers) - n)",
    )
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)
