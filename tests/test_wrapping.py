"""The kata's line-break rule (grader/course/wrapping.py) as a console of a given width prints it:
Chinese breaks between characters, English at spaces, and a code span, a number with what it
counts and a points cell are never cut. (In a real terminal: tests/test_wrapping_terminal.py.)"""

import io

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from grader.course.wrapping import Wrapped, wrap_cells
from grader.student.checkview import Rows


def printed(renderable, width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(renderable)
    return [line.rstrip() for line in console.export_text().splitlines()]


GRADED_READS = (
    "s1_15_attention：kata grade 还会在训练时的规模（批次 32 × 256 个词元）上运行其中 1 个检查，"
    "在小输入上正确的代码在那里可能耗尽内存或超时。要像评分时一样运行它们（多花几秒），请用："
)
NEXT = "下一个：s1_01_next_token（下一个词元预测：概率表、top-k、贪心采样和温度采样）。`kata watch` 会在你每次保存时检查它。"


@pytest.mark.parametrize("width", range(20, 90, 3))
def test_numbers_and_code_spans_are_never_cut(width):
    for text in (GRADED_READS, NEXT, "Progress 0/38 exercises pass their public checks (0/291 public points)"):
        lines = printed(Wrapped(text), width)
        assert all(cell_len(line) <= width for line in lines), lines
        assert "".join(lines).replace(" ", "") == text.replace(" ", ""), lines  # nothing lost, nothing added
        for whole in ("1 个", "32 × 256 个", "`kata watch`", "0/38 exercises", "0/291 public"):
            if whole in text:
                assert any(whole in line for line in lines), (whole, lines)


def test_chinese_breaks_between_characters_english_at_spaces():
    assert wrap_cells("一二三四五六七八九十", 8) == ["一二三四", "五六七八", "九十"]
    assert wrap_cells("one two three four", 9) == ["one two", "three", "four"]
    assert wrap_cells("还有 5 个检查未通过；先修好这一个", 12) == ["还有 5 个检", "查未通过；先", "修好这一个"]
    # punctuation that may not start a line stays with the character before it
    assert wrap_cells("检查，通过", 5) == ["检", "查，", "通过"]


def test_a_row_keeps_its_points_on_its_first_line():
    lines = printed(
        Rows(Text("  ✘ "), Text("在 datasets 划分上运行代码清单 1.28：IMDBDataset(split)"), Text("0/2"), tail_width=4),
        40,
    )
    assert lines[0].startswith("  ✘ ") and lines[0].endswith("  0/2") and len(lines) > 1, lines
    assert all(line.startswith("    ") and cell_len(line) <= 40 for line in lines[1:]), lines


def test_a_table_cell_wraps_by_the_rule():
    table = Table()
    table.add_column("检查项", overflow="fold")
    table.add_column("得分", no_wrap=True)
    table.add_row(Wrapped("看不到任何键的查询得到全零权重，而不是 NaN（隐藏）"), "1/1")
    lines = printed(table, 24)
    assert "…" not in "\n".join(lines) and all(cell_len(line) <= 24 for line in lines), lines
    cells = "".join(line.split("│")[1].strip() for line in lines if line.startswith("│"))
    assert cells.replace(" ", "") == "看不到任何键的查询得到全零权重，而不是NaN（隐藏）", lines
