"""Grading end to end through the real `kata` command: scores, reports, feedback, archives."""

import os
import shutil
import stat
import zipfile
from pathlib import Path

import pytest

from grader.course import manifest as course
from tests.conftest import MAX_SCORE, ROOT, SOLUTIONS, checks_of, grade, kata, score_of

REPORT_KEYS = {"exercise", "name", "status", "score", "max_score", "message", "listing", "visibility", "duration_s"}


@pytest.fixture(scope="module")
def solutions_report(tmp_path_factory):
    base = tmp_path_factory.mktemp("sol")
    sub = base / "solutions"
    shutil.copytree(SOLUTIONS, sub)
    return grade(sub)


def test_solutions_score_full_marks(solutions_report):
    r = solutions_report
    assert r["score"] == r["max_score"] == MAX_SCORE
    assert all(c["status"] == "passed" for c in r["checks"])
    assert r["sandbox"] == ("bubblewrap" if shutil.which("bwrap") else "limits-only")


def test_report_schema(solutions_report):
    r = solutions_report
    assert {"schema", "score", "max_score", "sandbox", "checks", "exercises", "kata_version", "torch"} <= set(r)
    for c in r["checks"]:
        assert REPORT_KEYS <= set(c)
        assert c["visibility"] in ("public", "hidden") and isinstance(c["listing"], list)
    assert {c["exercise"] for c in r["checks"]} == {e["id"] for e in r["exercises"]}
    listings = {lst for c in r["checks"] for lst in c["listing"]}
    assert {"1.1", "1.2", "1.3", "1.4", "1.5", "1.6", "1.7", "1.8", "1.11/softmax", "1.11/matmul"} <= listings
    assert any(c["visibility"] == "hidden" for c in r["checks"])


def test_stubs_score_zero_with_not_implemented_messages(submission):
    r = grade(submission(from_stubs=True))
    assert r["score"] == 0 and r["max_score"] == MAX_SCORE
    for c in r["checks"]:
        assert c["status"] == "failed"
        # its own stub, or an earlier exercise it builds on (named, with the file to finish first)
        assert "not implemented yet" in c["message"] or (
            "which is not finished yet" in c["message"] and "first" in c["message"]
        ), c
        assert c["exercise"] in c["message"]


def test_terminal_table_groups_by_section(tmp_path):
    sub = tmp_path / "sub"
    shutil.copytree(SOLUTIONS, sub)
    proc = kata("grade", str(sub), "-e", "s1_12_context", "-e", "s1_10_qkv")
    assert proc.returncode == 0, proc.stderr
    assert "§1.10" in proc.stdout and "§1.12" in proc.stdout and "Score: 13 / 13" in proc.stdout


def test_wrong_answer_public_vs_hidden_feedback(submission):
    wrong = (SOLUTIONS / "ch01/s1_12_scaled_attention.py").read_text().replace("d_k**0.5", "d_k")
    r = grade(submission({"s1_12_scaled_attention": wrong}), "-e", "s1_12_scaled_attention")
    by_name = {c["name"]: c for c in r["checks"]}
    public = by_name["test_listing_1_6_weights"]
    assert public["status"] == "failed" and "dividing by d_k instead of sqrt(d_k)" in public["message"]
    assert "expected" in public["message"]  # public checks show expected vs actual
    hidden = by_name["test_fresh_dims"]
    assert hidden["status"] == "failed" and "dividing by d_k instead of sqrt(d_k)" in hidden["message"]
    assert "got " not in hidden["message"] and "index" not in hidden["message"]


