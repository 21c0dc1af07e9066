"""Only the course's exercise files are graded, and an exercise's forbidden-API scan reads every
exercise file it imports (issue 12, follow-up): a helper module beside the exercises is not
copied into the sandbox, so it cannot carry a forbidden API past the scan, and an earlier
exercise's file cannot use an API on behalf of a later exercise that forbids it.

Every grading goes through the real `kata grade`."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.conftest import ROOT, SOLUTIONS
from tests.test_submission_links import exercise_score, run_grade

SOFTMAX = "s1_11_softmax"
CLASSIFIER = "s1_23_classifier"
CLASSIFIER_NEEDS = [
    "s1_23_encoder",
    "s1_23_bert_embedding",
    "s1_23_encoder_block",
    "s1_23_feed_forward",
    "s1_23_self_attention",
]

HELPER = """import torch
from torch.utils._python_dispatch import _disable_current_modes


def sm(x, dim=-1):
    with torch._C.DisableTorchFunction(), _disable_current_modes():
        return torch.softmax(x, dim=dim)
"""

THROUGH_HELPER = """import importlib

h = importlib.import_module("my" + "help")
softmax = lambda x, dim=-1: h.sm(x, dim)
"""


def stubs(tmp_path: Path, name: str = "sub") -> Path:
    sub = tmp_path / name
    shutil.copytree(ROOT / "exercises", sub)
    return sub


def solved(sub: Path, *exercises: str) -> None:
    for ex in exercises:
        shutil.copy(SOLUTIONS / "ch01" / f"{ex}.py", sub / "ch01" / f"{ex}.py")


def messages(report: dict, ex: str) -> str:
    return "\n".join(c["message"] for c in report["checks"] if c["exercise"] == ex)


def test_a_forbidden_api_in_a_helper_file_scores_nothing_and_the_helper_is_not_graded(tmp_path):
    sub = stubs(tmp_path)
    (sub / "ch01" / "myhelp.py").write_text(HELPER)
    (sub / "ch01" / f"{SOFTMAX}.py").write_text(THROUGH_HELPER)
    code, report, _, _ = run_grade(sub, "-e", SOFTMAX)
    assert code == 0 and report is not None
    assert exercise_score(report, SOFTMAX)[0] == 0
    notes = "\n".join(report["notes"])
    assert "ch01/myhelp.py" in notes and "not an exercise of the course" in notes


def test_a_helper_file_imported_by_name_is_not_there_either(tmp_path):
    sub = stubs(tmp_path)
    (sub / "ch01" / "myhelp.py").write_text(HELPER)
    (sub / "ch01" / f"{SOFTMAX}.py").write_text("from myhelp import sm as softmax\n")
    code, report, _, _ = run_grade(sub, "-e", SOFTMAX)
    assert exercise_score(report, SOFTMAX)[0] == 0
    assert "myhelp" in messages(report, SOFTMAX)


def test_a_correct_classifier_importing_the_student_s_own_encoder_scores_full(tmp_path):
    sub = stubs(tmp_path)
    solved(sub, CLASSIFIER, *CLASSIFIER_NEEDS)
    (sub / "ch01" / "notes.txt").write_text("my notes\n")
    code, report, _, _ = run_grade(sub, "-e", CLASSIFIER)
    score, total = exercise_score(report, CLASSIFIER)
    assert total > 0 and score == total, messages(report, CLASSIFIER)
    assert any("ch01/notes.txt" in n for n in report["notes"])


def test_an_imported_exercise_file_that_uses_an_api_the_importer_forbids_is_refused_for_that_api(tmp_path):
    sub = stubs(tmp_path)
    solved(sub, CLASSIFIER, *CLASSIFIER_NEEDS)
    encoder = sub / "ch01" / "s1_23_encoder.py"
    encoder.write_text(encoder.read_text() + "\n_spare = torch.nn.MultiheadAttention  # forbidden in the classifier\n")
    code, report, _, _ = run_grade(sub, "-e", CLASSIFIER)
    assert exercise_score(report, CLASSIFIER)[0] == 0
    said = messages(report, CLASSIFIER)
    assert "torch.nn.MultiheadAttention" in said and "ch01/s1_23_encoder.py" in said
    assert all(c["kind"] == "forbidden" for c in report["checks"] if c["exercise"] == CLASSIFIER)
