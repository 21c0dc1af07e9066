"""What a submission writes never passes for the grader's own output (issue 12, round 2).

Text a student had a hand in (exception messages, file, folder and entry names, notes quoting
them) reaches every output format by one rule per format (grader/course/safe_text.py):
- the terminal: a message's lines after the first are indented under the grader's own line; a
  name or note is one line, its line breaks shown as ⏎ — so no forged "✔ ..." or "Score:" line;
- CSV: every text cell is one line, and one that starts like a formula gets a leading ';
- summary.md: student text is escaped for Markdown and HTML (no link, image or tag of its own);
- Gradescope: every text is declared plain text, the format it is written for.
And hidden checks' durations are shown nowhere (a sleeping answer could read its hidden inputs
back from them); the total time is in whole seconds.

Each grading is one small exercise (s1_11_matmul: one public and two hidden checks)."""

from __future__ import annotations

import csv
import io
import json
import re
import zipfile
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from grader.instructor.formats import csvbook, junit, summary
from grader.instructor.exports.gradescope import failure_results, gradescope_results
from tests.conftest import SOLUTIONS, kata
from tests.test_submission_links import MATMUL, run_grade

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _solution() -> str:
    return (SOLUTIONS / "ch01" / f"{MATMUL}.py").read_text()


def _submission(root: Path, source: str) -> Path:
    (root / "ch01").mkdir(parents=True)
    (root / "ch01" / f"{MATMUL}.py").write_text(source)
    return root


def _rendered(md: str) -> str:
    """summary.md as a Markdown viewer shows it (CommonMark with tables; raw HTML allowed)."""
    return MarkdownIt("commonmark").enable("table").render(md)


def _column0(text: str, *starts: str) -> list[str]:
    """The lines of `text` that start, at column 0, with one of `starts`."""
    return [line for line in text.splitlines() if line.startswith(starts)]


# ----------------------------------------------------------------------------- F3: timings
SLEEPING = (
    _solution()
    + """

import time as _time
_first = [True]
_matmul = matmul


def matmul(A, B):  # correct, and its first call's time tells A's shape and first value
    if _first[0]:
        _first[0] = False
        _time.sleep(min(A.shape[-1], 4) * 0.05 + float(A.flatten()[0].abs() % 1) * 0.04)
    return _matmul(A, B)
"""
)


def test_no_hidden_check_s_duration_is_shown_in_any_format(tmp_path):
    sub = _submission(tmp_path / "sleepy", SLEEPING)
    code, report, _, _ = run_grade(sub, "-e", MATMUL)
    assert code == 0 and report["score"] == report["max_score"] == 5
    hidden = [c for c in report["checks"] if c["visibility"] == "hidden"]
    public = [c for c in report["checks"] if c["visibility"] == "public"]
    assert len(hidden) == 1 and public  # s1_11_matmul's hidden test_random_shapes
    assert all(c["duration_s"] is None for c in hidden), hidden
    assert all(isinstance(c["duration_s"], float) for c in public)  # a public check's own time stays
    assert report["duration_s"] == round(report["duration_s"])  # the total, in whole seconds

    suite = ET.fromstring(junit.document({"sleepy": report}))
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    for c in hidden:
        assert cases[c["name"].removeprefix("test_")].get("time") is None
    assert float(suite.find("testsuite").get("time")).is_integer()

    gs = gradescope_results(report)
    assert gs["extra_data"]["duration_s"] == round(gs["extra_data"]["duration_s"])
    assert all("execution_time" not in t and "duration" not in json.dumps(t) for t in gs["tests"])


def test_junit_shows_no_hidden_time_even_from_an_older_record_and_escapes_student_text():
    message = '<img src=x onerror=alert(1)>\n</failure><testcase name="forged"/>'
    doc = {
        "score": 1,
        "max_score": 2,
        "duration_s": 3.1416,
        "checks": [
            {
                "exercise": MATMUL,
                "name": "test_secret",
                "status": "passed",
                "visibility": "hidden",
                "duration_s": 1.2345,
            },
            {
                "exercise": MATMUL,
                "name": "test_book",
                "status": "failed",
                "visibility": "public",
                "duration_s": 0.5,
                "message": message,
                "kind": "check",
            },
        ],
    }
    xml = junit.document({"alice": doc})
    assert b"1.234" not in xml and b"3.14" not in xml and b'time="0.500"' in xml
    (case,) = [c for c in ET.fromstring(xml).iter("testcase") if c.get("name") == "book"]
    assert case.find("failure").text == message and case.find("failure").get("message") == message.splitlines()[0]


