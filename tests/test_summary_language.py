"""The class summary (`kata grade DIR --out OUT`, `kata gradebook OUT`) in the instructor's language,
chosen as for every other message (`kata --lang`, KATA_LANG, the locale): summary.md's headings,
table headers and sentences in Chinese for a Chinese reader; its figures (histogram.png,
failures.png, heatmap.png) too where matplotlib has a Chinese font (grader/course/figure_text.py),
else in English as before. What the records hold (names, exercise ids, check names, reasons) is
shown as recorded, and English stays word for word what it was.

The figures are drawn by the functions `kata gradebook` calls and read just before they are saved."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from grader.course import figure_text
from grader.course.messages import CJK
from grader.instructor.formats import summary, teaching


def check(ex: str, name: str, passed: bool, visibility: str = "public", mistake: str = "") -> dict:
    return {
        "exercise": ex,
        "name": name,
        "status": "passed" if passed else "failed",
        "visibility": visibility,
        "score": 1.0 if passed else 0.0,
        "max_score": 1.0,
        "mistake": mistake,
    }


def record(ok: bool, note: str = "") -> dict:
    ex = "s1_11_softmax"
    return {
        "score": 2.0 if ok else 0.0,
        "max_score": 2.0,
        "notes": [note] if note else [],
        "exercises": [{"id": ex, "section": "1.11", "score": 2.0 if ok else 0.0, "max_score": 2.0}],
        "checks": [
            check(ex, "test_rows_sum_to_one", ok, mistake="" if ok else "softmax over the whole tensor"),
            check(ex, "big_inputs", ok, "hidden"),
        ],
        "student": {"status": "graded", "course": "c1"},
    }


RECORDS = {
    "ann": record(True),
    "ben": record(False, "a note the grader wrote"),
    "cat": {"student": {"status": "refused", "source": "cat.zip", "reason": "no exercise file"}},
}
META = {
    "kata_version": "1.0",
    "course": "c2",
    "exercises": ["s1_11_softmax"],
    "skipped": [{"source": "README.txt", "reason": "not a submission"}],
}
FLAGGED = [
    {
        "exercise": "s1_11_softmax",
        "student_a": "ann",
        "student_b": "ben",
        "similarity_a_to_b": "0.9",
        "similarity_b_to_a": "0.8",
    }
]


def summary_md() -> str:
    return summary.markdown(RECORDS, summary.stats(RECORDS), META, FLAGGED)


def draw(monkeypatch) -> tuple[dict, dict]:
    """The three figures as `kata gradebook` draws them: ({figure: its texts}, {figure: the font
    files that drew them and the missing-glyph warnings}), each read while it is saved."""
    from matplotlib import font_manager

    texts, drawing = {}, {}
    from grader.course import figure_text

    save = figure_text.png_bytes
    current = []

    def capture(fig):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            png = save(fig)
        ax = fig.axes[0]
        labels = [ax.title, ax.xaxis.label, ax.yaxis.label]
        texts[current[-1]] = {
            "title": ax.get_title(),
            "xlabel": ax.get_xlabel(),
            "ylabel": ax.get_ylabel(),
            "yticks": [t.get_text() for t in ax.get_yticklabels()],
        }
        drawing[current[-1]] = {
            "fonts": {Path(font_manager.findfont(t.get_fontproperties())).name for t in labels if t.get_text()},
            "missing_glyphs": [str(w.message) for w in caught if "missing from font" in str(w.message)],
            "png": png[:4],
        }
        return png

    monkeypatch.setattr(summary, "png_bytes", capture)
    monkeypatch.setattr(teaching, "png_bytes", capture)  # teaching.heatmap_png saves through it as well
    s = summary.stats(RECORDS)
    current.append("histogram")
    summary.histogram_png(s, "week 3")
    current.append("failures")
    summary.failures_png(s)
    current.append("heatmap")
    teaching.heatmap_png(RECORDS, ["s1_11_softmax"], "week 3")
    return texts, drawing


ENGLISH_FIGURES = {
    "histogram": {
        "title": "week 3\n2 graded submissions, mean 50%",
        "xlabel": "score (% of the points)",
        "ylabel": "submissions",
    },
    "failures": {
        "title": "checks most often failed",
        "xlabel": "failed (% of the submissions that attempted the exercise)",
        "ylabel": "",
        "yticks": ["s1_11_softmax::big_inputs (hidden)", "s1_11_softmax::rows_sum_to_one"],
    },
    "heatmap": {"title": "week 3\nshare of each exercise's points (grey: not attempted)", "xlabel": "", "ylabel": ""},
}
CHINESE_FIGURES = {
    "histogram": {"title": "week 3\n已批改 2 份提交，平均 50%", "xlabel": "得分（占总分的百分比）", "ylabel": "提交数"},
    "failures": {
        "title": "最常未通过的检查项",
        "xlabel": "未通过（占尝试了该练习的提交的百分比）",
        "ylabel": "",
        "yticks": ["s1_11_softmax::big_inputs（隐藏）", "s1_11_softmax::rows_sum_to_one"],
    },
    "heatmap": {"title": "week 3\n各练习所得分数的比例（灰色：未尝试）", "xlabel": "", "ylabel": ""},
}


def figure_texts(texts: dict) -> dict:
    """The texts compared: the failures' check labels, not the other figures' numeric ticks."""
    return {k: {f: v for f, v in d.items() if f != "yticks" or k == "failures"} for k, d in texts.items()}


def font_file(family: str) -> str:
    from matplotlib import font_manager

    return Path(font_manager.findfont(font_manager.FontProperties(family=family))).name


CHINESE_LINES = [
    "# 班级总结",
    "共 3 份提交：已批改 2 份，无法批改 1 份。  ",
    "kata 1.0，课程 c2；练习：1 个。",
    "已批改提交的得分：平均 50.0%，中位数 50.0%，最低 0.0%，最高 100.0%。",
    "![得分直方图](histogram.png)",
    "## 全班进度",
    "![学生 × 练习](heatmap.png)",
    "| § | 练习 | 未尝试 | 满分 | 尝试但失分 | 尝试者的平均得分 |",
    "| 1.11 | s1_11_softmax | 0 | 1 | 1 | 1.00/2 |",
    "## 检查识别出的错误",
    "| 学生数 | 练习 | 错误 | 学生 |",
    "| 1 | s1_11_softmax | softmax over the whole tensor | ben |",
    "## 按失败率排列的检查项",
    "只统计尝试了该检查项所属练习的提交。",
    "![各检查项的失败率](failures.png)",
    "| 练习 | 检查项 | 可见性 | 未通过 | 失败率 |",
    "| s1_11_softmax | big_inputs | 隐藏 | 1/2 | 50% |",
    "## 相似度",
    "| 练习 | 学生 A | 学生 B | A 在 B 中 | B 在 A 中 |",
    "| s1_11_softmax | ann | ben | 90% | 80% |",
    "## 未批改",
    "| 学生 | 条目 | 状态 | 原因 |",
    "| cat | cat.zip | 无法批改 | no exercise file |",
    "## 用另一版课程批改的记录",
    "这些记录是在课程更改之前批改的（现为 c2）；`kata grade DIR --out OUT --force` 会重新批改它们：ann、ben。",
    "## 不是提交的条目",
    "| 条目 | 原因 |",
    "| README.txt | not a submission |",
    "## 备注",
    "- 1 名学生：a note the grader wrote（ben）",
]
ENGLISH_LINES = [
    "# Class summary",
    "3 submissions: 2 graded, 1 refused.  ",
    "kata 1.0, course c2; exercises: 1.",
    "Scores of the graded submissions: mean 50.0%, median 50.0%, lowest 0.0%, highest 100.0%.",
    "![score histogram](histogram.png)",
    "## Where the class stands",
    "![students × exercises](heatmap.png)",
    "| § | exercise | not attempted | full marks | attempted, points lost | mean of attempts |",
    "| 1.11 | s1_11_softmax | 0 | 1 | 1 | 1.00/2 |",
    "## Mistakes the checks recognised",
    "| students | exercise | mistake | who |",
    "| 1 | s1_11_softmax | softmax over the whole tensor | ben |",
    "## Checks by failure rate",
    "Counted over the submissions that attempted the check's exercise.",
    "![per-check failure rate](failures.png)",
    "| exercise | check | visibility | failed | rate |",
    "| s1_11_softmax | big_inputs | hidden | 1/2 | 50% |",
    "## Similarity",
    "`kata similarity` flagged 1 pair of submissions whose code is alike beyond its threshold (the "
    "stubs never count): [similarity.md](similarity.md), side by side in [similarity.html](similarity.html).",
    "| exercise | student A | student B | A in B | B in A |",
    "| s1_11_softmax | ann | ben | 90% | 80% |",
    "## Not graded",
    "| student | entry | status | reason |",
    "| cat | cat.zip | refused | no exercise file |",
    "## Graded with another course version",
    "These records were graded before the course changed (now c2); `kata grade DIR --out OUT --force` grades "
    "them again: ann, ben.",
    "## Entries that are not submissions",
    "| entry | reason |",
    "| README.txt | not a submission |",
    "## Notes",
    "Each kind of note once, with the students it concerns; the notes themselves are in each "
    "student's report and feedback page.",
    "- 1 student: a note the grader wrote (ben)",
]

DATA_ROWS = {
    "| 1.11 | s1_11_softmax | 0 | 1 | 1 | 1.00/2 |",
    "| 1 | s1_11_softmax | softmax over the whole tensor | ben |",
    "| s1_11_softmax | ann | ben | 90% | 80% |",
    "| README.txt | not a submission |",
}


def test_in_chinese_summary_md_is_chinese_and_the_records_data_as_recorded(monkeypatch):
    monkeypatch.setenv("KATA_LANG", "zh")
    lines = summary_md().splitlines()
    missing = [line for line in CHINESE_LINES if line not in lines]
    assert missing == []
    assert set(lines) & set(ENGLISH_LINES) == DATA_ROWS  # no English text left but the records' own
    monkeypatch.setenv("KATA_LANG", "en")
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")  # KATA_LANG (`kata --lang en`) wins over the locale
    assert "# Class summary" in summary_md().splitlines()
    monkeypatch.delenv("KATA_LANG")
    assert "# 班级总结" in summary_md().splitlines()  # else the locale, as every other message


def test_in_english_summary_md_and_the_figures_say_what_they_always_said(monkeypatch):
    monkeypatch.setenv("KATA_LANG", "en")
    md = summary_md()
    lines = md.splitlines()
    assert [line for line in ENGLISH_LINES if line not in lines] == []
    assert CJK.search(md) is None
    texts, drawing = draw(monkeypatch)
    assert figure_texts(texts) == ENGLISH_FIGURES
    for figure in ("histogram", "failures", "heatmap"):
        assert drawing[figure]["fonts"] == {font_file("DejaVu Sans")}, figure
        assert drawing[figure]["png"] == b"\x89PNG"


def test_in_chinese_with_a_cjk_font_the_figures_are_chinese_and_drawn_with_that_font(monkeypatch):
    monkeypatch.setenv("KATA_LANG", "zh")
    font = figure_text.cjk_font()
    if font is None:
        pytest.skip("matplotlib finds no CJK font here (setup.sh installs fonts-wqy-microhei)")
    texts, drawing = draw(monkeypatch)
    assert figure_texts(texts) == CHINESE_FIGURES
    for figure in ("histogram", "failures", "heatmap"):
        assert drawing[figure]["fonts"] == {font_file(font)}, (figure, font)
        assert drawing[figure]["missing_glyphs"] == [], figure  # no empty boxes
        assert drawing[figure]["png"] == b"\x89PNG"


def test_in_chinese_without_a_cjk_font_the_figures_are_english_and_summary_md_chinese(monkeypatch):
    monkeypatch.setenv("KATA_LANG", "zh")
    monkeypatch.setattr(figure_text, "cjk_font", lambda: None)
    texts, drawing = draw(monkeypatch)
    assert figure_texts(texts) == ENGLISH_FIGURES
    for figure in ("histogram", "failures", "heatmap"):
        assert drawing[figure]["fonts"] == {font_file("DejaVu Sans")}, figure
    lines = summary_md().splitlines()
    assert [line for line in CHINESE_LINES if line not in lines] == []
