"""`kata release OUT --assignment ID`: the student bundle of one assignment.

The week2 bundle is built once for the module (its public checks, listings and figures run on the
solutions, about ten seconds) and read as files; the student's commands run from it as a source
folder (PYTHONPATH=the bundle: its own grader package and grader/release.json, no solutions), as
`pip install -e .` would run them. The slow tests check and list inside it, and build the bundle
of an assignment whose exercise imports one of another assignment, from a copy of the course
with that assignment added.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

from grader.authoring.stubs import blocks, stub_text
from grader.course import manifest as course_module
from grader.course.assignments import find
from grader.instructor.release import release, release_assignment
from tests.conftest import ROOT, SOLUTIONS, kata

COURSE = course_module.load(ROOT)
WEEK2 = find(COURSE.assignments, "week2")
OTHERS = [ex for ex in COURSE.exercises if ex.id not in WEEK2.exercises]


def kata_bundle(project: Path, *args: str, lang: str = "en") -> subprocess.CompletedProcess:
    """`kata ARGS` run in `project`, a copy of a bundle, with the bundle's own grader package."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=300,
        env={**env, "PYTHONPATH": str(project), "KATA_LANG": lang, "COLUMNS": "200"},
    )


@pytest.fixture(scope="module")
def week2(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("release") / "week2"
    proc = kata("release", str(out), "-a", "week2")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "assignment week2: 10 exercises" in proc.stdout and "nothing hidden found inside" in proc.stdout
    return out


@pytest.fixture
def project(week2, tmp_path) -> Path:
    """A student's working copy of the week2 bundle."""
    proj = tmp_path / "week2"
    shutil.copytree(week2, proj)
    return proj


def _texts(folder: Path) -> dict[str, str]:
    out = {}
    for p in folder.rglob("*"):
        if p.is_file():
            try:
                out[p.relative_to(folder).as_posix()] = p.read_text(encoding="utf-8")
            except UnicodeDecodeError:
                pass
    return out


# ----------------------------------------------------------------------------- without building
def test_an_unknown_assignment_is_refused_naming_the_known_ones(tmp_path):
    from grader.cli import main

    out = tmp_path / "bundle"
    err = tmp_path / "err.txt"
    with open(err, "w") as f, pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stderr", f)
        code = main(["release", str(out), "-a", "week9"])
    said = err.read_text()
    assert code == 2, said
    assert "kata release: no assignment 'week9' in course.toml (assignments: week1, week2, week3, week4)" in said
    assert "running the public checks" not in said  # refused before anything ran
    assert not out.exists()


def test_the_bundles_course_toml_holds_the_assignment_and_its_exercises_only():
    text = (ROOT / "course.toml").read_text(encoding="utf-8")
    cut = release_assignment.course_toml(text, WEEK2.exercises, "week2")
    data = tomllib.loads(cut)
    assert [e["id"] for e in data["exercise"]] == WEEK2.exercises
    assert [a["id"] for a in data["assignment"]] == ["week2"]
    named = {lst for ex in COURSE.exercises if ex.id in WEEK2.exercises for lst in ex.listings}
    assert {lst["id"] for lst in data["listing"]} == named
    assert data["course"] == tomllib.loads(text)["course"]
    assert cut.startswith("# The course manifest") and "# ----" in cut  # its comments kept
    whole = {e["id"]: e for e in tomllib.loads(text)["exercise"]}
    assert all(e == whole[e["id"]] for e in data["exercise"])  # hints, points, limits as they were
    assert "s1_23_tokenizer" not in cut and "week3" not in cut


def test_an_exercise_of_another_assignment_comes_along_when_one_imports_it():
    needed = release_assignment.needed
    assert needed(COURSE, ["s1_23_encoder_block"]) == ["s1_23_self_attention", "s1_23_feed_forward"]
    assert needed(COURSE, ["s1_23_classifier"]) == [
        "s1_23_bert_embedding",
        "s1_23_self_attention",
        "s1_23_feed_forward",
        "s1_23_encoder_block",
        "s1_23_encoder",
    ]
    assert "s1_23_training" in needed(COURSE, ["s1_23_evaluation"])  # its checks use the training checks' helpers
    for a in COURSE.assignments:  # the course's own weeks stand alone
        assert needed(COURSE, a.exercises) == [], a.id


def test_the_scan_refuses_a_file_of_an_exercise_outside_the_bundle(tmp_path):
    inside = [COURSE.get("s1_11_softmax")]
    for rel in (
        "exercises/ch01/s1_11_softmax.py",
        "grader/checks/test_s1_11_softmax.py",
        "grader/checks/test_s1_23_encoder.py",
        "grader/fixtures/s1_23_tokenizer.safetensors",
        "grader/listings/s1_13_causal_mask.py",
        "grader/release_stubs/zh/ch01/s1_12_context.py",
        "exercises/ch01/s1_05_positions.py",
    ):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    found = release.foreign_files(tmp_path, COURSE, inside)
    assert sorted(found) == sorted(
        [
            "grader/checks/test_s1_23_encoder.py: belongs to s1_23_encoder, which is not in this bundle",
            "grader/fixtures/s1_23_tokenizer.safetensors: belongs to s1_23_tokenizer, which is not in this bundle",
            "grader/listings/s1_13_causal_mask.py: belongs to s1_13_causal_mask, which is not in this bundle",
            "grader/release_stubs/zh/ch01/s1_12_context.py: belongs to s1_12_context, which is not in this bundle",
            "exercises/ch01/s1_05_positions.py: belongs to s1_05_positions, which is not in this bundle",
        ]
    )


# ----------------------------------------------------------------------------- the week2 bundle
def test_the_week2_bundle_holds_week2_and_nothing_of_the_other_exercises(week2):
    files = {p.relative_to(week2).as_posix() for p in week2.rglob("*") if p.is_file()}
    week = set(WEEK2.exercises)
    stubs = {f for f in files if f.startswith("exercises/")}
    assert stubs == {f"exercises/{COURSE.get(i).file}" for i in week}
    checks = {f for f in files if re.fullmatch(r"grader/checks/test_\w+\.py", f)}
    assert checks == {f"grader/checks/test_{i}.py" for i in week}
    fixtures = {f.rsplit("/", 1)[1].removesuffix(".safetensors") for f in files if f.startswith("grader/fixtures/")}
    assert fixtures - {"replay"} <= week and "s1_11_softmax" in fixtures
    listings = {f.rsplit("/", 1)[1].removesuffix(".py") for f in files if f.startswith("grader/listings/s")}
    assert listings and listings <= week
    shipped_stubs = {f.rsplit("/", 1)[1].removesuffix(".py") for f in files if f.startswith("grader/release_stubs/")}
    assert shipped_stubs == week
    assert not [f for f in files if f.startswith(("solutions/", "tests/"))]

    # each shipped check module holds exactly its exercise's public checks
    for i in week:
        shipped = course_module.read_checks(week2 / "grader" / "checks" / f"test_{i}.py")
        assert {c.name for c in shipped} == {c.name for c in COURSE.get(i).checks if not c.hidden}, i

    # no check of another exercise is named in the code, and no hidden check anywhere
    texts = _texts(week2)
    theirs = {c.name for ex in OTHERS for c in ex.checks} - {c.name for i in week for c in COURSE.get(i).checks}
    hidden = {c.name for ex in COURSE.exercises for c in ex.checks if c.hidden} - {
        c.name for ex in COURSE.exercises for c in ex.checks if not c.hidden
    }
    named = re.compile(r"\b(" + "|".join(sorted(theirs | hidden)) + r")\b")
    # (ERRATA.md and its translation name the public checks that prove each entry, whichever exercise)
    hits = {
        f: m.group(0)
        for f, text in texts.items()
        if f not in ("ERRATA.md", "README.md", "locale/zh/errata.po") and (m := named.search(text))
    }
    assert not hits
    assert not [f for f, text in texts.items() if re.search(r"\b(" + "|".join(sorted(hidden)) + r")\b", text)]

    # no line of any solution that the stubs do not show
    shown = {line.strip() for ex in COURSE.exercises for line in stub_text(COURSE, ex, "en").splitlines()}
    answers = set()
    for ex in COURSE.exercises:
        source = (SOLUTIONS / ex.file).read_text()
        lines = source.splitlines()
        for b in blocks(source):
            answers |= {
                s
                for line in lines[b.start : b.end - 1]
                if len(s := line.strip()) >= 24 and not s.startswith("#") and s not in shown
            }
    assert len(answers) > 200
    assert not {
        f: sorted(hit)[:2]
        for f, text in texts.items()
        if (hit := answers & {line.strip() for line in text.splitlines()})
    }

    # what it says it is
    info = json.loads((week2 / "grader" / "release.json").read_text())
    assert info["assignment"] == {"id": "week2", "exercises": WEEK2.exercises, "needed": []}
    assert set(info["exercises"]) == week
    data = tomllib.loads((week2 / "course.toml").read_text())
    assert [e["id"] for e in data["exercise"]] == WEEK2.exercises and [a["id"] for a in data["assignment"]] == ["week2"]
    readme = (week2 / "README.md").read_text()
    assert readme.startswith("# The Transformer kata (student edition): assignment week2")
    assert "## This bundle: assignment week2" in readme and "## 本作业包：作业 week2" in readme
    assert WEEK2.title in readme and WEEK2.title_zh in readme
    assert "100 points" in readme and "满分 100 分" in readme


def test_kata_list_in_the_week2_bundle_shows_week2_worth_its_points(project):
    proc = kata_bundle(project, "list", "--no-run", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert [e["id"] for e in doc["exercises"]] == WEEK2.exercises
    assert doc["assignment"] == {"id": "week2", "title": WEEK2.title, "points": 100, "needed": []}
    own = sum(COURSE.get(i).points for i in WEEK2.exercises)  # 92: the exercises' own points
    softmax = next(e for e in doc["exercises"] if e["id"] == "s1_11_softmax")
    ex = COURSE.get("s1_11_softmax")
    public = sum(c.points for c in ex.checks if not c.hidden)
    assert softmax["points"] == pytest.approx(ex.points * 100 / own)
    assert softmax["public_points"] == pytest.approx(public * 100 / own)
    assert softmax["hidden_points"] == pytest.approx((ex.points - public) * 100 / own) and softmax["hidden_points"] > 0
    assert doc["progress"]["max_points"] == 100 and doc["progress"]["exercises"] == len(WEEK2.exercises)
    table = " ".join(kata_bundle(project, "list", "--no-run").stdout.split())  # the title wraps
    assert "assignment week2: Attention" in table
    assert "作业week2：注意力" in "".join(kata_bundle(project, "list", "--no-run", lang="zh").stdout.split())
    assert "s1_23" not in table and "s1_01" not in table


@pytest.mark.slow
def test_kata_check_in_the_week2_bundle_fails_a_stub_and_passes_a_solution(project):
    ex = COURSE.get("s1_11_softmax")
    n = sum(1 for c in ex.checks if not c.hidden)
    own = sum(COURSE.get(i).points for i in WEEK2.exercises)
    worth = f"{round(sum(c.points for c in ex.checks if not c.hidden) * 100 / own, 2):g}"
    proc = kata_bundle(project, "check", "s1_11_softmax")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert f"0 of {n} public checks pass · 0/{worth} points" in proc.stdout
    assert "Points are those of assignment week2" in " ".join(proc.stdout.split())
    shutil.copy(SOLUTIONS / ex.file, project / "exercises" / ex.file)
    proc = kata_bundle(project, "check", "s1_11_softmax")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"{n} of {n} public checks pass · {worth}/{worth} points" in proc.stdout
    proc = kata_bundle(project, "check", "s1_11_softmax", lang="zh")
    assert proc.returncode == 0 and "分值按作业 week2 计算" in proc.stdout, proc.stdout + proc.stderr
    listed = json.loads(kata_bundle(project, "list", "--json").stdout)
    assert listed["progress"]["passing"] == 1
    assert listed["progress"]["public_points_passed"] == pytest.approx(float(worth), abs=0.01)
    proc = kata_bundle(project, "check", "s1_23_encoder")
    assert proc.returncode == 2 and "no exercise 's1_23_encoder'" in proc.stderr, proc.stderr


# ----------------------------------------------------------------------------- an exercise of another week
@pytest.fixture(scope="module")
def blocks_bundle(tmp_path_factory) -> Path:
    """The bundle of an assignment holding s1_23_encoder_block alone, which imports the student's
    s1_23_self_attention and s1_23_feed_forward, built from a copy of the course that adds it."""
    course = tmp_path_factory.mktemp("course") / "course"
    course.mkdir()
    for name in ("solutions", "exercises", "locale", "docs"):  # docs/: the bundle README's student guide
        shutil.copytree(ROOT / name, course / name)
    for name in ("README.md", "ERRATA.md", "pyproject.toml"):
        shutil.copy(ROOT / name, course / name)
    (course / "course.toml").write_text(
        (ROOT / "course.toml").read_text()
        + (
            '\n[[assignment]]\nid = "blocks"\ntitle = "The encoder block"\ntitle_zh = "编码器块"\n'
            'exercises = ["s1_23_encoder_block"]\npoints = 50\n'
        )
    )
    out = course.parent / "blocks"
    proc = kata("release", str(out), "-a", "blocks", "--course", str(course), cwd=course)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "assignment blocks and s1_23_self_attention, s1_23_feed_forward of other assignments" in proc.stdout
    return out


@pytest.mark.slow
def test_an_imported_exercise_of_another_assignment_ships_as_its_stub_and_is_said_so(blocks_bundle, tmp_path):
    project = tmp_path / "blocks"
    shutil.copytree(blocks_bundle, project)
    exercises = project / "exercises" / "ch01"
    assert sorted(p.name for p in exercises.iterdir()) == [
        "s1_23_encoder_block.py",
        "s1_23_feed_forward.py",
        "s1_23_self_attention.py",
    ]
    readme = " ".join((project / "README.md").read_text().split())
    assert (
        "Also here, from other assignments, because this assignment's exercises (or their checks) use them: "
        "s1_23_self_attention, s1_23_feed_forward."
        in readme
        and "不计入作业 blocks 的成绩" in readme
    )

    doc = json.loads(kata_bundle(project, "list", "--no-run", "--json").stdout)
    assert {e["id"]: e["in_assignment"] for e in doc["exercises"]} == {
        "s1_23_self_attention": False,
        "s1_23_feed_forward": False,
        "s1_23_encoder_block": True,
    }
    assert doc["assignment"]["needed"] == ["s1_23_self_attention", "s1_23_feed_forward"]
    assert doc["progress"]["exercises"] == 1 and doc["progress"]["max_points"] == 50
    table = " ".join(kata_bundle(project, "list", "--no-run").stdout.split())
    assert "other assignment" in table and "s1_23_self_attention, s1_23_feed_forward: from another assignment" in table

    # the assignment's exercise solved, the earlier ones still stubs: the check says what to bring over
    shutil.copy(SOLUTIONS / "ch01" / "s1_23_encoder_block.py", exercises)
    proc = kata_bundle(project, "check", "s1_23_encoder_block")
    said = " ".join(proc.stdout.split())
    assert proc.returncode == 1, said + proc.stderr
    assert "which is not finished yet" in said and "finish s1_23_self_attention first" in said
    assert (
        "s1_23_self_attention is an exercise of another assignment: copy your own finished "
        "exercises/ch01/s1_23_self_attention.py from it into this folder"
    ) in said
    for name in ("s1_23_self_attention", "s1_23_feed_forward"):  # the student's own, from the earlier week
        shutil.copy(SOLUTIONS / "ch01" / f"{name}.py", exercises)
    proc = kata_bundle(project, "check")
    said = " ".join(proc.stdout.split())
    assert proc.returncode == 0, said + proc.stderr
    assert "from another assignment, not graded in blocks" in said, said
    assert re.search(r"(\d+) of \1 public checks pass · (\d+)/\2 points", said), said  # all of blocks' public points

    proc = kata_bundle(project, "submit", "--no-check", "--out", str(tmp_path / "sub.zip"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = set(zipfile.ZipFile(tmp_path / "sub.zip").namelist())
    assert {
        f"exercises/ch01/{n}.py" for n in ("s1_23_encoder_block", "s1_23_self_attention", "s1_23_feed_forward")
    } <= names
