"""Graded submissions of s1_23_dataset: plausible wrong answers lose points with a named mistake,
and a differently written correct answer scores full marks."""

import pytest

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_23_dataset"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
MAX = 16


def _swap(source: str, begin: str, body: str) -> str:
    """Replace the solution block whose BEGIN line starts with `begin` by `body` (indented like the block)."""
    start = source.index(f"# BEGIN SOLUTION {begin}")
    line_start = source.rindex("\n", 0, start) + 1
    indent = source[line_start:start]
    end = source.index("# END SOLUTION", start) + len("# END SOLUTION")
    code = "\n".join(indent + line if line else line for line in body.strip("\n").splitlines())
    return source[:line_start] + code + source[end:]


def _failed(report):
    return {c["name"]: c["message"] for c in checks_of(report, EX) if c["status"] != "passed"}


def test_book_dataset_encodes_in_getitem(submission):
    """Listing 1.28 as printed: keep the texts, encode in __getitem__, no label check."""
    wrong = _swap(
        SOURCE,
        "check lengths and labels",
        """
self.texts = texts
self.labels = labels
self.encode = encode
""",
    )
    wrong = _swap(wrong, "the number of texts", "return len(self.texts)")
    wrong = _swap(
        wrong,
        "look up the stored",
        """
return torch.tensor(self.encode(self.texts[idx])), torch.tensor(self.labels[idx])
""",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 4, failed
    assert "encode each text exactly once, in __init__" in failed["test_listing_1_23_1_28_dataset"]
    assert "must look up the stored ids, not encode again" in failed["test_ids_computed_once"]
    assert "must raise ValueError" in failed["test_label_validation"]
    assert "encode each text exactly once, in __init__" in failed["test_datasets_split"]
    assert "test_collate" not in failed and "test_collate_fresh" not in failed


def test_fixed_padding_and_no_shuffle(submission):
    wrong = _swap(
        SOURCE,
        "a pad_id-filled",
        """
out = torch.full((len(batch), 32), pad_id, dtype=torch.long)
for row, (ids, _) in enumerate(batch):
    out[row, :len(ids)] = ids
mask = (out != pad_id).long()
labels = torch.stack([label for _, label in batch])
return out, mask, labels
""",
    )
    wrong = wrong.replace("shuffle=True, collate_fn=collate_fn", "shuffle=False, collate_fn=collate_fn")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert score_of(r, EX) <= MAX - 6, failed
    for name in ("test_collate", "test_listing_1_29_loaders"):
        assert "padded to the encoder's max_len (32): pad each batch only to its longest" in failed[name]
    assert "reshuffle at every pass" in failed["test_shuffle_each_pass"]
    assert "test_ids_computed_once" not in failed


def test_inverted_mask(submission):
    wrong = SOURCE.replace("    mask = (out != pad_id).long()\n", "    mask = (out == pad_id).long()\n")
    assert wrong != SOURCE
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert "the mask is inverted" in failed["test_collate"]


def test_other_correct_answer_scores_full_marks(submission):
    other = _swap(
        SOURCE,
        "check lengths and labels",
        """
labels = list(labels)
if len(labels) != len(texts) or any(y not in (0, 1) for y in labels):
    raise ValueError("need one label, 0 or 1, per text")
self.items = [(torch.as_tensor(encode(t), dtype=torch.long), torch.tensor(int(y))) for t, y in zip(texts, labels)]
""",
    )
    other = _swap(other, "the number of texts", "return len(self.items)")
    other = _swap(other, "look up the stored", "return self.items[idx]")
    other = _swap(
        other,
        "a pad_id-filled",
        """
from torch.nn.utils.rnn import pad_sequence
ids = pad_sequence([x for x, _ in batch], batch_first=True, padding_value=pad_id)
lengths = torch.tensor([len(x) for x, _ in batch])
mask = (torch.arange(ids.shape[1])[None, :] < lengths[:, None]).long()
return ids, mask, torch.tensor([int(y) for _, y in batch])
""",
    )
    other = _swap(
        other,
        "two DataLoaders",
        """
import functools
from torch.utils.data import RandomSampler
fn = functools.partial(collate, pad_id=pad_id)
g = None if seed is None else torch.Generator().manual_seed(seed)
return (DataLoader(train_ds, batch_size=batch_size, sampler=RandomSampler(train_ds, generator=g), collate_fn=fn),
        DataLoader(test_ds, batch_size=batch_size, collate_fn=fn))
""",
    )
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)


SPLIT_CHECKS = ("test_datasets_split", "test_datasets_split_labels", "test_datasets_split_loaders")


def test_lists_only_answer_loses_the_datasets_split_checks(submission):
    """Right for lists, but refuses what load_dataset("imdb")["train"]["text"] is: a datasets.Column."""
    wrong = SOURCE.replace(
        "        texts, labels = list(texts), list(labels)  # a datasets.Column is read once, here\n",
        "        if not isinstance(texts, list) or not isinstance(labels, list):\n"
        '            raise TypeError("texts and labels must be lists")\n',
    )
    assert wrong != SOURCE
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = _failed(r)
    assert set(failed) == set(SPLIT_CHECKS), failed
    assert score_of(r, EX) == MAX - 4
    message = failed["test_datasets_split"]
    assert 'IMDBDataset(split["text"], split["label"], encode) with a split of 21 reviews' in message
    assert "raised TypeError: texts and labels must be lists" in message
    assert "datasets.Column objects, not lists" in message
    assert "texts and labels must be lists" not in failed["test_datasets_split_labels"]  # hidden: no text of theirs


def test_columns_used_as_they_come_score_full_marks(submission):
    """The naive code listing 1.28 invites: validate and convert the columns directly
    (torch.tensor of a datasets.Column reads it row by row). The split checks hand over a real
    datasets.Column: the answer raises on any other sequence that is not a list."""
    other = _swap(
        SOURCE,
        "check lengths and labels",
        """
if not isinstance(texts, list) and type(texts).__module__ + "." + type(texts).__name__ != "datasets.arrow_dataset.Column":
    raise TypeError(f"not a list or a datasets.Column: {type(texts)}")
if len(texts) != len(labels) or any(y not in (0, 1) for y in labels):
    raise ValueError("one label, 0 or 1, per text")
self.ids = [torch.tensor(encode(t), dtype=torch.long) for t in texts]
self.labels = torch.tensor(labels, dtype=torch.long)
""",
    )
    r = grade(submission({EX: other}), "-e", EX)
    assert score_of(r, EX) == MAX, _failed(r)


@pytest.mark.parametrize(
    "check, says",
    [
        ("            if label not in (0, 1):\n", "with a label 2 must raise ValueError"),
        ("        if len(texts) != len(labels):\n", "with 3 texts, 2 labels must raise ValueError"),
    ],
)
def test_a_validation_left_out_fails_a_public_check(submission, check, says):
    """Issue 28: a dataset that accepts labels other than 0 and 1 (or texts and labels of different
    lengths), which the docstring refuses, lost hidden points only. The public test_label_validation
    names it now."""
    assert check in SOURCE
    wrong = SOURCE.replace(check, check.replace("if ", "if False and "))
    r = grade(submission({EX: wrong}), "-e", EX, "--public-only")
    failed = _failed(r)
    assert set(failed) == {"test_label_validation"}, set(failed)
    assert says in failed["test_label_validation"], failed
