"""What is graded is the submission itself (issue 12): only the regular files physically inside
it, never what a symbolic link points to; zip names that spell one path twice are refused; a
manifest never makes the grader read a huge file; reports carry no terminal control from the
student and no host path; figures drawn from the student's values are bounded.

Every grading goes through the real `kata grade` (in this process, or as a `kata` process for
batches and memory), on one or two small exercises."""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SOLUTIONS, kata

MATMUL = "s1_11_matmul"  # one public and two hidden checks: 5 points, graded in seconds
SOFTMAX = "s1_11_softmax"
NOTHING = hashlib.sha256(b"").hexdigest()


def run_grade(path: Path, *args: str, capfd=None) -> tuple[int, dict | None, str, str]:
    """`kata grade PATH --json` in this process: (exit code, report or None, stdout, stderr)."""
    from grader.cli import main

    out = path.parent / f"report-{path.name}.json"
    old = os.environ.get("KATA_LANG")
    os.environ["KATA_LANG"] = "en"
    if capfd:
        capfd.readouterr()
    try:
        code = main(["grade", str(path), "--json", str(out), *args])
    finally:
        os.environ.pop("KATA_LANG") if old is None else os.environ.__setitem__("KATA_LANG", old)
    stdout, stderr = capfd.readouterr() if capfd else ("", "")
    return code, json.loads(out.read_text()) if out.exists() else None, stdout, stderr


def exercise_score(report: dict, ex: str) -> tuple[float, float]:
    (row,) = [e for e in report["exercises"] if e["id"] == ex]
    return row["score"], row["max_score"]


def solution(ex: str) -> bytes:
    return (SOLUTIONS / "ch01" / f"{ex}.py").read_bytes()


# ----------------------------------------------------------------------------- one submission
def test_a_folder_whose_exercises_is_a_link_to_the_solutions_is_refused_naming_the_link(tmp_path, capfd):
    sub = tmp_path / "mallory"
    sub.mkdir()
    (sub / "exercises").symlink_to(SOLUTIONS)
    code, report, _, err = run_grade(sub, "-e", MATMUL, capfd=capfd)
    assert code == 2 and report is None, err
    assert "symbolic link" in err and "(exercises)" in err and "never followed" in err
    assert "Traceback" not in err


def test_a_submission_that_is_itself_a_link_is_refused(tmp_path, capfd):
    (tmp_path / "sub").symlink_to(SOLUTIONS)
    code, report, _, err = run_grade(tmp_path / "sub", "-e", MATMUL, capfd=capfd)
    assert code == 2 and report is None
    assert "a symbolic link; links are never followed" in err


def test_a_chapter_folder_that_is_a_link_is_refused(tmp_path, capfd):
    (tmp_path / "sub" / "exercises").mkdir(parents=True)
    (tmp_path / "sub" / "exercises" / "ch01").symlink_to(SOLUTIONS / "ch01")
    code, report, _, err = run_grade(tmp_path / "sub", "-e", MATMUL, capfd=capfd)
    assert code == 2 and report is None
    assert "exercises/ch01" in err and "symbolic link" in err


def test_links_inside_an_honest_folder_are_skipped_each_with_a_note(tmp_path, capfd):
    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    (sub / "ch01" / f"{MATMUL}.py").write_bytes(solution(MATMUL))  # the student's own work
    (sub / "ch01" / f"{SOFTMAX}.py").symlink_to(SOLUTIONS / "ch01" / f"{SOFTMAX}.py")  # the course's answer
    (sub / "ch01" / "lib").symlink_to(SOLUTIONS / "ch01", target_is_directory=True)  # a whole folder
    (sub / "ch01" / "ev\x1b[2Jil.py").symlink_to("/etc/passwd")  # a name carrying terminal control
    code, report, out, err = run_grade(sub, "-e", MATMUL, "-e", SOFTMAX, capfd=capfd)
    assert code == 0, err
    assert exercise_score(report, MATMUL) == (5, 5)
    assert exercise_score(report, SOFTMAX)[0] == 0
    assert all("missing" in c["message"] for c in report["checks"] if c["exercise"] == SOFTMAX)
    notes = report["notes"]
    for name in (f"ch01/{SOFTMAX}.py", "ch01/lib", "ch01/evil.py"):
        assert any(n.startswith(name + ": symbolic link skipped") for n in notes), (name, notes)
    assert "\x1b" not in out + err + json.dumps(report, ensure_ascii=False)


