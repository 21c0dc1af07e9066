"""kata list / check / reset / hint, through the real command line on a private copy of the course."""

from __future__ import annotations

import json
import os
import re
import shutil
import string
import subprocess
import sys
from pathlib import Path

from grader.course import manifest as course_mod
from grader.authoring import stubs
from grader.course.messages import CATALOG
from tests.conftest import ROOT, solution_with

SOFTMAX = "exercises/ch01/s1_11_softmax.py"
CONTEXT = "exercises/ch01/s1_12_context.py"


def kata_in(project: Path, *args: str, lang: str = "en", here=None) -> subprocess.CompletedProcess:
    """`kata ARGS` run in `project` (a copy of the course) with this checkout's grader: a new
    `python -m grader` process, or, given `here` (pytest's monkeypatch and capfd), the same
    command line in this process, which saves the new interpreter's torch import on each
    grading (set KATA_TEST_SUBPROCESS=1 to use processes throughout)."""
    env = {"KATA_LANG": lang, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    if here is None or os.environ.get("KATA_TEST_SUBPROCESS"):
        return subprocess.run(
            [sys.executable, "-m", "grader", *args],
            cwd=project,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, **env},
        )
    from grader.cli import main

    monkeypatch, capfd = here
    monkeypatch.chdir(project)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    capfd.readouterr()
    try:
        code = main(list(args))
    except SystemExit as e:
        code = e.code
    out, err = capfd.readouterr()
    return subprocess.CompletedProcess(["kata", *args], code, out, err)


def listed(project: Path, *args: str, here=None) -> dict:
    proc = kata_in(project, "list", "--json", *args, here=here)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    return {e["id"]: e for e in doc["exercises"]} | {"_doc": doc}


def test_list_of_a_fresh_course_runs_nothing(tmp_course):
    proc = kata_in(tmp_course, "list")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "s1_01_next_token" in out and "s1_23_inference" in out
    assert out.count("not started") == 38
    assert "s1_23_mlm (beyond the book)" in " ".join(out.split())  # the exercise past the chapter says so
    assert (
        "0/38 exercises pass their public checks (0/291 public points; the other 185 are hidden checks, "
        "graded when you submit)"
    ) in " ".join(out.split())
    assert "Next: s1_01_next_token" in out
    assert not (tmp_course / ".kata" / "progress.json").exists()  # no check was run
    doc = listed(tmp_course)["_doc"]
    assert {e["status"] for e in doc["exercises"]} == {"not_started"}
    assert doc["progress"] == {
        "passing": 0,
        "exercises": 38,
        "public_points_passed": 0,
        "public_points": 291,
        "hidden_points": 185,
        "max_points": 476,
    }
    assert [e["id"] for e in doc["exercises"] if e["beyond_book"]] == ["s1_23_mlm"]
    assert doc["next"] == "s1_01_next_token"


def test_list_checks_changed_files_once_then_reads_the_cache(tmp_course, monkeypatch, capfd):
    here = (monkeypatch, capfd)
    (tmp_course / SOFTMAX).write_text((ROOT / "solutions/ch01/s1_11_softmax.py").read_text())
    (tmp_course / CONTEXT).write_text(
        solution_with("s1_12_context", "return attn_weights @ values", "return attn_weights.T @ values")
    )
    # a stub with its parts still raising is "not started" although the file changed
    matmul = tmp_course / "exercises/ch01/s1_11_matmul.py"
    matmul.write_text(matmul.read_text() + "\n# I will do this one later\n")
    first = listed(tmp_course, here=here)
    assert first["s1_11_softmax"]["status"] == "passing"
    assert first["s1_11_softmax"]["public_passed"] == first["s1_11_softmax"]["public_total"] == 4
    assert first["s1_12_context"]["status"] == "failing"
    assert first["s1_11_matmul"]["status"] == "not_started"
    assert not first["s1_11_softmax"]["from_cache"]
    assert first["_doc"]["progress"]["passing"] == 1
    # only the public checks' points are earned before grading: the hidden 5 of softmax are not claimed
    assert first["s1_11_softmax"]["public_points_passed"] == first["s1_11_softmax"]["public_points"] == 8
    assert first["s1_11_softmax"]["hidden_points"] == 5 and first["s1_11_softmax"]["points"] == 13
    assert first["_doc"]["progress"]["public_points_passed"] == 8 + first["s1_12_context"]["public_points_passed"]
    assert first["_doc"]["next"] == "s1_01_next_token"

    again = listed(tmp_course)
    assert again["s1_11_softmax"]["from_cache"] and again["s1_12_context"]["from_cache"]
    assert again["s1_11_softmax"]["status"] == "passing" and again["s1_12_context"]["status"] == "failing"

    (tmp_course / SOFTMAX).write_text((tmp_course / SOFTMAX).read_text().replace("e / e.sum", "e / e.max"))
    assert listed(tmp_course, "--no-run")["s1_11_softmax"]["status"] == "unknown"
    table = kata_in(tmp_course, "list", "--no-run").stdout
    assert re.search(r"s1_11_softmax\s+│\s+\? changed, not checked", table), table
    changed = listed(tmp_course, here=here)
    assert changed["s1_11_softmax"]["status"] == "failing" and not changed["s1_11_softmax"]["from_cache"]

    (tmp_course / ".kata" / "progress.json").write_text("\x00 not json")  # a damaged cache is only a cache
    damaged = listed(tmp_course, "--no-run")
    assert damaged["s1_11_softmax"]["status"] == damaged["s1_12_context"]["status"] == "unknown"


