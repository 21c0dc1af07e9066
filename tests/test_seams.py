"""No silent seam (issue 34): what a user sees where a path could drop or change their data.

`kata submit` packs the student's own folder or stops; names keep their letters (NFC, never
stripped); roster names compare without spaces and punctuation; a closest-match hint is a real near
miss; every score has at most two decimals and full marks are exactly the total."""

import shutil
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT, SOLUTIONS, kata


# ---------------------------------------------------------------- 1. kata submit packs the folder it runs in
def lab_folder(tmp_path: Path, solved: tuple[str, ...] = ()) -> Path:
    """A student's folder on a lab machine: exercises/ (the stubs, `solved` ones replaced by the
    reference) and no course.toml; the kata is installed elsewhere (this checkout, with its stubs)."""
    lab = tmp_path / "lab"
    shutil.copytree(ROOT / "exercises", lab / "exercises")
    for ex_id in solved:
        shutil.copy(SOLUTIONS / "ch01" / f"{ex_id}.py", lab / "exercises" / "ch01")
    return lab


def test_submit_packs_the_folder_it_runs_in_not_the_installed_course(tmp_path):
    lab = lab_folder(tmp_path, solved=("s1_11_softmax",))
    out = tmp_path / "mine.zip"
    proc = kata("submit", "--no-check", "--out", str(out), cwd=lab)
    assert proc.returncode == 0, proc.stderr
    assert f"packing {lab / 'exercises'}: 38 file(s)" in proc.stdout  # the folder named, and the count
    with zipfile.ZipFile(out) as zf:
        mine = zf.read("exercises/ch01/s1_11_softmax.py")
    assert mine == (SOLUTIONS / "ch01" / "s1_11_softmax.py").read_bytes()  # the student's work, not a stub

    # from inside exercises/ch01/: the nearest folder above holding exercises/, and the zip lands there
    proc = kata("submit", "--no-check", cwd=lab / "exercises" / "ch01")
    assert proc.returncode == 0, proc.stderr
    assert f"packing {lab / 'exercises'}: 38 file(s)" in proc.stdout
    with zipfile.ZipFile(lab / "kata-submission.zip") as zf:
        assert zf.read("exercises/ch01/s1_11_softmax.py") == mine


def test_submit_refuses_a_folder_of_untouched_stubs(tmp_path):
    lab = lab_folder(tmp_path)
    out = tmp_path / "stubs.zip"
    proc = kata("submit", "--no-check", "--out", str(out), cwd=lab)
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"every one of the 38 exercise files in {lab / 'exercises'} is still its untouched stub" in said
    assert "--anyway" in said and "wrote" not in proc.stdout
    assert not out.exists()
    proc = kata("submit", "--no-check", "--anyway", "--out", str(out), cwd=lab)  # asked for: handed in
    assert proc.returncode == 0, proc.stderr
    assert f"packing {lab / 'exercises'}: 38 file(s)" in proc.stdout and out.is_file()


def test_submit_refuses_where_there_is_no_exercises_folder(tmp_path):
    here = tmp_path / "home"
    here.mkdir()
    out = tmp_path / "nothing.zip"
    proc = kata("submit", "--no-check", "--out", str(out), cwd=here)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"no exercises/ folder in {here} or any folder above it" in proc.stderr
    assert not out.exists() and not (here / "kata-submission.zip").exists()


