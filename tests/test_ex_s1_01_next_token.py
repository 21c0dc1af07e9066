"""Real submissions of §1.1 (next-token prediction) graded end to end: plausible mistakes lose
the right points with a message that names them; other correct samplers score full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_01_next_token"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
FULL = 23


def variant(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def by_name(report) -> dict:
    return {c["name"]: c for c in checks_of(report, EX)}


def test_temperature_multiplied_instead_of_divided(submission):
    wrong = variant(
        "return torch.softmax(logits / temperature, dim=-1)", "return torch.softmax(logits * temperature, dim=-1)"
    )
    wrong = wrong.replace(
        "torch.softmax(logits.to(torch.float64) / temperature, dim=-1)",
        "torch.softmax(logits.to(torch.float64) * temperature, dim=-1)",
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    checks = by_name(r)
    for name in ("test_probability_table_fresh", "test_sampling_frequencies"):
        assert checks[name]["status"] == "failed"
        assert (
            "multiplied by the temperature" in checks[name]["message"]
            or "multiplying the logits by the temperature" in checks[name]["message"]
        ), checks[name]
    # issue 28: the listing's temperature 1 hides it, so the public check also reads temperature 2 and names it
    assert checks["test_listing_top_k"]["status"] == "failed"
    assert "multiplying the logits by the temperature" in checks["test_listing_top_k"]["message"]


def test_sampling_from_the_global_generator_is_not_reproducible(submission):
    wrong = variant("generator = torch.Generator().manual_seed(seed) if seed is not None else None", "generator = None")
    r = grade(submission({EX: wrong}), "-e", EX)
    checks = by_name(r)
    assert score_of(r, EX) == FULL - 3
    for name in ("test_same_seed_same_tokens", "test_seeded_reproducibility"):  # public, and hidden
        failed = checks[name]
        assert failed["status"] == "failed" and "torch.Generator seeded with `seed`" in failed["message"]


def test_swapped_counts_and_top_k_of_logits(submission):
    """Two independent mistakes in one submission: each check names its own."""
    wrong = variant("(ids[:-1], ids[1:])", "(ids[1:], ids[:-1])")
    wrong = wrong.replace("probs = torch.softmax(logits, dim=-1)\n    values", "probs = logits\n    values")
    r = grade(submission({EX: wrong}), "-e", EX)
    checks = by_name(r)
    assert checks["test_bigram_counts"]["status"] == "failed"
    assert "rows and columns swapped" in checks["test_bigram_counts"]["message"]
    assert checks["test_bigram_fresh_corpus"]["status"] == "failed"
    assert "the logits, not probabilities" in checks["test_listing_top_k"]["message"]
    assert "the logits, not probabilities" in checks["test_top_k_fresh"]["message"]
    assert checks["test_sampling_frequencies"]["status"] == "passed"


def test_greedy_that_predicts_from_the_prompt_only(submission):
    wrong = variant("out.append(int(torch.argmax(model(out))))", "out.append(int(torch.argmax(model(list(ids)))))")
    r = grade(submission({EX: wrong}), "-e", EX)
    failed = by_name(r)["test_listing_greedy_generation"]
    assert failed["status"] == "failed" and "predicted from the prompt alone" in failed["message"]
    assert by_name(r)["test_greedy_fresh"]["status"] == "failed"


def test_other_correct_answers_score_full_marks(submission):
    """Counting with a loop, torch.topk (ties in its own order), Gumbel-max sampling from the
    same generator, and a greedy loop that feeds only the last id (a bigram needs no more)."""
    ok = variant(
        "        ids = torch.tensor([self.stoi[w] for w in words], dtype=torch.int64)\n"
        "        self.counts = torch.zeros(len(self.vocab), len(self.vocab), dtype=torch.int64)\n"
        "        self.counts.index_put_((ids[:-1], ids[1:]), torch.ones(len(ids) - 1, dtype=torch.int64), accumulate=True)\n",
        "        self.counts = torch.zeros(len(self.vocab), len(self.vocab), dtype=torch.long)\n"
        "        for a, b in zip(words, words[1:]):\n"
        "            self.counts[self.stoi[a], self.stoi[b]] += 1\n",
    )
    ok = ok.replace(
        "    probs = torch.softmax(logits, dim=-1)\n    values, ids = torch.sort(probs, descending=True, stable=True)\n"
        "    return values[:k], ids[:k]",
        "    return torch.topk(torch.softmax(logits, dim=-1), k)",
    )
    ok = ok.replace(
        "    probs = torch.softmax(logits.to(torch.float64) / temperature, dim=-1)\n"
        "    return torch.multinomial(probs, num_samples, replacement=True, generator=generator)",
        "    u = torch.rand(num_samples, logits.shape[-1], generator=generator, dtype=torch.float64)\n"
        "    gumbel = -torch.log(-torch.log(u.clamp_min(1e-300)))\n"
        "    return torch.argmax(logits.to(torch.float64) / temperature + gumbel, dim=-1)",
    )
    assert "gumbel" in ok and "torch.topk" in ok and "for a, b in zip" in ok
    r = grade(submission({EX: ok}), "-e", EX)
    assert score_of(r, EX) == FULL, [c for c in checks_of(r, EX) if c["status"] != "passed"]
