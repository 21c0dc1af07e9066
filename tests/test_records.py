"""A batch record's typed shape (grader/instructor/batch/records.py): read and written again, every
record is the file it was, byte for byte; a record that is not what a run writes is refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from grader.checking.results import CheckResult
from grader.course import manifest
from grader.instructor.batch import run, store
from grader.instructor.batch.discover import Entry
from grader.instructor.batch.records import (
    STATUSES,
    ExerciseRow,
    Record,
    RecordError,
    Student,
    exercise_rows,
    status_of,
    student_of,
)
from tests.conftest import ROOT, SOLUTIONS, kata

COURSE = manifest.load(ROOT)


def stored(doc: dict) -> str:
    """The text store.write_json writes for `doc`."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def assert_round_trip(doc: dict) -> Record:
    rec = Record.from_json(doc)
    again = rec.to_json()
    assert again == doc and stored(again) == stored(doc)
    assert list(again) == list(doc)  # the keys in their order
    if "student" in doc:
        assert list(again["student"]) == list(doc["student"])
    return rec


def shapes_the_tests_make() -> dict[str, dict]:
    """Every record shape the other tests build by hand, as they build it."""
    from tests import (
        test_class_summary,
        test_late_feedback,
        test_output_injection,
        test_roster_exports,
        test_summary_language,
        test_term,
        test_term_attacks,
        test_term_policy,
    )

    found = {f"class_summary/{k}": v for k, v in test_class_summary.RECORDS.items()}
    found |= {f"summary_language/{k}": v for k, v in test_summary_language.RECORDS.items()}
    found["late_feedback"] = test_late_feedback.record("ann", 40.0)
    found["output_injection/refused"] = test_output_injection._record("=cmd", "why\nline", ["a note"])
    found["output_injection/graded"] = test_output_injection._record("b", status="graded")
    found["roster_exports"] = test_roster_exports.doc(90.0, "alice.zip", platform={"platform": "canvas", "id": "1"})
    found["term"] = test_term.doc(50.0, manifest={"changed": ["ch01/x.py"]})
    found["term/error"] = test_term.doc(0.0, "error")
    found["term_attacks"] = test_term_attacks.doc(0.0, "zevil.zip", status="refused", reason="points outside")
    found["term_policy"] = test_term_policy.record("alice")
    found["no student block"] = {"score": 1, "max_score": 2, "checks": [], "exercises": []}
    return found


@pytest.mark.parametrize("name", sorted(shapes_the_tests_make()))
def test_every_record_shape_the_tests_build_reads_back_as_it_was(name):
    rec = assert_round_trip(shapes_the_tests_make()[name])
    assert rec.status in (None, *STATUSES)


def _report(entry: Entry) -> dict:
    """A graded report's shape (report.to_dict), with one exercise row of each kind."""
    return {
        "schema": 1,
        "kata_version": "0",
        "torch": "2",
        "submission": entry.source,
        "score": 5.0,
        "max_score": 10,
        "sandbox": "bubblewrap",
        "course": {"title": "x"},
        "worker_startup_s": 0.1,
        "duration_s": 1.5,
        "notes": [],
        "manifest": None,
        "lang": "en",
        "exercises": [
            {"id": "s1_11_matmul", "section": "1.11", "title": "t", "score": 5.0, "max_score": 5.0},
            {"id": "s1_11_softmax", "section": "1.11", "title": "t", "score": 0, "max_score": 5.0, "attempted": False},
        ],
        "checks": [
            CheckResult(
                "s1_11_matmul", "1.11", "test_x", "passed", 5.0, 5.0, "", [], "public", 0.5, title="x"
            ).as_dict()
        ],
    }


