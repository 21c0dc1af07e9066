"""A submission's grading has a total budget (course.toml's budget_s and budget_cpu_s; `kata grade
--budget S --budget-cpu S`): an import that is slow on purpose pays its cost in every check, and
without the budget held a grader for half an hour. When it runs out, the checks after it fail as
"not run", the report says where it ran out, and what ran before keeps its points.
"""

import json
import time

import pytest

from grader.worker.budget import Budget
from tests.conftest import EXERCISES, ROOT, SOLUTIONS, grade, kata

# Appended to an exercise file: each costs its price at every import, that is in every check.
ATTACKS = {
    # 300 children that sleep (within the process limit), forked again by every check's import
    "forks": """
import os as _os, time as _time
for _i in range(300):
    try:
        if _os.fork() == 0:
            _time.sleep(600)
            _os._exit(0)
    except OSError:
        break
""",
    # kills the sandbox's fork server: the next check must start a new sandbox
    "kills_parent": """
import os as _os, signal as _signal
_os.kill(_os.getppid(), _signal.SIGKILL)
""",
    "sleeps": """
import time as _time
_time.sleep(4)
""",
    "burns_cpu": """
import time as _time
_t0 = _time.process_time()
while _time.process_time() - _t0 < 4:
    pass
""",
}


class FakeClock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_the_budget_counts_from_the_first_check_and_caps_every_call():
    clock = FakeClock()
    b = Budget(10, clock=clock)
    clock.now += 50  # before the first check: not counted
    assert b.cap(3) == (3, False) and not b.exhausted("a")
    clock.now += 8.5
    assert b.cap(3) == (pytest.approx(1.5), True)  # the call may take only what is left
    clock.now += 2
    assert b.cap(3)[0] == 0.005 and b.exhausted("s1_11_softmax")
    assert (b.spent_in, b.spent_on) == ("s1_11_softmax", "wall")
    assert b.exhausted("later") and b.spent_in == "s1_11_softmax"  # where it ran out stays


def test_cpu_time_is_counted_from_the_start_and_stops_a_call():
    clock, used = FakeClock(), [7.0]  # the sandbox had used 7 CPU seconds for earlier submissions
    b = Budget(100, 5, cpu_used=lambda: used[0], clock=clock)
    b.start()
    used[0] = 11.0
    assert not b.stop() and not b.exhausted("a")
    used[0] = 12.5
    assert b.stop() and b.exhausted("b") and b.spent_on == "cpu"
    assert b.describe() == {"seconds": "5", "kind": "cpu"}
    unknown = Budget(100, 5, cpu_used=lambda: None, clock=clock)  # no cgroup: wall time only
    assert unknown.cpu_left() is None and not unknown.stop()


def test_course_toml_states_the_budget_and_rejects_a_bad_one(tmp_path):
    from grader.course import manifest

    course = manifest.load(ROOT)
    assert (course.budget_s, course.budget_cpu_s) == (300, 600)
    bad = tmp_path / "course"
    bad.mkdir()
    text = (ROOT / "course.toml").read_text().replace("budget_s = 300", "budget_s = -1", 1)
    (bad / "course.toml").write_text(text)
    with pytest.raises(manifest.CourseError, match="budget_s must be a number of seconds above 0"):
        manifest.load(bad, check_files=False)


def test_a_bad_budget_option_is_refused():
    proc = kata("grade", str(SOLUTIONS), "--budget", "0")
    assert proc.returncode == 2 and "'0' is not a number of seconds above 0" in proc.stderr


