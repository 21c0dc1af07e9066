"""`kata watch` in a real terminal: tmux runs it, the test types keys, saves files and reads
the screen (`tmux capture-pane`) as a student would see it."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from grader.course import manifest as course_mod
from tests.conftest import ROOT

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (setup.sh installs it)"),
]

SOFTMAX = "exercises/ch01/s1_11_softmax.py"


class Terminal:
    """One tmux session on a private server, running `kata ARGS` in `project`; after kata
    exits, the shell prints its exit status and whether the terminal settings came back."""

    def __init__(self, project, *args: str, width: int = 160, env: dict | None = None):
        self.server = f"kata-test-{uuid.uuid4().hex[:8]}"
        env = {"KATA_LANG": "en", "PYTHONPATH": str(ROOT), "TERM": "xterm-256color", **(env or {})}
        kata = " ".join(shlex.quote(a) for a in [sys.executable, "-m", "grader", *args])
        script = (
            f"cd {shlex.quote(str(project))}; unset COLUMNS LINES; before=$(stty -g); "
            f"env {' '.join(f'{k}={shlex.quote(v)}' for k, v in env.items())} {kata}; echo EXIT=$?; "
            '[ "$before" = "$(stty -g)" ] && echo TTY=restored || echo TTY=changed; sleep 600'
        )
        self.tmux("new-session", "-d", "-s", "kata", "-x", str(width), "-y", "60", script)

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.server, *args], check=True, capture_output=True, text=True, timeout=30
        ).stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", "kata")

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "kata", *keys)

    def wait_for(self, *texts: str, timeout: float = 45) -> str:
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen()
            if all(t in screen for t in texts):
                return screen
            if time.monotonic() > deadline:
                missing = [t for t in texts if t not in screen]
                raise AssertionError(f"not on the screen after {timeout} s: {missing}\n--- screen ---\n{screen}")
            time.sleep(0.1)

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.server, "kill-server"], capture_output=True, timeout=30)


@pytest.fixture
def terminal():
    opened = []

    def start(project, *args, width: int = 160, env: dict | None = None):
        term = Terminal(project, *args, width=width, env=env)
        opened.append(term)
        return term

    yield start
    for term in opened:
        term.close()


@pytest.fixture
def warm(tmp_course):
    """The environment of a watch that grades through the course's warm grader, as a student's
    does (the suite turns it off elsewhere); the server is stopped after the test."""
    folder = Path(tempfile.mkdtemp(prefix="kw-"))
    os.chmod(folder, 0o700)
    env = {"KATA_WARM": "1", "KATA_WARM_DIR": str(folder), "KATA_WARM_IDLE": "120"}
    yield env
    code = "from grader.course import manifest; from grader.student.warm import client; client.stop(manifest.load())"
    subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_course,
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        timeout=60,
    )
    shutil.rmtree(folder, ignore_errors=True)


def test_watch_fails_shows_hints_passes_moves_on_and_quits(tmp_course, terminal):
    c = course_mod.load(tmp_course)
    hints = c.get("s1_11_softmax").hints
    term = terminal(tmp_course, "watch", "s1_11_softmax")

    screen = term.wait_for(
        "kata watch · exercise 13/38: s1_11_softmax",
        "✘ softmax of the book's examples",
        "First failure: s1_11_softmax › softmax of the book's examples (not written yet)",
        "Watching exercises/ch01/s1_11_softmax.py",
        "h: next hint · q: quit",
    )
    assert hints[0] not in screen

    term.keys("h")
    screen = term.wait_for(f"Hint 1/3  {hints[0]}", "2 more: press h for the next one.")
    assert hints[1] not in screen
    term.keys("h")
    term.wait_for(f"Hint 2/3  {hints[1]}", "1 more: press h for the next one.")

    # a wrong answer first: the screen shows the new failure after the save
    solution = (ROOT / "solutions/ch01/s1_11_softmax.py").read_text()
    (tmp_course / SOFTMAX).write_text(solution.replace("return e / e.sum(dim=dim, keepdim=True)", "return e"))
    term.wait_for(
        "First failure: s1_11_softmax › softmax of the book's examples (your result is not right)", "Worst at index"
    )

    # the right answer, saved the way editors do (a new file renamed over the old one)
    tmp = tmp_course / "exercises/ch01/.s1_11_softmax.py.new"
    tmp.write_text(solution)
    os.replace(tmp, tmp_course / SOFTMAX)
    nxt = "s1_12_scaled_attention"  # the next exercise in book order, not passing
    public = round(sum(ch.points for ex in c.exercises for ch in ex.checks if not ch.hidden))
    screen = term.wait_for(
        f"✔ s1_11_softmax passes all its public checks. Next: {nxt}",
        f"kata watch · exercise 14/38: {nxt}",
        f"First failure: {nxt}",
        f"1/38 exercises pass their public checks (8/{public} public points",
    )
    assert "Hint 1/3" not in screen  # no hint of the new exercise revealed yet

    term.keys("q")
    screen = term.wait_for("Stopped watching.", "EXIT=0", "TTY=")
    assert "TTY=restored" in screen and "Traceback" not in screen


def test_ctrl_c_quits_cleanly_even_while_checks_run(tmp_course, terminal, warm):
    """Through the warm grader: Ctrl-C while it grades stops the watch at once, and a check
    right after is graded by the same course's server, which stopped the interrupted run."""
    term = terminal(tmp_course, "watch", "s1_11_softmax", env=warm)
    term.wait_for("First failure: s1_11_softmax")
    (tmp_course / SOFTMAX).write_text((tmp_course / SOFTMAX).read_text() + "\n# saved again\n")
    time.sleep(0.5)  # the save is seen and the checks start again; Ctrl-C now interrupts them
    term.keys("C-c")
    screen = term.wait_for("Stopped watching.", "EXIT=0", "TTY=")
    assert "TTY=restored" in screen and "Traceback" not in screen
    assert list(Path(warm["KATA_WARM_DIR"]).glob("*.sock")), "the watch did not grade through the warm grader"
    shutil.copy(ROOT / "solutions/ch01/s1_11_softmax.py", tmp_course / SOFTMAX)
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "check", "s1_11_softmax"],
        cwd=tmp_course,
        text=True,
        capture_output=True,
        timeout=120,
        env={**os.environ, **warm, "PYTHONPATH": str(ROOT), "KATA_LANG": "en"},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_watch_in_chinese_at_80_columns_on_the_chinese_stubs(tmp_course, terminal, warm):
    """A reader of the Chinese chapter: Chinese stubs, `kata --lang zh watch` in an 80-column
    terminal, a wrong save and then the right one, each verdict read in Chinese (graded by the
    warm grader, as a student's watch is)."""
    from grader.course.messages import t

    proc = subprocess.run(
        [sys.executable, "-m", "grader", "stubs", "--lang", "zh"],
        cwd=tmp_course,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    stub = (tmp_course / SOFTMAX).read_text()
    assert stub.startswith("# 练习 s1_11_softmax") and "数值稳定" in stub
    ex = course_mod.load(tmp_course).get("s1_11_softmax")
    first = next(c.title_zh for c in ex.checks if c.title == "softmax of the book's examples")
    term = terminal(tmp_course, "--lang", "zh", "watch", "s1_11_softmax", width=80, env=warm)
    term.wait_for(
        t("watch_title", lang="zh", n=13, total=38, id=ex.id, section=ex.section),
        f"✘ {first}",
        t("watch_footer", lang="zh", path=SOFTMAX),
    )

    solution = (ROOT / "solutions/ch01/s1_11_softmax.py").read_text()
    (tmp_course / SOFTMAX).write_text(solution.replace("return e / e.sum(dim=dim, keepdim=True)", "return e"))
    term.wait_for(t("check_first_failure", lang="zh", id=ex.id, check=first, kind=t("check_kind_check", lang="zh")))

    tmp = tmp_course / "exercises/ch01/.s1_11_softmax.py.new"
    tmp.write_text(solution)
    os.replace(tmp, tmp_course / SOFTMAX)
    screen = term.wait_for(t("watch_passed", lang="zh", id=ex.id, next="s1_12_scaled_attention"))
    assert "First failure" not in screen and "public checks" not in screen  # nothing left in English
    term.keys("q")
