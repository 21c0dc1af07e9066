"""Languages: every text a student reads in English and Chinese, chosen by --lang or the locale."""

import json
import os
import re
import subprocess
import sys

import pytest

from grader.course import manifest as course, i18n, messages
from grader.checking import CheckFailure, Msg, check, code, expect, expect_equal, joined
from grader.course.messages import catalog_problems, language, t
from tests.conftest import ROOT, kata, make_submission

CJK = re.compile(r"[\u4e00-\u9fff]")


# ---------------------------------------------------------------- completeness, proved statically
def test_every_catalog_message_has_both_languages_with_the_same_fields():
    assert catalog_problems() == []
    assert all(set(entry) == {"en", "zh"} for entry in messages.CATALOG.values())


def test_catalog_check_finds_a_missing_translation_and_different_fields():
    found = catalog_problems(
        {
            "a": {"en": "{what}: wrong"},
            "b": {"en": "{what}: wrong {n}", "zh": "{what}：错了"},
            "c": {"en": "{what}: wrong", "zh": "{what}: wrong"},
            "d": {"en": "fine {x}", "zh": "好 {x}"},
        }
    )
    assert any("'a'" in p and "no zh text" in p for p in found)
    assert any("'b'" in p and "fields differ" in p for p in found)
    assert any("'c'" in p and "no Chinese" in p for p in found)
    assert not any("'d'" in p for p in found)


def test_course_and_every_check_are_in_both_languages():
    c = course.load(ROOT)
    assert i18n.problems(c) == []
    checks = [ch for ex in c.exercises for ch in ex.checks]
    assert len(checks) >= 250
    assert all(ch.title and CJK.search(ch.title_zh) for ch in checks)
    assert all(CJK.search(ex.title_zh) and len(ex.hints_zh) == len(ex.hints) for ex in c.exercises)
    assert all(CJK.search(lst.title_zh) for lst in c.listings)


BAD_MODULE = """
import pytest
from grader.checking import Mistake, Msg, check, code, expect, expect_equal, expect_tensor


def _helper(x, what):
    expect(x, Msg(f"{what}: bad", f"{what}：不对"))


@check(points=1, title="a title")
def test_no_chinese_title(sub):
    expect(True, "plain English")                                    # no Chinese
    expect_tensor(1, 1, what=f"shape of {sub}")                      # an f-string
    expect_equal(1, 1, "the result of a call")                       # positional what
    _helper(True, "a helper's label")                                # a helper's what
    pytest.skip("no data here")                                      # a skip reason
    Msg("{what}: wrong {n}", "{what}：不对", what=1, n=2)               # fields differ
    Msg("{what}: wrong", "{what}：不对")                                # fields not passed
    Msg(f"over {sub} draws", f"抽取 {sub.x} 次")                       # other expressions
    Msg("same text", "same text")                                    # no Chinese
    code("the weights of the model")                                 # prose
    Mistake(None, "a mistake")                                       # no Chinese
    Msg.key("shape", what=1)                                         # fields missing
    t("no_such_key")                                                 # unknown key


@check(points=1, title="fine", title_zh="好")
def test_fine(sub):
    expect(True, Msg("right", "对"))
    expect(True, code("softmax([1, 2, 'a b'])"))
    expect_tensor(1, 1, what=Msg("{what}: x", "{what}：第 x 项", what=code("y")))
    Mistake(None, f"dim {sub}", f"第 {sub} 维")
"""


def test_lint_names_each_untranslated_text(tmp_path):
    path = tmp_path / "test_bad.py"
    path.write_text(BAD_MODULE)
    found = i18n.module_problems(path) + i18n.key_problems(path)
    lines = BAD_MODULE.split("\n")

    def at(snippet: str, problem: str) -> None:
        where = f"test_bad.py:{next(n for n, line in enumerate(lines, 1) if snippet in line)}:"
        assert any(where in p and problem in p for p in found), (snippet, problem, found)

    at('title="a title"', "@check of test_no_chinese_title needs title=")
    for snippet in ('"plain English"', 'f"shape of', '"the result of a call"', "a helper's label", '"no data here"'):
        at(snippet, "plain string")
    at('"{what}: wrong {n}"', "the fields differ")
    at('Msg("{what}: wrong", ', "uses {what} but passes no fields")
    at('f"over {sub} draws"', "the f-strings interpolate different expressions")
    for snippet in ('f"over {sub} draws"', 'Msg(f"{what}: bad"'):  # a value baked into the text
        at(snippet, "write each value as a field")
    at('Msg("same text"', "the Chinese text 'same text' has no Chinese")
    at('code("the weights', "reads as English prose")
    at('Mistake(None, "a mistake")', "Mistake(value, en, zh) needs both texts")
    at('Msg.key("shape"', "does not pass ['actual', 'expected']")
    at('t("no_such_key")', "message key 'no_such_key' is not in the catalog")
    fine = next(n for n, line in enumerate(lines, 1) if 'title="fine"' in line)
    assert not [p for p in found if int(p.split(":")[1]) >= fine], found  # the right way passes