def test_many_links_make_a_bounded_number_of_notes(tmp_path):
    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    (sub / "ch01" / f"{MATMUL}.py").write_bytes(solution(MATMUL))
    for i in range(500):
        (sub / "ch01" / f"l{i:03d}.py").symlink_to("/etc/passwd")
    code, report, _, _ = run_grade(sub, "-e", MATMUL)
    assert code == 0
    links = [n for n in report["notes"] if "symbolic link" in n]
    assert len(links) == 11 and links[-1] == "490 more symbolic links skipped", links


# ----------------------------------------------------------------------------- zip names
@pytest.mark.parametrize(
    "spelling",
    [
        "exercises/./ch01/{f}",
        "exercises//ch01/{f}",
        "./exercises/ch01/{f}",
        "exercises/ch01/./{f}",
        "exercises\\ch01\\{f}",
    ],
)
def test_one_path_spelled_twice_in_a_zip_is_refused(spelling, tmp_path, capfd):
    """The last copy would win on extraction: a wrong answer first, the right one under another
    spelling of the same name."""
    path = tmp_path / "sub.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr(f"exercises/ch01/{MATMUL}.py", "def matmul(A, B):\n    return A\n")
        zf.writestr(spelling.format(f=f"{MATMUL}.py"), solution(MATMUL))
    code, report, _, err = run_grade(path, "-e", MATMUL, capfd=capfd)
    assert code == 2 and report is None
    assert "appears more than once" in err


