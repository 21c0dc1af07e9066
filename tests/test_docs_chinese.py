"""The documentation's Chinese pages (docs/**/*.zh.md) follow the kata's two rules for Chinese text: the
glossary's one term for each English term (locale/zh/glossary.toml: 词元, 代码清单, 掩码, ...) and one space
between a Chinese character and a Latin letter, a digit or a code span. Code (fenced blocks, `spans`) is
exempt, as everywhere."""

from __future__ import annotations

import re
from pathlib import Path

from grader.authoring import glossary
from grader.course.messages import spacing_problems

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted((ROOT / "docs").rglob("*.zh.md"))


def prose_lines(text: str):
    """(line number, line) of the text outside fenced code and HTML comments, link targets blanked."""
    text = re.sub(r"(?s)<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group()), text)
    fence = False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            fence = not fence
            continue
        if not fence:
            yield number, re.sub(r"\]\([^)]*\)", "]", line)


def test_there_are_chinese_pages():
    names = {p.relative_to(ROOT / "docs").as_posix() for p in PAGES}
    assert {"index.zh.md", "student/guide.zh.md"} <= names, names


def test_the_chinese_pages_use_the_glossarys_terms_and_its_spacing():
    terms = glossary.load(ROOT / "locale" / "zh" / "glossary.toml")
    problems = []
    for page in PAGES:
        for number, line in prose_lines(page.read_text(encoding="utf-8")):
            where = f"{page.relative_to(ROOT)}:{number}"
            problems += [f"{where}: {variant!r}: write {term.zh!r}" for _, variant, term in glossary.find(terms, line)]
            problems += [f"{where}: {p}" for p in spacing_problems(line)]
    assert not problems, "\n".join(problems)
