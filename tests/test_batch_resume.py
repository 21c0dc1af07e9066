"""`kata grade DIR --out OUT` again: a run killed with SIGKILL (once, or again and again at random
moments) resumes without losing or duplicating a result; a full disk stops it plainly and the
rerun completes it; changed submissions are graded again; another course version is refused."""

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import PAGE, ROOT, SOLUTIONS, fill, kata
from tests.test_batch import EX, WRONG, here, rows
from tests.test_determinism import _without_timings

pytestmark = pytest.mark.slow  # about 2.5 minutes of killed and resumed runs: CI's second step


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
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "KATA_LANG": "en"},
    )
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
    assert (book["S00"]["total"], book["s00-2"]["total"], book["s01"]["total"], book["s02"]["total"]) == (
        "5",
        "5",
        "0",
        "0",
    )
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
    graded = proc.stdout.split("Check before importing")[0]  # the gate below lists zz, refused: not graded again
    assert "s00-2: 0/5" in graded and "zz" not in graded.replace("zz.zip", "")  # same file: kept
    assert rows(out)["s00-2"]["total"] == "0" and rows(out)["S00"]["total"] == "5"  # S00 is not in this folder

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
    assert "s00-2: 0/5" in proc.stdout and "zz: not graded" in proc.stdout
    assert json.loads((out / "batch.json").read_text())["course"] != "0123456789abcdef"


def test_ctrl_c_stops_the_run_keeps_every_finished_result_and_says_how_to_go_on(reference, tmp_path):
    cls, _ = reference
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), "--jobs", "1", *EX]
    proc = subprocess.Popen(
        cmd,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**os.environ, "KATA_LANG": "en"},
        # SIGINT at its default, as in a terminal: a run started in the background
        # (nohup ... &, a CI runner) inherits it ignored, and Python then installs no handler
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
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
    shutil.copytree(first_cls / "s01", cls / "s01")
    (tmp_path / "tmp").mkdir()
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), "--timeout", "0.5", *EX],
        cwd=ROOT,
        capture_output=True,
        text=True,  # no sandbox starts that fast
        env={**os.environ, "KATA_LANG": "en", "TMPDIR": str(tmp_path / "tmp")},
    )
    assert proc.returncode == 1
    assert not list((tmp_path / "tmp").glob("kata-*")), "the killed grading process's temporary files were left behind"
    assert (
        "s00: the grader failed: grading took longer than 0.5 s and was stopped (graded again by the next run)"
        in proc.stdout
    )
    assert rows(out)["s00"]["status"] == "error" and rows(out)["s01"]["status"] == "error"
    assert "Submissions with status `error` are graded again by the next run" in (out / "summary.md").read_text()
    proc = kata("grade", str(cls), "--out", str(out), *EX)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "s00: 5/5" in proc.stdout and rows(out)["s00"]["status"] == "graded"
    assert rows(out)["s01"]["status"] == "graded"


