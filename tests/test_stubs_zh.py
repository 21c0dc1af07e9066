"""The exercises in Chinese: stubs generated from the solutions and a gettext catalog per exercise
(locale/zh/), complete and current (kata verify), the same code as the English stubs."""

import ast
import os
import shutil

import polib

from grader.authoring import stub_i18n, stubs
from grader.authoring.verify import verify
from grader.course import manifest as course
from grader.student import progress
from tests.conftest import ROOT, kata

CJK = range(0x4E00, 0xA000)


def _has_chinese(text: str) -> bool:
    return any(ord(c) in CJK for c in text)


def _docstrings(text: str) -> list[str]:
    return [node.value for _, node in stub_i18n._docstring_nodes(ast.parse(text))]


def test_every_exercise_has_a_complete_chinese_stub_with_the_english_code():
    c = course.load(ROOT)
    for ex in c.exercises:
        assert stubs.catalog_problems(c, ex) == [], ex.id
        zh = stubs.stub_text(c, ex, "zh")
        assert zh.startswith(f"# 练习 {ex.id}（§{ex.section}）"), ex.id
        docs = _docstrings(zh)
        assert docs and all(_has_chinese(d) for d in docs), ex.id  # every docstring, not only the module's
        raises = [line for line in zh.splitlines() if "raise NotImplementedError(" in line]
        assert raises and all(_has_chinese(line) and f"{ex.id}：" in line for line in raises), ex.id
        assert stubs.signatures(zh) == stubs.signatures(stubs.stub_text(c, ex, "en")), ex.id
        assert stubs.stub_text(c, ex, "zh") == zh  # regenerated identically


def test_code_spans_and_sections_survive_translation():
    c = course.load(ROOT)
    ex = c.get("s1_11_softmax")
    zh = stubs.stub_text(c, ex, "zh")
    assert "§1.11" in zh and "`dim`" in zh and "exp(x - max) / sum(exp(x - max))" in zh
    assert "def softmax(x: torch.Tensor, dim: int = -1) -> torch.Tensor:" in zh


