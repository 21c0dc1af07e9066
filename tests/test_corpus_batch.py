"""The adversarial corpus as one class, and the order of grading (issue 7, items 2 and 4).

Every attack of tests/corpus.py is its own submission of one class folder, beside honest
controls, and the whole folder is graded by ONE real `kata grade DIR --out OUT --jobs 2`, the
way a course grades a class. The run must end within a bounded time, change nothing outside OUT,
leave no process behind (whatever it is named: the test adopts every orphan), let no forged
text, secret or neighbour's text reach OUT or the output; each attack's own expectations hold on
its record, each refused archive is a row of the gradebook with its reason, and each control
gets the very report it gets when graded alone. One attack is only possible here: searching for
what another submission graded at the same time holds.

Then the same six mixed submissions, graded in two opposite orders, and each alone, get the same
reports: the order in which a class is graded changes no score.
"""

from __future__ import annotations

import copy
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests import corpus as C
from grader.course import manifest
from grader.course.scan import imported
from grader.instructor.release.release_assignment import needed
from tests.conftest import EXERCISES, ROOT, SOLUTIONS, grade, solution_with

pytestmark = (
    pytest.mark.slow
)  # about 3 minutes alone (the batch 107 s, the orders 54 s, the controls 38 s): CI's second step

HAS_BWRAP = shutil.which("bwrap") is not None and os.environ.get("KATA_SANDBOX", "").lower() not in (
    "none",
    "limits",
    "0",
    "off",
)
JOBS = 2
BOUND_S = 600  # the whole batch: 107 s alone on two cores (stop 31), each attack graded on its own exercises

# Attacks a batch cannot hold, and where each is graded instead.
LEFT_OUT = {
    # --time-limit applies to every submission of a batch, and 2 s would fail the others' slow
    # calls (walk-the-filesystem searches for 4 s): graded alone, with its limit.
    "escape/endless-loop-in-del": "tests/test_corpus.py::test_endless_loop_in_del",
}
ATTACKS = [a for a in C.ATTACKS if a.id not in LEFT_OUT and (HAS_BWRAP or not a.bwrap)]
EXERCISE_IDS = C.graded(ATTACKS)  # the controls need no other
REFUSED = [a.id for a in ATTACKS if a.archive and a.graded == ()]
COURSE = manifest.load(ROOT)


def _partly_wrong(folder: Path) -> Path:
    shutil.copytree(SOLUTIONS, folder)
    ch = folder / "ch01"
    (ch / "s1_11_matmul.py").write_text(
        solution_with(
            "s1_11_matmul", "out[i, j] = (A[i, :] * B[:, j]).sum()", "out[i, j] = (A[i, :] * B[:, j]).sum() + 1"
        )
    )
    (ch / "s1_12_context.py").write_text("def context_vectors(w, v)\n    return w @ v\n")  # a syntax error
    (ch / "s1_16_multihead.py").unlink()
    return folder


def _full_zip(path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted((SOLUTIONS / "ch01").glob("*.py")):
            zf.write(p, f"exercises/ch01/{p.name}")
    return path


def _grade_only_what_it_attacks(entry: Path, attack: C.Attack) -> None:
    """The batch grades the exercises of every attack (-e for each), and an attack's folder holds
    the whole solutions around its files: without the solutions of the batch's other exercises,
    each attack is graded on its own exercises (and what they import), as when graded alone, not
    on seventeen honest ones that take the batch ten minutes. A pair that races a neighbour keeps
    everything, for the two gradings to overlap as long as they did."""
    if not entry.is_dir() or attack.neighbour:
        return
    own = set(attack.graded) | {Path(rel).stem for rel in attack.files}
    for content in attack.files.values():  # what the attack's own files import stays too
        if isinstance(content, str):
            own |= imported(content)
    keep = own | set(needed(COURSE, sorted(own & {ex.id for ex in COURSE.exercises})))
    for ex in EXERCISE_IDS:
        path = entry / C.ch01(ex)
        if ex not in keep and path.is_file() and not path.is_symlink():
            path.unlink()


# Honest submissions, named to sort between the attacks' groups: graded amid them, in both slots.
CONTROLS = {
    "b-control-full": lambda cls: shutil.copytree(SOLUTIONS, cls / "b-control-full"),
    "r-control-partly-wrong": lambda cls: _partly_wrong(cls / "r-control-partly-wrong"),
    "w-control-full": lambda cls: _full_zip(cls / "w-control-full.zip"),
}
TIMINGS = ("duration_s", "worker_startup_s")


def _comparable(report: dict) -> dict:
    """The report without what may differ between two gradings of the same files: timings, where
    they were (the path) and the batch's own block (the student's name, the entry)."""
    doc = copy.deepcopy(report)
    for key in (*TIMINGS, "submission", "student"):
        doc.pop(key, None)
    for c in doc["checks"]:
        c.pop("duration_s", None)
    return doc


def _verdicts(report: dict) -> dict:
    return {(c["exercise"], c["name"]): (c["status"], c["score"]) for c in report["checks"]}


def _assert_same(got: dict, want: dict, what: str) -> None:
    a, b = _verdicts(got), _verdicts(want)
    assert a == b, f"{what}: " + "; ".join(
        f"{k}: {a.get(k)} != {b.get(k)}" for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)
    )
    a, b = _comparable(got), _comparable(want)
    differ = [
        (x["exercise"], x["name"], x["message"], y["message"]) for x, y in zip(a["checks"], b["checks"]) if x != y
    ]
    assert not differ, f"{what}: " + "\n".join(map(repr, differ))
    assert a == b, what


