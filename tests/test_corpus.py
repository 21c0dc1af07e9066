"""Grade the adversarial corpus (tests/corpus.py) with the real `kata grade`.

Attacks on different exercises share one grading run (one sandbox start, one pytest session):
each run below lists its attacks, every attack is in exactly one run, and every run checks the
invariants all attacks share (bounded time, nothing outside the grading directory changes, no
process survives, no forged text or secret in the grader's output) before each attack's own
assertions. Attacks that need bubblewrap are left out of a run where it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import corpus as C

pytestmark = pytest.mark.slow  # about 2 minutes: CI runs it in its second step (pytest -m slow)

HAS_BWRAP = shutil.which("bwrap") is not None and os.environ.get("KATA_SANDBOX", "").lower() not in (
    "none",
    "limits",
    "0",
    "off",
)

# Which attacks each test grades together (their files never collide; see corpus.build).
RUNS = {
    "verdict": [
        "verdict/fake-report-on-stdout",
        "verdict/forged-results-files",
        "verdict/signals-to-the-parent",
        "verdict/kill-every-process",
        "verdict/patched-worker-runtime",
    ],
    "manifest": ["verdict/forged-manifest"],
    "secrecy": [
        "secrecy/environment-variables",
        "secrecy/proc-of-the-parent",
        "secrecy/walk-the-filesystem",
        "secrecy/hidden-inputs-through-messages",
        "secrecy/state-between-checks",
        "secrecy/host-paths",
    ],
    "hidden-messages": [f"secrecy/hidden-message-{path}" for path in C.HIDDEN_PATHS],
    "carry": ["secrecy/carried-between-checks"],
    "escape": [
        "escape/threads-left-running",
        "escape/child-in-its-own-process-group",
        "escape/daemon",
        "escape/memory-exhaustion",
        "escape/disk-exhaustion",
        "escape/deep-recursion",
        "escape/shadowing-modules",
        "escape/memory-outside-the-address-space",
    ],
    "wire": [
        "wire/nan-everywhere",
        "wire/infinity-everywhere",
        "wire/tensor-subclass",
        "wire/views-and-strides",
        "wire/huge-shapes",
        "wire/values-that-are-not-plain",
        "wire/deep-nesting",
        "wire/forged-frames",
        "wire/oversized-result",
        "escape/network-dns-and-ipv6",
        "escape/output-flood-from-a-thread",
    ],
    "loops": ["escape/endless-loop-in-del"],
    "million": ["wire/a-million-values"],
    "stop": ["verdict/stop-the-parent"],
    "notebooks": [
        "archive/notebook-odd-metadata-and-huge-output",
        "archive/notebook-unpaired-surrogate",
        "archive/notebook-nested-too-deeply",
        "archive/notebook-source-not-text",
        "archive/manifest-hostile-json",
    ],
    "odd-folder": ["archive/fifo-socket-hardlink-and-odd-names"],
    "cp437": ["archive/cp437-names"],
    "guard": [
        "guard/modes-popped-and-another-path",
        "guard/thread-outside-the-guard",
        "guard/layer-norm-unguarded",
        "guard/gelu-class-unguarded",
        "guard/attention-class-by-another-path",
    ],
    "guard-operator": ["guard/custom-operator"],
    "guard-reply": ["guard/softmin-while-the-reply-is-encoded"],
}
REFUSED = [a.id for a in C.ARCHIVE if a.archive and a.graded == ()]
BATCH_ONLY = [a.id for a in C.ATTACKS if a.neighbour]  # attacks on a neighbour: tests/test_corpus_batch.py
CONTROLS = {
    "verdict": ["s1_11_softmax", "s1_12_self_attention"],
    "secrecy": ["s1_11_matmul"],
    "guard": ["s1_14_dropout", "s1_05_embeddings"],
}


def grade_run(
    name: str, tmp_path: Path, capfd, controls: list[str] = (), subprocess_env: bool = False, bound_s: float = 240
) -> C.Outcome:
    """Grade the run's attacks together; check the shared invariants, then each attack's own."""
    attacks = [C.by_id(i) for i in (RUNS.get(name) or [name])]
    if not HAS_BWRAP:
        attacks = [a for a in attacks if not a.bwrap]
        if not attacks:
            pytest.skip("these attacks need bubblewrap")
    ctx = C.Ctx.new(tmp_path / "report.json")
    before = C.project_snapshot()
    path = C.build(attacks, tmp_path, ctx)
    args = ["grade", str(path), "--json", str(ctx.json_path)]
    for ex in [*C.graded(attacks), *controls]:
        args += ["-e", ex]
    limits = [a.time_limit for a in attacks if a.time_limit]
    if limits:
        args += ["--time-limit", str(min(limits))]
    capfd.readouterr()
    t0 = time.monotonic()
    if subprocess_env:  # a fresh `kata` process whose environment holds the secret
        env = {**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(C.ROOT), C.SECRET_VAR: ctx.secret}
        proc = subprocess.run(
            [sys.executable, "-m", "grader", *args],
            cwd=C.ROOT,
            capture_output=True,
            text=True,
            env=env,
            timeout=bound_s + 60,
        )
        code, out, err = proc.returncode, proc.stdout, proc.stderr
    else:
        from grader.cli import main

        old = os.environ.get("KATA_LANG")
        os.environ["KATA_LANG"] = "en"
        try:
            code = main(args)
        finally:
            os.environ.pop("KATA_LANG") if old is None else os.environ.__setitem__("KATA_LANG", old)
        out, err = capfd.readouterr()
    elapsed = time.monotonic() - t0
    report = json.loads(ctx.json_path.read_text()) if ctx.json_path.exists() else None
    outcome = C.Outcome(code, report, out, err, elapsed, ctx)
    C.assert_contained(outcome, before, bound_s)
    if report is not None:
        assert report["sandbox"] == ("bubblewrap" if HAS_BWRAP else "limits-only")
    for attack in attacks:
        C.check(attack, outcome)
    for ex in controls:
        C.full(ex)(outcome)
    return outcome


# ----------------------------------------------------------------------------- the corpus itself
def test_the_corpus_covers_every_class_with_at_least_30_submissions():
    ids = [a.id for a in C.ATTACKS]
    assert len(ids) == len(set(ids)) >= 30
    groups = {
        g: sum(a.group == g for a in C.ATTACKS) for g in ("verdict", "secrecy", "escape", "wire", "archive", "guard")
    }
    assert all(n >= 3 for n in groups.values()), groups
    ran = [i for run in RUNS.values() for i in run] + REFUSED + BATCH_ONLY
    assert sorted(ran) == sorted(ids), (
        "every attack is graded by exactly one test here (or, on a neighbour, in a batch)"
    )
    for run, members in RUNS.items():  # attacks graded together never write the same file differently
        attacks = [C.by_id(i) for i in members]
        assert all(a.archive is None for a in attacks) or len(attacks) == 1, f"{run}: an archive is graded alone"
        files = {}
        for a in attacks:
            for rel, content in a.files.items():
                assert files.setdefault(rel, content) == content, f"{run}: {a.id} collides on {rel}"
            assert not set(a.remove) & {r for b in attacks if b is not a for r in b.files}, f"{run}: {a.id}"


# ----------------------------------------------------------------------------- the runs
def test_verdict_forgery(tmp_path, capfd):
    grade_run("verdict", tmp_path, capfd, controls=CONTROLS["verdict"])


def test_forged_manifest(tmp_path, capfd):
    grade_run("manifest", tmp_path, capfd)


@pytest.mark.skipif(not HAS_BWRAP, reason="secrecy needs the sandbox: limits only runs as the grader's user")
def test_secrecy(tmp_path, capfd):
    grade_run("secrecy", tmp_path, capfd, controls=CONTROLS["secrecy"], subprocess_env=True)


def test_hidden_checks_say_only_what_the_grader_wrote(tmp_path, capfd):
    """Text of the student's taken through every path (a file name or line in a traceback, exception
    text and class names, reprs, forged wire values and error replies, conversion errors, exit and
    output) reaches no hidden check's message."""
    grade_run("hidden-messages", tmp_path, capfd)