def test_a_cached_verdict_is_stale_once_a_file_the_exercise_imported_changes(tmp_course, monkeypatch, capfd):
    """s1_23_encoder_block imports the student's s1_23_feed_forward and s1_23_self_attention: a
    change to either re-runs it (it once kept "passing 4/4" while kata check said 1 of 4). A file
    imported under a name built at run time, which no reading of the code finds, counts too: the
    worker reports what it imported."""
    here = (monkeypatch, capfd)
    ch01 = tmp_course / "exercises/ch01"
    for ex in ("s1_23_feed_forward", "s1_23_self_attention", "s1_23_encoder_block"):
        (ch01 / f"{ex}.py").write_text((ROOT / f"solutions/ch01/{ex}.py").read_text())
    first = listed(tmp_course, here=here)
    assert first["s1_23_encoder_block"]["status"] == "passing" and not first["s1_23_encoder_block"]["from_cache"]
    assert listed(tmp_course)["s1_23_encoder_block"]["from_cache"]

    # break the feed-forward network: the block that imports it is checked again, and fails
    ff = ch01 / "s1_23_feed_forward.py"
    ff.write_text(solution_with("s1_23_feed_forward", "nn.GELU(),", "nn.ReLU(),"))
    again = listed(tmp_course, here=here)
    assert again["s1_23_feed_forward"]["status"] == "failing"
    assert not again["s1_23_encoder_block"]["from_cache"] and again["s1_23_encoder_block"]["status"] == "failing"
    ff.write_text((ROOT / "solutions/ch01/s1_23_feed_forward.py").read_text())
    assert listed(tmp_course, here=here)["s1_23_encoder_block"]["status"] == "passing"

    # an import the code spells at run time (s1_23_evaluation has no forbidden list): only the
    # worker's report finds it, and what that file imported in turn
    evaluation = (ROOT / "solutions/ch01/s1_23_evaluation.py").read_text()
    spelled = "TransformerBlock = __import__('importlib').import_module('s1_23_encoder' + '_block').TransformerBlock"
    (ch01 / "s1_23_evaluation.py").write_text(
        evaluation.replace("from s1_23_encoder_block import TransformerBlock", spelled, 1)
    )
    assert spelled in (ch01 / "s1_23_evaluation.py").read_text()
    assert listed(tmp_course, here=here)["s1_23_evaluation"]["status"] == "passing"
    assert listed(tmp_course, "--no-run")["s1_23_evaluation"]["from_cache"]
    attention = ch01 / "s1_23_self_attention.py"
    attention.write_text(solution_with("s1_23_self_attention", "/ math.sqrt(self.d)", "/ self.d"))
    stale = listed(tmp_course, "--no-run")
    assert stale["s1_23_evaluation"]["status"] == stale["s1_23_encoder_block"]["status"] == "unknown"  # kata watch
    assert not listed(tmp_course, here=here)["s1_23_evaluation"]["from_cache"]  # picks them as not passing