def test_kata_stubs_lang_zh_writes_chinese_exercises_that_list_as_not_started_and_english_comes_back(tmp_course):
    english = {p.name: p.read_bytes() for p in (tmp_course / "exercises/ch01").glob("*.py")}
    proc = kata("stubs", "--lang", "zh", cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    zh = (tmp_course / "exercises/ch01/s1_12_context.py").read_text(encoding="utf-8")
    assert zh.startswith("# 练习 s1_12_context") and _has_chinese(_docstrings(zh)[0])
    c = course.load(tmp_course)
    assert all(progress.static_status(c, ex)[0] == progress.NOT_STARTED for ex in c.exercises)
    v = verify(tmp_course, grade=False)  # a Chinese exercises/ is as valid as the English one
    assert v.ok, v.problems
    proc = kata("--lang", "en", "stubs", cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    assert {p.name: p.read_bytes() for p in (tmp_course / "exercises/ch01").glob("*.py")} == english


def test_kata_stubs_follows_kata_lang(tmp_course):
    import subprocess
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "grader", "stubs"],
        cwd=tmp_course,
        capture_output=True,
        text=True,
        env={**os.environ, "KATA_LANG": "zh", "PYTHONPATH": str(ROOT)},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert (tmp_course / "exercises/ch01/s1_11_softmax.py").read_text(encoding="utf-8").startswith("# 练习")


def _edit_solution_docstring(root, old, new):
    path = root / "solutions/ch01/s1_11_softmax.py"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


def test_a_changed_english_text_makes_its_translation_stale_until_retranslated(tmp_course):
    _edit_solution_docstring(tmp_course, "Same shape as x.", "Same shape and dtype as x.")
    shutil.copy(tmp_course / "exercises/ch01/s1_11_softmax.py", tmp_course / "keep.py")
    kata("--lang", "en", "stubs", cwd=tmp_course)  # the English stub follows its solution at once
    v = verify(tmp_course, grade=False)
    assert any("s1_11_softmax.po: simple_normalize: stale: its English changed" in p for p in v.problems), v.problems
    assert any("translates English that the solution no longer has" in p for p in v.problems)

    proc = kata("stubs", "--update-catalogs", cwd=tmp_course)
    assert proc.returncode == 0, proc.stderr
    assert "locale/zh/ch01/s1_11_softmax.po: 1 text(s) to translate" in proc.stdout
    assert "locale/zh/ch01/s1_11_softmax.py" not in proc.stdout
    po = polib.pofile(str(tmp_course / "locale/zh/ch01/s1_11_softmax.po"))
    entry = po.find(
        'x divided by its sum along `dim` (§1.11, "simple normalisation"). Same shape and dtype as x.',
        msgctxt="simple_normalize",
    )
    assert entry is not None and "fuzzy" in entry.flags and entry.msgstr  # the old translation kept, to revise
    assert entry.previous_msgid.endswith("Same shape as x.")
    v = verify(tmp_course, grade=False)
    assert any("simple_normalize: marked fuzzy" in p for p in v.problems), v.problems
    # the fuzzy text is not used: the stub keeps that docstring in English until it is revised
    zh = stubs.stub_text(course.load(tmp_course, check_files=False), course.load(tmp_course).get("s1_11_softmax"), "zh")
    assert "Same shape and dtype as x." in zh

    entry.msgstr = "x 沿 `dim` 除以其总和（§1.11，“简单归一化”）。形状和 dtype 与 x 相同。"
    entry.flags.remove("fuzzy")
    po.save()
    assert verify(tmp_course, grade=False).ok


def test_a_new_text_without_translation_fails_verify_and_is_added_by_update(tmp_course):
    _edit_solution_docstring(
        tmp_course,
        "    # BEGIN SOLUTION divide by the sum along dim, keeping the dimension for broadcasting",
        "    # BEGIN SOLUTION divide by the sum along dim",
    )
    kata("--lang", "en", "stubs", cwd=tmp_course)
    v = verify(tmp_course, grade=False)
    assert any("simple_normalize TODO: stale" in p for p in v.problems), v.problems
    (tmp_course / "locale/zh/ch01/s1_11_softmax.po").unlink()
    v = verify(tmp_course, grade=False)
    assert any("s1_11_softmax.po: no catalog" in p for p in v.problems), v.problems
    kata("stubs", "--update-catalogs", cwd=tmp_course)
    v = verify(tmp_course, grade=False)
    assert any("simple_normalize TODO: not translated" in p for p in v.problems), v.problems


def test_a_translation_cannot_change_the_stubs_code(tmp_course):
    # A catalog is text: quotes and backslashes in it are escaped, so a docstring that tries to
    # close early and return stays one docstring, and the stub does what the English stub does.
    path = tmp_course / "locale/zh/ch01/s1_11_softmax.po"
    po = polib.pofile(str(path))
    entry = next(e for e in po if e.msgctxt == "softmax")
    entry.msgstr = 'x"""\n    return x\n    """ \\'
    po.save()
    c = course.load(tmp_course)
    zh = stubs.stub_text(c, c.get("s1_11_softmax"), "zh")
    assert 'x"""' in _docstrings(zh)[2] and "return x" in _docstrings(zh)[2]
    # what verify says of it is only that the text lost the English's code (`dim`)
    assert stubs.catalog_problems(c, c.get("s1_11_softmax")) == [
        "locale/zh/ch01/s1_11_softmax.po: softmax: the translation changes code, which stays as the English has it: `dim`"
    ]


def _comments(text: str) -> list[tuple[int, str]]:
    import io
    import tokenize

    return [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(text).readline)
        if tok.type == tokenize.COMMENT
    ]


def test_the_chinese_stubs_comments_are_chinese():
    # "# your exercise s1_23_encoder (listing 1.34)" and the other comments kept from the solution
    # were English in the Chinese stubs; a one-word comment (a row's label, "# The") is data
    import re

    c = course.load(ROOT)
    english = []
    for ex in c.exercises:
        for line, comment in _comments(stubs.stub_text(c, ex, "zh")):
            prose = re.sub(r"`[^`]*`", "", comment)
            if re.search(r"[A-Za-z]{2,}\W+[A-Za-z]{2,}", prose) and not _has_chinese(prose):
                english.append(f"{ex.id}:{line}: {comment}")
    assert english == []
    mlm = stubs.stub_text(c, c.get("s1_23_mlm"), "zh")
    assert "MASK_ID = 50260  # 本 kata 的选择：下一个空闲的 id" in mlm
    encoder = stubs.stub_text(c, c.get("s1_23_encoder"), "zh")
    assert "from s1_23_bert_embedding import BERTEmbedding  # 你的练习 s1_23_bert_embedding（代码清单 1.30）" in encoder


