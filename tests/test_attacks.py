"""Hostile submissions: the grader must finish, score the cheated checks 0 with a plain-words
message, keep the grader's files out of reach and leave nothing behind on the host.

Every test grades a real submission with the real `kata grade` (bubblewrap sandbox and all).
To keep the file fast, attacks aimed at different exercises share one submission and one
grading run, and every exercise is then asserted on its own. The exercises a test does not
attack stay the reference solutions.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import socket
import subprocess
import sys
import sysconfig
import tempfile
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from grader.course.messages import t
from grader.worker import uids
from grader.course.manifest import load as load_course
from tests.conftest import ROOT, SOLUTIONS, checks_of, grade, score_of

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="the isolation attacks need bubblewrap")

# An honest softmax, for the function of an attacked file that is not under attack.
SOFTMAX_OK = """
def softmax(x, dim=-1):
    e = torch.exp(x - x.amax(dim=dim, keepdim=True))
    return e / e.sum(dim=dim, keepdim=True)
"""
# An honest matmul (the reference's loops), for attacks that answer right after their trick.
MATMUL_OK = """
def right_matmul(A, B):
    if A.dim() != 2 or B.dim() != 2 or A.shape[1] != B.shape[0]:
        raise ValueError(f"cannot multiply shapes {tuple(A.shape)} and {tuple(B.shape)}")
    out = torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype)
    for i in range(A.shape[0]):
        for j in range(B.shape[1]):
            out[i, j] = (A[i, :] * B[:, j]).sum()
    return out
"""
# Honest scaled-attention weights, for attacks on s1_12_scaled_attention's scale_scores (an exercise
# without a forbidden list, where a file may import os).
ATTENTION_OK = """
def attention_weights(scores, d_k):
    return torch.softmax(scores / d_k ** 0.5, dim=-1)
"""
NORMALIZE_OK = """
def simple_normalize(x, dim=-1):
    return x / x.sum(dim=dim, keepdim=True)