# ----------------------------------------------------------------------------- the manifest
def test_a_manifest_listing_a_huge_sparse_file_never_reads_it(tmp_path):
    """`kata-manifest.json` lists a 3 GB sparse file: the grade finishes, the note says it was too
    large to read, and the grading process never held it in memory."""
    sub = tmp_path / "sub"
    (sub / "exercises" / "ch01").mkdir(parents=True)
    (sub / "exercises" / "ch01" / f"{MATMUL}.py").write_bytes(solution(MATMUL))
    big = sub / "exercises" / "ch01" / "data.py"
    big.touch()
    os.truncate(big, 3 * 2**30)
    files = {
        f"exercises/ch01/{MATMUL}.py": {"sha256": hashlib.sha256(solution(MATMUL)).hexdigest()},
        "exercises/ch01/data.py": {"sha256": "0" * 64},
    }
    (sub / "kata-manifest.json").write_text(
        json.dumps(
            {
                "kind": "kata-submission",
                "schema": 1,
                "files": files,
                "created": "2026-01-01T00:00:00Z",
                "kata_version": "0.1.0",
            }
        )
    )
    report_path = tmp_path / "report.json"
    probe = (
        "import resource, subprocess, sys; "
        "p = subprocess.run(sys.argv[1:]); "
        "print('MAXRSS_KB', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); sys.exit(p.returncode)"
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            probe,
            sys.executable,
            "-m",
            "grader",
            "grade",
            str(sub),
            "-e",
            MATMUL,
            "--json",
            str(report_path),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
        env={**os.environ, "KATA_LANG": "en", "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(report_path.read_text())
    assert exercise_score(report, MATMUL) == (5, 5)
    assert report["manifest"]["too_large"] == ["exercises/ch01/data.py"] and not report["manifest"]["verified"]
    assert any("larger than 8 MB, so not read" in n and "exercises/ch01/data.py" in n for n in report["notes"])
    maxrss_gb = int(proc.stdout.split("MAXRSS_KB")[1].split()[0]) / 2**20
    assert maxrss_gb < 2, f"the grader held {maxrss_gb:.1f} GB: it read the 3 GB file"


def test_a_manifest_or_listed_file_that_is_a_link_is_not_read(tmp_path):
    sub = tmp_path / "sub"
    (sub / "exercises" / "ch01").mkdir(parents=True)
    (sub / "exercises" / "ch01" / f"{MATMUL}.py").symlink_to(SOLUTIONS / "ch01" / f"{MATMUL}.py")
    (sub / "exercises" / "ch01" / f"{SOFTMAX}.py").write_bytes(solution(SOFTMAX))
    listed = {
        f"exercises/ch01/{MATMUL}.py": {"sha256": hashlib.sha256(solution(MATMUL)).hexdigest()},
        f"exercises/ch01/{SOFTMAX}.py": {"sha256": hashlib.sha256(solution(SOFTMAX)).hexdigest()},
    }
    (sub / "kata-manifest.json").write_text(json.dumps({"kind": "kata-submission", "schema": 1, "files": listed}))
    code, report, _, _ = run_grade(sub, "-e", MATMUL)
    assert code == 0
    assert report["manifest"]["missing"] == [f"exercises/ch01/{MATMUL}.py"] and not report["manifest"]["verified"]
    assert exercise_score(report, MATMUL)[0] == 0


# ----------------------------------------------------------------------------- what reports show
ANSI = "\x1b[32mScore: 440 / 440\x1b[0m\r"


def test_terminal_control_in_a_student_s_exception_never_reaches_any_output(tmp_path, capfd):
    sub = tmp_path / "sub"
    (sub / "ch01").mkdir(parents=True)
    (sub / "ch01" / f"{MATMUL}.py").write_text(f"def matmul(A, B):\n    raise ValueError({ANSI!r})\n")
    html = tmp_path / "page.html"
    code, report, out, err = run_grade(sub, "-e", MATMUL, "--html", str(html), capfd=capfd)
    assert code == 0
    messages = [c["message"] for c in report["checks"] if c["visibility"] == "public"]
    assert any("Score: 440 / 440" in m for m in messages), messages  # the text stays, its control goes
    for text in (out, err, json.dumps(report, ensure_ascii=False), html.read_text()):
        assert "\x1b" not in text and "\r" not in text


def test_plain_removes_control_and_keeps_text():
    from grader.course.safe_text import plain

    assert plain(ANSI) == "Score: 440 / 440"
    assert plain("a\tb\nc\x08\x07\x00d\x7f\x9b31m\u202eé中") == "a\tb\ncdé中"
    assert plain("\x1b]0;title\x07x\x1b]8;;http://e\x1b\\link") == "xlink"


def test_reports_never_show_the_graders_paths(tmp_path, capfd):
    sub = tmp_path / "deep" / "sub"
    shutil.copytree(SOLUTIONS, sub, ignore=shutil.ignore_patterns("__pycache__"))
    (sub / "ch01" / "odd").symlink_to(tmp_path)  # a note names it, relative to the folder graded
    html = tmp_path / "page.html"
    code, report, out, _ = run_grade(sub, "-e", MATMUL, "--html", str(html), capfd=capfd)
    assert code == 0 and exercise_score(report, MATMUL) == (5, 5)
    assert report["submission"] == "sub"
    assert "ch01/odd: symbolic link skipped" in " ".join(report["notes"])
    for text in (json.dumps(report), html.read_text()):
        assert str(tmp_path) not in text and str(ROOT) not in text


# ----------------------------------------------------------------------------- figures
def test_figures_of_huge_student_strings_are_drawn_within_bounds():
    """12 KB strings from the BPE functions took minutes to lay out in the grader's process."""
    from grader.listings import plots

    big = "x" * 12_000
    rows = [[str(i), f"{big} + {big}", big + big, "7", "  ".join([big] * 4)] for i in range(200)]
    spec = plots.Table("bpe-merges", big, ["step"] * 40, rows)
    drawn = plots.bounded(spec)
    assert len(drawn.rows) == plots.MAX_ROWS + 1 and drawn.rows[-1][0].endswith("160 more rows")
    assert len(drawn.columns) == plots.MAX_COLUMNS and len(drawn.title) <= plots.MAX_TEXT
    assert all(len(cell) <= plots.MAX_TEXT for row in drawn.rows for cell in row)
    assert plots.render(spec).startswith(b"\x89PNG")
    with pytest.raises(plots.FigureError, match="too large to draw"):
        plots.render(plots.Heatmap("w", "weights", [[0.0] * 5000] * 3))
    with pytest.raises(plots.FigureError, match="too large to draw"):
        plots.bounded(plots.Curves("c", "curves", list(range(10)), [plots.Panel("p", [])] * 50))


BPE_HUGE = (
    (SOLUTIONS / "ch01" / "s1_04_bpe_train.py").read_text()
    + """

_BIG = "y" * 12_000


def most_frequent_pair(table):
    return (_BIG, _BIG)


def merge_pair(table, pair):
    return {f"{_BIG} {_BIG} {i}": 1 for i in range(6)}
"""
)


def test_the_html_page_of_a_submission_returning_huge_strings_is_written(tmp_path):
    """End to end: `kata grade --html` draws the merge table of BPE functions that answer with
    12 KB strings, and the page is written with the figure. The whole command takes about
    20 s; before the bounds, drawing that one figure took minutes (the generous 120 s limit)."""
    sub = tmp_path / "sub"
    shutil.copytree(SOLUTIONS, sub, ignore=shutil.ignore_patterns("__pycache__"))
    (sub / "ch01" / "s1_04_bpe_train.py").write_text(BPE_HUGE)
    html = tmp_path / "page.html"
    proc = kata("grade", str(sub), "-e", "s1_04_bpe_train", "--html", str(html), "--quiet", timeout=120)
    assert proc.returncode == 0, proc.stderr
    page = html.read_text()
    assert "data:image/png;base64," in page


def test_gradescope_never_copies_a_linked_file(tmp_path):
    from grader.course.manifest import load
    from grader.instructor.exports.gradescope import locate
    from grader.checking.submission import SubmissionError

    upload = tmp_path / "upload"
    upload.mkdir()
    (upload / f"{MATMUL}.py").symlink_to(SOLUTIONS / "ch01" / f"{MATMUL}.py")
    (upload / "ch01").symlink_to(SOLUTIONS / "ch01")
    work = tmp_path / "work"
    work.mkdir()
    with pytest.raises(SubmissionError):
        locate(upload, load(ROOT), work)
    assert not any(work.rglob("*.py"))


# ----------------------------------------------------------------------------- a class
def _notebook(code: str) -> str:
    import nbformat

    return nbformat.writes(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)]))


