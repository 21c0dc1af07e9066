"""`kata submit` through the real command line, and `kata grade` verifying what it wrote."""

import hashlib
import json
import os
import shutil
import time
import zipfile

import pytest

from tests.conftest import ROOT, SOLUTIONS, checks_of, grade, kata

PAIR = ["-e", "s1_11_softmax", "-e", "s1_13_causal_mask"]


@pytest.fixture(scope="module")
def submitted(tmp_path_factory):
    """A course copy where the student solved s1_11_softmax in its .py and s1_13_causal_mask in its
    notebook (the .py still the stub), then ran `kata submit` once (every public check: slow)."""
    base = tmp_path_factory.mktemp("submit")
    for name in ("course.toml", "solutions", "exercises", "ERRATA.md"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, base / name)
    ch = base / "exercises" / "ch01"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PYTHONPATH", str(ROOT))  # `python -m grader` from the copy imports this checkout
        shutil.copy(SOLUTIONS / "ch01" / "s1_11_softmax.py", ch)
        stub = (ch / "s1_13_causal_mask.py").read_bytes()
        shutil.copy(SOLUTIONS / "ch01" / "s1_13_causal_mask.py", ch)
        assert kata("notebook", "s1_13_causal_mask", cwd=base).returncode == 0
        (ch / "s1_13_causal_mask.py").write_bytes(stub)
        stamp = time.time() + 5
        os.utime(ch / "s1_13_causal_mask.ipynb", (stamp, stamp))  # the notebook was saved last
        proc = kata("submit", "--out", "out/mine.zip", cwd=base)
        refused = [kata("submit", "--out", "exercises/ch01/s1_11_softmax.py", "--no-check", cwd=base)]
        (base / "notes.txt").write_text("my notes")
        refused.append(kata("submit", "--out", "notes.txt", "--no-check", cwd=base))
    return base, proc, refused


def test_submit_writes_zip_with_manifest(submitted):
    base, proc, _ = submitted
    assert proc.returncode == 0, proc.stderr
    assert "wrote out/mine.zip: 39 file(s); public checks: 2 of 38 exercises passing" in proc.stdout
    assert "s1_12_context: failing, 0/" in proc.stdout and "s1_11_softmax:" not in proc.stdout
    with zipfile.ZipFile(base / "out" / "mine.zip") as zf:
        names = set(zf.namelist())
        manifest = json.loads(zf.read("kata-manifest.json"))
        contents = {n: zf.read(n) for n in names if n != "kata-manifest.json"}
    assert names == {
        "kata-manifest.json",
        "exercises/ch01/s1_13_causal_mask.ipynb",
        *(f"exercises/{p.relative_to(base / 'exercises').as_posix()}" for p in (base / "exercises").rglob("*.py")),
    }
    assert manifest["kind"] == "kata-submission" and manifest["kata_version"] == "0.1.0"
    assert manifest["created"].endswith("Z") and manifest["created"][:2] == "20"
    assert {n: e["sha256"] for n, e in manifest["files"].items()} == {
        n: hashlib.sha256(d).hexdigest() for n, d in contents.items()
    }
    assert contents["exercises/ch01/s1_11_softmax.py"] == (SOLUTIONS / "ch01" / "s1_11_softmax.py").read_bytes()
    ex = manifest["exercises"]
    assert ex["s1_11_softmax"] == {
        "status": "passing",
        "passed": 4,
        "total": 4,
        "graded": "exercises/ch01/s1_11_softmax.py",
    }
    assert ex["s1_13_causal_mask"]["status"] == "passing"
    assert ex["s1_13_causal_mask"]["graded"] == "exercises/ch01/s1_13_causal_mask.ipynb"
    assert ex["s1_12_context"]["status"] == "failing" and ex["s1_12_context"]["passed"] == 0
    assert sum(e["status"] == "passing" for e in ex.values()) == 2 and len(ex) == 38


def test_submit_never_overwrites_code_or_other_files(submitted):
    base, _, (inside, not_zip) = submitted
    assert inside.returncode == 2 and "inside exercises/" in inside.stderr
    assert (base / "exercises" / "ch01" / "s1_11_softmax.py").read_bytes() == (
        SOLUTIONS / "ch01" / "s1_11_softmax.py"
    ).read_bytes()
    assert not_zip.returncode == 2 and "will not overwrite notes.txt" in not_zip.stderr
    assert (base / "notes.txt").read_text() == "my notes"


