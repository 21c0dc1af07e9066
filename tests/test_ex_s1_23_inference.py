"""Graded submissions of s1_23_inference: plausible wrong answers lose points with a named mistake."""

from grader.checks.test_s1_23_inference import BOOK_TEXTS
from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_inference"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
MAX = 12


def _replace(source, old, new):
    assert old in source, old
    return source.replace(old, new)


def _failed(report):
    return {c["name"]: c["message"] for c in checks_of(report, EX) if c["status"] != "passed"}


def test_load_trusting_shapes_and_staying_in_training_mode(submission):
    wrong = _replace(
        SOURCE,
        """    saved, own = checkpoint["config"], model.config
    differ = [k for k in sorted(set(saved) | set(own)) if saved.get(k) != own.get(k)]
    if differ:
        details = ", ".join(f"{k}: checkpoint {saved.get(k)!r}, model {own.get(k)!r}" for k in differ)
        raise ValueError(f"{path} was saved from another configuration ({details})")
    model.load_state_dict(checkpoint["state_dict"])
    model.eval()""",
        """    model.load_state_dict(checkpoint["state_dict"])""",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "evaluation mode" in failed["test_listing_1_41_1_42_save_and_load"]
    assert "same shapes" in failed["test_load_refuses_another_configuration"]
    assert score_of(r, EX) == MAX - 5


def test_no_folder_created(submission):
    wrong = _replace(SOURCE, "    if folder:\n        os.makedirs(folder, exist_ok=True)\n", "")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "save_checkpoint" in failed["test_listing_1_41_1_42_save_and_load"]
    assert "os.makedirs" in failed["test_listing_1_41_1_42_save_and_load"]
    assert score_of(r, EX) <= MAX - 5


def test_predict_without_mask_or_empty_check(submission):
    wrong = _replace(SOURCE, "    mask = (ids != PAD_ID).long()\n", "    mask = torch.ones_like(ids)\n")
    wrong = _replace(
        wrong,
        """    for text in texts:
        if not text.strip():
            raise ValueError("cannot classify an empty text")
""",
        "",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "without a padding mask" in failed["test_predict_new_reviews"]
    assert "must raise ValueError" in failed["test_predict_odd_input"]
    assert score_of(r, EX) <= MAX - 3


def test_other_correct_answer_scores_full_marks(submission):
    start = SOURCE.index("    # BEGIN SOLUTION create the folder")
    end = SOURCE.index("def predict(")
    other = (
        SOURCE[:start]
        + '''    # BEGIN SOLUTION
    if os.path.dirname(path):
        os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save({"weights": {k: v.clone() for k, v in model.state_dict().items()},
                "config": model.config, "tokenizer": TOKENIZER_INFO}, path)
    # END SOLUTION


def load_checkpoint(model: nn.Module, path: str) -> dict:
    """Load a checkpoint."""
    # BEGIN SOLUTION
    data = torch.load(path, map_location="cpu", weights_only=True)
    for key in model.config:
        if data["config"][key] != model.config[key]:
            raise ValueError(f"config mismatch for {key}: {data['config'][key]} != {model.config[key]}")
    model.load_state_dict(data["weights"], strict=True)
    model.train(False)
    return dict(data["tokenizer"])
    # END SOLUTION


'''
        + SOURCE[end:]
    )
    other = _replace(
        other,
        """    for text in texts:
        if not text.strip():
            raise ValueError("cannot classify an empty text")
    if not texts:
        return []
    ids = torch.tensor([encode(text) for text in texts])
    mask = (ids != PAD_ID).long()
    model.eval()
    with torch.no_grad():
        return model(ids, mask).argmax(dim=1).tolist()""",
        """    model.eval()
    out = []
    for text in texts:
        if len(tokenize(text)) == 0:
            raise ValueError(f"nothing to classify in {text!r}")
        ids = torch.tensor(encode(text)).unsqueeze(0)
        with torch.no_grad():
            out.append(int(model(ids, ids.ne(PAD_ID).long()).argmax()))
    return out""",
    )
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)


def test_book_texts_lack_the_phrases_the_prose_cites():
    """ERRATA E-1.23-s: the prose after listing 1.43 credits words that the two example texts do not contain."""
    positive, negative = (t.lower() for t in BOOK_TEXTS)
    assert "brilliantly" in positive and "excellent" in positive and "highly recommended" in positive
    assert "garbage" in negative and "bad" in negative
    for phrase in ("waste", "cringe", "浪费", "畏缩"):
        assert phrase not in negative and phrase not in positive