"""


def src(text: str, **fields) -> str:
    """Dedent a student file and fill in {fields} (written as <<name>> to keep the code's braces)."""
    text = textwrap.dedent(text).lstrip("\n")
    for k, v in fields.items():
        text = text.replace(f"<<{k}>>", v)
    return text


def max_score_of(report: dict, exercise: str) -> float:
    return sum(c["max_score"] for c in checks_of(report, exercise))


def assert_full_marks(report: dict, exercises) -> None:
    for ex in exercises:
        checks = checks_of(report, ex)
        assert checks, f"{ex}: no checks in the report"
        bad = [(c["name"], c["message"]) for c in checks if c["score"] != c["max_score"]]
        assert not bad, f"{ex} should keep full marks, but: {bad}"


def assert_zero(report: dict, exercise: str, words=(), names=None, skip=()) -> list[dict]:
    """Every check of `exercise` (or those in `names`) scores 0, and its message holds one of
    `words` (case-insensitive). Checks in `skip` must score 0 but their message is not read."""
    checks = checks_of(report, exercise)
    assert checks, f"{exercise}: no checks in the report"
    chosen = [c for c in checks if names is None or c["name"] in names]
    assert chosen, f"{exercise}: none of {names} in the report"
    for c in chosen:
        assert c["status"] == "failed" and c["score"] == 0, f"{exercise}::{c['name']} should score 0: {c}"
        if c["name"] in skip or not words:
            continue
        msg = c["message"].lower()
        assert any(w.lower() in msg for w in words), (
            f"{exercise}::{c['name']}: message should say one of {words}, got: {c['message']!r}"
        )
    return chosen


# Whole-submission tests grade the attacked files plus this slice (§1.9–1.12): enough neighbours to
# show that one broken exercise leaves the others untouched, without grading the whole course.
NEIGHBOURS = [
    "s1_09_input_embeddings",
    "s1_10_qkv",
    "s1_11_matmul",
    "s1_11_attention_scores",
    "s1_11_softmax",
    "s1_12_scaled_attention",
    "s1_12_context",
    "s1_12_self_attention",
]


def other_exercises(*attacked: str) -> list[str]:
    return [ex for ex in NEIGHBOURS if ex not in attacked]


def with_neighbours(*attacked: str) -> list[str]:
    """`-e` arguments for the attacked exercises and their neighbours."""
    return [a for ex in dict.fromkeys([*attacked, *NEIGHBOURS]) for a in ("-e", ex)]


def message_of(report: dict, exercise: str, name: str) -> str:
    (c,) = [c for c in checks_of(report, exercise) if c["name"] == name]
    return c["message"]


# ----------------------------------------------------------------------------- exit()
def test_exit_calls_at_import_and_inside_functions(submission):
    """sys.exit / os._exit at import and inside a call: 0 on that exercise with a message that
    says the code exited; the grade completes and every other exercise keeps full marks."""
    path = submission(
        {
            # sys.exit(0) at import
            "s1_11_matmul": "import sys\nsys.exit(0)\n\ndef matmul(A, B):\n    return A\n",
            # os._exit(0) at import: the worker process itself dies while importing
            "s1_11_attention_scores": "import os\nos._exit(0)\n",
            # os._exit(0) in softmax, sys.exit(0) in simple_normalize
            "s1_11_softmax": src("""
            import os, sys, torch

            def simple_normalize(x, dim=-1):
                sys.exit(0)

            def softmax(x, dim=-1):
                os._exit(0)
            """),
            # os._exit(0) after computing the right answer: exiting "successfully" earns nothing
            "s1_12_context": src("""
            import os

            def context_vectors(w, v):
                out = w @ v
                os._exit(0)
                return out
            """),
        }
    )
    report = grade(path, *with_neighbours())  # attacked files and their neighbours: the rest must be untouched

    assert_zero(report, "s1_11_matmul", words=["sys.exit(0) was called"])
    assert "s1_11_matmul.py:2" in message_of(report, "s1_11_matmul", "test_book_example_27_61")
    assert_zero(report, "s1_11_attention_scores", words=["exited", "exit()"])
    assert "importing ch01/s1_11_attention_scores.py failed" in message_of(
        report, "s1_11_attention_scores", "test_listing_1_5_scores"
    )
    # test_invariants (hypothesis) scores 0 too; its message is covered by the next test
    assert_zero(report, "s1_11_softmax", words=["exit"], skip={"test_invariants"})
    assert "sys.exit(0) was called" in message_of(report, "s1_11_softmax", "test_book_simple_normalization")
    assert "os._exit()" in message_of(report, "s1_11_softmax", "test_book_softmax_examples")
    assert_zero(report, "s1_12_context", words=["exited"])
    assert_full_marks(
        report, other_exercises("s1_11_matmul", "s1_11_attention_scores", "s1_11_softmax", "s1_12_context")
    )


def test_exit_in_property_based_check_has_plain_message(submission):
    path = submission(
        {
            "s1_11_softmax": src(
                """
        import os, torch
        <<normalize>>
        def softmax(x, dim=-1):
            os._exit(0)
        """,
                normalize=NORMALIZE_OK,
            )
        }
    )
    report = grade(path, "-e", "s1_11_softmax")
    assert_zero(report, "s1_11_softmax", names={"test_invariants"})
    msg = message_of(report, "s1_11_softmax", "test_invariants")
    assert "exit" in msg.lower(), msg
    assert "FlakyFailure" not in msg and "grader/worker" not in msg, msg


def test_a_worker_that_dies_mid_check_fails_that_check_with_the_reason_and_is_restarted(submission):
    """The worker dies in the middle of a check, after that check's first call answered right:
    SIGKILL on the second call of scaled attention's weights in one worker (test_listing_1_6_weights
    asks for a whole matrix, then one row), os._exit(3) on the batched context vectors. That check
    fails, saying how the worker died; the worker is started again, so the checks after it (of the
    same exercise and of the next) run and pass. (Exercises without a forbidden list: under one, a
    file may not import os or signal.)"""
    path = submission(
        {
            "s1_12_scaled_attention": src("""
            import os, signal, torch

            _calls = [0]  # a fresh worker per check: the calls of one check


            def scale_scores(scores, d_k):
                return scores / d_k ** 0.5


            def attention_weights(scores, d_k):
                _calls[0] += 1
                if _calls[0] == 2:
                    os.kill(os.getpid(), signal.SIGKILL)
                return torch.softmax(scale_scores(scores, d_k), dim=-1)
            """),
            "s1_12_context": src("""
            import os

            def context_vectors(attn_weights, values):
                if values.dim() == 3:  # test_batched, the last check
                    os._exit(3)
                return attn_weights @ values
            """),
        }
    )
    report = grade(path, "-e", "s1_12_scaled_attention", "-e", "s1_11_softmax", "-e", "s1_12_context")
    status = {(c["exercise"], c["name"]): c["status"] for c in report["checks"]}
    assert status == {
        **{
            ("s1_12_scaled_attention", c["name"]): "passed"
            for c in checks_of(report, "s1_12_scaled_attention")
            if c["name"] != "test_listing_1_6_weights"
        },
        ("s1_12_scaled_attention", "test_listing_1_6_weights"): "failed",  # the worker died here...
        **{("s1_11_softmax", c["name"]): "passed" for c in checks_of(report, "s1_11_softmax")},
        ("s1_12_context", "test_listing_1_7_context"): "passed",
        ("s1_12_context", "test_book_day_context"): "passed",
        ("s1_12_context", "test_batched"): "failed",
    }, status
    assert [c["name"] for c in checks_of(report, "s1_12_scaled_attention")][-1] != "test_listing_1_6_weights"
    killed = message_of(report, "s1_12_scaled_attention", "test_listing_1_6_weights")
    assert "the worker process was killed while running your code" in killed, killed
    exited = message_of(report, "s1_12_context", "test_batched")  # a hidden check: no exit code (it could be an input)
    assert "the worker process exited or was stopped while running your code" in exited and "3" not in exited, exited
    assert "Traceback" not in killed + exited and "grader/worker" not in killed + exited
    weights = [c for c in checks_of(report, "s1_12_scaled_attention") if c["name"] == "test_listing_1_6_weights"]
    assert report["score"] == report["max_score"] - weights[0]["max_score"] - 2


# ----------------------------------------------------------------------------- patched comparisons
PATCHES = """
import torch, torch.testing, pytest, _pytest.outcomes, unittest

_ok = lambda *a, **k: True
_none = lambda *a, **k: None
torch.allclose = _ok
torch.Tensor.allclose = _ok
torch.equal = _ok
torch.Tensor.equal = _ok
torch.isclose = lambda a, b, *x, **k: torch.ones_like(torch.as_tensor(a), dtype=torch.bool)
torch.testing.assert_close = _none
torch.testing.assert_allclose = _none
pytest.fail = _none
pytest.skip = _none
pytest.approx = lambda *a, **k: _Anything()
_pytest.outcomes.fail = _none
_pytest.outcomes.Failed = type("Failed", (Exception,), {})
unittest.TestCase.assertEqual = _none


class _Anything:
    def __eq__(self, other):
        return True


def _patched():
    return (torch.allclose is _ok and pytest.fail is _none and _pytest.outcomes.fail is _none
            and torch.testing.assert_close is _none)
"""


def test_patching_comparisons_and_pytest_does_not_help(submission):
    """Replacing torch.allclose, torch.testing.assert_close, pytest.fail, _pytest.outcomes...
    inside the worker changes nothing: comparisons happen in the trusted grader process."""
    # Exercises without a forbidden list: under one, importing pytest or torch.testing is refused
    # before anything runs (grader/course/scan_escapes.py), which would prove nothing here.
    path = submission(
        {
            "s1_12_scaled_attention": src(
                """
            <<patches>>

            def scale_scores(scores, d_k):
                # Right answer, but only once every patch is in place: full marks on these checks
                # prove that the module imported and the patching ran inside the worker.
                if not _patched():
                    raise RuntimeError("patching did not work")
                return scores / d_k ** 0.5

            def attention_weights(scores, d_k):
                return torch.zeros_like(scores)  # wrong
            """,
                patches=PATCHES,
            ),
            "s1_12_context": src(
                """
            <<patches>>

            def context_vectors(attn_weights, values):
                return torch.zeros(*attn_weights.shape[:-1], values.shape[-1])  # wrong
            """,
                patches=PATCHES,
            ),
        }
    )
    report = grade(path, "-e", "s1_12_scaled_attention", "-e", "s1_12_context")

    for name in ("test_book_scaled_scores", "test_scale_fresh"):
        assert message_of(report, "s1_12_scaled_attention", name) == ""
    assert score_of(report, "s1_12_scaled_attention") == 2.0  # scale_scores only
    assert_zero(
        report,
        "s1_12_scaled_attention",
        words=["differ", "not correct"],
        names={"test_listing_1_6_weights", "test_fresh_dims"},
    )
    assert_zero(report, "s1_12_context", words=["differ", "not correct"])


# ----------------------------------------------------------------------------- reading the grader's files
STEAL = """
import json, os, torch

HERE = os.path.dirname(os.path.abspath(__file__))
SOLUTION = <<solution>>          # the reference solution of this exercise
OTHERS = <<others>>              # its fixture, its checks, the manifest


def _readable():
    out = {}
    for p in SOLUTION + OTHERS:
        try:
            with open(p, "rb") as f:
                f.read(1)
            out[p] = "READ"
        except OSError as e:
            out[p] = type(e).__name__
    return out


def _from_fixture(x, dim):
    # "Return what was read": look the input up in the grader's fixture.
    from safetensors.torch import load_file
    for p in OTHERS:
        if p.endswith(".safetensors"):
            try:
                f = load_file(p)
            except Exception:
                continue
            for name, value in f.items():
                if name.startswith("x") and value.shape == x.shape and torch.equal(value, x):
                    key = f"softmax_dim{dim}" if x.dtype == torch.float32 else "softmax64"
                    return f.get(key)
    return None


def softmax(x, dim=-1):
    for p in SOLUTION:  # the solution's own code, exec'd
        try:
            code = open(p).read()
        except OSError:
            continue
        ns = {}
        exec(code, ns)
        return ns["softmax"](x, dim)
    hit = _from_fixture(x, dim)
    if hit is not None:
        return hit
    if "READ" in _readable().values():  # anything readable: answer right, which would score
        e = torch.exp(x - x.amax(dim=dim, keepdim=True))
        return e / e.sum(dim=dim, keepdim=True)
    return torch.zeros_like(x)  # nothing could be read: a wrong answer


def simple_normalize(x, dim=-1):
    raise RuntimeError("PROBE " + json.dumps(list(_readable().values())))  # in path order
"""


@needs_bwrap
def test_grader_files_cannot_be_read(submission, tmp_path):
    """A softmax that returns the right answer only if it can read the solution, the fixture,
    the checks or course.toml (absolute paths, and paths relative to the submission file and to
    the working directory) scores 0: every read failed inside the sandbox."""
    ex = "s1_11_softmax"
    targets = {
        "solution": ROOT / "solutions" / "ch01" / f"{ex}.py",
        "fixture": ROOT / "grader" / "fixtures" / f"{ex}.safetensors",
        "checks": ROOT / "grader" / "checks" / f"test_{ex}.py",
        "manifest": ROOT / "course.toml",
    }
    for p in targets.values():
        assert p.is_file(), p  # the files exist on the host: the attack is meaningful
    sub_ch01 = tmp_path / "submission" / "ch01"

    def variants(p: Path) -> list[str]:
        rel_from_sub = os.path.relpath(p, sub_ch01)  # the host route from the submission file
        rel_from_root = os.path.relpath(p, ROOT)  # as if the cwd were the project
        return [
            str(p),
            f"HERE/{rel_from_sub}",
            f"HERE/../../{rel_from_root}",
            f"HERE/../../../{rel_from_root}",
            rel_from_root,
            f"../../{rel_from_root}",
            f"/sub/../{p}",
            f"/proc/self/root{p}",
            f"/proc/1/root{p}",
        ]

    def code_list(paths: list[str]) -> str:
        items = [f"os.path.join(HERE, {p[5:]!r})" if p.startswith("HERE/") else repr(p) for p in paths]
        return "[" + ", ".join(items) + "]"

    solution = variants(targets["solution"])
    others = [v for k in ("fixture", "checks", "manifest") for v in variants(targets[k])]
    path = submission({ex: src(STEAL, solution=code_list(solution), others=code_list(others))})
    report = grade(path, "-e", ex)
    assert report["sandbox"] == "bubblewrap"

    # Nothing was readable: the stolen answers never came back.
    assert score_of(report, ex) == 0, [(c["name"], c["score"], c["message"]) for c in checks_of(report, ex)]
    assert_zero(report, ex, words=["differ", "not correct"], skip={"test_book_simple_normalization"})
    # ...and the probe's own account says so, path by path.
    msg = message_of(report, ex, "test_book_simple_normalization")
    assert "PROBE " in msg, msg
    probe = json.loads(msg.split("PROBE ", 1)[1].rsplit(" (at ", 1)[0])
    assert len(probe) == len(solution) + len(others), probe
    assert "READ" not in probe, dict(zip(solution + others, probe))


# ----------------------------------------------------------------------------- network
NET = """
import json, socket, torch

HOST_PORT = <<port>>          # a TCP listener the test opened on the host's loopback
HOST_ABSTRACT = <<abstract>>  # an abstract unix socket the test opened on the host
LOG = []


def _attempt(what, fn):
    try:
        fn()
        LOG.append(what + ": CONNECTED")
        return True
    except OSError as e:
        LOG.append(f"{what}: {type(e).__name__} {e.errno}")
        return False


def _tcp(addr):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(1)
    try:
        s.connect(addr)
    finally:
        s.close()


def _udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.sendto(b"\\x12\\x34\\x01\\x00\\x00\\x01\\x00\\x00\\x00\\x00\\x00\\x00\\x07example\\x03com\\x00\\x00\\x01\\x00\\x01",
                 ("1.1.1.1", 53))
    finally:
        s.close()


def _unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(HOST_ABSTRACT)
    finally:
        s.close()


def _online():
    LOG.clear()
    results = [_attempt("tcp 127.0.0.1", lambda: _tcp(("127.0.0.1", HOST_PORT))),
               _attempt("tcp 1.1.1.1:53", lambda: _tcp(("1.1.1.1", 53))),
               _attempt("udp 1.1.1.1:53", _udp),
               _attempt("abstract unix", _unix)]
    return any(results)


def softmax(x, dim=-1):
    if _online():  # right answer only with a working connection
        e = torch.exp(x - x.amax(dim=dim, keepdim=True))
        return e / e.sum(dim=dim, keepdim=True)
    return torch.zeros_like(x)


def simple_normalize(x, dim=-1):
    _online()
    raise RuntimeError("NET " + json.dumps(LOG))
"""


@needs_bwrap
def test_network_is_unreachable(submission):
    """TCP to a listener on the host's 127.0.0.1, TCP and UDP to 1.1.1.1:53 and an abstract unix
    socket of the host all fail: a softmax that is right only when online scores 0."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(16)
    tcp.setblocking(False)
    abstract = "\0kata-attack-" + uuid.uuid4().hex
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(abstract)
    unix.listen(16)
    unix.setblocking(False)
    try:
        path = submission({"s1_11_softmax": src(NET, port=str(tcp.getsockname()[1]), abstract=repr(abstract))})
        report = grade(path, "-e", "s1_11_softmax")  # grading completes (grade asserts exit code 0)
        assert report["sandbox"] == "bubblewrap"
        assert_zero(report, "s1_11_softmax", words=["differ", "not correct"], skip={"test_book_simple_normalization"})
        msg = message_of(report, "s1_11_softmax", "test_book_simple_normalization")
        log = json.loads(msg.split("NET ", 1)[1].rsplit(" (at ", 1)[0])
        assert len(log) == 4 and not any("CONNECTED" in line for line in log), log
        for server in (tcp, unix):  # the host listeners never saw a connection
            with pytest.raises(BlockingIOError):
                server.accept()
    finally:
        tcp.close()
        unix.close()


# ----------------------------------------------------------------------------- endless loops
@pytest.mark.slow
def test_endless_loops_time_out(submission):
    """An endless loop at import and a stubborn one inside a function (ignores signals, swallows
    every exception): the checks fail with 'took longer' and the grade ends in bounded time."""
    path = submission(
        {
            "s1_11_matmul": "while True:\n    pass\n",
            "s1_12_context": src("""
            import signal, time

            for s in (signal.SIGTERM, signal.SIGINT, signal.SIGALRM, signal.SIGHUP, signal.SIGXCPU):
                signal.signal(s, signal.SIG_IGN)

            def context_vectors(w, v):
                while True:
                    try:
                        time.sleep(0.01)
                    except BaseException:
                        pass
            """),
        }
    )
    t0 = time.monotonic()
    report = grade(path, "-e", "s1_11_matmul", "-e", "s1_12_context", "--time-limit", "2", timeout=120)
    elapsed = time.monotonic() - t0
    assert elapsed < 60, f"grading took {elapsed:.1f} s"
    assert_zero(report, "s1_11_matmul", words=["took longer than the 2 s limit"])
    assert "importing ch01/s1_11_matmul.py failed" in message_of(report, "s1_11_matmul", "test_book_example_27_61")
    assert_zero(report, "s1_12_context", words=["took longer than the 2 s limit"])


# ----------------------------------------------------------------------------- huge output
HUGE_OUTPUT_IN_CALL = """
import torch

def context_vectors(w, v):
    print("x" * 100_000_000)  # 100 MB, the limit is 16 MB
    return w @ v
"""


def test_huge_output_fails_and_grading_completes(submission):
    """Printing 100 MB inside a call and at import: 0 on those exercises, grading completes."""
    path = submission(
        {
            "s1_12_context": HUGE_OUTPUT_IN_CALL,
            "s1_11_attention_scores": src("""
            print("y" * 100_000_000)

            def attention_scores(q, k):
                return q @ k.transpose(-2, -1)
            """),
        }
    )
    t0 = time.monotonic()
    report = grade(path, "-e", "s1_12_context", "-e", "s1_11_attention_scores", timeout=120)
    assert time.monotonic() - t0 < 60
    # A flood stops the worker at the output limit, inside a call and at import alike.
    assert_zero(report, "s1_12_context", words=["more than 16 MB of output"])
    assert_zero(report, "s1_11_attention_scores", words=["more than 16 MB of output"])
    assert (
        "importing ch01/s1_11_attention_scores.py failed" in checks_of(report, "s1_11_attention_scores")[0]["message"]
    )


def test_huge_output_message_mentions_output(submission):
    path = submission({"s1_12_context": HUGE_OUTPUT_IN_CALL})
    report = grade(path, "-e", "s1_12_context")
    assert_zero(report, "s1_12_context", words=["output"])


# ----------------------------------------------------------------------------- broken files
def test_syntax_error_scores_zero_only_there(submission):
    """A syntax error in one file: 0 on that exercise with file and line in the message; every
    other exercise graded beside it still gets full marks."""
    path = submission(
        {
            "s1_11_softmax": src("""
        import torch


        def simple_normalize(x, dim=-1):
            return x / x.sum(dim=dim, keepdim=True)

        def softmax(x, dim=-1)
            return x
        """)
        }
    )
    report = grade(path, *with_neighbours())
    assert_zero(report, "s1_11_softmax", words=["syntax error in ch01/s1_11_softmax.py:7"])
    assert_full_marks(report, other_exercises("s1_11_softmax"))
    assert report["score"] == report["max_score"] - max_score_of(report, "s1_11_softmax")


def test_missing_file_function_and_wrong_signature(submission):
    """A missing file, a missing function and a wrong signature: 0 with a message naming it."""
    path = submission(
        {
            "s1_12_context": "import torch\n\ndef context_vector(w, v):  # misspelt name\n    return w @ v\n",
            "s1_11_attention_scores": "import torch\n\ndef attention_scores(queries):\n    return queries\n",
        }
    )
    (path / "ch01" / "s1_11_matmul.py").unlink()
    report = grade(path, "-e", "s1_11_matmul", "-e", "s1_12_context", "-e", "s1_11_attention_scores")
    assert_zero(report, "s1_11_matmul", words=["ch01/s1_11_matmul.py is missing"])
    assert_zero(report, "s1_12_context", words=["has no attribute 'context_vectors'"])
    # a hidden check names the function but shows nothing of the worker's text (its signature included)
    assert_zero(report, "s1_11_attention_scores", words=["wrong signature: attention_scores"])
    assert "wrong signature: attention_scores(queries)" in message_of(
        report, "s1_11_attention_scores", "test_listing_1_5_scores"
    )


# ----------------------------------------------------------------------------- writing outside
WRITE = """
import json, os, torch

TARGETS = <<targets>>
<<softmax>>

def scale_scores(scores, d_k):
    done = {}
    for p in TARGETS:
        try:
            with open(os.path.expanduser(p), "w") as f:
                f.write("pwned")
            done[p] = "WROTE"
        except OSError as e:
            done[p] = type(e).__name__
    raise RuntimeError("WRITE " + json.dumps(list(done.values())))  # in TARGETS order
"""


@needs_bwrap
def test_nothing_outside_the_grading_directory_changes(submission, tmp_path):
    """Writes aimed at the grader's fixtures, the solutions, the project, the virtualenv, the
    Python install, the host's /tmp and $HOME and the submission itself: none reaches the host."""
    tag = "pwned-" + uuid.uuid4().hex
    host = {
        "fixtures": ROOT / "grader" / "fixtures" / tag,
        "solutions": ROOT / "solutions" / "ch01" / f"{tag}.py",
        "project": ROOT / tag,
        "runtime": ROOT / "grader" / "worker" / "runtime" / f"{tag}.py",
        "venv": Path(sysconfig.get_paths()["purelib"]) / f"{tag}.pth",
        "python": Path(sys.base_prefix) / "lib" / tag,
        "tmp": Path("/tmp") / tag,
        "home": Path.home() / tag,
        "submission": tmp_path / "submission" / "ch01" / f"{tag}.py",
    }
    inside = [str(p) for p in host.values() if p != host["submission"]]
    inside += [f"/sub/ch01/{tag}.py", f"~/{tag}", f"/opt/kata/kata_worker/{tag}.py", f"/tmp/work/{tag}"]
    # An exercise without a forbidden list: under one, `import os` is refused before anything runs.
    path = submission({"s1_12_scaled_attention": src(WRITE, targets=repr(inside), softmax="\n" + ATTENTION_OK)})
    try:
        report = grade(path, "-e", "s1_12_scaled_attention")
        assert report["sandbox"] == "bubblewrap"
        msg = message_of(report, "s1_12_scaled_attention", "test_book_scaled_scores")
        done = json.loads(msg.split("WRITE ", 1)[1].rsplit(" (at ", 1)[0])
        assert len(done) == len(inside), done
        leaked = {name: str(p) for name, p in host.items() if p.exists()}
        assert not leaked, f"files written on the host: {leaked}"
        # Writes that the sandbox allowed (its private /tmp and /tmp/work) went away with it.
        from grader.course.files import folders_and_files  # iterative: another test's 3,000-deep tree may be there

        left = [
            p
            for top in Path(tempfile.gettempdir()).glob("kata-*")
            for p in [*folders_and_files(top)[0], *folders_and_files(top)[1]]
            if os.path.basename(p) == tag
        ]
        assert not left, left
        # The honest attention weights in the same file were unaffected.
        for c in checks_of(report, "s1_12_scaled_attention"):
            if c["name"] in ("test_listing_1_6_weights", "test_fresh_dims"):
                assert c["score"] == c["max_score"], c
    finally:
        for p in host.values():
            if p.exists():
                p.unlink()


# ----------------------------------------------------------------------------- processes
SPAWN = """
import ctypes, os, signal, time, torch

TOKEN = <<token>>.encode()     # the children's process name (comm), to find them from the host
SLEEP = <<sleep>>              # a unique argument for an exec'd sleep


def _name():
    ctypes.CDLL(None).prctl(15, ctypes.c_char_p(TOKEN), 0, 0, 0)  # PR_SET_NAME


def _spawn():
    for _ in range(50):  # fork bomb-lite: 50 sleeping children
        if os.fork() == 0:
            try:
                _name()
                time.sleep(300)
            finally:
                os._exit(0)
    # A grandchild that leaves the process group (setsid, double fork) and outlives the call.
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() == 0:
                os.execv("/bin/sleep", ["/bin/sleep", SLEEP])
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def context_vectors(attn_weights, values):
    _spawn()
    return attn_weights @ values
"""


def _marked_processes(token: str, sleep_arg: str) -> list[tuple[int, int]]:
    """(pid, uid) of the host's processes named `token` or running `sleep sleep_arg`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            comm = Path(f"/proc/{entry}/comm").read_text().strip()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            uid = os.stat(f"/proc/{entry}").st_uid
        except OSError:
            continue
        if comm == token or sleep_arg.encode() in cmdline:
            found.append((int(entry), uid))
    return found


@needs_bwrap
def test_fork_bomb_and_stray_children_are_cleaned_up(submission, tmp_path):
    """50 sleeping children per call plus a setsid'd grandchild left running, and a worker that
    kills its own fork server: grading completes and no process of the submission survives."""
    token = "kx" + uuid.uuid4().hex[:10]
    sleep_arg = f"{600 + uuid.uuid4().int % 100}.{uuid.uuid4().int % 10**9:09d}"
    # Exercises without a forbidden list: under one, a worker cannot fork at all.
    path = submission(
        {
            "s1_12_context": src(SPAWN, token=repr(token), sleep=repr(sleep_arg)),
            # Kills the fork server (its parent, same uid), then answers right. That takes the
            # sandbox down with it (its own checks may then fail: self-sabotage, not asserted), and
            # the grader must restart it for the next exercise. Graded before s1_12_context (book
            # order), so the strays spawned there must go when the grade ends.
            "s1_12_scaled_attention": src(
                """
            import os, signal, torch

            def scale_scores(scores, d_k):
                try:
                    os.kill(os.getppid(), signal.SIGKILL)
                except OSError:  # a later call: the parent is now the sandbox's init, owned by root
                    pass
                return scores / d_k ** 0.5

            <<attention_ok>>
            """,
                attention_ok=ATTENTION_OK,
            ),
        }
    )
    out = tmp_path / "report.json"
    cmd = [
        sys.executable,
        "-m",
        "grader",
        "grade",
        str(path),
        "--json",
        str(out),
        "--quiet",
        "-e",
        "s1_12_scaled_attention",
        "-e",
        "s1_12_context",
    ]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "KATA_LANG": "en"}
    )
    seen: dict[int, int] = {}
    t0 = time.monotonic()
    try:
        while proc.poll() is None and time.monotonic() - t0 < 120:
            seen.update(_marked_processes(token, sleep_arg))
            time.sleep(0.05)
    finally:
        if proc.poll() is None:
            proc.kill()
    stdout, stderr = proc.communicate()
    assert proc.returncode == 0, f"kata grade failed ({proc.returncode}):\n{stdout}\n{stderr}"
    report = json.loads(out.read_text())

    assert len(seen) > 10, f"the attack did not run (saw {len(seen)} marked processes)"
    if os.getuid() == 0:  # the student's processes ran as the sandbox's own uid, not as root
        (uid,) = set(seen.values())
        assert uids.FIRST <= uid < uids.FIRST + uids.COUNT, seen
    # Nothing survives the grade (a short grace for the kernel to reap the pid namespace).
    deadline = time.monotonic() + 5
    while (left := _marked_processes(token, sleep_arg)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"stray processes after grading: {left}"
    # The exercise that killed the fork server was graded to the end...
    assert len(checks_of(report, "s1_12_scaled_attention")) == len(
        load_course(ROOT).get("s1_12_scaled_attention").checks
    )
    # ...and the next one got a fresh sandbox: forking is not cheating, the right answers score.
    assert_full_marks(report, ["s1_12_context"])


BOMB = """
import os, time

# At import, in every worker that grades this file: fork until the process limit says no, keep
# the children asleep, and hold the worker for a while so the bomb overlaps a neighbour's grading.
_kids = 0
try:
    while _kids < 5000:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        _kids += 1
except OSError:
    pass
time.sleep(4)
"""
# Right context vectors that an honest student might write: each row's weighted sum computed by a
# pool of threads (a thread counts against RLIMIT_NPROC like a process). Not the matmul exercise:
# under a forbidden list threads are refused (the guard is per thread; grader/course/scan_escapes.py).
THREADED_CONTEXT = """
from concurrent.futures import ThreadPoolExecutor

import torch


def context_vectors(attn_weights, values):
    if attn_weights.dim() == 1:
        return attn_weights @ values
    with ThreadPoolExecutor(max_workers=2) as pool:
        rows = list(pool.map(lambda i: attn_weights[..., i:i + 1, :] @ values, range(attn_weights.shape[-2])))
    return torch.cat(rows, dim=-2) if rows else attn_weights @ values
"""


@needs_bwrap
@pytest.mark.slow
def test_a_fork_bomb_does_not_starve_a_submission_graded_next_to_it(tmp_path):
    """Submissions graded in parallel (--jobs 2): one fork-bombs at every import of its first
    exercise; the others, right everywhere and graded beside it, must keep full marks. As root, every
    sandbox used to run as `nobody`, and RLIMIT_NPROC counts a uid's processes host-wide."""
    cls = tmp_path / "class"
    honest = ["b-honest", "c-honest", "d-honest", "e-honest"]  # graded one after another beside the bomb
    for name in ["a-bomb", *honest]:
        shutil.copytree(ROOT / "solutions", cls / name)
        if name != "a-bomb":
            (cls / name / "ch01" / "s1_12_context.py").write_text(src(THREADED_CONTEXT))
    first = cls / "a-bomb" / "ch01" / "s1_09_input_embeddings.py"
    first.write_text(src(BOMB) + first.read_text())
    args = [a for ex in NEIGHBOURS for a in ("-e", ex)]
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), "--jobs", "2", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    for name in honest:
        assert_full_marks(json.loads((out / "students" / name / "report.json").read_text()), NEIGHBOURS)
    bomb = json.loads((out / "students" / "a-bomb" / "report.json").read_text())
    assert_full_marks(bomb, other_exercises("s1_09_input_embeddings"))  # its own other exercises too