def test_forbidden_api_static_scan_and_runtime_guard(submission):
    cheat = (
        (SOLUTIONS / "ch01/s1_11_softmax.py")
        .read_text()
        .replace(
            "    shifted = x - x.amax(dim=dim, keepdim=True)\n    e = torch.exp(shifted)\n    return e / e.sum(dim=dim, keepdim=True)",
            "    import torch.nn.functional as F\n    return F.softmax(x, dim=dim)",
        )
    )
    assert "F.softmax" in cheat
    r = grade(submission({"s1_11_softmax": cheat}), "-e", "s1_11_softmax")
    checks = checks_of(r, "s1_11_softmax")
    assert score_of(r, "s1_11_softmax") == 0
    for c in checks:  # the public checks name the API and the line; a hidden one says only that a rule broke
        if c["visibility"] == "public":
            assert "torch.nn.functional.softmax" in c["message"] and "s1_11_softmax.py:" in c["message"], c
        else:
            assert "the public checks name the file and the line" in c["message"], c
    # One message per check, not the guard's refusal followed by the scan's verdict of the same call:
    # what was used, where, and what to write instead.
    public = [c for c in checks if c["visibility"] == "public"]
    for c in public:
        assert c["message"].count("torch.nn.functional.softmax") == 1, c["message"]
        assert c["message"].startswith("ch01/s1_11_softmax.py:"), c["message"]
        assert "Instead: " + course.load(ROOT).get("s1_11_softmax").forbidden_hint in c["message"], c["message"]


def test_forbidden_api_hidden_behind_getattr_is_stopped_at_runtime(submission):
    cheat = (
        (SOLUTIONS / "ch01/s1_11_softmax.py")
        .read_text()
        .replace(
            "    shifted = x - x.amax(dim=dim, keepdim=True)\n    e = torch.exp(shifted)\n    return e / e.sum(dim=dim, keepdim=True)",
            "    fn = getattr(torch, 'soft' + 'max')\n    return fn(x, dim)",
        )
    )
    r = grade(submission({"s1_11_softmax": cheat}), "-e", "s1_11_softmax")
    softmax_checks = [c for c in checks_of(r, "s1_11_softmax") if c["name"] != "test_book_simple_normalization"]
    assert all(c["score"] == 0 for c in softmax_checks)
    public = [c["message"] for c in softmax_checks if c["visibility"] == "public"]
    hidden = [c["message"] for c in softmax_checks if c["visibility"] == "hidden"]
    assert public and all("torch.softmax is not allowed" in m for m in public), public
    # a hidden check names no function the code chose to call (the public checks do)
    assert hidden and all("that exercise s1_11_softmax forbids" in m and "torch.softmax" not in m for m in hidden), (
        hidden
    )


def test_correct_but_different_softmax_passes(submission):
    variant = (
        (SOLUTIONS / "ch01/s1_11_softmax.py")
        .read_text()
        .replace(
            "    shifted = x - x.amax(dim=dim, keepdim=True)\n    e = torch.exp(shifted)\n    return e / e.sum(dim=dim, keepdim=True)",
            "    return torch.exp(x - torch.logsumexp(x, dim=dim, keepdim=True))",
        )
    )
    r = grade(submission({"s1_11_softmax": variant}), "-e", "s1_11_softmax")
    assert score_of(r, "s1_11_softmax") == 13, r["checks"]


def test_naive_softmax_loses_the_stability_points_with_a_hint(submission):
    naive = (
        (SOLUTIONS / "ch01/s1_11_softmax.py")
        .read_text()
        .replace("    shifted = x - x.amax(dim=dim, keepdim=True)\n", "    shifted = x\n")
    )
    r = grade(submission({"s1_11_softmax": naive}), "-e", "s1_11_softmax")
    by_name = {c["name"]: c for c in checks_of(r, "s1_11_softmax")}
    assert by_name["test_large_inputs_stable"]["status"] == "failed"
    assert "NaN" in by_name["test_large_inputs_stable"]["message"]
    assert by_name["test_book_softmax_examples"]["status"] == "passed"


# ---------------------------------------------------------------- archives
def zip_of(folder: Path, target: Path, extra=()) -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as zf:
        for p in sorted(folder.rglob("*.py")):
            zf.write(p, p.relative_to(folder.parent).as_posix())
        for name, data, attr in extra:
            info = zipfile.ZipInfo(name)
            if attr is not None:
                info.external_attr = attr
            zf.writestr(info, data)
    return target


