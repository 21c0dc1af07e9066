"""The HTML feedback page (`kata grade PATH --html FILE`, `kata check --html FILE`), opened in
headless Chromium: what a student sees, as a screenshot and as the rendered DOM."""

import json
import os
import re
import shutil
import subprocess
import sys
from html.parser import HTMLParser

import pytest
from PIL import Image

from grader.course.manifest import load as load_course
from grader.reports import report_html
from tests.conftest import ROOT, SOLUTIONS, kata, make_submission

PASSED_GREEN = (0x1A, 0x7F, 0x37)  # report_html.CSS --ok: the "passed" badges and progress bars
FAILED_RED = (0xCF, 0x22, 0x2E)  # --bad: the "failed" badges
EVIL = "<b>bold</b> & <script>alert(1)</script>"


def _chromium(tmp_path, *args: str, url: str) -> subprocess.CompletedProcess:
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (setup.sh installs the Debian package `chromium`)")
    return subprocess.run(
        [
            exe,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--hide-scrollbars",
            f"--user-data-dir={tmp_path / 'chromium-profile'}",
            *args,
            url,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )


def _raising(exercise: str, function: str, text: str) -> str:
    """The solution of `exercise` with `function`'s body replaced by raising ValueError(text)."""
    source = (SOLUTIONS / "ch01" / f"{exercise}.py").read_text()
    start = source.index(f"def {function}(")
    begin = source.index("# BEGIN SOLUTION", start)
    end = source.index("# END SOLUTION", begin)
    return source[:begin] + f"raise ValueError({text!r})\n    " + source[end:]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    """One graded submission: §1.12 right, §1.13's causal_attention_weights raising a message full of HTML."""
    tmp = tmp_path_factory.mktemp("html")
    sub = make_submission(tmp, {"s1_13_causal_mask": _raising("s1_13_causal_mask", "causal_attention_weights", EVIL)})
    out = tmp / "feedback" / "report.html"
    proc = kata(
        "grade",
        str(sub),
        "-e",
        "s1_12_scaled_attention",
        "-e",
        "s1_13_causal_mask",
        "--quiet",
        "--json",
        str(tmp / "report.json"),
        "--html",
        str(out),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"HTML report: {out}" in proc.stdout
    return tmp, out, json.loads((tmp / "report.json").read_text())


def test_the_page_is_one_self_contained_file(page):
    _, out, doc = page
    text = out.read_text(encoding="utf-8")
    assert "<script" not in text.lower()
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//|file:)""", text), "the page fetches something"
    assert "@import" not in text and "url(" not in text
    # listing 1.6's heatmap, drawn from the submission's code, inline; 1.12's could not be drawn, and says why
    assert len(re.findall(r'<img [^>]*src="data:image/png;base64,[A-Za-z0-9+/=]{1000,}"', text)) == 1
    assert "No figure for listing 1.12" in text
    assert f"{doc['score']:g} / {doc['max_score']:g}" in text


def test_chromium_renders_scores_messages_and_colours(page, tmp_path):
    _, out, doc = page
    shot = tmp_path / "shot.png"
    proc = _chromium(tmp_path, f"--screenshot={shot}", "--window-size=1100,1800", url=out.as_uri())
    assert shot.is_file(), proc.stderr[-2000:]
    img = Image.open(shot).convert("RGB")
    assert img.size == (1100, 1800)
    counts = {rgb: n for n, rgb in img.getcolors(1 << 24)}
    assert len(counts) > 500, "the screenshot is (nearly) blank"
    assert counts.get(PASSED_GREEN, 0) > 2000, "no passed checks (green) on the page"
    assert counts.get(FAILED_RED, 0) > 500, "no failed checks (red) on the page"
    assert counts.get((255, 255, 255), 0) < 0.9 * 1100 * 1800

    dom = _chromium(tmp_path, "--dump-dom", url=out.as_uri()).stdout
    assert "<script" not in dom.lower()  # the student's message stayed text
    text = re.sub(r"<[^>]+>", " ", dom)
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;script&gt;alert(1)&lt;/script&gt;" in text
    scaled = int(load_course(ROOT).get("s1_12_scaled_attention").points)
    assert re.search(rf"§\s*1\.12\s+{scaled} / {scaled}", text) and re.search(r"§\s*1\.13\s+\d+ / 17", text)
    for check in doc["checks"]:
        assert check["name"].removeprefix("test_") in text


def test_kata_check_html_for_the_students_exercises(tmp_course):
    out = tmp_course / "feedback.html"
    proc = subprocess.run(  # in the copy's folder (exercises/: the stubs), with this checkout's grader
        [sys.executable, "-m", "grader", "check", "s1_12_scaled_attention", "--html", str(out)],
        cwd=tmp_course,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 1
    assert out.is_file() and "HTML report: feedback.html" in proc.stdout
    text = out.read_text(encoding="utf-8")
    assert "not implemented yet" in text and "(hidden)" not in text  # public checks only
    assert "No figure for listing 1.6: not implemented yet" in text


def test_the_page_from_a_stored_report_in_chinese():
    doc = {
        "score": 1,
        "max_score": 3,
        "submission": "<sub>",
        "sandbox": "limits-only",
        "notes": ["skipped link a->b"],
        "exercises": [{"id": "s1_11_softmax", "section": "1.11", "title": "Softmax", "score": 1, "max_score": 3}],
        "checks": [
            {
                "exercise": "s1_11_softmax",
                "name": "test_a",
                "status": "passed",
                "score": 1,
                "max_score": 1,
                "message": "",
                "listing": ["1.11/softmax"],
                "visibility": "public",
            },
            {
                "exercise": "s1_11_softmax",
                "name": "test_b",
                "status": "failed",
                "score": 0,
                "max_score": 2,
                "message": "x < y",
                "listing": [],
                "visibility": "hidden",
            },
        ],
    }
    text = report_html.render(doc, lang="zh")
    assert '<html lang="zh-CN">' in text and "得分" in text and "未通过" in text and "（隐藏）" in text
    assert (
        "x &lt; y" in text and "&lt;sub&gt;" in text and "仅使用了资源限制" in text and "skipped link a-&gt;b" in text
    )


class _Rows(HTMLParser):
    """The page's check rows in document order: (status, check name, inside a closed <details>),
    and the text of each <details>' summary."""

    def __init__(self):
        super().__init__()
        self.rows, self.summaries = [], []
        self._details: list[bool] = []  # open? of each enclosing <details>
        self._row = None
        self._in = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "details":
            self._details.append("open" in attrs)
        elif tag == "summary":
            self._in = "summary"
            self.summaries.append("")
        elif tag == "tr" and attrs.get("class") in ("passed", "failed", "skipped"):
            self._row = [attrs["class"], "", not all(self._details)]
        elif tag == "code" and self._row is not None and not self._row[1]:
            self._in = "name"

    def handle_endtag(self, tag):
        if tag == "details":
            self._details.pop()
        elif tag in ("summary", "code"):
            self._in = None
        elif tag == "tr" and self._row is not None:
            self.rows.append(tuple(self._row))
            self._row = None

    def handle_data(self, data):
        if self._in == "summary":
            self.summaries[-1] += data
        elif self._in == "name":
            self._row[1] += data


def _rows_of(text: str) -> _Rows:
    parsed = _Rows()
    parsed.feed(text)
    return parsed


def test_failures_come_first_and_passed_checks_are_folded(page):
    """A student opens the page on what to fix: the first check row is a failure, every passed
    check sits in a closed <details> whose summary counts them."""
    _, out, doc = page
    parsed = _rows_of(out.read_text(encoding="utf-8"))
    failed = {c["name"].removeprefix("test_") for c in doc["checks"] if c["status"] == "failed"}
    passed = [c for c in doc["checks"] if c["status"] == "passed"]
    assert failed and passed, "the fixture should grade one failing and some passing checks"
    assert parsed.rows[0][0] == "failed" and not parsed.rows[0][2]
    shown = [(status, name) for status, name, folded in parsed.rows if not folded]
    assert {name for _, name in shown} == failed and {status for status, _ in shown} == {"failed"}
    assert sorted(name for status, name, folded in parsed.rows if status == "passed" and folded) == sorted(
        c["name"].removeprefix("test_") for c in passed
    )
    by_exercise = {ex: sum(c["exercise"] == ex for c in passed) for ex in {c["exercise"] for c in passed}}
    assert sorted(s.strip() for s in parsed.summaries) == sorted(
        f"✔ {n} passed check{'s' if n != 1 else ''}" for n in by_exercise.values()
    )


def test_a_page_where_everything_passed_folds_every_check_in_either_language():
    doc = {
        "score": 3,
        "max_score": 3,
        "submission": "sub",
        "sandbox": "bubblewrap",
        "exercises": [{"id": "s1_11_softmax", "section": "1.11", "title": "Softmax", "score": 3, "max_score": 3}],
        "checks": [
            {
                "exercise": "s1_11_softmax",
                "name": f"test_{i}",
                "status": "passed",
                "score": 1,
                "max_score": 1,
                "message": "",
                "listing": [],
                "visibility": "public",
            }
            for i in "abc"
        ],
    }
    for lang, summary in (("en", "✔ 3 passed checks"), ("zh", "✔ 3 项检查通过")):
        text = report_html.render(doc, lang=lang)
        parsed = _rows_of(text)
        assert [s.strip() for s in parsed.summaries] == [summary]
        assert len(parsed.rows) == 3 and all(status == "passed" and folded for status, _, folded in parsed.rows)
        assert 'id="not-passed"' not in text
    failing = {**doc, "checks": doc["checks"][:2] + [{**doc["checks"][2], "status": "failed", "message": "x"}]}
    text = report_html.render(failing, lang="zh")
    assert "未通过的检查" in text and "✔ 2 项检查通过" in text and "未通过的检查：1 项（见页面顶部）" in text


def test_points_are_shown_to_two_decimals_as_everywhere_else():
    """An assignment's scaled points are fractions (week2: 100 points over 46 checks, 2.17391 each):
    the page shows 67.39 / 100 and 0/2.17 as the terminal report does (report.pts), never 67.3913
    or 2.17391 (issue 26, part 6); the stored report keeps the precision."""
    each = 100 / 46
    doc = {
        "score": 31 * each,
        "max_score": 100.0,
        "submission": "sub",
        "sandbox": "bubblewrap",
        "exercises": [
            {"id": "s1_11_softmax", "section": "1.11", "title": "Softmax", "score": 31 * each, "max_score": 100.0}
        ],
        "checks": [
            {
                "exercise": "s1_11_softmax",
                "name": "test_a",
                "status": "passed",
                "score": 31 * each,
                "max_score": 31 * each,
                "message": "",
                "listing": [],
                "visibility": "public",
            },
            {
                "exercise": "s1_11_softmax",
                "name": "test_b",
                "status": "failed",
                "score": 0,
                "max_score": each,
                "message": "x",
                "listing": [],
                "visibility": "public",
            },
        ],
    }
    for lang in ("en", "zh"):
        text = report_html.render(doc, lang=lang)
        assert "<b>67.39 / 100</b>" in text and "67.39/100</title>" in text, text
        assert "0/2.17</td>" in text and "67.39 / 100</span>" in text
        assert "67.3913" not in text and "2.17391" not in text
