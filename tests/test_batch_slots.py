"""A batch grades many submissions in one sandbox per slot (`kata grade DIR --jobs N`): the sandbox
starts once per slot, and no submission sees anything the one graded before it left behind.

Student "a" is graded first and tries to leave marks for "b" (files in every writable place, an
extra exercise file in its /sub); student "b"'s context vectors are right only when it finds none of them.
"""

import json
import os
import shutil
import subprocess
import sys

from tests.conftest import ROOT, SOLUTIONS, kata

# s1_12_context carries the marks (an exercise with no rules on imports); s1_11_attention_scores
# is the extra file "a" hands in and "b" does not.
EX = ["-e", "s1_12_context", "-e", "s1_11_attention_scores"]
CONTEXT = (SOLUTIONS / "ch01" / "s1_12_context.py").read_text()
PLACES = ["/tmp/kata-mark", "/tmp/work/kata-mark", "/dev/shm/kata-mark", "kata-mark"]

PLANTER = (
    CONTEXT
    + f"""

import os as _os

for _p in {PLACES!r}:
    try:
        with open(_p, "w") as _f:
            _f.write("a was here")
    except OSError:
        pass
"""
)

# Right only when no mark of "a" is there: an answer off by one otherwise.
CAREFUL = CONTEXT.replace(
    "    return attn_weights @ values",
    f"""    import os
    seen = [p for p in {PLACES!r} + ["/sub/ch01/s1_11_attention_scores.py"] if os.path.exists(p)]
    return attn_weights @ values + len(seen)""",
)
assert CAREFUL != CONTEXT

# A submission whose code kills every process it may signal, its fork server included.
KILLER = (
    CONTEXT
    + """

import os as _os
import signal as _signal

try:
    _os.kill(-1, _signal.SIGKILL)
except OSError:
    pass
"""
)


def _class(tmp_path, students: dict[str, dict[str, str]]):
    cls = tmp_path / "class"
    for name, files in students.items():
        (cls / name / "ch01").mkdir(parents=True)
        for file, text in files.items():
            (cls / name / "ch01" / file).write_text(text)
    return cls


def _reports(out):
    return {p.parent.name: json.loads(p.read_text()) for p in (out / "students").glob("*/report.json")}


def _score(doc, exercise):
    return sum(c["score"] for c in doc["checks"] if c["exercise"] == exercise)


def _max(doc, exercise):
    return sum(c["max_score"] for c in doc["checks"] if c["exercise"] == exercise)


def test_a_slot_starts_its_sandbox_once_and_the_next_submission_finds_nothing_left(tmp_path):
    scores = (SOLUTIONS / "ch01" / "s1_11_attention_scores.py").read_text()
    cls = _class(
        tmp_path,
        {
            "a": {"s1_12_context.py": PLANTER, "s1_11_attention_scores.py": scores},
            "b": {"s1_12_context.py": CAREFUL},
            "c": {"s1_12_context.py": CAREFUL},
        },
    )
    out = tmp_path / "out"
    r = kata("grade", str(cls), "--out", str(out), "--jobs", "1", *EX)
    assert r.returncode == 0, r.stdout + r.stderr
    docs = _reports(out)
    # one slot, three submissions: only the first waited for the sandbox to start
    assert docs["a"]["worker_startup_s"] > 0
    assert docs["b"]["worker_startup_s"] == 0 and docs["c"]["worker_startup_s"] == 0
    assert _score(docs["a"], "s1_11_attention_scores") == _max(docs["a"], "s1_11_attention_scores") > 0
    for name in ("b", "c"):  # neither a's marks nor a's extra file reached them
        assert _score(docs[name], "s1_12_context") == _max(docs[name], "s1_12_context"), docs[name]["checks"]
        assert _score(docs[name], "s1_11_attention_scores") == 0
        assert any("missing" in c["message"] for c in docs[name]["checks"] if c["exercise"] == "s1_11_attention_scores")

    # graded alone, b scores the same (the order of submissions changes no score)
    alone = tmp_path / "alone"
    shutil.copytree(cls / "b", alone / "b")
    r = kata("grade", str(alone), "--out", str(tmp_path / "out-alone"), "--jobs", "1", *EX)
    assert r.returncode == 0, r.stdout + r.stderr
    assert _score(_reports(tmp_path / "out-alone")["b"], "s1_12_context") == _score(docs["b"], "s1_12_context")


