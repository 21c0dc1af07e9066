"""Grading the same submission twice gives the same report, timings aside (issue 7, item 4).

The submission mixes what a report can hold: right answers (property-based checks with
hypothesis, a dropout checked by its statistics), wrong ones whose messages quote the values
(some drawn from Python's and torch's random generators, unseeded), a syntax error, an exit at
import and a missing file.
"""

from __future__ import annotations

import copy

from tests.conftest import grade

TIMINGS = ("duration_s", "worker_startup_s")

MIXED = {
    # wrong, with values drawn from unseeded generators in the message
    "s1_12_scaled_attention": (
        "import random, torch\n\n"
        "def scale_scores(scores, d_k):\n"
        "    return scores * random.random() + torch.rand(scores.shape)\n\n"
        "def attention_weights(scores, d_k):\n"
        "    return torch.rand(scores.shape) * random.random()\n"
    ),
    "s1_11_matmul": "import torch\n\ndef matmul(A, B):\n    return torch.zeros(A.shape[0], B.shape[-1], dtype=A.dtype)\n",
    "s1_12_context": "def context_vectors(w, v)\n    return w @ v\n",  # syntax error
    "s1_11_attention_scores": "import os\nos._exit(3)\n",  # exits at import
    "s1_13_causal_mask": None,  # missing file
}


def _without_timings(report: dict) -> dict:
    doc = copy.deepcopy(report)
    for key in TIMINGS:
        doc.pop(key, None)
    for c in doc["checks"]:
        c.pop("duration_s", None)
    return doc


def test_grading_twice_gives_the_same_report(submission):
    path = submission({k: v for k, v in MIXED.items() if v is not None})
    (path / "ch01" / "s1_13_causal_mask.py").unlink()
    exercises = ["s1_11_softmax", "s1_14_dropout", "s1_12_self_attention", "s1_05_positions", *MIXED]
    args = [a for ex in exercises for a in ("-e", ex)]
    first = grade(path, *args)
    second = grade(path, *args)
    # the submission is the mix it claims to be
    by_status = {c["status"] for c in first["checks"]}
    assert by_status == {"passed", "failed"} and 0 < first["score"] < first["max_score"]
    said = " | ".join(c["message"] for c in first["checks"])
    for words in ("syntax error", "exited (exit code 3)", "is missing", "values differ"):
        assert words in said, f"no message says {words!r}"
    a, b = _without_timings(first), _without_timings(second)
    differ = [
        (x["exercise"], x["name"], x["message"], y["message"]) for x, y in zip(a["checks"], b["checks"]) if x != y
    ]
    assert not differ, "\n".join(map(repr, differ))
    assert a == b
