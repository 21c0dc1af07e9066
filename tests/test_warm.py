"""The warm grader (grader/student/warm/): `kata check` through a course's background server gives
exactly what grading in the command's own process gives, and the server behaves as a student's
background process must: started on demand, reused, replaced when the grader or the course
changes, stopped by a hang-up in the middle of a grading, after its idle time, and never
reachable by the code it grades."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from grader.course import manifest as course_mod
from grader.student.warm import address, client
from tests.conftest import ROOT, SOLUTIONS

SOFTMAX = "ch01/s1_11_softmax.py"


@pytest.fixture
def warm(tmp_course, monkeypatch):
    """A course copy and a private socket folder (short: AF_UNIX paths are), the server stopped after."""
    folder = Path(tempfile.mkdtemp(prefix="kw-"))
    os.chmod(folder, 0o700)
    monkeypatch.setenv("KATA_WARM", "1")
    monkeypatch.setenv("KATA_WARM_DIR", str(folder))
    monkeypatch.setenv("KATA_WARM_IDLE", "120")
    assets = ROOT / ".kata" / "assets"
    if assets.is_dir():
        shutil.copytree(assets, tmp_course / ".kata" / "assets")
    course = course_mod.load(tmp_course, require_stubs=False)
    yield tmp_course, folder, course
    client.stop(course)
    deadline = time.monotonic() + 20
    while list(folder.glob("*.sock")) and time.monotonic() < deadline:
        time.sleep(0.1)
    shutil.rmtree(folder, ignore_errors=True)


def kata(project: Path, *args: str, warm_on: bool = True, lang: str = "en", timeout: float = 300):
    env = {
        **os.environ,
        "KATA_LANG": lang,
        "PYTHONPATH": str(ROOT),
        "COLUMNS": "200",
        "KATA_WARM": "1" if warm_on else "0",
    }
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=project, capture_output=True, text=True, timeout=timeout, env=env
    )


def server_pid(course) -> int | None:
    reply = client.request(course, {"op": "ping"}, start=False)
    return reply.get("pid") if reply else None


def without_time(text: str) -> str:
    """The output without the seconds a run took (the one line that may differ)."""
    return re.sub(r" · [\d.]+ (?:s|秒)$", "", text, flags=re.M)


def test_the_client_side_loads_no_torch():
    """`kata check` through a running server pays a Python start-up, not torch's import."""
    code = (
        "import sys, grader.cli, grader.student.commands, grader.student.checkview, grader.student.watch, "
        "grader.student.warm.client; print(sorted(m for m in ('torch', 'pytest', 'numpy') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True).stdout
    assert out.strip() == "[]"


def test_same_verdicts_as_grading_in_process(warm):
    """A stub, a solution, a wrong answer, a forbidden API and a syntax error, in English and
    Chinese: the same screen with and without the server (the seconds aside)."""
    project, folder, course = warm
    target = project / "exercises" / SOFTMAX
    solution = (SOLUTIONS / SOFTMAX).read_text()
    variants = {
        "stub": target.read_text(),
        "solution": solution,
        "wrong": solution.replace("dim=dim, keepdim=True)", "dim=dim, keepdim=True) * 2", 1),
        "forbidden": solution + "\n\ndef again(x):\n    import torch\n    return torch.softmax(x, 0)\n",
        "syntax": solution + "\ndef broken(:\n",
    }
    assert variants["wrong"] != solution
    for name, source in variants.items():
        target.write_text(source)
        for lang in ("en", "zh"):
            cold = kata(project, "check", "s1_11_softmax", warm_on=False, lang=lang)
            hot = kata(project, "check", "s1_11_softmax", lang=lang)
            assert (hot.returncode, without_time(hot.stdout)) == (cold.returncode, without_time(cold.stdout)), (
                name,
                lang,
                hot.stdout,
                hot.stderr,
                cold.stdout,
            )
    assert list(folder.glob("*.sock")), "no server was started"


def test_all_exercises_graded_in_lanes_match_one_process(warm):
    """Every exercise at once, half of them solved: the server's lanes, merged, give the same
    checks in the same order with the same verdicts and points as one process."""
    project, folder, course = warm
    for i, ex in enumerate(course.exercises):
        if i % 2 == 0:
            shutil.copy(SOLUTIONS / ex.file, project / "exercises" / ex.file)
    result, shas = client.grade(course, course.exercises)
    from grader.checking import runner
    from grader.checking.submission import open_submission

    with open_submission(course.exercises_dir, course.chapter, course.exercises) as sub:
        here = runner.run(course, sub, course.exercises, public_only=True, skip_missing_assets=True)  # as kata check
    assert [(r.exercise, r.name, r.status, r.score) for r in result.results] == [
        (r.exercise, r.name, r.status, r.score) for r in here.results
    ]
    assert [r.message for r in result.results] == [r.message for r in here.results]
    assert set(shas) == {ex.id for ex in course.exercises if (project / "exercises" / ex.file).is_file()}


def test_a_server_is_reused_and_replaced_when_the_grader_changes(warm):
    project, folder, course = warm
    assert kata(project, "check", "s1_11_softmax").returncode == 1
    first = server_pid(course)
    assert first
    stages = list(Path(tempfile.gettempdir()).glob("kata-warm-*"))
    assert stages and all(p.stat().st_mode & 0o777 == 0o700 for p in stages), (
        "a staging folder that other users of the machine can read"
    )  # the student's code is in it
    assert kata(project, "check", "s1_11_softmax").returncode == 1
    assert server_pid(course) == first, "a second check started another server"
    # a change to what the server loaded (here the course's manifest) makes it stale
    toml = project / "course.toml"
    toml.write_text(toml.read_text() + "\n")
    course2 = course_mod.load(project, require_stubs=False)
    proc = kata(project, "check", "s1_11_softmax")
    assert proc.returncode == 1, proc.stderr
    second = server_pid(course2)
    assert second and second != first


def test_a_hang_up_stops_the_grading_and_the_next_check_works(warm):
    """Ctrl-C in `kata check` (or q in watch) while a slow exercise is graded: the lanes stop at
    once, and the next check is graded normally."""
    project, folder, course = warm
    target = project / "exercises" / SOFTMAX
    solution = (SOLUTIONS / SOFTMAX).read_text()
    target.write_text(solution + "\nimport time\ntime.sleep(30)\n")  # each check's import: its time limit
    assert kata(project, "check", "s1_11_matmul").returncode in (0, 1)  # the server is up
    proc = subprocess.Popen(
        [sys.executable, "-m", "grader", "check", "s1_11_softmax"],
        cwd=project,
        env={**os.environ, "PYTHONPATH": str(ROOT), "KATA_LANG": "en"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # as in a terminal
    time.sleep(3)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    target.write_text(solution)
    t0 = time.monotonic()
    done = kata(project, "check", "s1_11_softmax")
    assert done.returncode == 0, done.stdout + done.stderr
    assert time.monotonic() - t0 < 25, "the interrupted grading went on"


def test_code_that_kills_its_fork_server_costs_only_its_own_checks(warm):
    """A student's import that kills the sandbox's fork server: its checks fail as they do in
    one process, and the server grades the next save with working sandboxes."""
    project, folder, course = warm
    target = project / "exercises" / SOFTMAX
    solution = (SOLUTIONS / SOFTMAX).read_text()
    target.write_text(solution + "\nimport os, signal\nos.kill(os.getppid(), signal.SIGKILL)\n")
    cold = kata(project, "check", "s1_11_softmax", warm_on=False)
    hot = kata(project, "check", "s1_11_softmax")
    assert hot.returncode == cold.returncode == 1
    # the verdicts and points alike (which words a killed worker's fault gets is a race in both)
    rows = lambda out: [
        line
        for line in without_time(out).splitlines()
        if line.lstrip().startswith(("✔", "✘")) or "public checks pass" in line
    ]
    assert rows(hot.stdout) == rows(cold.stdout), hot.stdout + "\n---\n" + cold.stdout
    target.write_text(solution)
    again = kata(project, "check", "s1_11_softmax")
    assert again.returncode == 0, again.stdout + again.stderr


def test_two_checks_at_once_share_one_server(warm):
    project, folder, course = warm
    shutil.copy(SOLUTIONS / SOFTMAX, project / "exercises" / SOFTMAX)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "KATA_LANG": "en"}
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "grader", "check", "s1_11_softmax"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0], outs
    assert len(list(folder.glob("*.sock"))) == 1
    deadline = time.monotonic() + 20  # a server started at the same moment gives way to the one that answers
    while True:
        pids = subprocess.run(
            ["pgrep", "-f", f"grader.student.warm.server.* {project}$"], capture_output=True, text=True
        ).stdout.split()
        if len(pids) == 1 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert len(pids) == 1, pids


def test_the_server_stops_when_idle(warm, monkeypatch):
    project, folder, course = warm
    monkeypatch.setenv("KATA_WARM_IDLE", "3")
    assert kata(project, "check", "s1_11_matmul").returncode in (0, 1)
    pid = server_pid(course)
    assert pid
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
        time.sleep(0.2)
    assert not Path(f"/proc/{pid}").exists(), "the idle server is still running"
    assert not list(folder.glob("*.sock"))


def test_an_unsafe_socket_folder_is_not_used(warm, monkeypatch):
    """A socket folder open to others (or a link) is refused: the command grades in its own process."""
    project, folder, course = warm
    os.chmod(folder, 0o777)
    try:
        assert address.socket_path(course) is None
        proc = kata(project, "check", "s1_11_matmul")
        assert proc.returncode in (0, 1) and "public checks pass" in proc.stdout
        assert not list(folder.glob("*.sock"))
    finally:
        os.chmod(folder, 0o700)
    link = Path(tempfile.mkdtemp(prefix="kwl-")) / "link"
    link.symlink_to(folder)
    monkeypatch.setenv("KATA_WARM_DIR", str(link))
    assert address.folder() is None


def test_the_sandbox_cannot_see_the_socket(warm):
    """Student code run by the server looks for the server's socket folder and cannot reach it."""
    project, folder, course = warm
    if shutil.which("bwrap") is None or os.environ.get("KATA_SANDBOX", "").lower() in ("none", "limits-only"):
        pytest.skip("limits-only grading runs student code as this user, with no isolation (SECURITY.md)")
    target = project / "exercises" / "ch01" / "s1_12_context.py"  # an exercise that may import os
    probe = (
        f"\nimport os\nraise ValueError('FOUND=' + str(os.path.exists({str(folder)!r})) + "
        f"str(os.path.exists({str(client.address.socket_path(course))!r})))\n"
    )
    target.write_text((SOLUTIONS / "ch01" / "s1_12_context.py").read_text() + probe)
    proc = kata(project, "check", "s1_12_context")
    assert "FOUND=FalseFalse" in proc.stdout, proc.stdout + proc.stderr
    assert list(folder.glob("*.sock")), "the check did not go through the server"