def test_check_shows_each_check_then_explains_the_first_failure(tmp_course, monkeypatch, capfd):
    here = (monkeypatch, capfd)
    # simple normalisation instead of softmax: a mistake the check knows
    (tmp_course / SOFTMAX).write_text(
        solution_with(
            "s1_11_softmax",
            "    shifted = x - x.amax(dim=dim, keepdim=True)\n    e = torch.exp(shifted)\n"
            "    return e / e.sum(dim=dim, keepdim=True)",
            "    return x / x.sum(dim=dim, keepdim=True)",
        )
    )
    proc = kata_in(tmp_course, "check", "s1_11_softmax", here=here)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = proc.stdout
    lines = out.splitlines()
    assert re.search(r"^\s+✘ softmax of the book's examples\s+0/3$", out, re.M), out
    assert re.search(r"^\s+✔ simple normalisation of the book's examples\s+2/2$", out, re.M), out
    assert out.count("First failure") == 1
    first = lines.index(next(l for l in lines if l.startswith("First failure")))
    explanation = "\n".join(lines[first:])
    # the terminal's width decides where the line wraps (in the full suite it wrapped inside it)
    assert "s1_11_softmax › softmax of the book's examples (your result is not right)" in " ".join(explanation.split())
    assert "softmax([1.0, 2.0, 3.0, 6.0]):" in explanation
    assert "Worst at index (3,): expected 0.93, got 0.5" in explanation
    assert "→ This looks like simple normalisation, not softmax." in explanation
    source = (tmp_course / SOFTMAX).read_text().splitlines()
    # the line that returned the wrong value (issue 28), not the def
    start = next(i for i, s in enumerate(source, 1) if s.startswith("def softmax("))
    line = next(i for i, s in enumerate(source, 1) if i > start and s == "    return x / x.sum(dim=dim, keepdim=True)")
    assert f"Edit exercises/ch01/s1_11_softmax.py:{line}" in explanation, explanation
    assert "kata hint s1_11_softmax" in explanation

    zh = kata_in(tmp_course, "--lang", "zh", "check", "s1_11_softmax", here=here)
    assert zh.returncode == 1
    unwrapped = "".join(zh.stdout.split())  # wherever the terminal wraps it
    assert "第一个未通过的检查：s1_11_softmax›书中示例的softmax（你的结果不正确）" in unwrapped
    assert "这看起来像是简单归一化，而不是softmax。" in unwrapped

    (tmp_course / SOFTMAX).write_text((ROOT / "solutions/ch01/s1_11_softmax.py").read_text())
    ok = kata_in(tmp_course, "check", "s1_11_softmax", here=here)
    assert ok.returncode == 0, ok.stdout
    assert "First failure" not in ok.stdout and "4 of 4 public checks pass" in ok.stdout


def test_check_sends_to_the_unfinished_earlier_exercise(tmp_course, monkeypatch, capfd):
    """The classifier is done but the encoder it imports is the stub: `kata check` says to finish
    s1_23_encoder first and points at the stub's line there, not at the classifier."""
    for name in (
        "s1_23_classifier",
        "s1_23_bert_embedding",
        "s1_23_self_attention",
        "s1_23_feed_forward",
        "s1_23_encoder_block",
    ):
        shutil.copy(ROOT / "solutions/ch01" / f"{name}.py", tmp_course / "exercises/ch01")
    stub = (tmp_course / "exercises/ch01/s1_23_encoder.py").read_text().splitlines()
    line = next(i for i, s in enumerate(stub, 1) if "raise NotImplementedError(" in s)
    proc = kata_in(tmp_course, "check", "s1_23_classifier", here=(monkeypatch, capfd))
    assert proc.returncode == 1, proc.stdout + proc.stderr
    out = " ".join(proc.stdout.split())  # the terminal wraps long lines
    assert (
        f"s1_23_classifier uses your code from ch01/s1_23_encoder.py, which is not finished yet "
        f"(ch01/s1_23_encoder.py:{line} raises NotImplementedError): finish s1_23_encoder first"
    ) in out, out
    assert f"Edit exercises/ch01/s1_23_encoder.py:{line}" in out and "Traceback" not in out


