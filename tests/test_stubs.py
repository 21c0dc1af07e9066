"""Single-source stub generation."""

import pytest

from grader.course import manifest as course
from grader.authoring import stubs
from tests.conftest import ROOT

SOLUTION = '''"""Doc."""
import torch


def softmax(x, dim=-1):
    """Stable softmax."""
    # BEGIN SOLUTION subtract the max, exponentiate, divide by the sum
    e = torch.exp(x - x.amax(dim, keepdim=True))
    return e / e.sum(dim, keepdim=True)
    # END SOLUTION


class M(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        # BEGIN SOLUTION
        self.w = torch.nn.Parameter(torch.zeros(n))
        # END SOLUTION
'''


def test_blocks_become_not_implemented_with_exercise_and_task():
    stub = stubs.make_stub(SOLUTION, "s1_11_softmax")
    assert "torch.exp" not in stub and "Parameter" not in stub
    assert (
        "raise NotImplementedError('s1_11_softmax: subtract the max, exponentiate, divide by the sum (in softmax)')"
    ) in stub
    assert "raise NotImplementedError('s1_11_softmax: implement M.__init__ (in M.__init__)')" in stub
    # signatures, docstrings, imports and code outside blocks stay
    assert '"""Stable softmax."""' in stub and "import torch" in stub and "super().__init__()" in stub
    assert stubs.signatures(stub) == stubs.signatures(SOLUTION)


def test_stub_keeps_indentation_and_is_valid_python():
    stub = stubs.make_stub(SOLUTION, "x1")
    compile(stub, "stub", "exec")
    line = next(l for l in stub.splitlines() if "NotImplementedError" in l and "M.__init__" in l)
    assert line.startswith(" " * 8 + "raise")


@pytest.mark.parametrize(
    "bad, message",
    [
        ("def f():\n    # BEGIN SOLUTION\n    return 1\n", "never closed"),
        ("def f():\n    return 1\n    # END SOLUTION\n", "END SOLUTION without BEGIN"),
        ("# BEGIN SOLUTION\nx = 1\n# END SOLUTION\n", "inside a function"),
        ("def f():\n    return 1\n", "no # BEGIN SOLUTION"),
        (
            "def f():\n    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n",
            "inside another block",
        ),
    ],
)
def test_malformed_markers_are_reported_with_line(bad, message):
    with pytest.raises(stubs.StubError, match=message):
        stubs.make_stub(bad, "x", "f.py")


def test_committed_stubs_are_regenerated_identically():
    c = course.load(ROOT)
    for ex in c.exercises:
        assert (c.exercises_dir / ex.file).read_text() == stubs.stub_text(c, ex), ex.id


def test_write_stubs_backs_up_an_edited_stub(tmp_course):
    tmp_path = tmp_course
    c = course.load(tmp_path)
    target = tmp_path / "exercises/ch01/s1_12_context.py"
    target.write_text("# my work\n")
    written = stubs.write_stubs(c, backup_dir=tmp_path / "backup")
    assert written == [str(target)]
    assert (tmp_path / "backup/ch01/s1_12_context.py").read_text() == "# my work\n"
    assert "NotImplementedError" in target.read_text()