HIDDEN_MODULE = """
from grader.checking import Mistake, Msg, check, code, expect, expect_tensor, from_input


def _shared(x):
    expect(x, Msg("a batch of 4", "大小为 4 的批次"))                      # reached from a hidden check


@check(points=1, hidden=True, title="other sizes", title_zh="其他尺寸")
def test_hidden(sub):
    expect_tensor(1, 1, what=Msg("scores of 9 states", "9 个状态的分数"))  # a size
    expect(True, Msg("a float64 tensor", "float64 张量"))                   # a dtype
    expect(True, code("attention(q, causal=True)"))                         # an option
    expect(True, Msg("bias None", "bias 为 None"))                          # None
    Mistake(None, "weights that sum to 1", "和为 1 的权重")                   # a Mistake's constant
    _shared(True)
    expect(True, Msg("{n} states, sum `1`, §1.11", "{n} 个状态，和 `1`，§1.11", n=from_input(9)))
    Mistake(None, "weights that sum to `1`", "和为 `1` 的权重")
    expect(True, Msg("GPT-2 ids of s1_23_tokenizer", "s1_23_tokenizer 的 GPT-2 id"))


@check(points=1, title="public", title_zh="公开")
def test_public(sub):
    expect(True, Msg("scores of 9 states", "9 个状态的分数"))                # a public check says it
"""


def test_lint_refuses_a_value_a_hidden_check_writes_as_text(tmp_path):
    """A hidden check's texts, and those of the functions it calls, state no number, option or
    None outside a field: a value of the input is a from_input field (shown as "…"); the course's
    constants go in backticks or words."""
    path = tmp_path / "test_hidden.py"
    path.write_text(HIDDEN_MODULE)
    found = [p for p in i18n.module_problems(path) if "hidden check" in p]
    lines = HIDDEN_MODULE.split("\n")
    flagged = {int(p.split(":")[1]): p for p in found}
    expected = {
        n: stated
        for n, line in enumerate(lines, 1)
        for snippet, stated in (
            ('"a batch of 4"', "'4'"),
            ('"scores of 9 states", "9', "'9'"),
            ('"a float64 tensor"', "'float64'"),
            ("causal=True", "'causal=True'"),
            ('"bias None"', "'None'"),
            ('"weights that sum to 1"', "'1'"),
        )
        if snippet in line and "public" not in lines[n - 2]
    }
    public = next(n for n, line in enumerate(lines, 1) if "def test_public" in line)
    expected = {n: v for n, v in expected.items() if n < public}
    assert set(flagged) == set(expected), found
    for n, stated in expected.items():
        assert f"states {stated}" in flagged[n], flagged[n]
    mistake = next(n for n, line in enumerate(lines, 1) if '"weights that sum to 1"' in line)
    assert "a mistake's text names the mistake, never the hidden input" in flagged[mistake]
    assert "x=from_input(value)" in flagged[min(expected)]


def test_a_check_without_its_chinese_title_stops_the_course(tmp_path):
    path = tmp_path / "test_s1_99_x.py"
    path.write_text('@check(points=1, title="a title")\ndef test_x(sub):\n    pass\n')
    with pytest.raises(course.CourseError, match=r"test_s1_99_x.py:1: @check of test_x needs title_zh="):
        course.read_checks(path)
    with pytest.raises(TypeError, match="title_zh"):
        check(points=1, title="a title")


def test_hints_need_as_many_chinese_hints(tmp_course):
    path = tmp_course / "course.toml"
    text = path.read_text(encoding="utf-8")
    start = text.index("hints_zh = [", text.index('id = "s1_12_context"'))
    end = text.index("]", start)
    path.write_text(text[:start] + "hints_zh = []" + text[end + 1 :], encoding="utf-8")
    with pytest.raises(course.CourseError, match=r"s1_12_context.*1 hint\(s\) but 0 in hints_zh"):
        course.load(tmp_course)


