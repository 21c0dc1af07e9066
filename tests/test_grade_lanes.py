"""`kata grade` of one submission uses both cores: its checks run in two lanes, each with its own
sandbox, taking checks as they come free (grader/checking/lanes.py). What the student and the
instructor see does not change: the same report as one process gives, check for check, and one
grading budget for the whole submission, whichever lane spends it.
"""

import time

import pytest

from grader.checking import lanes
from grader.worker.budget import Budget
from tests.conftest import EXERCISES, SOLUTIONS, grade, solution_with

CHOSEN = [
    "-e",
    "s1_11_softmax",
    "-e",
    "s1_12_context",
    "-e",
    "s1_13_causal_mask",
    "-e",
    "s1_14_dropout",
    "-e",
    "s1_16_multihead",
    "-e",
    "s1_17_layer_norm",
    "-e",
    "s1_12_self_attention",
]


def _mixed(root):
    """Solved, a stub, an import that fails, a forbidden API, a wrong answer, a solved one, and
    s1_12_self_attention missing (its first check says so, the next ones "failed in an earlier check")."""
    ch = root / "ch01"
    ch.mkdir(parents=True)
    for ex in ("s1_11_softmax", "s1_17_layer_norm"):
        (ch / f"{ex}.py").write_text((SOLUTIONS / "ch01" / f"{ex}.py").read_text())
    (ch / "s1_12_context.py").write_text((EXERCISES / "ch01" / "s1_12_context.py").read_text())
    (ch / "s1_13_causal_mask.py").write_text(
        (SOLUTIONS / "ch01" / "s1_13_causal_mask.py").read_text() + "\nraise RuntimeError('broken on import')\n"
    )
    (ch / "s1_14_dropout.py").write_text(
        (SOLUTIONS / "ch01" / "s1_14_dropout.py").read_text()
        + "\nimport torch.nn.functional as _F\n_use = _F.dropout\n"
    )
    (ch / "s1_16_multihead.py").write_text(
        solution_with(  # the heads not moved before the tokens
            "s1_16_multihead", "return view_heads(x, num_heads).transpose(1, 2)", "return view_heads(x, num_heads)"
        )
    )
    return root


def _seen(doc):
    return [
        (c["exercise"], c["name"], c["status"], c["score"], c["kind"], c["visibility"], c["message"])
        for c in doc["checks"]
    ]


def test_two_lanes_give_the_report_one_process_gives(tmp_path, monkeypatch):
    sub = _mixed(tmp_path / "sub")
    monkeypatch.setenv("KATA_GRADE_LANES", "1")
    one = grade(sub, *CHOSEN)
    monkeypatch.setenv("KATA_GRADE_LANES", "2")
    two = grade(sub, *CHOSEN)
    assert _seen(two) == _seen(one)
    assert _seen(grade(sub, *CHOSEN)) == _seen(two)  # and again: which lane takes what never shows
    assert two["notes"] == one["notes"] and two["score"] == one["score"] and two["max_score"] == one["max_score"]
    kinds = {c["kind"] for c in two["checks"] if c["status"] == "failed"}
    assert {"forbidden", "check"} <= kinds, kinds  # the mix is what it says
    broken = [c["message"] for c in two["checks"] if c["exercise"] == "s1_13_causal_mask"]
    assert broken[0].startswith("importing ") and all(m.startswith("not run: importing ") for m in broken[1:])
    missing = [c["message"] for c in two["checks"] if c["exercise"] == "s1_12_self_attention"]
    assert "is missing from the submission" in missing[0] and all(m.startswith("not run: ") for m in missing[1:])


def test_the_lanes_share_one_wall_budget(tmp_path, monkeypatch):
    """Two exercises whose import sleeps 4 s, in two lanes, with a 6 s budget: each lane stops at
    the submission's budget, every check is in the report once, and one note says where it ran out."""
    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    for ex in ("s1_11_softmax", "s1_12_context", "s1_12_self_attention"):
        text = (SOLUTIONS / "ch01" / f"{ex}.py").read_text()
        if ex != "s1_11_softmax":
            text += "\nimport time as _time\n_time.sleep(4)\n"
        (sub / "ch01" / f"{ex}.py").write_text(text)
    monkeypatch.setenv("KATA_GRADE_LANES", "2")
    started = time.monotonic()
    doc = grade(sub, "-e", "s1_11_softmax", "-e", "s1_12_context", "-e", "s1_12_self_attention", "--budget", "6")
    took = time.monotonic() - started
    assert took < 6 + 15, f"grading took {took:.0f} s with a 6 s budget"
    names = [(c["exercise"], c["name"]) for c in doc["checks"]]
    assert len(names) == len(set(names)) == 7 + 3 + 5  # softmax 7, context 3, self-attention 5 checks
    assert all(c["status"] == "passed" for c in doc["checks"] if c["exercise"] == "s1_11_softmax")
    assert [c["kind"] for c in doc["checks"]][-1] == "budget"
    budget_notes = [n for n in doc["notes"] if "grading budget used up (6 s of wall time)" in n]
    assert len(budget_notes) == 1, doc["notes"]


class _Clock:
    now = 100.0

    def __call__(self):
        return self.now


def test_the_lanes_count_their_cpu_seconds_together_and_stop_together():
    shared = lanes.Shared(2)
    cpu = [10.0, 50.0]  # each sandbox's own total when its lane starts
    a, b = lanes.Lane(shared, 0), lanes.Lane(shared, 1)
    clock = _Clock()
    ba = Budget(100, 5, cpu_used=lambda: a.cpu_used(cpu[0]), clock=clock, shared=a)
    bb = Budget(100, 5, cpu_used=lambda: b.cpu_used(cpu[1]), clock=clock, shared=b)
    ba.start(), bb.start()
    cpu[0] += 3
    assert not ba.exhausted("x")
    cpu[1] += 2.5  # 3 + 2.5: the submission's 5 CPU seconds are spent, though neither lane spent 5
    assert bb.exhausted("s1_23_training") and bb.spent_on == "cpu"
    assert ba.exhausted("s1_11_softmax") and ba.spent_on == "cpu"  # the other lane stops at its next check
    assert ba.stop()  # and a call in progress there ends


def test_a_lane_that_runs_out_of_wall_time_stops_the_other():
    shared = lanes.Shared(2)
    clock = _Clock()
    ba = Budget(10, shared=lanes.Lane(shared, 0), clock=clock)
    bb = Budget(10, shared=lanes.Lane(shared, 1), clock=clock)
    ba.mark("s1_15_attention")  # a call there was cut short by the budget
    assert bb.exhausted("s1_16_multihead") and bb.spent_on == "wall" and bb.stop()


def test_each_exercise_is_taken_by_one_lane_only():
    shared = lanes.Shared(2)
    a, b = lanes.Lane(shared, 0), lanes.Lane(shared, 1)
    taken = [(a.claim(i), b.claim(i)) for i in range(5)]
    assert taken == [(True, False)] * 5
    assert b.claim(5) and not a.claim(5)


def test_one_lane_for_a_few_checks_two_for_the_course(monkeypatch):
    monkeypatch.delenv("KATA_GRADE_LANES", raising=False)
    monkeypatch.setattr(lanes.os, "sched_getaffinity", lambda pid: {0, 1, 2, 3})
    assert lanes.count(10) == 1 and lanes.count(284) == 2
    monkeypatch.setattr(lanes.os, "sched_getaffinity", lambda pid: {0})
    assert lanes.count(284) == 1
    monkeypatch.setenv("KATA_GRADE_LANES", "2")
    assert lanes.count(3) == 2


pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
