"""The shared message catalog is a gettext catalog (issue 28): grader/locale/zh/messages.po, msgctxt the
key, msgid the English, msgstr the Chinese. messages.py reads it (through a JSON copy keyed by its hash),
and `kata verify`'s rules (grader/course/i18n.py, grader/authoring/glossary.py) name what is wrong in it by
file and line. The planted catalogs are copies of the real one with one mistake each."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import polib
import pytest

from grader.authoring import glossary
from grader.course import i18n, manifest, messages
from grader.course.messages import CATALOG, CATALOG_FILE, CatalogError, Msg, load_catalog, parse_catalog, t
from tests.conftest import ROOT

PO = "grader/locale/zh/messages.po"


@pytest.fixture(scope="module")
def course():
    return manifest.load(ROOT)


@pytest.fixture
def package(tmp_path):
    """A copy of the grader package's sources and its message catalog, to plant mistakes in."""
    pkg = tmp_path / "grader"
    shutil.copytree(
        ROOT / "grader",
        pkg,
        ignore=lambda d, names: [
            n for n in names if n == "__pycache__" or (Path(d, n).is_file() and not n.endswith((".py", ".po")))
        ],
    )
    return pkg


def _lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines()


def _line(path: Path, text: str, after: int = 0) -> int:
    """The 1-based line of the first line starting with `text`, after line `after`."""
    lines = _lines(path)
    return next(no for no in range(after + 1, len(lines) + 1) if lines[no - 1].startswith(text))


def _edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), encoding="utf-8")


# ------------------------------------------------------------------ the catalog itself
def test_the_catalog_is_the_gettext_file_every_caller_reads():
    po = polib.pofile(str(CATALOG_FILE))
    entries = [e for e in po if not e.obsolete]
    assert [e.msgctxt for e in entries] == list(CATALOG)  # one entry per key, in the file's order
    assert len(CATALOG) > 600
    for e in entries:
        assert CATALOG[e.msgctxt] == {"en": e.msgid, "zh": e.msgstr}
    # the callers as they were: t(key, lang, **fields), Msg.key(...), CATALOG.get(key)[lang]
    assert t("shape", "en", what="x", expected="(2,)", actual="(3,)") == "x: wrong shape: expected (2,), got (3,)"
    assert t("shape", "zh", what="x", expected="(2,)", actual="(3,)") == "x：形状错误：应为 (2,)，实际为 (3,)"
    assert Msg.key("dtype", what="y", expected="a", actual="b").render("zh") == "y：数据类型错误：应为 a，实际为 b"
    assert CATALOG.get("file_missing")["zh"] == "提交中缺少 {file}"
    # the comments that group the keys are the translators' (#.), before the first key of their group
    unfinished = po.find(CATALOG["earlier_unfinished"]["en"], msgctxt="earlier_unfinished")
    assert "earlier exercise that this one imports" in unfinished.comment
    assert "python-brace-format" in unfinished.flags