def test_a_submission_that_kills_its_sandbox_does_not_cost_the_next_one(tmp_path):
    cls = _class(tmp_path, {"a": {"s1_12_context.py": KILLER}, "b": {"s1_12_context.py": CONTEXT}})
    out = tmp_path / "out"
    # the run's TMPDIR: other runs on the machine keep their own folders elsewhere. It is long on
    # purpose (a CI job's is): multiprocessing's socket under it would pass AF_UNIX's 107 bytes.
    scratch = tmp_path / ("a-long-temporary-folder-" * 4)
    scratch.mkdir()
    r = subprocess.run(
        [sys.executable, "-m", "grader", "grade", str(cls), "--out", str(out), "--jobs", "1", "-e", "s1_12_context"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "KATA_LANG": "en", "TMPDIR": str(scratch)},
    )
    assert r.returncode == 0, r.stdout + r.stderr
    docs = _reports(out)
    assert docs["a"]["student"]["status"] == "graded"
    assert docs["b"]["student"]["status"] == "graded"
    assert _score(docs["b"], "s1_12_context") == _max(docs["b"], "s1_12_context") > 0, docs["b"]["checks"]
    assert not list(scratch.glob("kata-*")), "a slot's scratch folder stayed behind"


# "a" changes the fork server it shares with every later check: its limits, priority and CPUs
# (the same uid may; an outside attack lowered its RLIMIT_AS and cost the next student 9 of 21 points).
TAMPER = (
    CONTEXT
    + """

import os as _os
import resource as _resource

_server = _os.getppid()
_size = int(open(f"/proc/{_server}/stat").read().rsplit(")", 1)[1].split()[20])  # its address space now
for _call in (lambda: _resource.prlimit(_server, _resource.RLIMIT_AS, (_size + (4 << 20), _size + (4 << 20))),
              lambda: _os.setpriority(_os.PRIO_PROCESS, _server, 19),
              lambda: _os.sched_setaffinity(_server, {0})):
    try:
        _call()
    except OSError:
        pass
"""
)

# Traffic and files that an earlier check would leave in a namespace or a filesystem it shares
# with later ones; "b" is right only when its own view is new: no socket, no traffic, a fresh /tmp.
NOISY = (
    CONTEXT
    + """

import socket as _socket

for _i in range(50):
    try:
        _s = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
        _s.sendto(b"hidden input" * 50, ("127.0.0.1", 9))
        _s.close()
    except OSError:
        pass
for _i in range(200):
    open(f"/tmp/n{_i}", "w").close()
"""
)

FRESH = CONTEXT.replace(
    "    return attn_weights @ values",
    """    import os
    lo = [line.split() for line in open("/proc/net/dev") if line.strip().startswith("lo:")]
    traffic = sum(int(x) for x in lo[0][1:]) if lo else 0
    sockets = sum(len(open(f"/proc/net/{p}").read().splitlines()) - 1 for p in ("tcp", "udp", "tcp6", "udp6")
                  if os.path.exists(f"/proc/net/{p}"))
    open("/tmp/work/probe", "w").close()
    inode = os.stat("/tmp/work/probe").st_ino
    return attn_weights @ values + (traffic > 0) + (sockets > 0) + (inode > 50)""",
)
assert FRESH != CONTEXT


def test_a_submission_that_changes_the_fork_server_costs_the_next_one_nothing(tmp_path):
    tokenizer = (SOLUTIONS / "ch01" / "s1_23_tokenizer.py").read_text()  # needs memory: GPT-2's table
    cls = _class(
        tmp_path,
        {"a": {"s1_12_context.py": TAMPER}, "b": {"s1_12_context.py": CONTEXT, "s1_23_tokenizer.py": tokenizer}},
    )
    out = tmp_path / "out"
    r = kata("grade", str(cls), "--out", str(out), "--jobs", "1", "-e", "s1_12_context", "-e", "s1_23_tokenizer")
    assert r.returncode == 0, r.stdout + r.stderr
    b = _reports(out)["b"]
    for ex in ("s1_12_context", "s1_23_tokenizer"):
        assert _score(b, ex) == _max(b, ex) > 0, [c for c in b["checks"] if c["status"] != "passed"]


def test_no_socket_traffic_or_file_count_of_an_earlier_check_is_seen(tmp_path):
    cls = _class(tmp_path, {"a": {"s1_12_context.py": NOISY}, "b": {"s1_12_context.py": FRESH}})
    out = tmp_path / "out"
    r = kata("grade", str(cls), "--out", str(out), "--jobs", "1", "-e", "s1_12_context")
    assert r.returncode == 0, r.stdout + r.stderr
    b = _reports(out)["b"]
    assert _score(b, "s1_12_context") == _max(b, "s1_12_context") > 0, b["checks"]
