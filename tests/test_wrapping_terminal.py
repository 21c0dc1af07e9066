"""Chinese that wraps like Chinese (issue 36): what `kata list`, `kata check` and `kata grade` show
in a real terminal (tmux) 60 and 80 columns wide, in English and Chinese. No line is wider than
the terminal; a code span (`kata watch`), a number and what it counts ("1 个检查", "0/38
exercises") and a points cell ("3/5") are never cut across lines; a check's row keeps its mark
and its points on one line, and the grade table shows every title whole, wrapped in its cell."""

from __future__ import annotations

import json
import re
import shutil

import pytest
from rich.cells import cell_len

from grader.course import manifest as course_mod
from grader.course.messages import t
from tests.conftest import ROOT
from tests.test_watch import Terminal, warm  # noqa: F401  (warm: a fixture, the checks' warm grader)

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

SIZES = [(lang, width) for lang in ("en", "zh") for width in (60, 80)]
MARK = re.compile(r"^  [✔✘–] ")
POINTS = r"\d+(?:\.\d+)?/\d+(?:\.\d+)?"
CJK = "\u3400-\u4dbf\u4e00-\u9fff"
# a number at the end of a line, and what it counts or its unit at the start of the next
NUMBER_END = re.compile(r"(?:^|[\s(（])\d+(?:[./]\d+)*$")
COUNTED_START = re.compile(rf"^[{CJK}a-z]")


@pytest.fixture
def screen_of():
    """`screen_of(project, width, *args, env=...)`: everything `kata ARGS` printed in a tmux
    terminal `width` columns wide, scrolled-away lines too, once it has exited."""
    opened = []

    def run(project, width, *args, env=None):
        term = Terminal(project, *args, width=width, env=env)
        opened.append(term)
        term.wait_for("EXIT=", timeout=300)
        lines = term.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "kata").rstrip("\n").splitlines()
        return lines[: next(i for i, line in enumerate(lines) if line.startswith("EXIT="))]

    yield run
    for term in opened:
        term.close()


def assert_readable(lines: list[str], width: int) -> None:
    """What holds for every screen: no line wider than the terminal (tmux joins a line the
    terminal wrapped: -J), no code span cut in two, no number cut from what it counts."""
    screen = "\n".join(lines)
    for line in lines:
        assert cell_len(line) <= width, f"{cell_len(line)} cells wide:\n{line}\n--- screen ---\n{screen}"
        assert line.count("`") % 2 == 0, f"a code span cut across lines:\n{line}\n--- screen ---\n{screen}"
    for above, below in zip(lines, lines[1:]):
        if MARK.match(above) or above.startswith("§"):  # a check's row and an exercise's line end in points
            continue
        split = NUMBER_END.search(above.rstrip()) and COUNTED_START.match(below.lstrip())
        assert not split, f"a number cut from what it counts:\n{above}\n{below}\n--- screen ---\n{screen}"