# ----------------------------------------------------------------------------- F4: forged lines
FORGED_ERROR = "boom\n✔ s1_11_matmul · FORGED LINE\nScore: 12 / 12 (0.1 s, sandbox: bubblewrap)\n"


def test_an_exception_s_lines_never_start_a_line_of_kata_grade_s_output(tmp_path, capfd):
    sub = _submission(tmp_path / "sub", f"def matmul(A, B):\n    raise ValueError({FORGED_ERROR!r})\n")
    code, report, out, err = run_grade(sub, "-e", MATMUL, capfd=capfd)
    assert code == 0 and report["score"] < report["max_score"]
    assert "FORGED LINE" in out  # the student's text is shown...
    assert _column0(out + err, "✔ s1_11_matmul · FORGED", "Score: 12") == []  # ...under the grader's line
    assert len(_column0(out, "Score:")) == 1
    outputs = [test["output"] for test in gradescope_results(report)["tests"]]
    assert any("FORGED LINE" in o for o in outputs)  # on Gradescope's page too, under the check's first line
    assert [o for o in outputs if _column0(o, "✔ s1_11_matmul · FORGED", "Score: 12")] == []


def test_kata_check_shows_an_exception_s_lines_under_its_own(tmp_course, monkeypatch, capfd):
    from tests.test_student_commands import kata_in

    (tmp_course / "exercises" / "ch01" / f"{MATMUL}.py").write_text(
        f"def matmul(A, B):\n    raise ValueError({FORGED_ERROR!r})\n"
    )
    proc = kata_in(tmp_course, "check", MATMUL, here=(monkeypatch, capfd))
    assert proc.returncode == 1 and "FORGED LINE" in proc.stdout, proc.stdout + proc.stderr
    assert _column0(proc.stdout, "✔", "Score: 12") == [], proc.stdout


def test_a_file_name_with_a_line_break_is_one_line_in_every_output(tmp_path, capfd):
    sub = _submission(tmp_path / "sub", _solution())
    (sub / "ch01" / "evil\nnote: FORGED NOTE").symlink_to("/etc/passwd")
    code, report, out, err = run_grade(sub, "-e", MATMUL, capfd=capfd)
    assert code == 0 and report["score"] == 5
    (note,) = [n for n in report["notes"] if "FORGED" in n]
    assert note.startswith("ch01/evil⏎note: FORGED NOTE: symbolic link skipped"), note
    assert _column0(out + err, "note: FORGED") == []
    assert _column0(gradescope_results(report)["output"], "note: FORGED") == []


def test_a_refusal_quoting_an_entry_name_is_one_line(tmp_path, capfd):
    zpath = tmp_path / "sub.zip"
    with zipfile.ZipFile(zpath, "w") as zf:
        zf.writestr("exercises/ch01/../x\n✔ s1_11_matmul · FORGED LINE\nScore: 12 / 12", "x = 1\n")
    code, report, out, err = run_grade(zpath, "-e", MATMUL, capfd=capfd)
    assert code == 2 and report is None and "FORGED LINE" in err, err
    assert _column0(out + err, "✔", "Score: 12") == [], err


def test_a_batch_s_console_csv_and_summary_keep_student_names_on_one_line_and_inert(tmp_path):
    cls = tmp_path / "class"
    forged = "mallory\n✔ bob: 58 of 58 (FORGED) graded"
    formula = "=2+3*cmd|x!A0"
    page = "x[FULL MARKS - see instructor](javascript:alert(1))<img src=x onerror=alert(1)>"
    for name in (forged, formula, page):
        _submission(cls / name, _solution())
    (cls / page / "ch01" / page).symlink_to("/etc/passwd")  # a note quoting the name, in summary.md
    (cls / "@SUM(1+1)").mkdir()  # refused: its reason quotes its name
    (cls / "zed\n✔ bob: 58 of 58 (FORGED)").symlink_to(cls / formula)  # a link: a refused row, its name on one line
    out = tmp_path / "out"
    proc = kata("grade", str(cls), "--out", str(out), "--jobs", "1", "-e", MATMUL, timeout=300)
    console = proc.stdout + proc.stderr
    assert proc.returncode == 1, console  # two entries are refused
    assert "FORGED" in console
    assert _column0(console, "✔ bob") == [], console

    text = (out / "gradebook.csv").read_text()
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 1 + 5 and len(text.splitlines()) == 6  # one line per row: no cell holds a break
    for row in rows[1:]:
        for cell in row:
            assert "\n" not in cell and "\r" not in cell
            assert not cell.startswith(FORMULA_STARTS), row
    sources = {row[1] for row in rows[1:]}
    assert "'" + formula in sources and "'@SUM(1+1)" in sources and any("⏎" in s for s in sources)

    md = (out / "summary.md").read_text()
    assert "FORGED" in md and "javascript" in md and "img" in md  # shown, and inert:
    html = _rendered(md)
    assert "<a " not in html and "<img src=x" not in html  # names are shown inert; notes only by kind
    assert set(re.findall(r'<img src="([^"]*)"', html)) <= {
        "histogram.png",
        "failures.png",
        "heatmap.png",
    }  # the grader's own
    assert _column0(md, "✔") == []


