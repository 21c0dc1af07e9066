"""Real submissions of §1.3 (tokenizers) graded end to end: plausible mistakes lose the right
points with a message that names them; a differently written correct answer scores full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_03_tokenizers"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
FULL = 11


def variant(old: str, new: str, source: str = SOURCE) -> str:
    assert old in source, old
    return source.replace(old, new)


def by_name(report) -> dict:
    return {c["name"]: c for c in checks_of(report, EX)}


def test_decode_keeps_spaces_before_punctuation(submission):
    wrong = variant('        return re.sub(r" ([,.!?;:])", r"\\1", text)', "        return text")
    r = grade(submission({EX: wrong}), "-e", EX)
    checks = by_name(r)
    for name in ("test_hello_world", "test_word_limits", "test_word_tokenizer_fresh"):
        assert checks[name]["status"] == "failed", name
        assert "no space before , . ! ? ; or :" in checks[name]["message"], checks[name]
    assert "'Hello , world !'" in checks["test_hello_world"]["message"]
    assert "Hello , world" not in checks["test_word_tokenizer_fresh"]["message"]
    assert score_of(r, EX) == FULL - 6


def test_unknown_word_raises_instead_of_unk(submission):
    wrong = variant(
        "return [self.stoi.get(tok, 0) for tok in split_words(text)]",
        "return [self.stoi[tok] for tok in split_words(text)]",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    checks = by_name(r)
    assert score_of(r, EX) == FULL - 4
    for name in ("test_word_limits", "test_word_tokenizer_fresh"):
        assert "raised KeyError" in checks[name]["message"] and "id `0`" in checks[name]["message"]


def test_unsorted_vocabulary_and_bytes_as_characters(submission):
    wrong = variant("self.vocab = [UNK] + sorted(set(text))", "self.vocab = [UNK] + list(dict.fromkeys(text))")
    wrong = variant('"bytes": len(text.encode("utf-8"))', '"bytes": len(text)', wrong)
    r = grade(submission({EX: wrong}), "-e", EX)
    checks = by_name(r)
    assert "must be sorted" in checks["test_hello_world"]["message"]
    assert "must be sorted" in checks["test_char_tokenizer_fresh"]["message"]
    assert checks["test_ascii_vocabulary"]["status"] == "failed"
    assert "é takes two" in checks["test_ascii_vocabulary"]["message"]
    assert checks["test_word_limits"]["status"] == "passed"


def test_other_correct_answer_scores_full_marks(submission):
    ok = variant(
        '    return re.findall(r"\\w+|[^\\w\\s]", text)',
        '    return [t for t in re.split(r"(\\W)", text) if t and not t.isspace()]',
    )
    ok = variant(
        "        self.vocab = [UNK] + sorted(set(text))\n        self.stoi = {ch: i for i, ch in enumerate(self.vocab)}",
        "        self.vocab = [UNK]\n        for ch in sorted({c for c in text}):\n            self.vocab.append(ch)\n"
        "        self.stoi = dict(zip(self.vocab, range(len(self.vocab))))",
        ok,
    )
    ok = variant(
        '        return "".join(self.vocab[i] for i in ids)',
        '        out = ""\n        for i in ids:\n            out += self.vocab[i]\n        return out',
        ok,
    )
    ok = variant('"words": len(split_words(text))', '"words": sum(1 for _ in re.finditer(r"\\w+|[^\\w\\s]", text))', ok)
    r = grade(submission({EX: ok}), "-e", EX)
    assert score_of(r, EX) == FULL, [c for c in checks_of(r, EX) if c["status"] != "passed"]
