"""`kata --lang zh verify`: the problems its parts find are said in Chinese too (issue 36).

Every text the parts of `kata verify` hand it (grader/course/i18n.py and messages.py's pair and
spacing rules, cli_text.py, grader/authoring/stub_i18n.py, stubs.py, answers.py, glossary.py,
asset_pins.py, grader/listings/errata.py, and the part names verify.py puts before them) is a
catalog entry. Each test below provokes real problems, renders them in English and in Chinese,
and asserts that every Chinese line holds Chinese and differs from the English one, and that
every entry of the part was rendered (`said`: the keys asked of the catalog)."""

from __future__ import annotations

import argparse
import re
import shutil
import types

import polib
import pytest

from grader.authoring import answers, asset_pins, glossary, stub_i18n, stubs
from grader.authoring.verify import verify
from grader.course import i18n
from grader.course import manifest as course_mod
from grader.course.messages import CATALOG, CJK, Msg
from grader.listings import errata
from tests.conftest import ROOT
from tests.test_verify import PLANTED_FEED_FORWARD, _plant

# the catalog keys of the problems verify's parts return (errata_to_translate* are `kata stubs`')
PREFIXES = (
    "i18n_",
    "clitext_",
    "stubi18n_",
    "stubs_code_",
    "errata_",
    "answers_",
    "glossary_",
    "assetpins_",
    "verify_in_",
)
KEYS = sorted(k for k in CATALOG if k.startswith(PREFIXES) and not k.startswith("errata_to_translate"))


def keys(*prefixes: str) -> set[str]:
    return {k for k in KEYS if k.startswith(prefixes)}


@pytest.fixture
def said(monkeypatch):
    """The catalog keys rendered while the test runs (t() and Msg.key() both ask Msg.key)."""
    asked: set[str] = set()
    original = Msg.key.__func__

    def key(cls, name, /, **fields):
        asked.add(name)
        return original(cls, name, **fields)

    monkeypatch.setattr(Msg, "key", classmethod(key))
    return asked


def in_both(monkeypatch, make) -> list[str]:
    """make() in English, then in Chinese (as `kata --lang` sets it): the same problems, each
    Chinese line with Chinese in it and not the English line."""
    monkeypatch.setenv("KATA_LANG", "en")
    en = make()
    monkeypatch.setenv("KATA_LANG", "zh")
    zh = make()
    assert en and len(en) == len(zh), (en, zh)
    for e, z in zip(en, zh):
        assert CJK.search(z) and z != e, (e, z)
    return zh


def test_every_problem_text_of_verify_has_its_chinese():
    assert len(KEYS) >= 73
    for key in KEYS:
        en, zh = CATALOG[key]["en"], CATALOG[key]["zh"]
        words = re.sub(r"\{[^{}]*\}", "", en)  # "{where}: {name!r}: {problem}" only joins: "：" in Chinese
        assert zh.strip() and zh != en and (CJK.search(zh) or not re.search("[A-Za-z]", words)), key


# ------------------------------------------------------------------ the language rule (i18n.py)
PLANTED_CHECKS = """
from grader.checking import Mistake, Msg, check, code, expect
from grader.course.messages import t


@check(points=1, title="a title")
def test_no_chinese_title(sub):
    expect(True, "plain English")
    Msg("only one text")
    Msg.key("shape", what=1)
    code("the weights of the model")
    Mistake(None, "a mistake")
    Mistake(None, "a mistake", "a mistake")
    Msg("{a} and {b}", "{a} 和 {b}", a=1)
    Msg("{a}", "{a} 甲", a=1, b=2)
    Msg("{what}: wrong", "{what}：不对")
    Msg(f"over {sub} draws", f"抽取 {sub.x} 次")
    Msg(f"over {sub} draws", "抽取")
    Msg("", "中文 {a}", a=1)
    Msg("text {a}", "", a=1)
    Msg("same text", "same text")
    Msg("{a} x", "{b} 中", a=1, b=2)
    Msg("x {a}", "有x {a}", a=1)
    Msg("{0} x", "{0} 中", a=1)
    t("no_such_key_anywhere")


@check(points=1, title="a title", title_zh="a title")
def test_english_title_zh(sub):
    pass


@check(points=1, hidden=True, title="other sizes", title_zh="其他尺寸")
def test_hidden_states_its_input(sub):
    expect(True, Msg("a batch of 4", "大小为 4 的批次"))
    Mistake(None, "weights that sum to 1", "和为 1 的权重")
"""

