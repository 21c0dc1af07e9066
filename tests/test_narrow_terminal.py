"""What a student reads in an 80-column terminal (tmux), in English and Chinese: `kata run
--book` puts the book's output below the student's when the two do not fit side by side, and a
forbidden API is refused in one message (what, where, what to write instead)."""

from __future__ import annotations

import re
import shutil

import pytest

from grader import listings
from grader.course import manifest as course_mod
from grader.course.messages import t
from tests.conftest import ROOT
from tests.test_watch import Terminal

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]


@pytest.fixture
def terminal():
    opened = []

    def start(project, *args):
        term = Terminal(project, *args, width=80)
        opened.append(term)
        return term

    yield start
    for term in opened:
        term.close()


def _squeezed(text: str) -> str:
    return re.sub(r"\s+", "", text)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_book_output_stacks_under_yours_at_80_columns(tmp_course, terminal, lang):
    term = terminal(tmp_course, "--lang", lang, "run", "1.6", "--book", "--path", "solutions")
    term.wait_for("EXIT=0")
    screen = term.tmux("capture-pane", "-p", "-J", "-S", "-", "-t", "kata")  # with what scrolled away
    assert t("book_prints", lang=lang) in screen and t("your_code", lang=lang, path="solutions") in screen
    lines = screen.splitlines()
    assert all(len(line) <= 80 for line in lines)
    # every line the book prints is on one line of the screen, whole: no row of a tensor broken
    book = listings.load(course_mod.load(tmp_course)).get("1.6").book
    for printed in book.splitlines():
        assert any(printed.strip() in line for line in lines), (printed, screen)
    assert screen.index(t("your_code", lang=lang, path="solutions")) < screen.index(t("book_prints", lang=lang))


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_forbidden_api_is_one_message_at_80_columns(tmp_course, terminal, lang):
    ex = course_mod.load(tmp_course).get("s1_11_matmul")
    source = (ROOT / "solutions/ch01/s1_11_matmul.py").read_text()
    body = source[source.index("    # BEGIN SOLUTION") : source.index("    # END SOLUTION")]
    (tmp_course / "exercises/ch01/s1_11_matmul.py").write_text(source.replace(body, "    return torch.mm(A, B)\n"))
    term = terminal(tmp_course, "--lang", lang, "check", "s1_11_matmul")
    screen = _squeezed(term.wait_for("EXIT=1"))
    hint = ex.forbidden_hint if lang == "en" else ex.forbidden_hint_zh
    assert _squeezed("s1_11_matmul.py:") in screen and _squeezed(hint) in screen
    # one message: the scan's verdict alone, not the guard's refusal of the same call before it
    assert screen.count(_squeezed(t("scan_instead", lang=lang, hint=hint))) == 1, screen
    refusal = t("worker_forbidden", lang=lang, name="torch.mm", exercise="s1_11_matmul", hint="")
    assert _squeezed(refusal) not in screen, screen
