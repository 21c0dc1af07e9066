"""One Chinese vocabulary: `kata verify` refuses a Chinese text that uses a variant the glossary
(locale/zh/glossary.toml) forbids, naming the file, the line, the variant and the term to use."""

from pathlib import Path

from grader.authoring import glossary
from grader.authoring.verify import verify

ROOT = Path(__file__).resolve().parent.parent


def test_the_kata_writes_one_chinese_vocabulary():
    assert glossary.problems(ROOT) == []


def test_a_planted_variant_in_a_stub_catalog_fails_verify(tmp_course):
    po = tmp_course / "locale/zh/ch01/s1_11_softmax.po"
    text = po.read_text(encoding="utf-8")
    po.write_text(
        text.replace(
            'msgstr "沿 dim 减去最大值，取指数，再除以总和"',
            'msgstr "沿 dim 减去最大值（对每个 token），取指数，再除以总和"',
        ),
        encoding="utf-8",
    )
    line = next(i for i, s in enumerate(po.read_text(encoding="utf-8").splitlines(), 1) if "每个 token" in s)
    problems = verify(tmp_course, grade=False).problems
    assert (
        f"glossary: locale/zh/ch01/s1_11_softmax.po:{line}: 'token' in Chinese text: write '词元' (token)" in problems
    )


def test_a_planted_variant_in_course_toml_fails_verify(tmp_course):
    toml = tmp_course / "course.toml"
    lines = toml.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, s in enumerate(lines) if s.startswith("title_zh"))
    lines[at] = lines[at].rstrip("\n").rstrip('"') + '（代码清单 1.1，词汇表）"\n'
    toml.write_text("".join(lines), encoding="utf-8")
    problems = verify(tmp_course, grade=False).problems
    assert f"glossary: course.toml:{at + 1}: '词汇表' in Chinese text: write '词表' (vocabulary)" in problems
    assert not any(f"course.toml:{at + 1}: '清单'" in p for p in problems)  # 清单 after 代码 is the term itself


def _package(tmp_path: Path, source: str) -> Path:
    """A grader package holding one check module, in a course with only the glossary."""
    (tmp_path / "locale/zh").mkdir(parents=True)
    (tmp_path / "locale/zh/glossary.toml").write_bytes((ROOT / "locale/zh/glossary.toml").read_bytes())
    pkg = tmp_path / "grader"
    (pkg / "checks").mkdir(parents=True)
    (pkg / "checks" / "test_planted.py").write_text(source, encoding="utf-8")
    return pkg


def test_a_checks_chinese_message_and_title_are_read(tmp_path):
    pkg = _package(
        tmp_path,
        """
from grader.checking import Msg, check

@check(points=1, title="the mask", title_zh="屏蔽未来的位置")
def test_mask(sub):
    raise CheckFailure(Msg("{n} tokens are masked",
                           "有 {n} 个位置被遮住"
                           "（共 {n} 个 tokens）", n=3))
""",
    )
    found = glossary.problems(tmp_path, package_dir=pkg)
    assert sorted(found) == [
        "grader/checks/test_planted.py:4: '屏蔽' in Chinese text: write '掩码' (mask)",
        "grader/checks/test_planted.py:7: '遮住' in Chinese text: write '掩码' (mask)",
        "grader/checks/test_planted.py:8: 'tokens' in Chinese text: write '词元' (token)",
    ]


def test_code_is_not_prose(tmp_path):
    # identifiers, backticked code, {fields}, code blocks and English texts are not Chinese prose
    pkg = _package(
        tmp_path,
        '''
MSG = Msg("token ids differ", "`token_ids` 与 {token} 不同：用 `tokens[0]` 和 token_ids 取出词元")
CATALOG = {"k": {"en": "the token", "zh": "词元"}}
DOC = """示例：
```
tokens = tokenizer.encode("屏蔽")
```
>>> tokenizer.encode("词汇表")
"""
''',
    )
    assert glossary.problems(tmp_path, package_dir=pkg) == []


def test_a_broken_glossary_is_named(tmp_course):
    (tmp_course / "locale/zh/glossary.toml").write_text(
        '[[term]]\nen = "token"\nzh = "词元"\nforbidden = ["词元"]\n', encoding="utf-8"
    )
    problems = verify(tmp_course, grade=False).problems
    assert any("locale/zh/glossary.toml: [[term]] 'token' forbids its own term '词元'" in p for p in problems)
    assert (tmp_course / "locale/zh/glossary.toml").read_text(encoding="utf-8").startswith("[[term]]")  # left as it was


def test_segment_is_one_word_and_piece_another():
    """Issue 36: BERT's segment was 段 in the stub and 片段 in a check and course.toml; 片段 stays
    byte-level BPE's piece of text."""
    terms = glossary.load(ROOT / glossary.GLOSSARY)
    for text in (
        "缺少片段嵌入（每个词元都是第 0 个片段）",
        "BERT 嵌入层：词元 + 可学习位置 + 片段，层归一化",
        "每个词元都属于片段 0",
    ):
        assert [term.zh for _, _, term in glossary.find(terms, text)] == ["段"], text
    for text in ("缺少段嵌入（每个词元都属于段 0）", "用 GPT2_PATTERN 把文本切成片段，每个片段转成字节"):
        assert glossary.find(terms, text) == [], text