PLANTED_PO = """msgid "no key here"
msgstr "这里没有键"

msgctxt "dup"
msgid "a"
msgstr "甲"

msgctxt "dup"
msgid "b"
msgstr "乙"

#~ msgctxt "gone"
#~ msgid "gone"
#~ msgstr "没了"

msgctxt "with_fields"
msgid "{n} files"
msgstr "{n} 个文件"

msgctxt "plural"
msgid "one file"
msgid_plural "{n} files"
msgstr[0] "一个文件"

#, fuzzy
msgctxt "fuzzy_one"
msgid "x"
msgstr "叉"

msgctxt "empty"
msgid "empty"
msgstr ""

#, python-brace-format
msgctxt "differ"
msgid "{a} x"
msgstr "{b} 叉"
"""


def test_the_language_rules_problems_are_said_in_chinese(tmp_path, monkeypatch, said):
    checks = tmp_path / "test_planted.py"
    checks.write_text(PLANTED_CHECKS, encoding="utf-8")
    broken = tmp_path / "test_broken.py"
    broken.write_text("def (:\n", encoding="utf-8")
    po = tmp_path / "messages.po"
    po.write_text(PLANTED_PO, encoding="utf-8")
    not_utf8 = tmp_path / "latin1.po"
    not_utf8.write_bytes(b'msgctxt "a"\nmsgid "caf\xe9"\nmsgstr "x"\n')
    not_po = tmp_path / "merge.po"
    not_po.write_text('msgctxt "a"\n<<<<<<< HEAD\nmsgid "x"\nmsgstr "y"\n', encoding="utf-8")
    plain = types.SimpleNamespace
    toml = plain(
        title="A course",
        title_zh="A course",
        listings=[plain(id="1.1", title="Listing", title_zh="Listing")],
        exercises=[
            plain(
                id="s1_01",
                title="Ex",
                title_zh="Ex",
                hints=["a hint"],
                hints_zh=["a hint"],
                forbidden_hint="no softmax",
                forbidden_hint_zh="no softmax",
            )
        ],
    )

    def problems():
        return (
            i18n.module_problems(checks)
            + i18n.module_problems(broken)
            + i18n.key_problems(checks)
            + i18n.catalog_file_problems(po, tmp_path)
            + i18n.catalog_file_problems(tmp_path / "none.po", tmp_path)
            + i18n.catalog_file_problems(not_utf8, tmp_path)
            + i18n.catalog_file_problems(not_po, tmp_path)
            + i18n.unused_key_problems(po, {"never_used_key": {}}, [checks], tmp_path)
            + i18n.course_problems(toml)
        )

    zh = in_both(monkeypatch, problems)
    assert keys("i18n_") <= said, sorted(keys("i18n_") - said)
    assert any(p.endswith("：'fuzzy_one' 被标为 fuzzy：对照英文检查它的中文，然后去掉这个标记") for p in zh), zh
    assert any(p.endswith("：Msg 文本：中文文本 'same text' 里没有中文") for p in zh), zh
    assert "course.toml 中 [[exercise]] s1_01 的第 1 条提示：中文文本 'a hint' 里没有中文" in zh
    assert any("隐藏检查的 Msg(...) 在字段之外写出了 '4'" in p for p in zh), zh


def test_a_help_text_without_its_chinese_is_said_in_chinese(monkeypatch, said):
    from grader.cli import _build_parser
    from grader.course.cli_text import untranslated

    def problems():
        parser = _build_parser()
        check = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["check"]
        check.add_argument("--brand-new", action="store_true", help="an option added without its Chinese")
        return untranslated(parser)

    zh = in_both(monkeypatch, problems)
    assert zh == [
        "cli_check_brand_new：'an option added without its Chinese' 没有中文（messages.po：msgctxt 为 "
        "'cli_check_brand_new'，msgid 为它的英文）"
    ]
    assert keys("clitext_") <= said


