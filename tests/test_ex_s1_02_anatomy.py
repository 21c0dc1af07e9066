"""Real submissions of §1.2 (anatomy) graded end to end: plausible mistakes lose the right
points with a message that names them; a differently written correct answer scores full marks."""

from tests.conftest import SOLUTIONS, checks_of, grade, score_of

EX = "s1_02_anatomy"
SOURCE = (SOLUTIONS / f"ch01/{EX}.py").read_text()
FULL = 8


def variant(old: str, new: str) -> str:
    assert old in SOURCE, old
    return SOURCE.replace(old, new)


def by_name(report) -> dict:
    return {c["name"]: c for c in checks_of(report, EX)}


def test_zero_based_block_names(submission):
    wrong = variant("for i in range(1, n_layers + 1):", "for i in range(n_layers):")
    r = grade(submission({EX: wrong}), "-e", EX)
    checks = by_name(r)
    assert score_of(r, EX) == FULL - 4
    assert "wrong stage names" in checks["test_listing_stage_shapes"]["message"]
    assert "block_0" in checks["test_listing_stage_shapes"]["message"]  # public: names the unexpected stage


def test_probabilities_for_every_position(submission):
    wrong = variant(
        'shapes["next_token_probs"] = (batch, vocab_size)', 'shapes["next_token_probs"] = (batch, seq_len, vocab_size)'
    )
    r = grade(submission({EX: wrong}), "-e", EX)
    msg = by_name(r)["test_listing_stage_shapes"]["message"]
    assert "only the last position predicts the next token" in msg and "(2, 50257)" in msg
    hidden = by_name(r)["test_stage_shapes_other_configs"]
    assert hidden["status"] == "failed" and "only the last position" in hidden["message"]
    assert "expected" not in hidden["message"]


def test_output_stage_from_the_first_position(submission):
    wrong = variant("logits = hidden[:, -1, :] @ W_out", "logits = hidden[:, 0, :] @ W_out")
    r = grade(submission({EX: wrong}), "-e", EX)
    checks = by_name(r)
    assert score_of(r, EX) == FULL - 4
    for name in ("test_output_stage", "test_output_stage_fresh"):
        assert "the first position instead of the last" in checks[name]["message"], checks[name]


def test_other_correct_answer_scores_full_marks(submission):
    ok = variant(
        SOURCE[SOURCE.index("    shapes = {\n") : SOURCE.index("    return shapes\n") + len("    return shapes\n")],
        "    emb = (batch, seq_len, d_model)\n"
        '    stages = [("token_ids", (batch, seq_len)), ("token_embeddings", emb),\n'
        '              ("position_embeddings", emb[1:]), ("block_input", emb)]\n'
        '    stages += [(f"block_{n + 1}", emb) for n in range(n_layers)]\n'
        '    stages += [("logits", emb[:2] + (vocab_size,)), ("next_token_probs", (batch, vocab_size))]\n'
        "    return dict(stages)\n",
    )
    ok = ok.replace(
        "    logits = hidden[:, -1, :] @ W_out\n    if b_out is not None:\n        logits = logits + b_out\n"
        "    return torch.softmax(logits, dim=-1)",
        "    logits = torch.nn.functional.linear(hidden[:, -1], W_out.T, b_out)\n"
        "    e = torch.exp(logits - logits.amax(-1, keepdim=True))\n    return e / e.sum(-1, keepdim=True)",
    )
    assert "dict(stages)" in ok and "functional.linear" in ok
    r = grade(submission({EX: ok}), "-e", EX)
    assert score_of(r, EX) == FULL, [c for c in checks_of(r, EX) if c["status"] != "passed"]