@pytest.mark.skipif(not HAS_BWRAP, reason="a private /tmp needs the sandbox")
def test_nothing_passes_from_one_check_to_the_next(tmp_path, capfd):
    """Files in every writable place, a POSIX and a System V message queue, and keys in the session
    and user keyrings: nothing a check leaves reaches a later one."""
    grade_run("carry", tmp_path, capfd)


def test_escape_and_availability(tmp_path, capfd):
    grade_run("escape", tmp_path, capfd)


def test_the_wire(tmp_path, capfd):
    grade_run("wire", tmp_path, capfd)


def test_a_reply_of_a_million_values_fails_its_check_within_the_limit(tmp_path, capfd):
    """Four checks, each a forged reply of a million tensors or values: decoding is bounded by
    count and by the call's deadline, so the whole grading ends in a fraction of what one such
    reply once took (56-88 s)."""
    grade_run("million", tmp_path, capfd, bound_s=60)


def test_endless_loop_in_del(tmp_path, capfd):
    grade_run("loops", tmp_path, capfd, bound_s=120)


def test_a_stopped_fork_server_is_continued(tmp_path, capfd):
    """Each of the exercise's 3 checks stops the fork server: waiting for it (10 s) and starting
    a new one per check would take well over 30 s."""
    grade_run("stop", tmp_path, capfd, bound_s=30)


def test_notebooks_and_manifest_json(tmp_path, capfd):
    grade_run("notebooks", tmp_path, capfd)


def test_folder_with_fifo_socket_hard_link_and_odd_names(tmp_path, capfd):
    grade_run("odd-folder", tmp_path, capfd)


def test_zip_with_legacy_code_page_names(tmp_path, capfd):
    grade_run("cp437", tmp_path, capfd)


def test_the_guard_of_write_it_yourself_exercises(tmp_path, capfd):
    """Forbidden functions reached with the worker's guards switched off, in a thread, or by
    another path score 0; exercises with a forbidden list graded beside them keep full marks."""
    grade_run("guard", tmp_path, capfd, controls=CONTROLS["guard"])


def test_a_custom_operator_does_not_hide_a_forbidden_one(tmp_path, capfd):
    grade_run("guard-operator", tmp_path, capfd)


def test_the_guard_is_on_while_the_reply_is_encoded(tmp_path, capfd):
    grade_run("guard-reply", tmp_path, capfd)


@pytest.mark.parametrize("attack", REFUSED)
def test_hostile_archive_is_refused(attack, tmp_path, capfd):
    grade_run(attack, tmp_path, capfd, bound_s=60)