# ----------------------------------------------------------------------------- F5, F6: each format's rule
def _record(source: str, reason: str = "", notes=(), status: str = "refused") -> dict:
    return {
        "score": 0.0,
        "max_score": 5.0,
        "exercises": [{"id": MATMUL, "section": "1.11", "score": -0.0, "max_score": 5.0}],
        "checks": [],
        "notes": list(notes),
        "duration_s": 1.0,
        "student": {"source": source, "status": status, "reason": reason},
    }


def test_every_csv_text_cell_that_starts_like_a_formula_is_quoted_and_numbers_are_not():
    starts = ["=2+3*cmd|x!A0", "@SUM(1+1)", "+1", "-1", "\t=1", "\r=1"]
    records = {f"s{i}": _record(s, reason=s + "\nsecond line") for i, s in enumerate(starts)}
    rows = list(csv.DictReader(io.StringIO(csvbook.gradebook(records, [MATMUL]))))
    for row in rows:
        assert row["source"].startswith("'") and row["reason"].startswith("'"), row
        assert "\n" not in row["reason"] and "second line" in row["reason"]
        assert row[MATMUL] == "-0" and row["total"] == "0"  # the grader's own numbers, as they were


def test_summary_md_shows_student_text_as_text():
    page = "x[FULL MARKS - see instructor](javascript:alert(1))<img src=x onerror=alert(1)>"
    records = {
        "a": _record(page, reason=f"{page}: no 'ch01/' folder found"),
        "b": _record("b", notes=[f"ch01/{page}: symbolic link skipped `code` **bold** | cell"], status="graded"),
    }
    md = summary.markdown(
        records,
        summary.stats(records),
        {"skipped": [{"source": page, "reason": "a link"}], "renamed": [f"{page}\nthe name is taken"]},
    )
    html = _rendered(md)
    assert set(re.findall(r'<img src="([^"]*)"', html)) <= {
        "histogram.png",
        "failures.png",
        "heatmap.png",
    }  # the grader's own
    assert "<a " not in html and "<strong>bold" not in html and "<code>" not in html
    assert html.count("x[FULL MARKS - see instructor](javascript:alert(1))&lt;img src=x onerror=alert(1)&gt;") == 5
    for row in re.findall(r"<tr>.*?</tr>", html, re.S):  # the tables' own cells, none of the student's
        if "FULL MARKS" in row:
            assert row.count("<td") in (2, 4), row


def test_gradescope_shows_every_text_as_plain_text():
    report = {
        "score": 0,
        "exercises": [],
        "notes": ["a\nnote: FORGED"],
        "checks": [
            {
                "exercise": MATMUL,
                "name": "test_x",
                "status": "failed",
                "score": 0,
                "max_score": 1,
                "message": "<img src=x onerror=alert(1)> [x](javascript:alert(1))",
                "visibility": "public",
            }
        ],
    }
    for gs in (gradescope_results(report), failure_results("<b>x</b>")):
        assert (gs["output_format"], gs["test_output_format"], gs["test_name_format"]) == ("text",) * 3
    assert "note: a⏎note: FORGED" in gradescope_results(report)["output"]


@pytest.mark.parametrize("lead", [" ", "\u00a0", "\u200b", "\ufeff", " \u200b\t"])
@pytest.mark.parametrize("formula", ["=1+1", "+SUM(A1)", "-2+3", "@cmd"])
def test_a_formula_behind_spaces_or_invisible_characters_is_still_a_formula(lead, formula):
    """The second download attack's finding 15: `\\u200b=…` and `\\ufeff=…` reached canvas.csv unprefixed."""
    from grader.course.safe_text import csv_cell

    assert csv_cell(lead + formula).startswith("'")
    assert csv_cell("x;" + lead + formula).split(";")[1].startswith("'")
    assert csv_cell("Zoë " + formula) == "Zoë " + formula  # inside a cell it is no formula
