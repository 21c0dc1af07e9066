"""`kata grade DIR --out OUT` again: a run killed with SIGKILL resumes without losing or
duplicating a result; changed submissions are graded again; another course version is refused."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT, SOLUTIONS, kata
from tests.test_batch import EX, WRONG, here, rows

pytestmark = pytest.mark.slow  # about 1.5 minutes of killed and resumed runs: CI's second step


def _class_of(tmp_path):
    """Six entries: two right, one wrong, one syntax error, one broken zip; S00 and s00 clash."""
    cls = tmp_path / "class"
    cls.mkdir()
    for name in ("s00", "s01", "s02", "S00"):
        shutil.copytree(SOLUTIONS, cls / name)
    (cls / "s01" / "ch01" / "s1_11_matmul.py").write_text(WRONG)
    (cls / "s02" / "ch01" / "s1_11_matmul.py").write_text("def matmul(A, B):\n    return A @@ B\n")
    (cls / "zz.zip").write_bytes(b"broken")
    return cls


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _students(out):
    return {p.parent.name: json.loads(p.read_text())["student"] for p in out.glob("students/*/report.json")}


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The class graded once, without interruption."""
    tmp = tmp_path_factory.mktemp("resume")
    cls = _class_of(tmp)
    whole = tmp / "whole"
    ref = kata("grade", str(cls), "--out", str(whole), "--jobs", "2", *EX)
    assert ref.returncode == 1, ref.stderr  # zz.zip is refused
    return cls, whole


def test_a_run_killed_with_sigkill_resumes_without_losing_or_duplicating_a_result(reference, tmp_path):
    cls, whole = reference
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), "--jobs", "2", *EX]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, env={**os.environ, "KATA_LANG": "en"})
    deadline = time.monotonic() + 120
    while not list(out.glob("students/*/report.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)  # the scheduler only: its grading processes must notice by themselves
    proc.wait()
    deadline = time.monotonic() + 30
    while _alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(proc.pid), "grading processes outlived the killed scheduler"
    done = list(out.glob("students/*/report.json"))
    assert 1 <= len(done) < 5, "the run was not killed mid-way"
    (done[0].parent / ".report.json.x1y2z3.part").write_text('{"half": ')  # as if killed mid-write

    again = kata("grade", str(cls), "--out", str(out), "--jobs", "2", *EX)
    assert again.returncode == 1, again.stderr
    assert f"{len(done)} of 5 submissions already graded" in again.stdout
    assert again.stdout.count("✔") + again.stdout.count("✘") == 5 - len(done)
    assert (out / "gradebook.csv").read_text() == (whole / "gradebook.csv").read_text()
    assert not list(out.rglob("*.part"))
    assert _students(out) == _students(whole)
    assert sorted(s["source"] for s in _students(out).values()) == ["S00", "s00", "s01", "s02", "zz.zip"]
    book = rows(out)
    assert (book["S00"]["total"], book["s00-2"]["total"], book["s01"]["total"], book["s02"]["total"]) == ("5", "5", "1", "0")
    assert book["zz"]["status"] == "refused"


def test_changed_submissions_are_graded_again_and_another_course_version_is_refused(reference, tmp_path):
    first_cls, whole = reference
    cls, out = tmp_path / "class", tmp_path / "out"
    cls.mkdir()
    shutil.copytree(first_cls / "s00", cls / "s00")  # the same entries elsewhere: still the same submissions
    shutil.copy(first_cls / "zz.zip", cls)
    shutil.copytree(whole, out)
    (cls / "s00" / "ch01" / "s1_11_matmul.py").write_text(WRONG)
    proc = kata("grade", str(cls), "--out", str(out), *EX)
    assert "1 of 2 submissions already graded" in proc.stdout
    assert "s00-2: the submission changed since it was graded; grading it again" in proc.stdout
    assert "s00-2: 1/5" in proc.stdout and "zz" not in proc.stdout.replace("zz.zip", "")  # same file: kept
    assert rows(out)["s00-2"]["total"] == "1" and rows(out)["S00"]["total"] == "5"  # S00 is not in this folder

    meta = json.loads((out / "batch.json").read_text())
    meta["course"] = "0123456789abcdef"  # as if graded with other checks or fixtures
    (out / "batch.json").write_text(json.dumps(meta))
    before = {p: p.read_bytes() for p in out.rglob("report.json")}
    code, _, stderr = here("grade", str(cls), "--out", str(out), *EX)
    assert code == 2 and "another course version or other settings (course: '0123456789abcdef' ->" in stderr
    code, _, stderr = here("grade", str(cls), "--out", str(out), "-e", "s1_11_softmax")
    assert code == 2 and "exercises: ['s1_11_matmul'] -> ['s1_11_softmax']" in stderr
    assert {p: p.read_bytes() for p in out.rglob("report.json")} == before

    proc = kata("grade", str(cls), "--out", str(out), "--force", *EX)  # everything graded again
    assert "s00-2: 1/5" in proc.stdout and "zz: not graded" in proc.stdout
    assert json.loads((out / "batch.json").read_text())["course"] != "0123456789abcdef"


def test_ctrl_c_stops_the_run_keeps_every_finished_result_and_says_how_to_go_on(reference, tmp_path):
    cls, _ = reference
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), "--jobs", "1", *EX]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True, env={**os.environ, "KATA_LANG": "en"})
    deadline = time.monotonic() + 120
    while not list(out.glob("students/*/report.json")) and time.monotonic() < deadline:
        time.sleep(0.02)
    os.killpg(proc.pid, signal.SIGINT)  # what Ctrl-C in a terminal does: the whole process group
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    done = sorted(p.parent.name for p in out.glob("students/*/report.json"))
    assert 1 <= len(done) < 5
    assert f"Interrupted: {len(done)} of 5 submissions have results. Run the same command again to go on." in stderr
    assert sorted(rows(out)) == done  # the class files are written from what is there
    assert not list(out.rglob("*.part"))
    deadline = time.monotonic() + 30
    while _alive(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not _alive(proc.pid)


def test_a_submission_past_the_timeout_is_an_error_that_the_next_run_grades_again(reference, tmp_path):
    first_cls, _ = reference
    cls, out = tmp_path / "class", tmp_path / "out"
    cls.mkdir()
    shutil.copytree(first_cls / "s00", cls / "s00")
    shutil.copy(first_cls / "zz.zip", cls)
    proc = kata("grade", str(cls), "--out", str(out), "--timeout", "0.5", *EX)  # no sandbox starts that fast
    assert proc.returncode == 1
    assert "s00: the grader failed: grading took longer than 0.5 s and was stopped (graded again by the next run)" \
        in proc.stdout
    assert rows(out)["s00"]["status"] == "error" and rows(out)["zz"]["status"] == "refused"
    assert "Submissions with status `error` are graded again by the next run" in (out / "summary.md").read_text()
    proc = kata("grade", str(cls), "--out", str(out), *EX)
    assert proc.returncode == 1 and "1 of 2 submissions already graded" in proc.stdout
    assert "s00: 5/5" in proc.stdout and rows(out)["s00"]["status"] == "graded"