def test_a_new_comment_needs_its_translation(tmp_course):
    sol = tmp_course / "solutions/ch01/s1_11_softmax.py"
    text = sol.read_text(encoding="utf-8")
    sol.write_text(
        text.replace("\ndef softmax(", "\n# the book's softmax, made stable\ndef softmax(", 1), encoding="utf-8"
    )
    kata("--lang", "en", "stubs", cwd=tmp_course)
    v = verify(tmp_course, grade=False)
    assert any("s1_11_softmax.po: <module> #: not translated" in p for p in v.problems), v.problems
    kata("stubs", "--update-catalogs", cwd=tmp_course)
    po = polib.pofile(str(tmp_course / "locale/zh/ch01/s1_11_softmax.po"), wrapwidth=0)
    entry = po.find("the book's softmax, made stable", msgctxt="<module> #")
    entry.msgstr = "书中的 softmax，改成数值稳定的写法"
    po.save()
    assert not [p for p in verify(tmp_course, grade=False).problems if "s1_11_softmax" in p]
    zh = stubs.stub_text(course.load(tmp_course), course.load(tmp_course).get("s1_11_softmax"), "zh")
    assert "\n# 书中的 softmax，改成数值稳定的写法\ndef softmax(" in zh


def test_identifiers_are_code_and_a_translation_that_changes_them_fails_verify(tmp_course):
    """`token:` of BERTEmbedding's table of sub-modules once read `词元:` in the Chinese stub: the
    checks ask for `token`, and a student who named it as the stub said failed all five. A name
    that opens a line of such a table, a call, a keyword, a dotted or snake_case name and anything
    in backticks stays as the English has it; prose around them is translated."""
    c = course.load(ROOT)
    zh = stubs.stub_text(c, c.get("s1_23_bert_embedding"), "zh")
    assert "      token:    nn.Embedding(vocab_size, embed_dim, padding_idx=PAD_ID)" in zh
    assert "`token`、`position`、`segment`、`norm` 和 `dropout`" in zh  # the TODO's names, in its raise
    english = "Blocks:\n  layers: nn.ModuleList of `layers` TransformerBlock(dim, heads)\nthe token table"
    assert (
        stub_i18n.lost_code(
            english, "块：\n  layers：由 `layers` 个 TransformerBlock(dim, heads) 组成的 nn.ModuleList\n词元表"
        )
        == []
    )
    assert stub_i18n.lost_code(
        english, "块：\n  层: 由 `层` 个 TransformerBlock(dim, heads) 组成的 nn.ModuleList\n词元表"
    ) == ["`layers`", "layers"]
    assert stub_i18n.lost_code("  dropout(norm(x)), p=0.1, max_len", "  丢弃(norm(x))，p=0.1，最大长度") == [
        "dropout",
        "max_len",
    ]

    path = tmp_course / "locale/zh/ch01/s1_23_bert_embedding.po"
    po = polib.pofile(str(path))
    entry = next(e for e in po if e.msgctxt == "BERTEmbedding")
    entry.msgstr = entry.msgstr.replace("  token:    nn.Embedding", "  词元:    nn.Embedding")
    po.save()
    broken = course.load(tmp_course)
    found = stubs.catalog_problems(broken, broken.get("s1_23_bert_embedding"))
    assert any("BERTEmbedding: the translation changes code" in p and p.endswith(": token") for p in found), found


def test_a_stub_translation_without_a_space_between_chinese_and_latin_fails_verify(tmp_course):
    """Issue 36: one spacing rule for every Chinese text, the stubs' included."""
    path = tmp_course / "locale/zh/ch01/s1_23_bert_embedding.po"
    po = polib.pofile(str(path))
    entry = next(e for e in po if e.msgctxt == "BERTEmbedding")
    assert "段 A (0)" in entry.msgstr
    entry.msgstr = entry.msgstr.replace("段 A (0)", "段A (0)")
    po.save()
    broken = course.load(tmp_course)
    found = stubs.catalog_problems(broken, broken.get("s1_23_bert_embedding"))
    assert any("BERTEmbedding: no space between Chinese and Latin in" in p and "段A" in p for p in found), found