def test_grade_verifies_the_manifest(submitted):
    base, _, _ = submitted
    report = grade(base / "out" / "mine.zip", *PAIR)
    assert report["score"] == report["max_score"] > 0  # the notebook was graded, not the stub beside it
    m = report["manifest"]
    assert m["verified"] is True and m["changed"] == m["missing"] == m["added"] == []
    assert m["kata_version"] == "0.1.0" and m["exercises"]["s1_11_softmax"]["status"] == "passing"
    assert any("s1_13_causal_mask.ipynb" in n and "graded the notebook" in n for n in report["notes"])
    proc = kata("grade", str(base / "out" / "mine.zip"), "-e", "s1_11_softmax")
    assert proc.returncode == 0 and "manifest: every file is as `kata submit`" in proc.stdout


def test_files_changed_after_submit_are_named(submitted, tmp_path):
    base, _, _ = submitted
    tampered = tmp_path / "tampered.zip"
    with zipfile.ZipFile(base / "out" / "mine.zip") as src, zipfile.ZipFile(tampered, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "exercises/ch01/s1_11_softmax.py":
                data = data.replace(b"torch.exp(shifted)", b"torch.exp(shifted) * 1.0")
            if info.filename != "exercises/ch01/s1_02_anatomy.py":
                dst.writestr(info, data)
        dst.writestr("exercises/ch01/helper.py", "X = 1\n")
    report = grade(tampered, *PAIR)
    m = report["manifest"]
    assert m["verified"] is False
    assert m["changed"] == ["exercises/ch01/s1_11_softmax.py"]
    assert m["missing"] == ["exercises/ch01/s1_02_anatomy.py"] and m["added"] == ["exercises/ch01/helper.py"]
    notes = "\n".join(report["notes"])
    assert "changed after `kata submit`" in notes and "exercises/ch01/s1_11_softmax.py" in notes
    assert report["score"] == report["max_score"]  # graded all the same


def test_plain_zip_without_manifest_still_grades(tmp_path):
    plain = tmp_path / "plain.zip"
    with zipfile.ZipFile(plain, "w") as zf:
        for p in sorted((SOLUTIONS / "ch01").glob("*.py")):
            zf.write(p, f"ch01/{p.name}")
    report = grade(plain, *PAIR)
    assert report["manifest"] is None and report["score"] == report["max_score"]
    assert not any("manifest" in n for n in report["notes"])
    assert all(c["status"] == "passed" for c in checks_of(report, "s1_11_softmax"))


def test_submit_right_after_kata_check_reuses_its_verdicts(tmp_path, monkeypatch):
    """Verdicts `kata check` gave for the same bytes (and the same bytes of every exercise file they
    imported) are not computed again: only what changed since is checked."""
    from grader.checking import lanes
    from grader.checking.results import GradeResult
    from grader.course import manifest
    from grader.student import progress, submit

    for name in ("course.toml", "solutions", "exercises", "ERRATA.md"):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, tmp_path / name)
    ch = tmp_path / "exercises" / "ch01"
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_softmax.py", ch)
    course = manifest.load(tmp_path)
    checked = ["s1_11_softmax", "s1_17_layer_norm", "s1_23_feed_forward", "s1_23_encoder_block"]
    result, _ = progress.grade(course, [course.get(i) for i in checked])  # what `kata check` does
    by_ex = {i: [r for r in result.results if r.exercise == i] for i in checked}

    asked = []

    def graded_here(course_, sub, exercises, public_only=False, **_):
        asked.append([ex.id for ex in exercises])
        return GradeResult("s", "bubblewrap", [])

    monkeypatch.setattr(lanes, "run", graded_here)
    everything = {ex.id for ex in course.exercises}
    found, _, _ = submit.statuses(course, True, tmp_path)
    assert set(asked[-1]) == everything - set(checked)  # the four checked ones are not run again
    for i in checked:
        rows = by_ex[i]
        passed = sum(r.status == "passed" for r in rows)
        assert (found[i]["passed"], found[i]["total"]) == (passed, len(rows)), i
    assert found["s1_11_softmax"]["status"] == "passing" and found["s1_17_layer_norm"]["status"] == "failing"

    # the feed-forward network is written now: it, and the block that imports it, are checked again
    shutil.copy(SOLUTIONS / "ch01" / "s1_23_feed_forward.py", ch)
    submit.statuses(course, True, tmp_path)
    again = set(checked) - set(asked[-1])
    assert again == {"s1_11_softmax", "s1_17_layer_norm"}, asked[-1]