def _tree(folder: Path) -> dict[str, tuple]:
    """Every entry under `folder`: its kind, size and mtime (a FIFO is not opened)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(folder):
        for n in dirnames + filenames:
            st = os.lstat(os.path.join(dirpath, n))
            out[os.path.relpath(os.path.join(dirpath, n), folder)] = (st.st_mode, st.st_size, st.st_mtime_ns)
    return out


def _kata(*args: str, env: dict | None = None, timeout: float = 600) -> subprocess.CompletedProcess:
    env = {**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, env=env
    )


def _records(out: Path) -> dict[str, dict]:
    return {p.parent.name: json.loads(p.read_text()) for p in sorted((out / "students").glob("*/report.json"))}


def _gradebook(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


# ----------------------------------------------------------------------------- the corpus as a class
@dataclass
class Batch:
    ctx: C.Ctx
    cls: Path
    out: Path
    entries: dict[str, str]  # student -> attack id (C.NEIGHBOUR appended for a neighbour)
    proc: subprocess.CompletedProcess
    elapsed: float
    before: dict  # the project, before the run
    class_before: dict
    survivors: list
    samples: list  # (seconds since the start, names of the watched processes alive then)
    records: dict[str, dict]


def _watch(names: set[str], stop: threading.Event, samples: list, t0: float) -> None:
    """Which of `names` (process names, comm) run, 20 times a second, until `stop`."""
    while not stop.is_set():
        alive = set()
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    comm = Path(f"/proc/{pid}/comm").read_text().strip()
                except OSError:
                    continue
                if comm in names:
                    alive.add(comm)
        samples.append((time.monotonic() - t0, alive))
        stop.wait(0.05)


@pytest.fixture(scope="module")
def batch(tmp_path_factory) -> Batch:
    tmp = tmp_path_factory.mktemp("corpus-batch")
    cls, out = tmp / "class", tmp / "out"
    ctx = C.Ctx.new(out / "report.json")  # a file the batch never writes: what a forged report would be
    before = C.project_snapshot()
    entries = C.build_each(ATTACKS, cls, tmp / "work", ctx)
    for name, attack_id in entries.items():
        _grade_only_what_it_attacks(cls / name, C.by_id(attack_id.removesuffix(C.NEIGHBOUR)))
    for name, make in CONTROLS.items():
        make(cls)
        entries[name] = name
    class_before = _tree(cls)
    args = ["grade", str(cls), "--out", str(out), "--jobs", str(JOBS), "--timeout", "300"]
    for ex in EXERCISE_IDS:
        args += ["-e", ex]
    samples: list = []
    stop = threading.Event()
    t0 = time.monotonic()
    watcher = threading.Thread(target=_watch, args=({"a" + ctx.token, "n" + ctx.token}, stop, samples, t0), daemon=True)
    watcher.start()
    try:
        with C.adopting_orphans() as survivors:
            proc = _kata(*args, env={C.SECRET_VAR: ctx.secret}, timeout=BOUND_S + 120)
            elapsed = time.monotonic() - t0
    finally:
        stop.set()
        watcher.join()
    print(f"the corpus batch: {len(entries)} submissions, {len(EXERCISE_IDS)} exercises, {elapsed:.0f} s")
    return Batch(ctx, cls, out, entries, proc, elapsed, before, class_before, survivors, samples, _records(out))


def test_the_whole_corpus_is_graded_in_bounded_time_and_leaves_nothing_behind(batch):
    assert batch.proc.returncode == 1, batch.proc.stdout[-3000:] + batch.proc.stderr[-3000:]  # the refused ones
    assert "Traceback" not in batch.proc.stderr, batch.proc.stderr[-3000:]
    assert set(batch.records) == set(batch.entries), "every submission gets a record"
    statuses = {n: d["student"]["status"] for n, d in batch.records.items()}
    assert {n for n, s in statuses.items() if s == "refused"} == {n for n, i in batch.entries.items() if i in REFUSED}
    assert all(s in ("graded", "refused") for s in statuses.values()), statuses
    # bounded time, the project unchanged, nothing named with the token on the host, no forged text
    # or secret in the output or any record, no process of an attack left
    outcome = C.Outcome(
        batch.proc.returncode, batch.records, batch.proc.stdout, batch.proc.stderr, batch.elapsed, batch.ctx
    )
    C.assert_contained(outcome, batch.before, BOUND_S)
    assert not batch.survivors, f"processes of the batch outlived it: {batch.survivors}"
    assert _tree(batch.cls) == batch.class_before, "the class folder changed"
    secrets = {
        "forged text": batch.ctx.mark,
        "the grader's secret": batch.ctx.secret,
        "the neighbour's text": batch.ctx.neighbour,
    }
    for p in batch.out.rglob("*"):  # every file of every format: html, csv, junit, Gradescope, Exercism
        if p.is_file():
            data = p.read_bytes()
            for what, text in secrets.items():
                assert text.encode() not in data, f"{what} reached {p.relative_to(batch.out)}"
    assert not any(s in batch.proc.stdout + batch.proc.stderr for s in secrets.values())


def test_every_attack_is_in_the_batch_or_graded_elsewhere_with_a_reason():
    from tests import test_corpus

    missing = {a.id for a in C.ATTACKS} - {a.id for a in ATTACKS} - set(LEFT_OUT)
    assert not missing or not HAS_BWRAP and all(C.by_id(i).bwrap for i in missing), missing
    for attack_id, where in LEFT_OUT.items():
        assert not C.by_id(attack_id).neighbour
        assert hasattr(test_corpus, where.split("::")[1]), where


@pytest.mark.parametrize("attack_id", [a.id for a in ATTACKS])
def test_each_attack_meets_its_own_expectations_in_the_batch(batch, attack_id):
    (name,) = [n for n, i in batch.entries.items() if i == attack_id]
    doc = batch.records[name]
    if doc["student"]["status"] == "graded":
        assert doc["sandbox"] == ("bubblewrap" if HAS_BWRAP else "limits-only")
    C.check(C.by_id(attack_id), C.from_record(doc, batch.ctx))


def test_refused_archives_are_rows_of_the_gradebook_with_their_reason(batch):
    book = _gradebook(batch.out)
    summary = (batch.out / "summary.md").read_text()
    refused = {n for n, i in batch.entries.items() if i in REFUSED}
    assert len(refused) == len(REFUSED) >= 10
    for name in refused:
        row, reason = book[name], batch.records[name]["student"]["reason"]
        assert row["status"] == "refused" and row["total"] == "0" and reason and row["reason"] == reason, row
        assert f"| {name} |" in summary, f"summary.md does not list {name}"
        assert "Traceback" not in reason
    graded = [n for n in book if n not in refused]
    assert all(book[n]["status"] == "graded" for n in graded)


def test_controls_amid_the_attacks_get_the_report_they_get_alone(batch, tmp_path):
    for name in CONTROLS:
        entry = batch.cls / name if (batch.cls / name).exists() else batch.cls / f"{name}.zip"
        copy_ = tmp_path / name / entry.name  # grade() writes its report beside the submission
        copy_.parent.mkdir()
        (shutil.copytree if entry.is_dir() else shutil.copy)(entry, copy_)
        alone = grade(copy_, *[a for ex in EXERCISE_IDS for a in ("-e", ex)])
        in_batch = batch.records[name]
        assert in_batch["student"]["status"] == "graded"
        _assert_same(in_batch, alone, name)
    full = batch.records["b-control-full"]
    assert full["score"] == full["max_score"] > 0
    wrong = batch.records["r-control-partly-wrong"]
    assert 0 < wrong["score"] < wrong["max_score"]


@pytest.mark.skipif(not HAS_BWRAP, reason="secrecy needs the sandbox: limits only runs as the grader's user")
def test_a_submission_graded_at_the_same_time_is_out_of_reach(batch):
    """The attacker's own expectations (it found nothing, and says so) are held by the test
    above; this one shows that the two really were graded at the same time, and that the
    neighbour, which held its text in its source, /tmp, working folder and environment all along,
    was graded as usual."""
    attacker, neighbour = "a" + batch.ctx.token, "n" + batch.ctx.token
    both = [t for t, alive in batch.samples if {attacker, neighbour} <= alive]
    seen = {who: [t for t, alive in batch.samples if who in alive] for who in (attacker, neighbour)}
    assert len(both) >= 10, (
        "the attacker searched while its neighbour held its text for less than 0.5 s: the test "
        f"proves nothing. attacker: {seen[attacker][:1]}..{seen[attacker][-1:]}, "
        f"neighbour: {seen[neighbour][:1]}..{seen[neighbour][-1:]}"
    )
    (mate,) = [n for n, i in batch.entries.items() if i.endswith(C.NEIGHBOUR)]
    for ex in EXERCISE_IDS:
        if ex == "s1_05_embeddings":  # its note imports os and ctypes, which that exercise's rules refuse
            C.zero(ex, *C.ESCAPED)(C.from_record(batch.records[mate], batch.ctx))
        else:
            C.full(ex)(C.from_record(batch.records[mate], batch.ctx))


# ----------------------------------------------------------------------------- the order of grading
ORDER_EXERCISES = ["s1_11_matmul", "s1_11_softmax", "s1_12_scaled_attention", "s1_12_self_attention", "s1_14_dropout"]
SPIN = (
    "import threading as _threading\n\n\ndef _spin():\n    while True:\n        pass\n\n\n"
    "_threading.Thread(target=_spin, daemon=True).start()  # left running: harmless, but it takes a CPU\n\n"
)
MIXED = {  # label -> exercise -> source (None: the file is missing); the solutions elsewhere
    "right": {},
    "partly-wrong": {
        "s1_11_matmul": solution_with(
            "s1_11_matmul", "out[i, j] = (A[i, :] * B[:, j]).sum()", "out[i, j] = (A[i, :] * B[:, j]).sum() + 1"
        ),
        "s1_11_softmax": None,
    },
    "broken": {"s1_12_self_attention": "class SelfAttention(\n", "s1_11_matmul": "import os\nos._exit(3)\n"},
    "random-wrong": {
        "s1_12_scaled_attention": "import random, torch\n\ndef scale_scores(scores, d_k):\n"
        "    return scores * random.random() + torch.rand(scores.shape)\n\n"
        "def attention_weights(scores, d_k):\n"
        "    return torch.rand(scores.shape) * random.random()\n"
    },
    # (exercises without a forbidden list: under one, a thread cannot start)
    "thread-left-running": {
        "s1_12_scaled_attention": SPIN + (SOLUTIONS / "ch01" / "s1_12_scaled_attention.py").read_text(),
        "s1_12_self_attention": SPIN + (SOLUTIONS / "ch01" / "s1_12_self_attention.py").read_text(),
    },
    "stubs": "stubs",
}


def _mixed(folder: Path, label: str) -> Path:
    changes = MIXED[label]
    shutil.copytree(EXERCISES if changes == "stubs" else SOLUTIONS, folder)
    for ex, source in ({} if changes == "stubs" else changes).items():
        if source is None:
            (folder / "ch01" / f"{ex}.py").unlink()
        else:
            (folder / "ch01" / f"{ex}.py").write_text(source)
    return folder


def _finish_order(stdout: str, names: dict[str, str]) -> list[str]:
    """The labels in the order the run reported them done (one line per student)."""
    done = []
    for line in stdout.splitlines():
        for name, label in names.items():
            if f" {name}:" in line and label not in done:
                done.append(label)
    return done


def test_the_order_of_grading_changes_no_score(tmp_path):
    """The same submissions in two class folders, named so that their sorted order (the order a
    batch grades in) is reversed: every report is the same either way, and the same as alone."""
    labels = list(MIXED)
    forward = {f"s{i}-{label}": label for i, label in enumerate(labels)}
    backward = {f"s{len(labels) - 1 - i}-{label}": label for i, label in enumerate(labels)}
    runs = {}
    for run, names in (("forward", forward), ("backward", backward)):
        cls, out = tmp_path / run, tmp_path / f"out-{run}"
        for name, label in names.items():
            _mixed(cls / name, label)
        proc = _kata(
            "grade",
            str(cls),
            "--out",
            str(out),
            "--jobs",
            str(JOBS),
            *[a for ex in ORDER_EXERCISES for a in ("-e", ex)],
        )
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        records = _records(out)
        assert {d["student"]["status"] for d in records.values()} == {"graded"}
        runs[run] = ({names[n]: d for n, d in records.items()}, _finish_order(proc.stdout, names))
    (a, order_a), (b, order_b) = runs["forward"], runs["backward"]
    assert order_a[0] != order_b[0] and len(order_a) == len(order_b) == len(labels), (order_a, order_b)
    for label in labels:
        alone = grade(_mixed(tmp_path / "alone" / label, label), *[x for ex in ORDER_EXERCISES for x in ("-e", ex)])
        _assert_same(a[label], b[label], f"{label}: graded first to last vs last to first")
        _assert_same(a[label], alone, f"{label}: in a batch vs alone")
    scores = {label: a[label]["score"] for label in labels}  # the mix is the mix it claims to be
    assert scores["right"] == scores["thread-left-running"] == a["right"]["max_score"]
    assert scores["stubs"] == 0
    assert all(0 < scores[x] < scores["right"] for x in ("partly-wrong", "broken", "random-wrong")), scores