# ----------------------------------------------------------------------------- forbidden APIs
def test_forbidden_api_through_torch_ops_is_refused(submission):
    path = submission(
        {
            "s1_11_softmax": src(
                """
            import torch
            <<normalize>>
            def softmax(x, dim=-1):
                return torch.ops.aten._softmax(x, dim, False)
            """,
                normalize=NORMALIZE_OK,
            ),
            "s1_11_matmul": src("""
            import torch

            def matmul(A, B):
                if A.dim() != 2 or B.dim() != 2 or A.shape[1] != B.shape[0]:
                    raise ValueError(f"cannot multiply shapes {tuple(A.shape)} and {tuple(B.shape)}")
                return torch.ops.aten.mm(A, B)
            """),
        }
    )
    report = grade(path, "-e", "s1_11_softmax", "-e", "s1_11_matmul")
    assert score_of(report, "s1_11_matmul") == 0
    assert_zero(report, "s1_11_softmax", names={"test_book_softmax_examples", "test_large_inputs_stable"})


def test_forbidden_operator_hidden_from_the_scan_is_stopped_at_runtime(submission):
    """torch.ops reached through getattr escapes the static scan; the dispatch guard in the
    worker still refuses the operator, so the cheated checks fail with a message saying why."""
    path = submission(
        {
            "s1_11_softmax": src(
                """
        import torch
        <<normalize>>
        def softmax(x, dim=-1):
            ops = getattr(torch, "o" + "ps")
            return ops.aten._softmax(x, dim, False)
        """,
                normalize=NORMALIZE_OK,
            )
        }
    )
    report = grade(path, "-e", "s1_11_softmax")
    assert_zero(
        report,
        "s1_11_softmax",
        names={"test_book_softmax_examples", "test_large_inputs_stable"},
        words=["aten::_softmax is not allowed"],
    )


