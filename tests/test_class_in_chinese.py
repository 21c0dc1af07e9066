"""A class graded in Chinese (`kata --lang zh grade DIR --out OUT`): summary.md holds no English the
kata wrote. A check's visibility, a refused entry's status, the reason an entry is not a submission
and the name of a mistake a check recognised are in the instructor's language; what the records hold
(names, exercise ids, check names, the course's title for the LMS) is shown as recorded.
`kata --lang en gradebook OUT` writes the same class's summary in English again from the stored
reports."""

import re
import shutil

import pytest

from grader.authoring.glossary import prose
from tests.conftest import EXERCISES, SOLUTIONS, kata, solution_with

EX = ["-e", "s1_11_matmul", "-e", "s1_11_softmax"]
WHOLE_SUM = solution_with("s1_11_softmax", "return e / e.sum(dim=dim, keepdim=True)", "return e / e.sum()")


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("zh")
    cls = tmp / "class"
    cls.mkdir()
    shutil.copytree(SOLUTIONS, cls / "alice")
    (cls / "eve" / "ch01").mkdir(parents=True)  # softmax summed over the whole tensor: a mistake the checks name
    (cls / "eve" / "ch01" / "s1_11_softmax.py").write_text(WHOLE_SUM)
    shutil.copytree(EXERCISES, cls / "carol")  # the stubs: nothing attempted
    (cls / "README.txt").write_text("grading notes")  # not a submission
    out = tmp / "out"
    proc = kata("--lang", "zh", "grade", str(cls), "--out", str(out), *EX)
    assert proc.returncode == 0, proc.stderr
    return out, proc


def english_prose(text: str, data: list[str]) -> list[str]:
    """Lines with two English words in a row once code (backticks, links' targets, file names,
    identifiers) and the records' own data are taken out."""
    found = []
    for line in prose(text).splitlines():
        for d in data:
            line = line.replace(d, " ")
        line = re.sub(r"\]\([^)]*\)", "]", line)  # a link's target
        line = re.sub(r"[\w.<>/-]*[_./<>][\w.<>/-]*", " ", line)  # s1_11_softmax, histogram.png, students/<姓名>/
        line = re.sub(r"[\w(]*=[\w)]*", " ", line)  # code in a check's name of a mistake: e.sum(dim=dim, keepdim=True)
        if re.search(r"[A-Za-z]{2,}[ ,:;]+[A-Za-z]{2,}", line):
            found.append(line.strip())
    return found


def test_summary_md_of_a_class_graded_in_chinese_has_no_english_the_kata_wrote(graded):
    out, proc = graded
    md = (out / "summary.md").read_text(encoding="utf-8")
    lines = md.splitlines()
    title = "The Transformers: architecture deep-dive and building BERT from scratch"  # canvas.csv's assignment column
    assert english_prose(md, [title]) == []
    assert (
        "| 1 | s1_11_softmax | 对整个张量求和，而不是沿 dim=-1 求和：求和时要保留另一个维度（e.sum(dim=dim, keepdim=True)），"
        "这样每一行之和才为 1 | eve |" in lines
    )
    assert "| s1_11_softmax | rows_and_columns | 公开 | 1/2 | 50% |" in lines
    assert "| s1_11_softmax | matches_reference_any_dim | 隐藏 | 1/2 | 50% |" in lines
    assert "| README.txt | 不是提交：只批改文件夹、.zip 文件和 .ipynb 文件 |" in lines
    assert "– README.txt：不是提交：只批改文件夹、.zip 文件和 .ipynb 文件" in proc.stdout  # as it grades, too


def test_the_same_class_in_english_from_the_stored_reports(graded):
    out, _ = graded
    proc = kata("--lang", "en", "gradebook", str(out))
    assert proc.returncode == 0, proc.stderr
    lines = (out / "summary.md").read_text(encoding="utf-8").splitlines()
    assert (
        "| 1 | s1_11_softmax | summed over the whole tensor instead of along dim=-1: keep the other dimension in "
        "the sum (e.sum(dim=dim, keepdim=True)) so that each row sums to 1 | eve |" in lines
    )
    assert "| s1_11_softmax | matches_reference_any_dim | hidden | 1/2 | 50% |" in lines
    assert "| README.txt | not a submission: only folders, .zip and .ipynb files are graded |" in lines
