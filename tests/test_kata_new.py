"""`kata new ID` and `kata verify --draft` (issue 38, item 4): a new exercise in one sitting.

In a copy of the whole course (its grader/ too: checks, fixtures and listings live in the
package, so the copy's own kata runs there), `kata new` writes the hand-written parts, `kata
stubs` and `kata fixtures` generate the rest, and the exercise is real: `kata verify --draft`
passes with its Chinese pending while the strict verify fails on the same texts, the reference
scores full marks and the stub nothing, and the tests it wrote pass. An id that is malformed or
taken is refused with exit 2 and nothing written."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from tests.conftest import ROOT

EX = "s1_11_demo"
SKIP = shutil.ignore_patterns(
    ".git",
    ".venv",
    ".kata",
    "__pycache__",
    "*.egg-info",
    ".pytest_cache",
    ".hypothesis",
    "benchmarks",
    "build",
    "dist",
    "out",
)
WRITTEN = [
    f"solutions/ch01/{EX}.py",
    f"grader/checks/test_{EX}.py",
    f"tests/test_ex_{EX}.py",
    f"locale/zh/ch01/{EX}.po",
]


def course_copy(where: Path) -> Path:
    copy = where / "course"
    shutil.copytree(ROOT, copy, ignore=SKIP)
    return copy


def _env(copy: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    return {**env, "KATA_LANG": "en", "PYTHONPATH": str(copy), "COLUMNS": "200"}


def kata_in(copy: Path, *args: str) -> subprocess.CompletedProcess:
    """The copy's own `kata` (its grader package), run in the copy."""
    return subprocess.run(
        [sys.executable, "-m", "grader", *args], cwd=copy, capture_output=True, text=True, timeout=600, env=_env(copy)
    )


def tree(folder: Path) -> dict[str, str]:
    """Every file's sha256 but the caches a command may leave (.kata/, __pycache__/)."""
    return {
        p.relative_to(folder).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not {".kata", "__pycache__"} & set(p.relative_to(folder).parts)
    }


def test_a_new_exercise_is_gradable_and_passes_verify_draft_with_its_chinese_pending(tmp_path):
    copy = course_copy(tmp_path)
    new = kata_in(copy, "new", EX, "--section", "1.11", "--title", "Doubling, a demo")
    assert new.returncode == 0, new.stdout + new.stderr
    assert f"kata new: added {EX} (§1.11) to course.toml, after s1_11_softmax" in new.stdout
    for path in WRITTEN:
        assert f"wrote {path}\n" in new.stdout and (copy / path).is_file(), path
    assert not (copy / f"exercises/ch01/{EX}.py").exists()  # generated, not written
    steps = re.findall(r"(?m)^  (\d+)\. (.*)$", new.stdout)
    assert [int(n) for n, _ in steps] == list(range(1, len(steps) + 1)), steps
    said = [text for _, text in steps]
    assert "kata stubs" in said[1] and f"kata fixtures -e {EX}" in said[2] and "kata verify" in said[-1], said
    exercises = tomllib.loads((copy / "course.toml").read_text())["exercise"]
    at = [e["id"] for e in exercises].index(EX)
    assert exercises[at - 1]["id"] == "s1_11_softmax" and exercises[at + 1]["section"] == "1.12"
    assert exercises[at]["title"] == "Doubling, a demo" and exercises[at]["title_zh"] == ""
    solution = (copy / WRITTEN[0]).read_text()
    assert solution.startswith('"""§1.11 Doubling, a demo.') and "# BEGIN SOLUTION" in solution

    checks = copy / WRITTEN[1]
    written = checks.read_text()
    checks.write_text(written.replace("@check(points=1", "@check(points=2", 1))  # what grading refuses
    refused = kata_in(copy, "fixtures", "-e", EX)
    assert refused.returncode != 0 and f"[[exercise]] {EX}: points = 1 but its checks add up to 2" in (
        refused.stdout + refused.stderr
    ), refused.stdout + refused.stderr
    assert not (copy / f"grader/fixtures/{EX}.safetensors").exists()
    checks.write_text(written)
    assert "solution_with stops here" in (copy / WRITTEN[2]).read_text()  # the placeholder mistake says so

    for args in (["stubs"], ["fixtures", "-e", EX]):
        done = kata_in(copy, *args)
        assert done.returncode == 0, done.stdout + done.stderr
    assert (copy / f"exercises/ch01/{EX}.py").is_file() and (copy / f"grader/fixtures/{EX}.safetensors").is_file()

    draft = kata_in(copy, "verify", "--draft", "-e", EX)
    assert draft.returncode == 0, draft.stdout + draft.stderr
    pending = sorted(
        line.removeprefix("pending: ") for line in draft.stdout.splitlines() if line.startswith("pending: ")
    )
    assert len(pending) == 6 and all(EX in p for p in pending), pending
    assert any(f"locale/zh/ch01/{EX}.po: demo TODO: not translated" in p for p in pending), pending
    assert any(f"course.toml [[exercise]] {EX} title: the Chinese text is empty" in p for p in pending), pending
    assert "FAIL" not in draft.stdout and "ok: solutions: 1/1" in draft.stdout and "ok: stubs: 0/1" in draft.stdout
    assert draft.stdout.rstrip().endswith(
        "kata verify --draft: passed, 6 text(s) pending (the strict kata verify, "
        "which CI runs, fails until they are written)"
    )
    strict = kata_in(copy, "verify", "--no-grade")
    assert strict.returncode == 1 and "kata verify: 6 problem(s)" in strict.stdout, strict.stdout
    assert (
        sorted(line.removeprefix("FAIL: ") for line in strict.stdout.splitlines() if line.startswith("FAIL: "))
        == pending
    )

    for folder, expect in (("solutions", "full"), ("exercises", "zero")):
        done = kata_in(copy, "grade", folder, "-e", EX, "--expect", expect, "--quiet")
        assert done.returncode == 0, done.stdout + done.stderr
    check = kata_in(copy, "check", EX)
    assert check.returncode == 1 and "0 of 1 public checks pass" in check.stdout, check.stdout

    tests = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"tests/test_ex_{EX}.py"],
        cwd=copy,
        capture_output=True,
        text=True,
        timeout=600,
        env=_env(copy),
    )
    assert tests.returncode == 0 and "3 passed" in tests.stdout, tests.stdout + tests.stderr