# ----------------------------------------------------------------------------- repeated SIGKILLs
def _processes() -> dict[int, tuple[int, str]]:
    """Every process of the host: pid -> (parent pid, start time)."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = open(f"/proc/{entry}/stat").read()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2 :].split()
            found[int(entry)] = (int(fields[1]), fields[19])
    return found


def _tree(root: int) -> set[tuple[int, str]]:
    """The process `root` and every process under it (the grading processes, their sandboxes and
    what runs in them, even in a new session), each as (pid, start time): a reused pid is not it."""
    procs = _processes()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in procs.items():
        children.setdefault(ppid, []).append(pid)
    todo, seen = [root], set()
    while todo:
        pid = todo.pop()
        if pid in procs and (pid, procs[pid][1]) not in seen:
            seen.add((pid, procs[pid][1]))
            todo += children.get(pid, [])
    return seen


def _survivors(tree: set[tuple[int, str]]) -> set[tuple[int, str]]:
    now = _processes()
    return {(pid, start) for pid, start in tree if pid in now and now[pid][1] == start}


def _records(out) -> dict[str, bytes]:
    return {p.parent.name: p.read_bytes() for p in out.glob("students/*/report.json")}


# Each kill: when (a random delay after the run starts, or a random delay after its next record
# is written) and whom (the scheduler alone, whose grading processes must notice and stop by
# themselves, or the whole process group, as a terminal's kill or an OOM killer of the session would).
KILLS = [
    ("record", "scheduler"),
    ("time", "group"),
    ("record", "group"),
    ("time", "scheduler"),
    ("record", "scheduler"),
    ("time", "group"),
    ("record", "group"),
]


def test_killed_again_and_again_at_random_moments_it_resumes_to_the_gradebook_of_an_uninterrupted_run(tmp_path):
    cls = _class_of(tmp_path)  # and fifteen more, so that seven kills find work left to interrupt (a slot
    for i in range(15):  # keeps its sandbox from one student to the next: each takes well under a second)
        shutil.copytree(SOLUTIONS, cls / f"t{i}")
        if i % 2:
            (cls / f"t{i}" / "ch01" / "s1_11_matmul.py").write_text(WRONG)
    whole, out = tmp_path / "whole", tmp_path / "out"
    ref = kata("grade", str(cls), "--out", str(whole), "--jobs", "2", *EX)
    assert ref.returncode == 1, ref.stderr  # zz.zip is refused
    total = len(_records(whole))
    assert total == 20
    # The kills' delays scale with how fast this machine grades: a student takes about `per` seconds
    # with one job, measured from the reference run's records as they were written (two jobs, so
    # twice their spacing; the start-up before the first record is not in it: counted in, it let a
    # "time" kill come after the whole class), and the first record comes `first` seconds after a
    # run starts. So a faster grader is still killed mid-way through the class, and a slower one not
    # always before its first record.
    written = sorted(p.stat().st_mtime for p in whole.glob("students/*/report.json"))
    per = max(0.05, 2 * (written[-1] - written[0]) / (total - 1))
    first = None

    rng = random.Random(1)  # seeded: a failure replays with the same delays
    cmd = [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), "--jobs", "1", *EX]
    (tmp_path / "tmp").mkdir()  # the runs' TMPDIR: what they leave there, the next run must remove
    env = {**os.environ, "KATA_LANG": "en", "TMPDIR": str(tmp_path / "tmp")}
    kept: dict[str, bytes] = {}
    mid_way = 0
    for when, whom in KILLS:
        before = len(kept)
        proc = subprocess.Popen(
            cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True, env=env
        )
        launched = time.monotonic()
        if when == "time":  # starting, discovering, writing batch.json, grading
            time.sleep(rng.uniform(0.3, (first or 3.0) + 2 * per))
        else:
            delay, deadline = (
                rng.uniform(0.0, 1.5 * per),
                time.monotonic() + 120,
            )  # its files, the next sandbox, a check
            while (
                len(list(out.glob("students/*/report.json"))) <= before
                and proc.poll() is None
                and time.monotonic() < deadline
            ):
                time.sleep(0.01)
            first = first or time.monotonic() - launched
            time.sleep(delay)
        tree = _tree(proc.pid)
        try:
            if whom == "scheduler":
                os.kill(proc.pid, signal.SIGKILL)
            else:
                os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass  # it had finished: nothing was left to grade
        proc.wait()
        deadline = time.monotonic() + 30
        while _survivors(tree) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _survivors(tree), f"processes outlived the run killed ({whom}, {when}): {_survivors(tree)}"

        now = _records(out)
        for name, data in kept.items():  # a record, once written, is never rewritten or lost
            assert now.get(name) == data, f"{name}'s record changed when the run was killed ({whom}, {when})"
        for data in now.values():
            assert json.loads(data)["student"]["status"] in ("graded", "refused")
        sources = [json.loads(d)["student"]["source"] for d in now.values()]
        assert len(sources) == len(set(sources)), f"a student graded twice: {sorted(sources)}"
        kept = now
        last_mid = 0 < len(now) < total
        mid_way += last_mid

    assert mid_way >= 4, f"only {mid_way} of the kills came mid-way through the class (per={per:.2f}s, first={first})"
    if last_mid:  # the last run was killed while it graded: its scratch folder is the next run's to remove
        assert list((tmp_path / "tmp").glob("kata-run-*")), "the killed runs left no scratch folder to clean up"
    again = subprocess.run([*cmd[: -len(EX) - 1], "2", *EX], cwd=ROOT, capture_output=True, text=True, env=env)
    assert again.returncode == 1, again.stderr
    # multiprocessing's own socket folder (pymp-*) of a killed scheduler stays: a few bytes, and not ours
    assert not list((tmp_path / "tmp").glob("kata-*")), "temporary files of the killed runs were left behind"
    assert f"{len(kept)} of {total} submissions already graded" in again.stdout
    assert (out / "gradebook.csv").read_text() == (whole / "gradebook.csv").read_text()
    assert {n: _without_timings(json.loads(d)) for n, d in _records(out).items()} == {
        n: _without_timings(json.loads(d)) for n, d in _records(whole).items()
    }
    assert all(_records(out)[n] == d for n, d in kept.items())
    assert sorted(s["source"] for s in _students(out).values()) == sorted(
        ["S00", "s00", "s01", "s02", *(f"t{i}" for i in range(15)), "zz.zip"]
    )
    assert not list(out.rglob("*.part"))


# ----------------------------------------------------------------------------- a full disk
def _pages(path) -> int:
    return -(-path.stat().st_size // PAGE)


def test_a_full_disk_stops_the_run_keeps_every_record_and_the_same_command_completes_it(reference, small_disk):
    cls, whole = reference
    disk = small_disk("disk", 1024)
    out = disk / "out"
    # Room for batch.json and two students' files, and a page more: the third student's record
    # (or one of its files) is the first write that finds the disk full.
    student = max(sum(_pages(p) for p in d.rglob("*") if p.is_file()) for d in (whole / "students").iterdir())
    filler = fill(disk, PAGE * (_pages(whole / "batch.json") + 2 * student + 1))
    cmd = ("grade", str(cls), "--out", str(out), "--jobs", "1", *EX)

    proc = kata(*cmd)
    assert proc.returncode == 3, (proc.stdout, proc.stderr)
    assert re.search(rf"kata grade: cannot write {re.escape(str(out))}/\S+: no space left on device\n", proc.stderr), (
        proc.stderr
    )
    assert "Grading stopped: no further submission was started. The " in proc.stderr
    assert "Free some space there and run the same command again: it goes on where it stopped." in proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    kept = _records(out)
    assert 1 <= len(kept) < 5 and f"The {len(kept)} results already in {out} are kept whole." in proc.stderr
    assert proc.stdout.count("✔") + proc.stdout.count("✘") <= len(kept)  # no submission graded after it
    for name, data in kept.items():  # whole and valid, and what the uninterrupted run wrote
        assert _without_timings(json.loads(data)) == _without_timings(json.loads(_records(whole)[name]))
    assert not [p for p in out.rglob(".*") if p.name != ".kata-lock"], "a temporary file stayed behind"

    proc = kata(*cmd)  # still full: it stops again, and what is there stays as it is
    assert proc.returncode == 3 and "no space left on device" in proc.stderr
    assert _records(out) == kept and not [p for p in out.rglob(".*") if p.name != ".kata-lock"]

    filler.unlink()
    proc = kata(*cmd)
    assert proc.returncode == 1, proc.stderr  # zz.zip is refused
    assert f"{len(kept)} of 5 submissions already graded" in proc.stdout
    assert (out / "gradebook.csv").read_text() == (whole / "gradebook.csv").read_text()
    assert {n: d for n, d in _records(out).items() if n in kept} == kept
    assert {n: _without_timings(json.loads(d)) for n, d in _records(out).items()} == {
        n: _without_timings(json.loads(d)) for n, d in _records(whole).items()
    }
    for d in (out / "students").iterdir():  # the derived files the full disk stopped are there too
        assert sorted(p.relative_to(d).as_posix() for p in d.rglob("*") if p.is_file()) == [
            "exercism/results.json",
            "feedback.html",
            "gradescope/results.json",
            "report.json",
        ]
    assert not list(out.rglob("*.part"))
