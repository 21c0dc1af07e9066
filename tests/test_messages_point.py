"""Messages that point and name (issue 28): real submissions with one planted mistake each, graded
for real, in English and Chinese. A wrong value names the line that returned it; a relative error is
given only where the expected value is not 0; an id sequence names its first difference and the
special token there; `k.T` on a batch is explained in every exercise; two rule violations are two
sentences; `kata check` (the watch view's explanation too) never splits `k.T` across lines."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from tests.conftest import ROOT, failed_checks, make_submission, solution_with


def grade_in(lang: str, tmp_path, exercise: str, old: str, new: str, *args: str) -> dict:
    """`kata --lang LANG grade` of the solutions with `old` replaced by `new` in `exercise`."""
    from grader.cli import main

    base = tmp_path / lang
    base.mkdir()
    sub = make_submission(base, {exercise: solution_with(exercise, old, new)})
    out = base / "report.json"
    before = os.environ.get("KATA_LANG")
    os.environ["KATA_LANG"] = lang
    try:
        assert main(["grade", str(sub), "--json", str(out), "--quiet", "-e", exercise, *args]) == 0
    finally:
        if before is None:
            os.environ.pop("KATA_LANG", None)
        else:
            os.environ["KATA_LANG"] = before
    return failed_checks(json.loads(out.read_text()), exercise)


WHOLE_SUM = ("s1_11_softmax", "    return e / e.sum(dim=dim, keepdim=True)", "    return e / e.sum()")


def test_a_wrong_value_names_the_return_statement_that_returned_it(tmp_path):
    failed = grade_in("en", tmp_path, *WHOLE_SUM)
    public = failed["test_rows_and_columns"]
    assert public["visibility"] == "public"
    assert "(returned at ch01/s1_11_softmax.py:26). This looks like summed over the whole tensor" in public["message"]
    hidden = [c for c in failed.values() if c["visibility"] == "hidden"]
    assert hidden and all("returned at" not in c["message"] and ".py:" not in c["message"] for c in hidden)
    zh = grade_in("zh", tmp_path, *WHOLE_SUM, "--public-only")
    assert "（在 ch01/s1_11_softmax.py:26 返回）" in zh["test_rows_and_columns"]["message"]


@pytest.mark.parametrize(
    "lang, rel, absolute",
    [
        ("en", r"max rel error ([\d.]+(?:e[+-]\d+)?)", "max abs error inf"),
        ("zh", r"最大相对误差 ([\d.]+(?:e[+-]\d+)?)", "最大绝对误差 inf"),
    ],
)
def test_no_relative_error_where_zero_was_expected(tmp_path, lang, rel, absolute):
    """Causal weights with 0 for -inf: the weights expected 0 are wrong too, and err / 0 read 1e+11."""
    failed = grade_in(
        lang,
        tmp_path,
        "s1_13_causal_mask",
        'scores.masked_fill(~mask, float("-inf"))',
        "scores.masked_fill(~mask, 0.0)",
        "--public-only",
    )
    weights = failed["test_listing_1_12_causal_weights"]["message"]
    assert float(re.search(rel, weights).group(1)) < 1, weights  # 0.981: over the weights not expected to be 0
    scores = failed["test_listing_1_11_masked_scores"]["message"]  # only -inf was expected where it differs
    assert absolute in scores and not re.search(rel, scores), scores


@pytest.mark.parametrize(
    "lang, named",
    [
        (
            "en",
            "(tolerance exact). First at index (0,): expected 50258, got 1212: [CLS] missing at position 0 (id 50258)",
        ),
        (
            "zh",
            "（容差 0（须完全相等））。第一处不符在索引 (0,)：应为 50258，实际为 1212：位置 0 缺少 [CLS]（id 50258）",
        ),
    ],
)
def test_a_missing_cls_is_named_at_the_first_difference(tmp_path, lang, named):
    from grader.capstone.gpt2 import have_asset

    if not have_asset():  # the GPT-2 checks skip without gpt2.tiktoken: nothing to read here
        pytest.skip("gpt2.tiktoken is not in the assets folder (python -m grader.capstone.gpt2 fetch)")
    failed = grade_in(
        lang,
        tmp_path,
        "s1_23_tokenizer",
        "ids = [self.cls_id] + self.truncate(self.text_ids(text)) + [self.sep_id]",
        "ids = self.truncate(self.text_ids(text)) + [self.sep_id]",
        "--public-only",
    )
    assert named in failed["test_listing_1_26_encode"]["message"]
    small = failed["test_encode_and_truncate_small_table"]["message"]  # the small table's own ids
    assert "[CLS]" in small and "id 390" in small and "Worst" not in small and "误差最大处" not in small, small


@pytest.mark.parametrize(
    "lang, explained",
    [
        (
            "en",
            "On a batch, k.T (as the book's listings write it for a single sequence) reverses all the dimensions: "
            "(2, 5, 4) becomes (4, 5, 2). Transpose only the last two: k.transpose(-2, -1) or k.mT",
        ),
        (
            "zh",
            "输入带批次维度时，k.T（书中代码清单对单个序列的写法）会把所有维度倒过来：(2, 5, 4) 变成 (4, 5, 2)。"
            "只交换最后两个维度：k.transpose(-2, -1) 或 k.mT",
        ),
    ],
)
def test_k_T_on_a_batch_is_explained_in_s1_15_as_in_s1_12(tmp_path, lang, explained):
    failed = grade_in(
        lang, tmp_path, "s1_15_attention", "scores = q @ k.transpose(-2, -1)", "scores = q @ k.T", "--public-only"
    )
    assert explained in failed["test_causal_matches_sdpa"]["message"]


@pytest.mark.parametrize(
    "lang, sentences",
    [
        (
            "en",
            "ch01/s1_11_softmax.py:26: uses torch.softmax (check = torch.softmax(x, dim=dim)). "
            "ch01/s1_11_softmax.py:27: uses torch.Tensor.softmax (return x.softmax(dim)). This exercise asks you",
        ),
        (
            "zh",
            "ch01/s1_11_softmax.py:26：使用了 torch.softmax（check = torch.softmax(x, dim=dim)）。"
            "ch01/s1_11_softmax.py:27：使用了 torch.Tensor.softmax（return x.softmax(dim)）。本练习要求你",
        ),
    ],
)
def test_two_rule_violations_are_two_sentences(tmp_path, lang, sentences):
    failed = grade_in(
        lang,
        tmp_path,
        "s1_11_softmax",
        "    return e / e.sum(dim=dim, keepdim=True)",
        "    check = torch.softmax(x, dim=dim)\n    return x.softmax(dim)",
        "--public-only",
    )
    assert sentences in failed["test_rows_and_columns"]["message"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_kata_check_never_splits_code_across_lines(tmp_course, lang):
    """The explanation `kata check` and `kata watch` print: "k.T" was cut after "k." (a sentence
    break before a capital) and Chinese glued to code ("维度：k.transpose(-2,") was folded anywhere."""
    source = solution_with("s1_15_attention", "scores = q @ k.transpose(-2, -1)", "scores = q @ k.T")
    (tmp_course / "exercises/ch01/s1_15_attention.py").write_text(source)
    for columns in (60, 72):
        proc = subprocess.run(
            [sys.executable, "-m", "grader", "--lang", lang, "check", "s1_15_attention"],
            cwd=tmp_course,
            capture_output=True,
            text=True,
            timeout=300,
            env={**os.environ, "COLUMNS": str(columns), "PYTHONPATH": str(ROOT)},
        )
        lines = [line.strip() for line in proc.stdout.splitlines()]
        assert any("k.transpose(-2," in line for line in lines), proc.stdout + proc.stderr
        for span in ("k.T", "k.transpose(-2,", "k.mT", "ch01/s1_15_attention.py:30"):
            whole = sum(line.count(span) for line in lines)
            assert whole == "".join(lines).count(span) and whole, (span, columns, proc.stdout)


FORGED = ROOT / "tests" / "hostile" / "forged_messages"


@pytest.mark.parametrize("attack", ["location", "location_in_course"])
def test_a_returned_at_the_students_code_rewrites_is_never_shown(tmp_path, attack):
    """The sixth outside attack rewrote, from its own code, what the worker notes as the returning
    line: a grader path, a sentence of its own, another exercise's file the submission lacks, a line
    past the end of its own file. Only a line that is there in a course exercise file of the
    submission is named; the wrong values still lose their points and say so."""
    from grader.cli import main

    sub = tmp_path / "sub"
    shutil.copytree(FORGED / attack, sub)
    out = tmp_path / "report.json"
    assert main(["grade", str(sub), "--json", str(out), "--quiet", "-e", "s1_05_positions"]) == 0
    failed = failed_checks(json.loads(out.read_text()), "s1_05_positions")
    assert failed, "the forging submission's wrong values must fail"
    lines = len((sub / "ch01" / "s1_05_positions.py").read_text().splitlines())
    for check in failed.values():
        for path, line in re.findall(r"(?:returned at|在) (\S+?\.py):(\d+)", check["message"]):
            assert path == "ch01/s1_05_positions.py" and 1 <= int(line) <= lines, check["message"]
        assert "本题已满分" not in check["message"] and "grader" not in check["message"], check["message"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_graders_wording_carries_no_text_of_the_students(tmp_path, lang):
    """The sixth outside attack patched the worker's session to send its error as the runtime's own
    catalog code (a forbidden call) with a hint of its own ("flagged for plagiarism review") and a
    function the exercise does not forbid. Only the course's own hint and forbidden names are put
    into the grader's wording; anything else is the worker's message, as any exception's is."""
    from grader.cli import main

    sub = tmp_path / "sub"
    shutil.copytree(FORGED / "wording", sub)
    out = tmp_path / "report.json"
    before = os.environ.get("KATA_LANG")
    os.environ["KATA_LANG"] = lang
    try:
        assert main(["grade", str(sub), "--json", str(out), "--quiet", "-e", "s1_05_positions"]) == 0
    finally:
        os.environ.pop("KATA_LANG", None) if before is None else os.environ.__setitem__("KATA_LANG", before)
    failed = failed_checks(json.loads(out.read_text()), "s1_05_positions")
    assert failed
    for check in failed.values():
        message = check["message"]
        assert "plagiarism" not in message and "is not allowed in exercise" not in message, message
        assert "中不允许使用" not in message, message