def test_msgfmt_accepts_the_catalog_and_checks_its_fields():
    if shutil.which("msgfmt") is None:
        pytest.skip("gettext's msgfmt is not installed")
    ok = subprocess.run(["msgfmt", "-c", "-o", os.devnull, str(CATALOG_FILE)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr


def test_the_real_catalog_passes_the_rules(course):
    assert i18n.catalog_file_problems(CATALOG_FILE) == []
    assert i18n.problems(course) == []


# ------------------------------------------------------------------ kata verify's rules, planted
def test_a_missing_translation_is_named_by_file_and_line(package, course):
    po = package / "locale/zh/messages.po"
    _edit(po, 'msgstr "{what}：形状错误：应为 {expected}，实际为 {actual}"', 'msgstr ""')
    at = _line(po, 'msgstr ""', _line(po, 'msgctxt "shape"'))
    assert f"{PO}:{at}: 'shape' is not translated (empty msgstr)" in i18n.problems(course, package_dir=package)
    # meanwhile a Chinese reader sees the English, as gettext does
    shape = parse_catalog(po)["shape"]
    assert shape == {"en": CATALOG["shape"]["en"], "zh": ""}
    assert (
        Msg(shape["en"], shape["zh"], what="x", expected=2, actual=3).render("zh")
        == "x: wrong shape: expected 2, got 3"
    )


def test_a_fuzzy_translation_is_named_and_not_shown(package, course):
    po = package / "locale/zh/messages.po"
    _edit(po, '#, python-brace-format\nmsgctxt "dtype"\n', '#, fuzzy, python-brace-format\nmsgctxt "dtype"\n')
    at = _line(po, "msgstr", _line(po, 'msgctxt "dtype"'))
    found = i18n.problems(course, package_dir=package)
    assert f"{PO}:{at}: 'dtype' is marked fuzzy: check its Chinese against the English, then remove the flag" in found
    assert parse_catalog(po)["dtype"]["zh"] == ""


def test_different_fields_are_named_by_file_and_line(package, course):
    po = package / "locale/zh/messages.po"
    _edit(
        po,
        'msgstr "{what}：形状错误：应为 {expected}，实际为 {actual}"',
        'msgstr "{what}：形状错误：应为 {expected}，实际为 {got}"',
    )
    at = _line(po, "msgstr", _line(po, 'msgctxt "shape"'))
    assert (
        f"{PO}:{at}: 'shape': the fields differ: English ['actual', 'expected', 'what'], Chinese ['expected', 'got', "
        "'what']"
    ) in i18n.problems(course, package_dir=package)


def test_a_key_no_code_uses_is_named(package, course):
    po = package / "locale/zh/messages.po"
    with po.open("a", encoding="utf-8") as f:
        f.write('\nmsgctxt "never_said"\nmsgid "a text nobody shows"\nmsgstr "没人显示的文字"\n')
    at = _line(po, 'msgctxt "never_said"')
    assert (
        f"{PO}:{at}: the key 'never_said' is used nowhere in the grader (no t('never_said'), Msg.key('never_said') "
        "or string names it): delete the entry, or use it"
    ) in i18n.problems(course, package_dir=package)


def test_a_key_made_at_run_time_counts_as_used(package, course):
    # kata list's statuses: t("status_" + s.status) in grader/student/listing.py
    po = package / "locale/zh/messages.po"
    assert "status_passing" in CATALOG
    with po.open("a", encoding="utf-8") as f:
        f.write('\nmsgctxt "status_cancelled"\nmsgid "cancelled"\nmsgstr "已取消"\n')
    assert not any("status_cancelled" in p for p in i18n.problems(course, package_dir=package))


def test_an_unknown_key_is_named_where_the_code_uses_it(package, course):
    code = package / "student/hints.py"
    code.write_text(
        code.read_text(encoding="utf-8") + '\n\ndef _planted():\n    return t("no_such_message")\n', encoding="utf-8"
    )
    at = len(_lines(code))
    assert f"grader/student/hints.py:{at}: message key 'no_such_message' is not in the catalog ({PO})" in i18n.problems(
        course, package_dir=package
    )


def test_keyless_repeated_obsolete_and_unflagged_entries_are_named(package):
    po = package / "locale/zh/messages.po"
    with po.open("a", encoding="utf-8") as f:
        f.write(
            '\nmsgid "no key here"\nmsgstr "这里没有键"\n'
            '\nmsgctxt "shape"\nmsgid "again"\nmsgstr "又一次"\n'
            '\n#~ msgctxt "gone"\n#~ msgid "gone"\n#~ msgstr "没了"\n'
            '\nmsgctxt "with_fields"\nmsgid "{n} files"\nmsgstr "{n} 个文件"\n'
        )
    found = i18n.catalog_file_problems(po, package)
    first = _line(po, 'msgctxt "shape"')
    keyless, again = _line(po, 'msgid "no key here"'), _line(po, 'msgctxt "shape"', first)
    unflagged, obsolete = _line(po, 'msgctxt "with_fields"'), _line(po, "#~ msgctxt")
    assert sorted(found) == sorted(
        [
            f'{PO}:{keyless}: an entry without msgctxt: its key, the name the code uses (t("key")), is the msgctxt',
            f"{PO}:{again}: the key 'shape' again (first at line {first}): one entry per key",
            f"{PO}:{unflagged}: 'with_fields' has {{fields}} but not the flag python-brace-format (#, python-brace-format), "
            "with which Poedit and msgfmt -c check them",
            f"{PO}:{obsolete}: an obsolete entry (#~ 'gone'): delete it",
        ]
    )
    assert parse_catalog(po)["shape"]["en"] == CATALOG["shape"]["en"]  # the first one counts


def test_the_glossary_rule_reads_the_message_catalog(tmp_path, package):
    (tmp_path / "locale/zh").mkdir(parents=True)
    shutil.copy(ROOT / glossary.GLOSSARY, tmp_path / glossary.GLOSSARY)
    po = package / "locale/zh/messages.po"
    _edit(
        po,
        'msgstr "{what}：形状错误：应为 {expected}，实际为 {actual}"',
        'msgstr "{what}：屏蔽的形状错误：应为 {expected}，实际为 {actual}"',
    )
    at = _line(po, "msgstr", _line(po, 'msgctxt "shape"'))
    assert glossary.problems(tmp_path, package_dir=package) == [
        f"{PO}:{at}: '屏蔽' in Chinese text: write '掩码' (mask)"
    ]


# ------------------------------------------------------------------ reading it: the cached copy
def test_the_cached_copy_follows_the_file(tmp_path):
    po = tmp_path / "messages.po"
    shutil.copy(CATALOG_FILE, po)
    assert load_catalog(po) == CATALOG
    cache = tmp_path / "__pycache__" / "messages.po.json"
    assert json.loads(cache.read_text(encoding="utf-8"))["catalog"] == CATALOG
    _edit(po, 'msgstr "提交中缺少 {file}"', 'msgstr "提交里没有 {file}"')
    assert load_catalog(po)["file_missing"]["zh"] == "提交里没有 {file}"  # a changed catalog is read again
    cache.write_text("{not json", encoding="utf-8")
    assert load_catalog(po)["file_missing"]["zh"] == "提交里没有 {file}"  # a broken copy is only a cache
    assert json.loads(cache.read_text(encoding="utf-8"))["catalog"]["file_missing"]["zh"] == "提交里没有 {file}"


def test_where_no_copy_can_be_written_the_catalog_is_still_read(tmp_path):
    po = tmp_path / "messages.po"
    shutil.copy(CATALOG_FILE, po)
    (tmp_path / "__pycache__").write_text("a file where the folder would be", encoding="utf-8")
    assert load_catalog(po) == CATALOG
    assert (tmp_path / "__pycache__").read_text(encoding="utf-8") == "a file where the folder would be"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["__pycache__", "messages.po"]  # no temporary file left


def test_an_unreadable_catalog_is_an_error_naming_the_file_and_line(tmp_path):
    po = tmp_path / "messages.po"
    po.write_text('msgid ""\nmsgstr ""\n\nmsgctxt "a"\nmsgid "x"\nmsgstrr "y"\n', encoding="utf-8")
    with pytest.raises(CatalogError, match=r"messages\.po: not a readable gettext catalog: .*line 6"):
        load_catalog(po)
    po.write_bytes(b'msgid ""\nmsgstr ""\n\nmsgctxt "a"\nmsgid "x"\nmsgstr "\xff"\n')
    with pytest.raises(CatalogError, match=r"messages\.po:6: not UTF-8"):
        load_catalog(po)
    with pytest.raises(CatalogError, match=r"missing\.po: the grader's message catalog cannot be read"):
        load_catalog(tmp_path / "missing.po")
    assert po.read_bytes().endswith(b'\xff"\n')  # left as it was


def test_the_catalog_is_read_without_polib_as_setup_sh_needs():
    """setup.sh unpacks the offline archive with the system Python, before the venv holds polib
    (tests/test_assets_wheels.py failed on 'No module named polib'): the reader without polib gives
    the same catalog as polib's."""

    plain = messages._parse_plain(messages.CATALOG_FILE.read_text(encoding="utf-8"))
    assert plain == messages.parse_catalog() and len(plain) > 600


def test_one_spacing_rule_between_chinese_and_latin():
    """Issue 36: "这看起来像是eps…" lacked the space the catalog writes everywhere else. A field is
    spaced from the Chinese around it when it is filled in (only then is its first letter known);
    the catalog's own text is held to the rule by its check."""
    from grader.course.messages import Msg, pair_problems, t

    assert t("mistake", lang="zh", mistake=Msg("eps", "eps 加在了平方根外面")) == "这看起来像是 eps 加在了平方根外面。"
    assert t("mistake", lang="zh", mistake=Msg("tail", "漏掉了 tail")) == "这看起来像是漏掉了 tail。"
    assert Msg("{n} of {m}", "{m} 个中有{n}个", n=3, m=5).render("zh") == "5 个中有 3 个"
    assert Msg("{n} of {m}", "{m} 个中有{n}个", n=3, m=5).render("en") == "3 of 5"  # English as written
    assert Msg("{x:.3g} {y}", "误差{x:.3g}，{y}", x=0.123456).render("zh") == "误差 0.123，{y}"  # unknown field kept
    assert pair_problems("eps {n}", "有{n}个eps") == [
        "no space between Chinese and Latin in '有{}个eps' (write '个' 'e' with a space between)"
    ]
    assert pair_problems("see `x`", "见`x`") and not pair_problems("see `x`", "见 `x`，`中文` 也是代码")