# ---------------------------------------------------------------- choosing the language
@pytest.mark.parametrize(
    "env, lang",
    [
        ({}, "en"),
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_TW.UTF-8"}, "zh"),
        ({"LANG": "C.UTF-8"}, "en"),
        ({"LANG": "zh_CN.UTF-8", "LC_ALL": "en_US.UTF-8"}, "en"),  # LC_ALL overrides LANG
        ({"LANG": "en_US.UTF-8", "LC_MESSAGES": "zh_CN.UTF-8"}, "zh"),
        ({"LC_ALL": "zh_CN.UTF-8", "KATA_LANG": "en"}, "en"),  # kata --lang sets KATA_LANG, which wins
        ({"LANG": "de_DE.UTF-8"}, "en"),  # English is the fallback
    ],
)
def test_language_from_kata_lang_or_the_locale(monkeypatch, env, lang):
    for var in ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    for var, value in env.items():
        monkeypatch.setenv(var, value)
    assert language() == lang


def test_texts_render_in_the_chosen_language_with_their_fields():
    what = Msg("attention weights", "注意力权重")
    msg = Msg.key("shape", what=what, expected=(2, 3), actual=(3, 2))
    assert msg.render("en") == "attention weights: wrong shape: expected (2, 3), got (3, 2)"
    assert msg.render("zh") == "注意力权重：形状错误：应为 (2, 3)，实际为 (3, 2)"
    assert t("shape", "zh", what=code("softmax(x)"), expected=(1,), actual=(2,)).startswith("softmax(x)：形状错误")
    both = joined([Msg("a", "甲"), Msg("b", "乙")])
    assert (both.render("en"), both.render("zh")) == ("a; b", "甲；乙")
    assert Msg("{x} braces {{kept}}", "{x} 括号 {{kept}}", x=1).render("zh") == "1 括号 {kept}"
    assert Msg("{'a': 1}", "{'a': 1} 字典").render("en") == "{'a': 1}"  # no fields: never formatted


def test_a_plain_string_message_is_refused_when_the_check_runs():
    with pytest.raises(TypeError, match=r"Msg\(english, chinese\)"):
        expect(True, "plain English")
    with pytest.raises(TypeError, match="what="):
        expect_equal(1, 1, what="the result")
    with pytest.raises(TypeError, match="joined"):
        joined(["plain"])
    with pytest.raises(CheckFailure) as e:
        expect(False, Msg("wrong", "错了"))
    assert str(e.value) in ("wrong", "错了")


# ---------------------------------------------------------------- through the real command line
WRONG_SOFTMAX = """

def softmax(x, dim=-1):
    return x / x.sum(dim=dim, keepdim=True)
"""


def _run(args, cwd, **env):
    """`kata` (this checkout's) in `cwd` with a clean language environment plus `env`; wide enough
    that rich wraps nothing."""
    base = {k: v for k, v in os.environ.items() if k not in ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG")}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=600,
        env={**base, "COLUMNS": "250", "PYTHONPATH": str(ROOT), **env},
    )


def test_kata_check_speaks_chinese_or_english(tmp_course):
    stub = tmp_course / "exercises" / "ch01" / "s1_11_softmax.py"
    stub.write_text(stub.read_text() + WRONG_SOFTMAX)

    zh = _run(["--lang", "zh", "check", "s1_11_softmax"], tmp_course)
    assert zh.returncode == 1, zh.stderr
    out = zh.stdout
    for text in (
        "简单归一化和数值稳定的 softmax",  # the exercise's title
        "✘ 书中示例的 softmax",  # the check's title
        "第一个未通过的检查",
        "个值中有",
        "这看起来像是简单归一化，而不是 softmax。",  # the failure, its mistake
        "4 个公开检查中通过 0 个 · 0/8 分",
    ):  # the summary
        assert text in out, (text, out)
    assert "This looks like" not in out and "values differ" not in out and "public checks pass" not in out

    en = _run(["--lang", "en", "check", "s1_11_softmax"], tmp_course, LANG="zh_CN.UTF-8")  # --lang wins
    assert en.returncode == 1, en.stderr
    out = en.stdout
    for text in (
        "Simple normalisation and a numerically stable softmax",
        "✘ softmax of the book's examples",
        "First failure",
        "values differ",
        "This looks like simple normalisation, not softmax.",
        "0 of 4 public checks pass · 0/8 points",
    ):
        assert text in out, (text, out)
    assert not CJK.search(out), out

    by_locale = _run(["check", "s1_11_softmax"], tmp_course, LANG="zh_CN.UTF-8")
    assert "书中示例的 softmax" in by_locale.stdout and "这看起来像是简单归一化" in by_locale.stdout