def test_a_slow_import_stops_at_the_budget_and_what_ran_before_keeps_its_points(tmp_path):
    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    for ex in ("s1_11_softmax", "s1_12_context"):  # the first right and quick; the second sleeps at import
        (sub / "ch01" / f"{ex}.py").write_text((SOLUTIONS / "ch01" / f"{ex}.py").read_text())
    with open(sub / "ch01" / "s1_12_context.py", "a") as f:
        f.write(ATTACKS["sleeps"])
    started = time.monotonic()
    doc = grade(sub, "-e", "s1_11_softmax", "-e", "s1_12_context", "--budget", "6")
    took = time.monotonic() - started
    assert took < 6 + 15, f"grading took {took:.0f} s with a 6 s budget"
    softmax = [c for c in doc["checks"] if c["exercise"] == "s1_11_softmax"]
    assert softmax and all(c["status"] == "passed" for c in softmax)  # ran before the budget was spent
    context = [c for c in doc["checks"] if c["exercise"] == "s1_12_context"]
    # each of its checks imports it again (4 s): one passes, the next runs out of budget, the rest are not run
    kinds = [c["kind"] if c["status"] == "failed" else "passed" for c in context]
    assert kinds == ["passed"] * kinds.count("passed") + ["budget"] * kinds.count("budget") and kinds[-1] == "budget"
    assert any("during this check, in s1_12_context" in c["message"] for c in context)
    assert any(
        c["message"].startswith("not run: your submission used up its grading budget (6 s of wall time)")
        for c in context
    )
    assert any("grading budget used up (6 s of wall time) in s1_12_context" in n for n in doc["notes"])


@pytest.mark.slow
def test_four_slow_import_attacks_each_end_within_the_budget_and_the_class_is_unaffected(tmp_path):
    """Each attack appended to every file of a stub submission but the first exercise (right, and
    graded first): a batch of the four and an honest solution, with a 20 s budget."""
    budget = 20
    cls = tmp_path / "class"
    for name, attack in ATTACKS.items():
        shutil_copy(EXERCISES, cls / name)
        for f in sorted((cls / name / "ch01").glob("*.py")):
            if f.stem == "s1_01_next_token":
                f.write_text((SOLUTIONS / "ch01" / f.name).read_text())
            else:
                with open(f, "a") as out:
                    out.write(attack)
    shutil_copy(SOLUTIONS, cls / "honest")
    out = tmp_path / "out"
    started = time.monotonic()
    # s1_01 and §1.9-1.12: the honest solution takes a few seconds of its budget
    chosen = ["-e", "s1_01_next_token", "-e", "1.9", "-e", "1.10", "-e", "1.11", "-e", "1.12"]
    proc = kata(
        "grade", str(cls), "--out", str(out), "--jobs", "2", "--budget", str(budget), "-q", *chosen, timeout=900
    )
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    first_points = None
    for name in ATTACKS:
        doc = json.loads((out / "students" / name / "report.json").read_text())
        assert doc["student"]["status"] == "graded", (name, doc["student"])
        # the grading itself (its sandbox's start to its last check), within the budget and a margin
        # for the one call or sandbox start in progress when it ran out
        assert doc["duration_s"] <= budget + 12, f"{name}: graded in {doc['duration_s']} s with a {budget} s budget"
        assert any("grading budget used up" in n for n in doc["notes"]), (name, doc["notes"])
        first = [c for c in doc["checks"] if c["exercise"] == "s1_01_next_token"]
        assert first and all(c["status"] == "passed" for c in first), name
        first_points = sum(c["score"] for c in first)
        print(
            f"{name}: graded in {doc['duration_s']:g} s, {sum(c['kind'] == 'budget' for c in doc['checks'])} "
            f"of {len(doc['checks'])} checks cut by the budget"
        )
        assert doc["score"] == first_points, f"{name}: {doc['score']} points, only s1_01's {first_points} expected"
    honest = json.loads((out / "students" / "honest" / "report.json").read_text())
    assert honest["score"] == honest["max_score"] and not any("budget" in n for n in honest["notes"])
    # a rerun grades nothing again: a budget-exhausted submission is graded, not an error
    kept = {p.parent.name: p.read_bytes() for p in out.glob("students/*/report.json")}
    again = kata("grade", str(cls), "--out", str(out), "--jobs", "2", "--budget", str(budget), "-q", *chosen)
    assert again.returncode == 0, again.stderr
    assert {p.parent.name: p.read_bytes() for p in out.glob("students/*/report.json")} == kept
    meta = json.loads((out / "batch.json").read_text())
    assert meta["budget_s"] == budget
    print(f"class of 5 (4 attacks, 1 honest) graded in {took:.0f} s")


def shutil_copy(src, dst):
    import shutil

    shutil.copytree(src, dst)


def _counts_cpu() -> bool:
    from grader.course import manifest
    from grader.checking.runner import sandbox_at

    box = sandbox_at(manifest.load(ROOT), SOLUTIONS)
    box.launch()
    try:
        box.wait_ready()
        return box.cpu_seconds() is not None
    finally:
        box.close()