# ---------------------------------------------------------------- 2. a student's name is NFC, never stripped
def test_batch_names_a_macos_folder_zoe_with_its_diaeresis_apart_from_zoe(tmp_path):
    import csv
    import unicodedata

    nfd, nfc = unicodedata.normalize("NFD", "zoë"), unicodedata.normalize("NFC", "zoë")
    cls = tmp_path / "class"
    for who in ("zoe", nfd):  # two students; macOS writes the second folder's name in NFD
        shutil.copytree(SOLUTIONS, cls / who)
    out = tmp_path / "out"
    proc = kata("grade", str(cls), "--out", str(out), "-e", "s1_11_matmul")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    book = {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert set(book) == {"zoe", nfc}, book.keys()  # graded as zoë, not as zoe or zoe-2
    assert book[nfc]["source"] == nfd and book[nfc]["total"] == book["zoe"]["total"] == "5"  # its folder, as it is
    assert sorted(p.name for p in (out / "students").iterdir()) == ["zoe", nfc]
    assert "taken" not in proc.stdout + (out / "summary.md").read_text()  # they never collided


# ---------------------------------------------------------------- 3. roster matching ignores spaces and punctuation
def test_a_folder_mary_ann_gets_the_roster_line_maryann(tmp_path):
    import csv

    from tests.test_roster_exports import stored_run

    out = tmp_path / "out"
    stored_run(out, ["Mary Ann", "bob"])  # graded folders `Mary Ann/` and `bob/`
    (tmp_path / "roster.csv").write_text("login,name\nmaryann,Mary Ann Smith\nbob,Bob\n")
    proc = kata("gradebook", str(out), "--roster", str(tmp_path / "roster.csv"))
    assert proc.returncode == 0, proc.stdout + proc.stderr  # 0: the LMS files are safe to import
    assert "2 of 2 submissions matched a roster line" in proc.stdout
    moodle = list(csv.reader((out / "moodle.csv").open(encoding="utf-8")))
    assert [r[1:5] for r in moodle[1:]] == [["maryann", "", "Mary Ann Smith", "100"], ["bob", "", "Bob", "100"]]
    book = {r["source"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert book["Mary Ann"]["name"] == "Mary Ann Smith"


def test_roster_lines_alike_but_for_a_dot_are_refused_as_either_could_be_the_submission():
    from grader.instructor.formats import roster

    with pytest.raises(roster.RosterError, match=r"r.csv:3: mary.ann differs from line 2 only in spaces, punctuation"):
        roster.parse("login\nmaryann\nmary.ann\n", "r.csv")


# ---------------------------------------------------------------- 4. a closest-match hint is a real near miss or absent
FOLKS = [
    "alice",
    "bob",
    "carol",
    "dave",
    "erin",
    "frank",
    "grace",
    "heidi",
    "ivan",
    "judy",
    "mallory",
    "niaj",
    "olivia",
    "peggy",
    "rupert",
    "sybil",
    "trent",
    "victor",
]


def test_a_roster_keyed_on_id_numbers_says_no_close_match_rather_than_one_id_for_everyone(tmp_path):
    from tests.test_roster_exports import stored_run

    out = tmp_path / "out"
    stored_run(out, FOLKS)  # 18 folders named by username
    export = tmp_path / "KATA101 Grades.csv"  # Moodle's grade export: no Username column, keyed on ID number
    export.write_text(
        "First name,Last name,ID number,Institution,Department,Email address,"
        "Assignment: Attention (Real),Course total (Real),Last downloaded from this course\n"
        + "".join(
            f"{n.title()},Smith,S{1001 + i},Wonderland U,CS,{n}@uni.example,-,-,1717200000\n"
            for i, n in enumerate(FOLKS)
        ),
        encoding="utf-8",
    )
    proc = kata("gradebook", str(out), "--roster", str(export))
    said = " ".join(proc.stderr.split())
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "keyed on ID number) matches 0 of 18 submissions" in said
    assert "→" not in said and "'S1001'" not in said  # no ID named as anyone's closest match
    assert "Closest matches: no close match for 'alice', 'bob', 'carol', 'dave', 'erin'." in said


def test_a_real_near_miss_is_still_named():
    from grader.instructor.formats import roster

    r = roster.parse("login\nalice\nmhatter\nbob\n", "r.csv")
    said = roster.refusal(r, ["a1ice", "Mad Hatter", "zed"])
    assert "matches 0 of 3" in said
    assert "'a1ice' → 'alice'; 'Mad Hatter' → 'mhatter'; no close match for 'zed'" in said


# ---------------------------------------------------------------- 5. two decimals at most; full marks are the total
MORE_THAN_TWO_DECIMALS = r"(?<![\d.])\d+\.\d{3,}(?![\d.])"


def test_scores_have_two_decimals_and_the_reference_scores_exactly_100_everywhere(tmp_path):
    import csv
    import json
    import re

    cls = tmp_path / "class"
    shutil.copytree(SOLUTIONS, cls / "alice")  # the reference
    shutil.copytree(SOLUTIONS, cls / "bob")
    shutil.copy(
        ROOT / "exercises" / "ch01" / "s1_11_matmul.py", cls / "bob" / "ch01"
    )  # 5 of week2's 92 raw points lost
    out = tmp_path / "out"
    proc = kata("grade", str(cls), "--out", str(out), "--assignment", "week2", "--jobs", "2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "alice: 100/100" in proc.stdout and "bob: 94.57/100" in proc.stdout, proc.stdout  # 100 - 5.43
    assert not re.search(MORE_THAN_TWO_DECIMALS, proc.stdout), proc.stdout
    book = {r["student"]: r for r in csv.DictReader((out / "gradebook.csv").open(encoding="utf-8"))}
    assert (book["alice"]["total"], book["bob"]["total"], book["bob"]["s1_11_matmul"]) == ("100", "94.57", "0")
    assert not re.search(MORE_THAN_TWO_DECIMALS, (out / "gradebook.csv").read_text(encoding="utf-8"))
    for name, total in (("alice", 10000), ("bob", 9457)):
        report = json.loads((out / "students" / name / "report.json").read_text())
        results = json.loads((out / "students" / name / "gradescope" / "results.json").read_text())
        assert report["score"] * 100 == results["score"] * 100 == total and report["max_score"] == 100
        parts = [(t["score"], t["max_score"]) for t in results["tests"]]
        assert all(round(x, 2) == x for part in parts for x in part), parts
        assert sum(round(s * 100) for s, _ in parts) == total and sum(round(m * 100) for _, m in parts) == 10000
        assert not re.search(MORE_THAN_TWO_DECIMALS, results["output"]), results["output"]


def test_an_assignment_s_nbgrader_cells_are_hundredths_adding_up_to_its_points_exactly():
    import json

    from grader.course import manifest
    from grader.course.commandline import select
    from grader.instructor.exports.export_nbgrader import plan

    course = manifest.load(ROOT)
    for a in course.assignments:
        files, _ = plan(course, select(course, [], a.id), assignment=a)
        points = [
            c["metadata"]["nbgrader"]["points"]
            for rel, text in files.items()
            if rel.endswith(".ipynb")
            for c in json.loads(text)["cells"]
            if c["metadata"].get("nbgrader", {}).get("grade")
        ]
        assert all(round(p, 2) == p for p in points), (a.id, points)
        assert sum(round(p * 100) for p in points) == round(a.points * 100), a.id  # 100, not 100.0007