# ----------------------------------------------------------------------------- faults as a channel
def test_a_hidden_check_shows_no_exit_code_or_signal_the_student_chose(submission):
    """Code that has seen a hidden input can end the worker with an exit code or a signal made of
    it (os._exit(int(x[0] * 10))): a hidden check's message says only that the worker ended, in
    an exercise with a forbidden list and in one without; a public check still says how."""
    path = submission(
        {
            "s1_11_softmax": src("""
            import os

            def simple_normalize(x, dim=-1):
                return x / x.sum(dim=dim, keepdim=True)

            def softmax(x, dim=-1):
                os._exit(int(round(abs(float(x.flatten()[0])) * 10)) % 256)
            """),
            "s1_12_context": src("""
            import os, signal

            def context_vectors(attn_weights, values):
                if values.dim() == 3:
                    os.kill(os.getpid(), 1 + int(abs(float(values.flatten()[0])) * 100) % 30)
                os._exit(int(abs(float(values.flatten()[0])) * 1000) % 256)
            """),
        }
    )
    report = grade(path, "-e", "s1_11_softmax", "-e", "s1_12_context")
    for ex in ("s1_11_softmax", "s1_12_context"):
        for c in checks_of(report, ex):
            if c["visibility"] == "hidden" and c["kind"] == "fault":
                said = c["message"].replace(t("scan_hidden", lang="en"), "")
                assert not re.search(r"\d", said), c
                assert "exited or was stopped" in said, c
    public = [c["message"] for c in checks_of(report, "s1_12_context") if c["visibility"] == "public"]
    assert any(re.search(r"exit code \d+", m) for m in public), public


def test_a_file_nested_too_deeply_to_scan_scores_0_for_its_exercise_and_the_others_are_graded(submission):
    """`_x = 1+1+...+1`, hundreds of terms, in an exercise with a forbidden list: the scan's parser
    or visitor runs out of recursion. The grader cannot vouch for a file it cannot read, so that
    exercise scores 0 with a message saying why; nothing else is lost (no traceback, no grader
    error for the student, the other exercise graded)."""
    deep = (SOLUTIONS / "ch01" / "s1_11_softmax.py").read_text() + "\n_x = " + "+".join(["1"] * 600) + "\n"
    path = submission({"s1_11_softmax": deep})
    report = grade(path, "-e", "s1_11_softmax", "-e", "s1_12_context")
    softmax = [c for c in report["checks"] if c["exercise"] == "s1_11_softmax"]
    assert softmax and all(c["score"] == 0 for c in softmax)
    assert any("nested too deeply" in c["message"] for c in softmax if c["visibility"] == "public")
    context = [c for c in report["checks"] if c["exercise"] == "s1_12_context"]
    assert context and all(c["status"] == "passed" for c in context)