# ------------------------------------------------------------------ the stubs' catalogs
def test_the_stub_catalogs_problems_are_said_in_chinese(tmp_course, monkeypatch, said):
    path = tmp_course / "locale/zh/ch01/s1_11_softmax.po"
    po = polib.pofile(str(path), wrapwidth=0)
    by = {e.msgctxt: e for e in po}
    by["<module>"].flags.append("fuzzy")
    by["simple_normalize TODO"].msgstr = ""
    by["simple_normalize"].msgid += " (an older English)"
    assert "`dim`" in by["softmax"].msgstr
    by["softmax"].msgstr = by["softmax"].msgstr.replace("`dim`", "维度dim")  # code lost, and no space
    po.save(str(path))
    c = course_mod.load(tmp_course)
    ex = c.get("s1_11_softmax")
    source = (c.solutions_dir / ex.file).read_text(encoding="utf-8")
    blocks = stubs.blocks(source, ex.file)
    english_stub = stubs.stub_text

    def other_code(course, exercise, lang=None):  # a Chinese stub whose code is not the English one's
        text = english_stub(course, exercise, lang)
        return text + "\nEXTRA = 1\n" if lang == "zh" else text

    monkeypatch.setattr(stubs, "stub_text", other_code)

    def problems():
        return (
            stub_i18n.problems(source, blocks, path)
            + stub_i18n.problems(source, blocks, tmp_course / "locale/zh/ch01/missing.po")
            + stubs.catalog_problems(c, ex)[-1:]
        )

    zh = in_both(monkeypatch, problems)
    assert keys("stubi18n_", "stubs_code_") <= said, sorted(keys("stubi18n_", "stubs_code_") - said)
    assert f"{path}：<module>：被标为 fuzzy" in zh
    assert zh[-1] == "s1_11_softmax：zh 版初始代码的代码与英文版初始代码的不同"


# ------------------------------------------------------------------ ERRATA.md's translations
ERRATA_MD = "# Errata\n\n### E-1.1-a\none\n\n### E-1.1-b\ntwo\n\n### E-1.1-c\nthree\n\n### E-1.1-d\nfour\n"


def test_the_errata_catalogs_problems_are_said_in_chinese(tmp_path, monkeypatch, said):
    (tmp_path / "ERRATA.md").write_text(ERRATA_MD, encoding="utf-8")
    po = polib.POFile(wrapwidth=0)
    for ctxt, msgid, msgstr, flags in [
        ("E-1.1-a", "an older one", "一", []),
        ("E-1.1-b", "two", "二", ["fuzzy"]),
        ("E-1.1-c", "three", "", []),
        ("E-1.1-d", "four", "四", []),
        ("E-1.1-z", "gone", "没了", []),
    ]:
        po.append(polib.POEntry(msgctxt=ctxt, msgid=msgid, msgstr=msgstr, flags=flags))
    errata.catalog_path(tmp_path, "zh").parent.mkdir(parents=True)
    po.save(str(errata.catalog_path(tmp_path, "zh")))
    merge = errata.catalog_path(tmp_path, "yy")
    merge.parent.mkdir(parents=True)
    merge.write_text('msgctxt "E-1.1-a"\n<<<<<<< HEAD\nmsgid "one"\nmsgstr "一"\n', encoding="utf-8")
    wanted = set(errata.english(tmp_path)) | {"E-9.9-x"}

    def problems():
        return [p for lang in ("zh", "xx", "yy") for p in errata.problems(tmp_path, lang, wanted)]

    zh = in_both(monkeypatch, problems)
    wanted_keys = keys("errata_")
    assert wanted_keys <= said, sorted(wanted_keys - said)
    assert "ERRATA.md：有代码清单显示 E-9.9-x，但没有这个条目" in zh


# ------------------------------------------------------------------ stubs that give an answer away
def test_a_stub_holding_an_answer_is_said_in_chinese(tmp_course, monkeypatch, said):
    shutil.copy(tmp_course / "solutions/ch01/s1_11_matmul.py", tmp_course / "exercises/ch01/s1_11_matmul.py")
    _plant(tmp_course, "s1_23_classifier", PLANTED_FEED_FORWARD)
    c = course_mod.load(tmp_course)
    zh = in_both(monkeypatch, lambda: answers.check_course(c))
    assert keys("answers_") <= said
    assert any(
        p.startswith("s1_23_classifier：exercises/ch01/s1_23_classifier.py:")
        and "含有练习 s1_23_feed_forward 的答案" in p
        for p in zh
    ), zh