def test_cpu_time_runs_out_before_wall_time_where_the_sandbox_counts_it(tmp_path):
    if not _counts_cpu():
        pytest.skip("no cgroup counts the sandbox's CPU time here (not root, or no cpuacct): wall time only")
    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    (sub / "ch01" / "s1_12_context.py").write_text(
        (SOLUTIONS / "ch01" / "s1_12_context.py").read_text() + ATTACKS["burns_cpu"]
    )
    started = time.monotonic()
    doc = grade(sub, "-e", "s1_12_context", "--budget", "120", "--budget-cpu", "6")
    assert time.monotonic() - started < 6 + 20
    assert any("grading budget used up (6 s of CPU time) in s1_12_context" in n for n in doc["notes"]), doc["notes"]
    assert [c["kind"] for c in doc["checks"]][-1] == "budget"


# ---- what runs in the grader's own process, for a submission, is bounded too (an outside attack's findings)


def test_a_file_too_long_to_scan_fails_its_exercise_at_once(tmp_path):
    """The forbidden-API scan runs in the grader's process; an 8 MB file of dense code imported by a
    forbidden-list exercise once took 75 s to scan past a 15 s budget. Past 256 KB a file is not read."""
    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    softmax = (SOLUTIONS / "ch01" / "s1_11_softmax.py").read_text() + "\n\ndef _unused():\n    import s1_12_context\n"
    (sub / "ch01" / "s1_11_softmax.py").write_text(softmax)
    filler = "".join(f"_x{i} = torch.exp(torch.tensor({i}.0))\n" for i in range(9000))  # ~330 KB
    (sub / "ch01" / "s1_12_context.py").write_text((SOLUTIONS / "ch01" / "s1_12_context.py").read_text() + filler)
    started = time.monotonic()
    doc = grade(sub, "-e", "s1_11_softmax", "--budget", "30")
    assert time.monotonic() - started < 30
    public = [c for c in doc["checks"] if c["visibility"] == "public"]
    assert doc["score"] == 0 and all(c["kind"] == "forbidden" for c in doc["checks"])
    assert all("too long for the grader to read through" in c["message"] for c in public)


def test_a_huge_value_quoted_by_a_check_makes_no_huge_message(tmp_path):
    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    (sub / "ch01" / "s1_03_tokenizers.py").write_text(
        (SOLUTIONS / "ch01" / "s1_03_tokenizers.py").read_text()
        + "\n\ndef split_words(text):\n    return ['w%d' % i for i in range(200000)]\n"
    )
    doc = grade(sub, "-e", "s1_03_tokenizers")
    failed = [c for c in doc["checks"] if c["status"] == "failed"]
    assert failed and max(len(c["message"]) for c in doc["checks"]) < 4100
    assert any("more characters not shown" in c["message"] for c in failed)


def test_the_figures_of_a_page_stop_at_their_own_budget(tmp_path):
    from grader import listings
    from grader.checking.runner import sandbox_at
    from grader.course import manifest
    from grader.reports import figures

    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    (sub / "ch01" / "s1_05_positions.py").write_text(
        (SOLUTIONS / "ch01" / "s1_05_positions.py").read_text()
        + "\n\nimport time as _time\n_real = sinusoidal_position_encoding\n\n"
        "def sinusoidal_position_encoding(seq_len, d_model):\n    _time.sleep(3)\n    return _real(seq_len, d_model)\n"
    )
    course = manifest.load(ROOT)
    listings.load(course)
    figs = listings.figures_of_exercise("s1_05_positions")
    assert figs
    box = sandbox_at(course, sub)
    box.launch()
    try:
        started = time.monotonic()
        drawn = figures.draw(course, box, figs * 3, budget_s=4)
        took = time.monotonic() - started
    finally:
        box.close()
    assert took < 4 + 6, f"figures drawn in {took:.1f} s with a 4 s budget"
    assert any("not drawn: the page's figures used up their 4 s" in d.error for d in drawn)


