"""`kata verify`, the developer's proof that stubs fail, solutions pass and files are one-to-one."""

import shutil

from grader.authoring.verify import verify
from tests.conftest import kata


def test_verify_passes_on_the_repository():
    # The grading half (solutions full marks, stubs zero) is `kata verify` in CI and
    # test_grade.py's two whole-course gradings; this is the static half.
    proc = kata("verify", "--no-grade")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "kata verify: passed" in proc.stdout and "each proved by an existing check" in proc.stdout


def test_a_stub_that_passes_a_check_fails_verify(tmp_course):
    # A "stub" that already holds the answer would let students pass without work.
    shutil.copy(tmp_course / "solutions/ch01/s1_12_context.py", tmp_course / "exercises/ch01/s1_12_context.py")
    v = verify(tmp_course, grade=False)
    assert any("s1_12_context: exercises/ch01/s1_12_context.py differs" in p for p in v.problems)


# Another exercise's answer given in a solution file, outside its blocks, lands in the stub as it
# did with s1_23_classifier's "given" encoder: here §1.23's FeedForward with other local names
# and the block's layout changed, and §1.11's softmax with one statement changed.
PLANTED_FEED_FORWARD = """

class FeedForward(nn.Module):
    \"\"\"Given: listing 1.32.\"\"\"

    def __init__(self, d, h, p=0.1):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d, h), nn.GELU(), nn.Dropout(p), nn.Linear(h, d), nn.Dropout(p))
"""
PLANTED_SOFTMAX = """

def stable_softmax(scores, axis=-1):
    \"\"\"Given: a softmax to use below.\"\"\"
    top = scores.amax(dim=axis, keepdim=True)
    shifted = scores - scores.amax(dim=axis, keepdim=True)
    e = torch.exp(shifted)
    return e / e.sum(dim=axis, keepdim=True)
"""


def _plant(course, exercise: str, code: str) -> None:
    from grader.course import manifest as course_mod
    from grader.authoring import stubs

    path = course / "solutions/ch01" / f"{exercise}.py"
    path.write_text(path.read_text() + code)
    stubs.write_stubs(course_mod.load(course), only=[exercise], backup_dir=course / "bak")


def test_a_stub_holding_another_exercises_answer_fails_verify(tmp_course):
    _plant(tmp_course, "s1_23_classifier", PLANTED_FEED_FORWARD)
    _plant(tmp_course, "s1_12_scaled_attention", PLANTED_SOFTMAX)
    problems = verify(tmp_course, grade=False).problems
    assert any(
        p.startswith("s1_23_classifier: exercises/ch01/s1_23_classifier.py:")
        and "exercise s1_23_feed_forward's answer (FeedForward.__init__" in p
        for p in problems
    ), problems
    assert any(
        p.startswith("s1_12_scaled_attention: exercises/ch01/s1_12_scaled_attention.py:")
        and "exercise s1_11_softmax's answer (softmax" in p
        for p in problems
    ), problems
    assert not any("differs from the stub generated" in p for p in problems), problems


def test_the_course_stubs_give_no_answer_away():
    from grader.authoring import answers
    from grader.course import manifest as course

    assert answers.check_course(course.load()) == []


def test_a_solution_that_fails_a_check_fails_verify(tmp_course):
    path = tmp_course / "solutions/ch01/s1_12_context.py"
    path.write_text(path.read_text().replace("return attn_weights @ values", "return (attn_weights @ values) * 1.01"))
    from grader.authoring import stubs
    from grader.course import manifest as course

    c = course.load(tmp_course)
    stubs.write_stubs(c, backup_dir=tmp_course / "bak")
    v = verify(tmp_course, only=["s1_12_context"])
    assert any(p.startswith("solution fails s1_12_context::test_listing_1_7_context") for p in v.problems), v.problems


def test_changed_signature_fails_verify(tmp_course):
    path = tmp_course / "exercises/ch01/s1_11_matmul.py"
    path.write_text(
        path.read_text().replace("def matmul(A: torch.Tensor, B: torch.Tensor)", "def matmul(A, B, C=None)")
    )
    v = verify(tmp_course, grade=False)
    assert any("signature of matmul differs" in p for p in v.problems)


def test_solution_using_a_forbidden_api_fails_verify(tmp_course):
    path = tmp_course / "solutions/ch01/s1_11_softmax.py"
    path.write_text(
        path.read_text().replace(
            "    e = torch.exp(shifted)\n", "    e = torch.exp(shifted)\n    _ = torch.softmax(x, dim)\n"
        )
    )
    v = verify(tmp_course, grade=False)
    assert any("the solution itself uses a forbidden API" in p and "torch.softmax" in p for p in v.problems)


def test_stubs_check_reports_stale_files(tmp_course):
    (tmp_course / "exercises/ch01/s1_11_matmul.py").write_text("# edited\n")
    proc = kata("stubs", "--check", cwd=tmp_course)
    assert proc.returncode == 1 and "stale: exercises/ch01/s1_11_matmul.py" in proc.stdout


def test_errata_entry_citing_a_missing_check_fails_verify(tmp_course):
    text = (tmp_course / "ERRATA.md").read_text()
    (tmp_course / "ERRATA.md").write_text(
        text.replace("s1_11_matmul::test_book_example_27_61", "s1_11_matmul::test_gone", 1)
    )
    v = verify(tmp_course, grade=False)
    assert any("proved by s1_11_matmul::test_gone, which does not exist" in p for p in v.problems)