def test_zip_submission_is_graded(tmp_path):
    sub = tmp_path / "exercises"
    shutil.copytree(SOLUTIONS, sub)
    archive = zip_of(sub, tmp_path / "work.zip")
    r = grade(archive, "-e", "s1_11_matmul")
    assert r["score"] == r["max_score"] == 5


@pytest.mark.parametrize(
    "name, attr, reason",
    [
        ("../../evil.py", None, "points outside the archive"),
        ("/tmp/evil-abs.py", None, "absolute path"),
        ("exercises/ch01/link.py", (stat.S_IFLNK | 0o777) << 16, "symbolic link"),
    ],
)
def test_unsafe_zip_is_refused_and_writes_nothing(tmp_path, name, attr, reason):
    sub = tmp_path / "exercises"
    shutil.copytree(SOLUTIONS, sub)
    archive = zip_of(
        sub, tmp_path / "bad.zip", extra=[(name, "print('pwned')\n" if attr is None else "/etc/passwd", attr)]
    )
    before = set(tmp_path.parent.iterdir())
    proc = kata("grade", str(archive), "--json", str(tmp_path / "r.json"))
    assert proc.returncode == 2
    assert reason in proc.stderr and "archive refused" in proc.stderr
    assert not (tmp_path / "r.json").exists()
    assert not Path("/tmp/evil-abs.py").exists() and not (tmp_path.parent / "evil.py").exists()
    assert set(tmp_path.parent.iterdir()) == before


def test_zip_bomb_is_refused(tmp_path):
    archive = tmp_path / "bomb.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("exercises/ch01/s1_11_matmul.py", "#" * (6 * 1024 * 1024))
    proc = kata("grade", str(archive))
    assert proc.returncode == 2 and "zip bomb" in proc.stderr


def test_corrupt_zip_and_missing_path_are_clear_errors(tmp_path):
    bad = tmp_path / "corrupt.zip"
    bad.write_bytes(b"PK\x03\x04 this is not really a zip")
    proc = kata("grade", str(bad))
    assert proc.returncode == 2 and "corrupt.zip" in proc.stderr
    proc = kata("grade", str(tmp_path / "nope"))
    assert proc.returncode == 2 and "no such file or folder" in proc.stderr


def test_symlink_in_folder_submission_is_skipped(tmp_path):
    sub = tmp_path / "exercises"
    shutil.copytree(SOLUTIONS, sub)
    (sub / "ch01/s1_11_matmul.py").unlink()
    os.symlink(SOLUTIONS / "ch01/s1_11_matmul.py", sub / "ch01/s1_11_matmul.py")
    r = grade(sub, "-e", "s1_11_matmul")
    assert r["score"] == 0
    assert any("symbolic link skipped" in n for n in r["notes"])
    assert all("missing from the submission" in c["message"] for c in r["checks"])


def test_unknown_exercise_suggests_the_nearest(tmp_path):
    proc = kata("grade", str(SOLUTIONS), "-e", "s1_11_softmx")
    assert proc.returncode == 2 and "Did you mean s1_11_softmax" in proc.stderr


def test_without_bubblewrap_grading_still_works_and_says_the_sandbox_was_weaker(tmp_path, monkeypatch):
    monkeypatch.setenv("KATA_SANDBOX", "none")  # as on a machine without bwrap
    sub = tmp_path / "sub"
    shutil.copytree(SOLUTIONS, sub)
    r = grade(sub, "-e", "s1_11_softmax", "-e", "s1_12_self_attention")
    assert r["sandbox"] == "limits-only"
    assert r["score"] == r["max_score"] == 24
    proc = kata("grade", str(sub), "-e", "s1_12_context")
    assert "limits only" in proc.stdout