REFUSED = [
    (["S1_11_Demo"], "S1_11_Demo is not an exercise id"),
    (["s1_11_softmax"], "course.toml already has the exercise s1_11_softmax"),
    (["s1_99_demo", "--section", "1.11"], "s1_99_demo is an exercise of §1.99, not §1.11"),
    (["s1_11_2nd"], "the name 2nd of s1_11_2nd must be a Python name"),
    (["s2_11_demo"], "s2_11_demo names another chapter than this course's (ch01)"),
    ([EX, "--listing", "1.5"], "course.toml already has the listing 1.5"),
    (["s1_12_ghost"], "tests/test_ex_s1_12_ghost.py exists already"),
]


def test_a_malformed_or_taken_id_is_refused_and_nothing_is_written(tmp_path):
    copy = course_copy(tmp_path)
    (copy / "tests/test_ex_s1_12_ghost.py").write_text("# a file of mine\n")
    before = tree(copy)
    for argv, why in REFUSED:
        done = kata_in(copy, "new", *argv)
        assert done.returncode == 2 and not done.stdout, (argv, done.stdout, done.stderr)
        assert f"kata new: {argv[0]} is refused, nothing was written: {why}" in done.stderr, (argv, done.stderr)
        assert tree(copy) == before, argv


def test_a_course_whose_checks_are_not_this_kata_s_is_refused(tmp_course, monkeypatch, capsys):
    """This kata's grader/ is ROOT's: `kata new` in another course would write its checks here."""
    from grader.cli import main

    before = tree(tmp_course)
    monkeypatch.chdir(tmp_course)
    monkeypatch.setenv("KATA_LANG", "en")
    ours = [ROOT / "grader/checks" / f"test_{EX}.py", ROOT / "solutions/ch01" / f"{EX}.py"]
    try:
        assert main(["new", EX]) == 2
    finally:
        for path in ours:  # never left in the repository, even by a failure
            path.unlink(missing_ok=True)
    assert "would be written into" in capsys.readouterr().err
    assert tree(tmp_course) == before


def test_verify_draft_lists_a_missing_translation_as_pending_and_still_fails_on_the_rest(tmp_course):
    from grader.authoring.verify import verify

    po = tmp_course / "locale/zh/ch01/s1_11_attention_scores.po"
    po.write_text(po.read_text().replace('msgstr "用 queries 乘以交换了最后两个维度的 keys"', 'msgstr ""'))
    (tmp_course / "exercises/ch01/s1_11_matmul.py").write_text("# edited\n")
    v = verify(tmp_course, grade=False, draft=True)
    assert v.pending == ["locale/zh/ch01/s1_11_attention_scores.po: attention_scores TODO: not translated"]
    assert any("s1_11_matmul: exercises/ch01/s1_11_matmul.py differs" in p for p in v.problems), v.problems
    assert not any("s1_11_attention_scores" in p for p in v.problems), v.problems


@pytest.mark.parametrize(
    "problem, pending",
    [
        ("locale/zh/ch01/x.po: softmax TODO: not translated", True),
        ("locale/zh/ch01/x.po: softmax: marked fuzzy", True),
        ("locale/zh/ch01/x.po: softmax: stale: its English changed", True),
        ("locale/zh/ch01/x.po: no catalog (kata stubs --lang zh --update-catalogs makes one)", True),
        ("locale/zh/ch01/x.po: old: translates English that the solution no longer has", True),
        ("errata: locale/zh/errata.po:12: E-1.11-a: not translated", True),
        ("languages: grader/locale/zh/messages.po:40: 'shape' is not translated (empty msgstr)", True),
        ("languages: course.toml [[exercise]] x title: the Chinese text 'TODO' has no Chinese in it", True),
        ("languages: course.toml [[exercise]] x title: the English text is empty", False),
        ("languages: grader/locale/zh/messages.po:40: 'shape': the fields differ: English ['a'], Chinese []", False),
        ("locale/zh/ch01/x.po: softmax: the translation changes code, which stays as the English has it: dim", False),
        ("s1_11_x: the zh stub's code differs from the English stub's", False),
    ],
)
def test_what_a_draft_lists_as_pending(problem, pending):
    from grader.course import i18n

    assert i18n.pending_translation(problem) is pending


def test_verify_draft_in_chinese_lists_the_same_problem_as_pending(tmp_course, monkeypatch):
    """`kata --lang zh verify --draft`: the problems are written in Chinese, and a Chinese text
    still to write is pending there too (the catalog's own words for it, in both languages)."""
    from grader.authoring.verify import verify

    monkeypatch.setenv("KATA_LANG", "zh")
    po = tmp_course / "locale/zh/ch01/s1_11_attention_scores.po"
    po.write_text(po.read_text().replace('msgstr "用 queries 乘以交换了最后两个维度的 keys"', 'msgstr ""'))
    v = verify(tmp_course, grade=False, draft=True)
    assert len(v.pending) == 1 and "locale/zh/ch01/s1_11_attention_scores.po" in v.pending[0], v.pending
    assert "没有翻译" in v.pending[0] and "not translated" not in v.pending[0]
    assert not any("s1_11_attention_scores" in p for p in v.problems), v.problems