def assert_check_rows(lines: list[str], ex) -> None:
    """`kata check ID`'s view: the exercise's line and each public check's row end with their
    points, on the line that holds the mark; one row per check."""
    screen = "\n".join(lines)
    rows = [line for line in lines if MARK.match(line)]
    assert len(rows) == sum(not c.hidden for c in ex.checks), screen
    for row in rows:
        assert re.search(rf"\S  +{POINTS}$", row), f"the points left the row:\n{row}\n--- screen ---\n{screen}"
    head = [line for line in lines if line.startswith(f"§{ex.section} ")]
    assert len(head) == 1 and re.search(rf"  {POINTS}$", head[0]), f"the exercise's points moved:\n{screen}"


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_kata_list(tmp_course, screen_of, lang, width):
    lines = screen_of(tmp_course, width, "--lang", lang, "list")
    assert_readable(lines, width)
    screen = "\n".join(lines)
    assert "`kata watch`" in screen and t("list_progress", lang=lang) in screen


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_kata_check_attention_stub_mix_and_solved(tmp_course, screen_of, warm, lang, width):
    """The stub (every check fails, "还有 5 个检查未通过"), a mix (one check fails) and the
    solution ("其中 1 个检查" are run at the training size when graded); graded by the course's
    warm grader, as a student's checks are."""
    ex = course_mod.load(tmp_course).get("s1_15_attention")
    path = tmp_course / "exercises" / ex.file
    lines = screen_of(tmp_course, width, "--lang", lang, "check", ex.id, env=warm)
    assert_readable(lines, width)
    assert_check_rows(lines, ex)
    assert "`kata hint s1_15_attention`" in "\n".join(lines)

    solution = (ROOT / "solutions" / ex.file).read_text()
    assert "if training and dropout_p > 0:" in solution
    path.write_text(solution.replace("if training and dropout_p > 0:", "if False:"))  # dropout never applied
    lines = screen_of(tmp_course, width, "--lang", lang, "check", ex.id, env=warm)
    assert_readable(lines, width)
    assert_check_rows(lines, ex)
    assert sum(line.startswith("  ✘ ") for line in lines) == 1, "\n".join(lines)

    path.write_text(solution)
    lines = screen_of(tmp_course, width, "--lang", lang, "check", ex.id, env=warm)
    assert_readable(lines, width)
    assert_check_rows(lines, ex)
    squeezed = re.sub(r"\s+", "", "\n".join(lines))
    assert re.sub(r"\s+", "", t("check_graded_reads", lang=lang, count=1, id=ex.id)) in squeezed, lines


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_kata_check_long_check_titles_keep_their_points(tmp_course, screen_of, warm, lang, width):
    course = course_mod.load(tmp_course)
    for ex_id in ("s1_23_dataset", "s1_23_mlm"):
        lines = screen_of(tmp_course, width, "--lang", lang, "check", ex_id, env=warm)
        assert_readable(lines, width)
        assert_check_rows(lines, course.get(ex_id))


def _table_rows(lines: list[str]) -> list[list[str]]:
    """The body rows of the grade table, each a list of its cells' texts (a cell's lines joined,
    spaces dropped): a row starts at a line with a mark or a section."""
    rows: list[list[list[str]]] = []
    for line in lines:
        if not line.startswith("│"):
            continue
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells[0] or cells[3]:
            rows.append([[] for _ in cells])
        for col, cell in enumerate(cells):
            rows[-1][col].append(cell)
    return [["".join(parts).replace(" ", "") for parts in row] for row in rows]


@pytest.mark.parametrize(("lang", "width"), SIZES)
def test_kata_grade_table(tmp_path_factory, screen_of, lang, width):
    """A submission whose s1_13_causal_mask passes and s1_23_dataset is the stub: one row per
    check with its mark and points, every exercise's and check's title whole in its cell."""
    base = tmp_path_factory.mktemp("grade")  # no course.toml around it: only the grade's output
    sub = base / "sub"
    shutil.copytree(ROOT / "solutions", sub)
    shutil.copy(ROOT / "exercises/ch01/s1_23_dataset.py", sub / "ch01/s1_23_dataset.py")
    report = base / "report.json"
    lines = screen_of(
        base,
        width,
        "--lang",
        lang,
        "grade",
        str(sub),
        "-e",
        "s1_13_causal_mask",
        "-e",
        "s1_23_dataset",
        "--json",
        str(report),
    )
    screen = "\n".join(lines)
    assert_readable(lines, width)
    checks = json.loads(report.read_text())["checks"]
    titles = {ex.id: ex.display_title(lang) for ex in course_mod.load(ROOT).exercises}
    rows = [row for row in _table_rows(lines) if row[3]]
    assert len(rows) == len(checks), screen
    last = None
    for row, check in zip(rows, checks):
        name = check["title"] + (t("hidden_mark", lang=lang) if check["visibility"] == "hidden" else "")
        assert row[2] == name.replace(" ", ""), f"{row[2]!r} is not {name!r}\n--- screen ---\n{screen}"
        if check["exercise"] != last:
            assert row[1] == titles[check["exercise"]].replace(" ", ""), (row[1], screen)
        last = check["exercise"]
        assert row[3] == {"passed": "✔", "failed": "✘"}[check["status"]] and re.fullmatch(POINTS, row[4]), row
    marked = [line for line in lines if re.match(r"│[^│]*│[^│]*│[^│]*│ [✔✘–] │", line)]
    assert len(marked) == len(checks) and all(re.search(rf"│ +{POINTS} │$", line) for line in marked), screen