# ------------------------------------------------------------------ the glossary
def test_the_glossary_rules_problems_are_said_in_chinese(tmp_path, monkeypatch, said):
    (tmp_path / "locale/zh").mkdir(parents=True)
    shutil.copy(ROOT / glossary.GLOSSARY, tmp_path / glossary.GLOSSARY)
    pkg = tmp_path / "grader"
    pkg.mkdir()
    (pkg / "planted.py").write_text('TEXT = "屏蔽的位置"\n', encoding="utf-8")
    (pkg / "broken.py").write_text("def (:\n", encoding="utf-8")
    bad = {
        "missing.toml": None,
        "not_toml.toml": "[[term]\n",
        "no_zh.toml": '[[term]]\nen = "a"\n',
        "lists.toml": '[[term]]\nen = "a"\nzh = "甲"\nforbidden = [1]\n',
        "itself.toml": '[[term]]\nen = "a"\nzh = "甲"\nforbidden = ["甲"]\n',
        "empty.toml": "",
    }
    for name, text in bad.items():
        if text is not None:
            (tmp_path / name).write_text(text, encoding="utf-8")

    def problems():
        return glossary.problems(tmp_path, package_dir=pkg) + [
            p for name in bad for p in glossary.problems(tmp_path, package_dir=pkg, glossary=tmp_path / name)
        ]

    zh = in_both(monkeypatch, problems)
    assert keys("glossary_") <= said, sorted(keys("glossary_") - said)
    assert "grader/planted.py:1：中文文本中有 '屏蔽'：请写 '掩码'（mask）" in zh


# ------------------------------------------------------------------ the pins
def test_the_pins_problems_are_said_in_chinese(tmp_path, monkeypatch, said):
    from grader.course import pins

    monkeypatch.setattr(pins, "NEEDED_BY", {"gpt2.tiktoken": ("s9_99_gone",)})
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\ndependencies = ["torch==2.0.0", "numpy"]\n', encoding="utf-8"
    )
    locked = types.SimpleNamespace(root=tmp_path / "locked", exercises=[])
    locked.root.mkdir()
    shutil.copy(tmp_path / "pyproject.toml", locked.root / "pyproject.toml")
    (locked.root / "wheels.lock").write_text(f"torch==1.9.0 --hash=sha256:{'0' * 64}\n", encoding="utf-8")
    unlocked = types.SimpleNamespace(root=tmp_path, exercises=[])

    def problems():
        return asset_pins.problems(locked)[0] + asset_pins.problems(unlocked)[0]

    zh = in_both(monkeypatch, problems)
    assert keys("assetpins_") <= said, sorted(keys("assetpins_") - said)
    assert "固定：s9_99_gone 需要 gpt2.tiktoken，但 s9_99_gone 不是 course.toml 中的练习" in zh


# ------------------------------------------------------------------ kata verify itself
def test_kata_verify_says_its_parts_problems_in_chinese(tmp_course, monkeypatch, said):
    """Real problems of every part at once, as `kata --lang zh verify` prints them."""
    toml = tmp_course / "course.toml"
    lines = toml.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, s in enumerate(lines) if s.startswith("title_zh"))
    lines[at] = lines[at].rstrip("\n").rstrip('"') + '（词汇表）"\n'  # a glossary variant
    other = next(i for i, s in enumerate(lines) if s.startswith("title_zh") and i > at)
    lines[other] = 'title_zh = "An English title"\n'  # a Chinese title without Chinese
    toml.write_text("".join(lines), encoding="utf-8")
    po = polib.pofile(str(tmp_course / "locale/zh/errata.po"), wrapwidth=0)
    po.find("E-1.12-d", by="msgctxt").msgstr = ""
    po.save()
    po = polib.pofile(str(tmp_course / "locale/zh/ch01/s1_11_softmax.po"), wrapwidth=0)
    next(e for e in po if e.msgctxt == "softmax").flags.append("fuzzy")
    po.save()
    (tmp_course / "wheels.lock").unlink()
    _plant(tmp_course, "s1_23_classifier", PLANTED_FEED_FORWARD)
    command_line = ["cli_check_x: 'an option' has no Chinese (messages.po: msgctxt 'cli_check_x', msgid its English)"]
    zh = in_both(monkeypatch, lambda: verify(tmp_course, grade=False, command_line=command_line).problems)
    assert keys("verify_in_") <= said, sorted(keys("verify_in_") - said)
    for start in (
        "命令行：",
        "勘误：locale/zh/errata.po:",
        "术语表：course.toml:",
        "wheel 包：wheels.lock:",
        "语言：course.toml ",
        "s1_23_classifier：exercises/ch01/s1_23_classifier.py:",
    ):
        assert any(p.startswith(start) for p in zh), (start, zh)
    assert any("s1_11_softmax.po：softmax：被标为 fuzzy" in p for p in zh), zh