def test_check_names_a_missing_or_empty_file_and_offers_reset(tmp_course):
    (tmp_course / CONTEXT).unlink()
    proc = kata_in(tmp_course, "check", "s1_12_context")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    assert "exercises/ch01/s1_12_context.py is missing. `kata reset s1_12_context` puts the stub back." in proc.stdout
    (tmp_course / SOFTMAX).write_text("  \n")
    (tmp_course / "exercises/ch01/s1_10_qkv.py").write_text("import torch\n\ndef qkv(x):\n    return x +\n")
    proc = kata_in(tmp_course, "check")
    assert proc.returncode == 1
    assert "exercises/ch01/s1_11_softmax.py is empty. `kata reset s1_11_softmax`" in proc.stdout
    assert "exercises/ch01/s1_12_context.py is missing" in proc.stdout
    assert "35 exercise(s) not started" in proc.stdout  # the untouched stubs are listed, not run
    first = proc.stdout[proc.stdout.index("First failure") :]
    assert first.startswith("First failure: s1_10_qkv › ") and "(your file could not be imported)" in first
    assert "syntax error in ch01/s1_10_qkv.py:4" in first and "Edit exercises/ch01/s1_10_qkv.py:4" in first
    assert listed(tmp_course)["s1_12_context"]["status"] == "missing"
    assert listed(tmp_course)["s1_11_softmax"]["status"] == "empty"


def test_unknown_exercise_suggests_the_nearest(tmp_course):
    proc = kata_in(tmp_course, "check", "s1_11_sofmax")
    assert proc.returncode == 2
    assert "no exercise 's1_11_sofmax'. Did you mean s1_11_softmax" in proc.stderr
    proc = kata_in(tmp_course, "hint", "layer_norm")
    assert proc.returncode == 2 and "Did you mean s1_17_layer_norm" in proc.stderr


def test_reset_restores_the_stub_and_keeps_a_backup(tmp_course):
    c = course_mod.load(tmp_course)
    stub = stubs.stub_text(c, c.get("s1_11_softmax"))
    (tmp_course / SOFTMAX).write_text("# my work\n")
    (tmp_course / CONTEXT).unlink()
    proc = kata_in(tmp_course, "reset", "s1_11_softmax", "s1_12_context")
    assert proc.returncode == 0, proc.stderr
    m = re.search(r"exercises/ch01/s1_11_softmax.py: stub restored; your previous file is saved as (\S+)", proc.stdout)
    assert m, proc.stdout
    backup = tmp_course / m.group(1)
    assert backup.read_text() == "# my work\n" and backup.is_relative_to(tmp_course / ".kata" / "backups")
    assert "exercises/ch01/s1_12_context.py: stub restored." in proc.stdout
    assert (tmp_course / SOFTMAX).read_text() == stub
    assert (tmp_course / CONTEXT).read_text() == stubs.stub_text(c, c.get("s1_12_context"))

    folders = sorted((tmp_course / ".kata" / "backups").iterdir())
    again = kata_in(tmp_course, "reset", "s1_11_softmax")
    assert "exercises/ch01/s1_11_softmax.py is already the stub; nothing to do." in again.stdout
    assert sorted((tmp_course / ".kata" / "backups").iterdir()) == folders  # no new backup

    (tmp_course / SOFTMAX).write_text("# attempt 2\n")  # a second reset in the same second keeps both backups
    kata_in(tmp_course, "reset", "s1_11_softmax")
    kept = sorted(p.read_text() for p in (tmp_course / ".kata" / "backups").rglob("s1_11_softmax.py"))
    assert kept == ["# attempt 2\n", "# my work\n"]