def _rows(out: Path) -> dict[str, dict]:
    return {r["student"]: r for r in csv.DictReader(io.StringIO((out / "gradebook.csv").read_text()))}


def test_a_batch_grades_only_what_each_entry_holds_itself(tmp_path):
    cls = tmp_path / "class"
    (cls / "alice" / "exercises" / "ch01").mkdir(parents=True)
    (cls / "alice" / "exercises" / "ch01" / f"{MATMUL}.py").write_bytes(solution(MATMUL))
    (cls / "mallory").mkdir()
    (cls / "mallory" / "exercises").symlink_to(Path("..") / "alice" / "exercises")  # alice's work as hers
    (cls / "eve").mkdir()
    (cls / "eve" / "homework").symlink_to(SOLUTIONS)  # the course's own answers
    (cls / "carol").mkdir()
    with zipfile.ZipFile(cls / "carol" / "kata-submission.zip", "w") as zf:
        zf.writestr(f"exercises/ch01/{MATMUL}.py", solution(MATMUL))
    (cls / "bob").mkdir()
    (cls / "bob" / "kata-submission.zip").symlink_to(Path("..") / "carol" / "kata-submission.zip")
    (cls / "dan" / "ch01").mkdir(parents=True)  # honest, with one file linked in
    (cls / "dan" / "ch01" / f"{MATMUL}.py").write_bytes(solution(MATMUL))
    (cls / "dan" / "ch01" / f"{SOFTMAX}.py").symlink_to(SOLUTIONS / "ch01" / f"{SOFTMAX}.py")
    (cls / "gus").mkdir()  # a platform's folder: the student's zip, and a link beside it
    with zipfile.ZipFile(cls / "gus" / "kata-submission.zip", "w") as zf:
        zf.writestr(f"exercises/ch01/{MATMUL}.py", solution(MATMUL))
    (cls / "gus" / "notes.txt").symlink_to("/etc/passwd")
    (cls / "ivy" / "s1_11").mkdir(parents=True)  # nbgrader's layout: one notebook, one link to another's
    (cls / "ivy" / "s1_11" / f"{MATMUL}.ipynb").write_text(_notebook(solution(MATMUL).decode()))
    (cls / "ivy" / "s1_11" / f"{SOFTMAX}.ipynb").symlink_to(cls / "ivy" / "s1_11" / f"{MATMUL}.ipynb")
    (cls / "zed").symlink_to("alice")  # an entry that is itself a link: a refused row, never alice's work
    with zipfile.ZipFile(cls / "fay.zip", "w") as zf:  # refused for want of ch01/: named as in the class
        zf.writestr("homework/notes.py", "x = 1\n")
    out = tmp_path / "out"
    proc = kata("grade", str(cls), "--out", str(out), "--jobs", "1", "-e", MATMUL)
    assert proc.returncode == 1, proc.stdout + proc.stderr  # some entries are refused
    book = _rows(out)
    assert set(book) == {"alice", "bob", "carol", "dan", "eve", "fay", "gus", "ivy", "mallory", "zed"}
    assert book["fay"]["reason"] == "fay.zip/homework: no 'ch01/' or 'exercises/ch01/' folder found"
    for name in ("alice", "carol", "dan", "gus", "ivy"):
        assert (book[name]["status"], book[name]["total"]) == ("graded", "5"), book[name]
    assert book["alice"]["reason"] == book["carol"]["reason"] == ""
    assert book["dan"]["reason"].startswith(f"ch01/{SOFTMAX}.py: symbolic link skipped")
    assert book["gus"]["reason"].startswith("notes.txt: symbolic link skipped")
    assert book["ivy"]["reason"].startswith(f"s1_11/{SOFTMAX}.ipynb: symbolic link skipped")
    assert (book["zed"]["status"], book["zed"]["total"]) == ("refused", "0"), book["zed"]
    assert book["zed"]["reason"].startswith("zed: a symbolic link; links are never followed"), book["zed"]
    for name, link in (("mallory", "exercises"), ("eve", "homework"), ("bob", "kata-submission.zip")):
        row = book[name]
        assert (row["status"], row["total"]) == ("refused", "0"), row
        assert "symbolic link" in row["reason"] and f"({link})" in row["reason"], row
        assert str(tmp_path) not in row["reason"]
    records = {n: json.loads((out / "students" / n / "report.json").read_text()) for n in book}
    prints = {n: r["student"]["fingerprint"] for n, r in records.items()}
    assert len(set(prints.values())) == len(prints) and NOTHING not in prints.values(), prints
    for r in records.values():
        assert str(tmp_path) not in r["submission"]
    meta = json.loads((out / "batch.json").read_text())
    assert not any(e["source"] == "zed" for e in meta["skipped"])  # a refused row, not "not a submission"
    assert "| zed |" in (out / "summary.md").read_text()