def test_a_manifest_names_each_file_once_in_its_plain_spelling(tmp_path):
    """kata-manifest.json once listed one 8 MB file under 3,000 spellings (exercises/./ch01/x,
    exercises//ch01/x): each was hashed again outside the budget, and past the 2,000th entry the
    changed exercise file was never looked at, so the manifest read "verified"."""
    from grader.checking import submit_manifest as sm

    (tmp_path / "exercises" / "ch01").mkdir(parents=True)
    ex = tmp_path / "exercises" / "ch01" / "s1_12_context.py"
    ex.write_bytes(b"print('changed after submit')\n")
    notes = tmp_path / "exercises" / "ch01" / "notes.txt"
    notes.write_bytes(b"x" * 1000)
    good = sm.file_entry(notes.read_bytes())
    listed = {
        "exercises/ch01/s1_12_context.py": sm.file_entry(b"the submitted text\n"),
        "exercises/ch01/notes.txt": good,
        "exercises/./ch01/notes.txt": good,
        "exercises//ch01/notes.txt": good,
    }
    manifest = tmp_path / sm.NAME
    manifest.write_text(json.dumps({"kind": sm.KIND, "files": listed}))
    said: list[str] = []
    info = sm.verify(manifest, said)
    assert not info["verified"]
    assert info["changed"] == ["exercises/ch01/s1_12_context.py"]
    assert sorted(info["missing"]) == ["exercises/./ch01/notes.txt", "exercises//ch01/notes.txt"]
    listed.update({f"exercises/{'./' * i}ch01/notes.txt": good for i in range(2, 2100)})
    manifest.write_text(json.dumps({"kind": sm.KIND, "files": listed}))
    said = []
    info = sm.verify(manifest, said)
    assert not info["verified"] and "more than the 2000 a submission may hold" in info["error"]


def test_figures_get_no_time_when_the_grading_budget_is_spent(tmp_path):
    from grader import listings
    from grader.checking.runner import sandbox_at
    from grader.course import manifest
    from grader.reports import figures

    course = manifest.load(ROOT)
    listings.load(course)
    figs = listings.figures_of_exercise("s1_05_positions")
    box = sandbox_at(course, SOLUTIONS)
    box.launch()
    try:
        drawn = figures.draw(course, box, figs, budget_s=-3)
    finally:
        box.close()
    assert drawn and all("grading budget was used up before the figures" in d.error for d in drawn)


def test_a_manifest_that_leaves_out_an_exercise_file_is_not_verified(tmp_path):
    """A third outside check: `"files": {}` (or a README only), or the student's answer in a ch01/
    beside the listed exercises/ch01/, read as verified; a NUL or a lone surrogate in a listed name
    stopped the grader with a traceback."""
    from grader.checking import submit_manifest as sm

    (tmp_path / "exercises" / "ch01").mkdir(parents=True)
    stub = tmp_path / "exercises" / "ch01" / "s1_11_softmax.py"
    stub.write_bytes(b"raise NotImplementedError\n")
    (tmp_path / "README.txt").write_text("hello")
    manifest = tmp_path / sm.NAME
    for files, added in (
        ({}, ["exercises/ch01/s1_11_softmax.py"]),
        ({"README.txt": sm.file_entry(b"hello")}, ["exercises/ch01/s1_11_softmax.py"]),
    ):
        manifest.write_text(json.dumps({"kind": sm.KIND, "files": files}))
        info = sm.verify(manifest, [])
        assert not info["verified"] and info["added"] == added
    listed = {"exercises/ch01/s1_11_softmax.py": sm.file_entry(stub.read_bytes())}
    (tmp_path / "ch01").mkdir()
    (tmp_path / "ch01" / "s1_11_softmax.py").write_text("def softmax(x): ...\n")
    manifest.write_text(json.dumps({"kind": sm.KIND, "files": listed}))
    info = sm.verify(manifest, [])
    assert not info["verified"] and info["added"] == ["ch01/s1_11_softmax.py"]
    (tmp_path / "ch01" / "s1_11_softmax.py").unlink()
    for odd in ("exercises/ch01/x.py\u0000", "exercises/ch01/\ud800.py"):
        manifest.write_text(json.dumps({"kind": sm.KIND, "files": {**listed, odd: sm.file_entry(b"")}}))
        info = sm.verify(manifest, [])
        assert not info["verified"] and info["missing"] == [odd]