@pytest.mark.parametrize(
    "how",
    ["graded", "refused", "error", "traceback", "timeout", "died", "platform", "platform refused"],
)
def test_every_record_a_run_writes_reads_back_byte_for_byte(tmp_path, how):
    sub = tmp_path / "class" / "alice"
    shutil.copytree(SOLUTIONS, sub)
    entry = Entry("alice", sub, name="alice", fingerprint="f" * 64)
    if how.startswith("platform"):
        entry.platform = {"platform": "canvas", "id": "51001", "name": "Alice"}
    if how == "platform refused":
        entry.platform["refused"] = "two names"
    message = {
        "graded": {"status": "graded", "doc": _report(entry), "reason": ""},
        "refused": {"status": "refused", "reason": "alice.zip: not a zip file"},
        "error": {"status": "error", "reason": "SandboxUnavailable: no bwrap"},
        "traceback": {"status": "error", "reason": "ValueError: x", "traceback": "Traceback ...\n"},
        "platform": {"status": "graded", "doc": _report(entry), "reason": "ch01/x.py: symbolic link skipped"},
        "platform refused": {"status": "refused", "reason": "two names"},
    }.get(how)
    opts = run.Options(exercises=["s1_11_matmul", "s1_11_softmax"], quiet=True)
    out = tmp_path / "out"
    recorder = run._Recorder(COURSE, opts, out, "c" * 64, run.Outcome())
    recorder.record(entry, message, -9 if how == "died" else None, how == "timeout")
    text = store.record_path(out, "alice").read_text(encoding="utf-8")
    doc = json.loads(text)
    assert stored(Record.from_json(doc).to_json()) == text
    st = student_of(doc)
    assert list(doc["student"]) == [k for k in Student.ORDER if k in doc["student"]]
    assert st.status == ("graded" if how in ("graded", "platform") else "refused" if "refused" in how else "error")
    assert (st.platform is not None) == how.startswith("platform") and "refused" not in (st.platform or {})
    assert (st.traceback is not None) == (how == "traceback")
    assert run._line(entry, doc, 1.0)  # the line said of it reads the typed block


def test_a_record_that_is_not_what_a_run_writes_is_refused():
    good = {"student": {"status": "graded", "source": "a"}, "score": 1.0, "exercises": [{"id": "x"}]}
    Record.from_json(good)
    for bad in (
        [],
        {"student": "alice"},
        {"student": {"source": "a"}},  # no status
        {"student": {"status": "passed"}},  # a check's status, not a record's
        {"student": {"status": "graded", "fingerprint": 7}},
        {"student": {"status": "graded", "platform": "canvas"}},
        {"score": "5"},
        {"max_score": True},
        {"exercises": {"id": "x"}},
        {"exercises": [{"section": "1.1"}]},  # no id
        {"exercises": [{"id": "x", "attempted": "no"}]},
        {"checks": ["test_x"]},
    ):
        with pytest.raises(RecordError):
            Record.from_json(bad)
    assert student_of({"student": {"status": "done"}}) is None and status_of({}) is None  # readers: no block
    with pytest.raises(RecordError):
        exercise_rows({"exercises": [{"id": 1}]})
    assert [e.tried for e in exercise_rows(_report(Entry("a", Path("a"))))] == [True, False]
    assert ExerciseRow.from_json({"id": "x"}).got == 0.0


def test_a_record_kata_grade_writes_for_a_tiny_class_is_unchanged_by_the_round_trip(tmp_path):
    cls = tmp_path / "class"
    (cls / "alice" / "ch01").mkdir(parents=True)
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_matmul.py", cls / "alice" / "ch01")
    (cls / "bob.zip").write_bytes(b"PK\x03\x04 not a zip")
    out = tmp_path / "out"
    proc = kata("grade", str(cls), "--out", str(out), "-e", "s1_11_matmul", "--jobs", "1", "--quiet")
    assert proc.returncode in (0, 1), proc.stderr
    texts = {p.parent.name: p.read_text(encoding="utf-8") for p in (out / store.STUDENTS).glob("*/report.json")}
    assert set(texts) == {"alice", "bob"}
    for name, text in texts.items():
        rec = Record.from_json(json.loads(text))
        assert stored(rec.to_json()) == text, name
    assert status_of(json.loads(texts["alice"])) == "graded" and status_of(json.loads(texts["bob"])) == "refused"


def test_a_record_edited_into_a_status_the_grader_never_gives_is_graded_again(tmp_path):
    """A report.json whose status was edited by hand ("done") is not counted under that status
    nor as graded: the next run grades the student again and writes a record a run writes."""
    cls = tmp_path / "class"
    (cls / "alice" / "ch01").mkdir(parents=True)
    shutil.copy(SOLUTIONS / "ch01" / "s1_11_matmul.py", cls / "alice" / "ch01")
    out = tmp_path / "out"
    args = ("grade", str(cls), "--out", str(out), "-e", "s1_11_matmul", "--jobs", "1", "--quiet")
    assert kata(*args).returncode == 0
    path = out / store.STUDENTS / "alice" / "report.json"
    doc = json.loads(path.read_text(encoding="utf-8"))
    doc["student"]["status"] = "done"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert store.load_records(out) == {}  # not a record a run writes: left out
    proc = kata(*args)
    assert proc.returncode == 0, proc.stderr
    assert "alice: its record in OUT is unreadable or not one kata grade writes" in proc.stdout + proc.stderr
    assert status_of(json.loads(path.read_text(encoding="utf-8"))) == "graded"
    assert "done" not in (out / "summary.md").read_text(encoding="utf-8")