def test_hints_are_revealed_one_at_a_time_and_survive_a_damaged_state(tmp_course):
    hints = course_mod.load(tmp_course).get("s1_11_softmax").hints
    assert len(hints) == 3
    one = kata_in(tmp_course, "hint", "s1_11_softmax").stdout
    assert f"Hint 1/3  {hints[0]}" in one and hints[1] not in one
    assert "2 more: `kata hint s1_11_softmax` again shows the next one" in one
    two = kata_in(tmp_course, "hint", "s1_11_softmax").stdout
    assert f"Hint 1/3  {hints[0]}" in two and f"Hint 2/3  {hints[1]}" in two and hints[2] not in two
    other = kata_in(tmp_course, "hint", "s1_12_context").stdout  # kept per exercise
    assert "Hint 1/1" in other and "That was the last hint for s1_12_context." in other
    every = kata_in(tmp_course, "hint", "s1_11_softmax", "--all").stdout
    assert all(h in every for h in hints) and "That was the last hint" in every

    state = tmp_course / ".kata" / "hints.json"
    state.write_text('{"schema": 1, "data": {"s1_11_softmax": ')  # half written
    proc = kata_in(tmp_course, "hint", "s1_11_softmax")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr
    assert "note: .kata/hints.json could not be read" in proc.stdout
    assert "moved to .kata/hints.json.damaged" in proc.stdout
    assert f"Hint 1/3  {hints[0]}" in proc.stdout and hints[1] not in proc.stdout
    assert json.loads(state.read_text())["data"] == {"s1_11_softmax": 1}

    zh = kata_in(tmp_course, "hint", "s1_11_softmax", lang="zh").stdout
    assert "提示 2/3" in zh and "还有 1 条：再次运行 `kata hint s1_11_softmax` 显示下一条" in zh


def test_hint_without_id_is_for_the_first_exercise_not_passing(tmp_course):
    out = kata_in(tmp_course, "hint").stdout
    assert "Hints for s1_01_next_token" in out


def test_every_message_has_english_and_chinese_with_the_same_fields():
    fields = lambda text: {f for _, f, _, _ in string.Formatter().parse(text) if f}  # noqa: E731
    for key, entry in CATALOG.items():
        assert entry.get("en") and entry.get("zh"), f"{key}: missing a language"
        if key != "mistake":  # the Chinese text uses {mistake_zh} for {mistake}
            assert fields(entry["en"]) == fields(entry["zh"]), key


def test_a_fifo_in_place_of_an_exercise_does_not_hang_check_or_list(tmp_course):
    """A FIFO where an exercise file should be (read, it would block for ever): `kata check` and
    `kata list` name the file as missing, as grading skips it, and end."""
    path = tmp_course / CONTEXT
    path.unlink()
    os.mkfifo(path)
    proc = kata_in(tmp_course, "check", "s1_12_context")
    assert proc.returncode == 1 and "exercises/ch01/s1_12_context.py is missing" in " ".join(proc.stdout.split())
    assert listed(tmp_course)["s1_12_context"]["status"] == "missing"


TOO_BIG = ROOT / "tests" / "hostile" / "too_big_for_training" / "s1_15_attention.py"


def test_check_names_the_reads_it_leaves_out_and_full_runs_them_as_the_grade(tmp_course, monkeypatch, capfd):
    """Sixth outside attack, BREAK 1: a correct attention written as broadcast-and-sum (34 GB at the
    training size) passed every public check of `kata check` and lost the dropout check in the
    grade. `kata check` now says which checks read more when graded and how to run them so;
    `kata check --full` fails the dropout check with the memory limit, as the grade does, and the
    reference passes it with no such line."""
    shutil.copy(TOO_BIG, tmp_course / "exercises" / "ch01" / "s1_15_attention.py")
    here = (monkeypatch, capfd)
    quick = kata_in(tmp_course, "check", "s1_15_attention", here=here)
    assert quick.returncode == 0, quick.stdout + quick.stderr
    assert re.search(
        r"s1_15_attention: kata grade also runs \d+ of these check\(s\) at the training size", quick.stdout
    ), quick.stdout
    assert "kata check --full s1_15_attention" in quick.stdout
    full = kata_in(tmp_course, "check", "--full", "s1_15_attention", here=here)
    assert full.returncode == 1, full.stdout + full.stderr
    assert re.search(r"used more than \d+ MB of memory", full.stdout), full.stdout
    assert "also runs" not in full.stdout and "(--full:" in full.stdout
    zh = kata_in(tmp_course, "check", "s1_15_attention", lang="zh", here=here)
    assert "kata grade 还会在训练时的规模" in zh.stdout and "also runs" not in zh.stdout, zh.stdout
    shutil.copy(ROOT / "solutions" / "ch01" / "s1_15_attention.py", tmp_course / "exercises" / "ch01")
    ref = kata_in(tmp_course, "check", "--full", "s1_15_attention", here=here)
    assert ref.returncode == 0 and "(--full:" in ref.stdout, ref.stdout + ref.stderr
