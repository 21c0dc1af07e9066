"""Graded submissions of s1_23_tokenizer: plausible wrong answers lose points with a named mistake,
and a differently written correct answer scores full marks.

The GPT-2 checks need gpt2.tiktoken (`python -m grader.capstone.gpt2 fetch`); without it they skip, and the
assertions below only count the checks that ran.
"""

from tests.conftest import SOLUTIONS, checks_of, grade

EX = "s1_23_tokenizer"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()


def _swap(source: str, begin: str, body: str) -> str:
    """Replace the solution block whose BEGIN line starts with `begin` by `body` (indented like the block)."""
    start = source.index(f"# BEGIN SOLUTION {begin}")
    line_start = source.rindex("\n", 0, start) + 1
    indent = source[line_start:start]
    end = source.index("# END SOLUTION", start) + len("# END SOLUTION")
    code = "\n".join(indent + line if line else line for line in body.strip("\n").splitlines())
    return source[:line_start] + code + source[end:]


def _graded(submission, source):
    r = grade(submission({EX: source}), "-e", EX)
    ran = {c["name"]: c for c in checks_of(r, EX) if c["status"] != "skipped"}
    failed = {name: c["message"] for name, c in ran.items() if c["status"] != "passed"}
    lost = sum(c["max_score"] - c["score"] for c in ran.values())
    return ran, failed, lost


def test_book_encode_and_fixed_gpt2_ids(submission):
    """tokenizer.encode(text) as in listing 1.26, and the special ids typed in as GPT-2's numbers."""
    wrong = _swap(
        SOURCE,
        "base_vocab_size from",
        """
self.base_vocab_size = 50257
self.pad_id = 50257
self.cls_id = 50258
self.sep_id = 50259
self.vocab_size = 50260
""",
    )
    wrong = _swap(wrong, "encode as ordinary text", "return self.base.encode(text)")
    ran, failed, lost = _graded(submission, wrong)
    assert lost >= 8, failed
    assert "use base.n_vocab" in failed["test_special_ids_follow_the_base"]
    assert "GPT-2's fixed numbers" in failed["test_encode_and_truncate_small_table"]
    assert "encode_ordinary" in failed["test_special_token_strings_are_text"]
    if "test_listing_1_26_encode" in ran:  # the review with <|endoftext|> raises in the book's encode
        assert "encode_ordinary" in failed["test_listing_1_26_encode"]
        assert "test_listing_1_24_1_25_vocabulary" not in failed  # right for GPT-2 itself


def test_cut_after_framing(submission):
    wrong = _swap(
        SOURCE,
        "frame the truncated ids",
        """
ids = ([self.cls_id] + self.text_ids(text) + [self.sep_id])[:self.max_len]
if pad:
    ids += [self.pad_id] * (self.max_len - len(ids))
return ids
""",
    )
    ran, failed, lost = _graded(submission, wrong)
    assert lost >= 5, failed
    assert "lost its [SEP]" in failed["test_edge_cases"]
    assert "lost its [SEP]" in failed["test_encode_and_truncate_small_table"]
    assert "test_decode" not in failed and "test_special_ids_follow_the_base" not in failed
    if "test_listing_1_26_encode" in ran:
        assert "lost its [SEP]" in failed["test_listing_1_26_encode"]


def test_head_and_tail_lengths_swapped(submission):
    wrong = _swap(
        SOURCE,
        "keep everything that fits",
        """
budget = self.max_len - 2
if len(ids) <= budget:
    return list(ids)
if self.truncation == "head":
    return list(ids[:budget])
tail = budget - self.head_len
return list(ids[:tail]) + (list(ids[len(ids) - self.head_len:]) if self.head_len else [])
""",
    )
    ran, failed, lost = _graded(submission, wrong)
    assert 3 <= lost <= 8, failed
    assert "head and tail lengths swapped" in failed["test_encode_and_truncate_small_table"]
    assert "head and tail lengths swapped" in failed["test_head_tail_without_a_tail"]
    assert "test_listing_1_26_encode" not in failed  # the book's head truncation is right
    if "test_gpt2_head_tail" in ran:
        assert "head and tail lengths swapped" in failed["test_gpt2_head_tail"]


def test_negative_zero_tail_is_named_by_a_public_check(submission):
    """ids[-tail:] is right until head_len = max_len - 2: then tail is 0 and ids[-0:] is every id."""
    wrong = SOURCE.replace(
        "return list(ids[:self.head_len]) + list(ids[len(ids) - tail:])",
        "return list(ids[:self.head_len]) + list(ids[-tail:])",
    )
    assert wrong != SOURCE
    ran, failed, lost = _graded(submission, wrong)
    assert "ids[-0:] is the whole list" in failed["test_head_tail_without_a_tail"], failed
    assert "This looks like ids[-tail:] with tail" in failed["test_edge_cases"]  # hidden: named, its numbers concealed
    assert set(failed) <= {"test_head_tail_without_a_tail", "test_edge_cases", "test_random_texts_match_reference"}


def test_other_correct_answer_scores_full_marks(submission):
    other = _swap(SOURCE, "ask torch", 'return torch.device("cuda" if torch.cuda.is_available() else "cpu").type')
    other = _swap(
        other,
        "base_vocab_size from",
        """
n = base.n_vocab
self.base_vocab_size, self.pad_id, self.cls_id, self.sep_id = n, n, n + 1, n + 2
self.vocab_size = n + 3
""",
    )
    other = _swap(other, "encode as ordinary text", "return self.base.encode(text, disallowed_special=())")
    other = _swap(
        other,
        "keep everything that fits",
        """
room = self.max_len - 2
if len(ids) <= room:
    return ids[:]
if self.truncation == "head" or room == self.head_len:
    return ids[:room] if self.truncation == "head" else ids[:self.head_len]
return ids[:self.head_len] + ids[-(room - self.head_len):]
""",
    )
    other = _swap(
        other,
        "frame the truncated ids",
        """
body = [self.cls_id, *self.truncate(self.text_ids(text)), self.sep_id]
return body + [self.pad_id] * (self.max_len - len(body)) if pad else body
""",
    )
    other = _swap(
        other, "drop pad, cls and sep ids", "return self.base.decode([i for i in ids if i < self.base_vocab_size])"
    )
    ran, failed, lost = _graded(submission, other)
    assert not failed and lost == 0, failed
    assert len(ran) >= 7