def test_unknown_exercise_is_said_in_chinese():
    proc = kata("--lang", "zh", "check", "s1_11_softmx")
    assert proc.returncode == 2
    assert "kata：没有练习 's1_11_softmx'。你是不是想输入 s1_11_softmax" in proc.stderr


def test_json_report_keeps_its_fields_and_adds_title_and_lang(tmp_path):
    source = (ROOT / "solutions" / "ch01" / "s1_11_softmax.py").read_text()
    sub = make_submission(tmp_path, {"s1_11_softmax": source + WRONG_SOFTMAX})
    out = tmp_path / "report.json"
    proc = kata("--lang", "zh", "grade", str(sub), "-e", "s1_11_softmax", "--public-only", "--json", str(out), "-q")
    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["lang"] == "zh"
    assert report["exercises"][0]["title"] == "简单归一化和数值稳定的 softmax"
    checks = {c["name"]: c for c in report["checks"]}
    first = checks["test_book_softmax_examples"]  # `name` is still the function's name
    assert first["title"] == "书中示例的 softmax" and first["status"] == "failed"
    assert "这看起来像是简单归一化" in first["message"]
    assert checks["test_book_simple_normalization"]["status"] == "passed"
    assert set(first) >= {
        "exercise",
        "name",
        "status",
        "score",
        "max_score",
        "message",
        "listing",
        "visibility",
        "duration_s",
        "kind",
        "title",
    }


def test_the_workers_own_errors_are_worded_in_chinese(tmp_path):
    """The worker cannot read the catalog: it sends a code and fields, and the grader words them."""
    softmax = (ROOT / "solutions" / "ch01" / "s1_11_softmax.py").read_text()
    context = (ROOT / "solutions" / "ch01" / "s1_12_context.py").read_text()
    sub = make_submission(
        tmp_path,
        {
            # a name the scan cannot read (its escape rule refuses the file): the guard refuses the call
            "s1_11_softmax": softmax
            + "\n\ndef softmax(x, dim=-1):\n    return getattr(torch, 'soft' + 'max')(x, dim=dim)\n",
            "s1_12_context": context.replace("def context_vectors(", "def context_vector("),
        },
    )
    out = tmp_path / "report.json"
    proc = kata(
        "--lang",
        "zh",
        "grade",
        str(sub),
        "-e",
        "s1_11_softmax",
        "-e",
        "s1_12_context",
        "--public-only",
        "--json",
        str(out),
        "-q",
    )
    assert proc.returncode == 0, proc.stderr
    checks = {(c["exercise"], c["name"]): c for c in json.loads(out.read_text(encoding="utf-8"))["checks"]}
    forbidden = checks[("s1_11_softmax", "test_book_softmax_examples")]["message"]
    assert "练习 s1_11_softmax 中不允许使用 torch.softmax：本练习要求你自己实现它。用 torch.exp" in forbidden
    assert "在删除它之前，本练习记 0 分" in forbidden  # the static scan's verdict, in Chinese too
    assert "getattr" in forbidden
    assert (
        "模块 s1_12_context 中没有 'context_vectors'"
        in checks[("s1_12_context", "test_listing_1_7_context")]["message"]
    )


def test_a_pending_chinese_text_is_pending_not_a_field_mismatch():
    """While the Chinese is still to write ("" or kata new's "TODO"), `kata verify --draft` lists it
    as pending: its fields are compared once it is written, not reported as differing now."""
    from grader.course.i18n import PENDING
    from grader.course.messages import pair_problems

    for zh in ("", "TODO"):
        found = pair_problems("softmax({x}) is not 1", zh)
        assert found and all(PENDING.search(p) for p in found), found
    assert any("differ" in p for p in pair_problems("softmax({x}) is not 1", "softmax 之和不是 1"))
