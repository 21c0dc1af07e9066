"""A class as the platform hands it: Canvas's "Download Submissions", Moodle's "Download all
submissions" and Gradescope's "Export Submissions" graded with no renaming, and the grades written
back in the files the platforms import (tests/platform_downloads/README.md cites each shape)."""

from __future__ import annotations

import csv
import io
import shutil
import unicodedata
import zipfile

import pytest

from grader.instructor.batch import platforms
from grader.instructor.formats import roster as roster_mod
from tests.platform_downloads import build
from tests.test_term import kata


def rows(text: str) -> list[dict]:
    return list(csv.DictReader(io.StringIO(text)))


def staged(path, chapter="ch01"):
    """{entry name: (its files, identity, notes)} as the batch would grade them."""
    layout = platforms.recognise(path)
    try:
        with platforms.staged(layout, chapter) as download:
            entries, skipped = download.entries()
            return (
                layout.platform,
                {
                    e.source: (
                        sorted(p.relative_to(e.path).as_posix() for p in e.path.rglob("*") if p.is_file()),
                        e.platform,
                        e.notes,
                    )
                    for e in entries
                },
                skipped,
            )
    finally:
        layout.close()


# ------------------------------------------------------------------------------ recognising them
def test_canvas_flat_files_are_one_submission_per_user_id_the_latest_upload_graded_and_late_recorded(tmp_path):
    kind, found, skipped = staged(build.canvas_download(tmp_path / "dl"))
    assert kind == "canvas" and not skipped
    zoe = unicodedata.normalize("NFC", "brontëzoë_51002")  # NFD on disk, NFC as a name: never stripped
    assert set(found) == {"andersonalice_51001", zoe, "陈伟_51003", "davisdan_51004"}
    files, ident, notes = found[zoe]
    assert files == ["exercises/ch01/s1_02_anatomy.py"] and ident["id"] == "51002"
    assert (tmp_path / "dl" / next(n for n in build.CANVAS_FILES if "900010" in n)).read_bytes() == build.REFERENCE
    assert any("graded the latest (s1_02_anatomy-1.py)" in n for n in notes)
    assert found["陈伟_51003"][0] == ["kata-submission.zip"] and found["陈伟_51003"][1]["late"] is True
    assert any("_LATE" in n for n in found["陈伟_51003"][2])
    assert found["andersonalice_51001"][1]["late"] is False
    assert found["davisdan_51004"][0] == [] and any("text entry" in n for n in found["davisdan_51004"][2])


def test_the_canvas_zip_itself_stages_the_same_submissions_as_its_unzipped_folder(tmp_path):
    folder = build.canvas_download(tmp_path / "dl")
    _, unzipped, _ = staged(folder)
    _, zipped, _ = staged(build.as_zip(folder, tmp_path / "submissions.zip"))
    assert {k: (v[0], v[1]) for k, v in zipped.items()} == {k: (v[0], v[1]) for k, v in unzipped.items()}


def test_canvas_anonymous_grading_names_no_student_but_keeps_one_submission_each(tmp_path):
    d = tmp_path / "dl"
    d.mkdir()
    (d / "anon_Xk3Qz_900001_s1_02_anatomy.py").write_bytes(build.REFERENCE)
    (d / "LATE_anon_Pp9Lm_900002_s1_02_anatomy.py").write_bytes(build.REFERENCE)
    _, found, _ = staged(d)
    assert found["anon_Xk3Qz"][1]["id"] == "" and found["anon_Xk3Qz"][1]["anonymous_id"] == "Xk3Qz"
    assert found["anon_Pp9Lm"][1]["late"] is True


@pytest.mark.parametrize("flat", [False, True])
def test_moodle_in_folders_or_flat_is_keyed_on_the_participant_id(tmp_path, flat):
    kind, found, _ = staged(build.moodle_download(tmp_path / "dl", flat=flat))
    assert kind == "moodle"
    assert {k: v[1]["id"] for k, v in found.items()} == {
        "Alice Anderson_1234501": "1234501",
        "Zoë Brontë_1234502": "1234502",
        "陈伟_1234503": "1234503",
        "Dan Davis_1234504": "1234504",
    }
    assert found["陈伟_1234503"][0] == ["kata-submission.zip"]
    assert found["Dan Davis_1234504"][0] == []
    assert any("onlinetext" in n for n in found["Dan Davis_1234504"][2])


def test_gradescope_export_reads_submitters_and_times_from_its_metadata(tmp_path):
    kind, found, _ = staged(build.gradescope_export(tmp_path / "dl"))
    assert kind == "gradescope"
    group = found["Zoë Brontë_submission_777002"][1]
    assert [m["sid"] for m in group["members"]] == ["S1002", "S1004"]
    assert group["submitted_at"] == "2027-03-14T15:58:01+00:00"
    assert found["陈伟_submission_777003"][0] == ["exercises/ch01/s1_02_anatomy.py"]  # a tree in the course's shape


def test_a_folder_mixing_a_platform_download_with_other_entries_is_refused_with_the_reason(tmp_path):
    d = build.canvas_download(tmp_path / "dl")
    shutil.copytree(build.SOLUTIONS, d / "bob")
    with pytest.raises(platforms.PlatformError, match=r"'bob'.*grade them apart"):
        platforms.recognise(d)


def test_a_hostile_download_zip_is_refused_before_anything_is_written(tmp_path):
    z = tmp_path / "submissions.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("andersonalice_51001_900001_s1_02_anatomy.py", build.REFERENCE)
        zf.writestr("../evil_51002_900002_x.py", b"x")
    with pytest.raises(platforms.PlatformError, match=r"\.\."):
        platforms.recognise(z)


# ------------------------------------------------------------------------------ rosters as exported
def test_moodle_3_grades_export_with_surname_is_a_moodle_roster_keeping_id_numbers():
    r = roster_mod.parse(
        "First name,Surname,ID number,Institution,Department,Email address,Username\n"
        "Alice,Anderson,20270001,,,alice@example.edu,alice\n"
    )
    assert r.shape == "moodle"
    assert (r.students[0].login, r.students[0].id, r.students[0].name) == ("alice", "20270001", "Alice Anderson")


def test_the_grading_worksheet_is_a_roster_keyed_on_the_participant():
    r = roster_mod.parse(build.MOODLE_WORKSHEET)
    assert r.shape == "moodle_worksheet" and len(r.students) == 5
    assert r.students[0].participant == "1234501" and r.students[0].login == "Alice Anderson_1234501"
    from datetime import timedelta, timezone

    assert (
        roster_mod.worksheet_time(r.students[2].submitted_raw, timezone(timedelta(hours=8)))
        == "2027-03-17T14:53:00+00:00"
    )


# ------------------------------------------------------------------------------ a term, end to end
def test_a_term_on_canvas_from_its_download_to_canvas_csv_keyed_on_user_ids(tmp_path):
    folder = build.canvas_download(tmp_path / "dl")
    (tmp_path / "roster.csv").write_text(build.CANVAS_ROSTER, encoding="utf-8")
    proc = kata(
        "grade",
        str(build.as_zip(folder, tmp_path / "submissions.zip")),
        "--out",
        str(tmp_path / "out"),
        "-e",
        build.EX,
        "--roster",
        str(tmp_path / "roster.csv"),
        "--lms-assignment",
        "kata week1 (48213)",
    )
    assert 'Canvas\'s "Download Submissions"' in proc.stdout, proc.stdout + proc.stderr
    canvas = {r["ID"]: r for r in rows((tmp_path / "out" / "canvas.csv").read_text(encoding="utf-8"))}
    assert canvas["51001"]["kata week1 (48213)"] == "8" and canvas["51002"]["kata week1 (48213)"] == "8"
    assert canvas["51003"]["SIS Login ID"] == "chen.wei" and canvas["51003"]["kata week1 (48213)"] == "8"
    assert (
        canvas["51004"]["kata week1 (48213)"] == "0" and canvas["51005"]["kata week1 (48213)"] == "0"
    )  # text; nothing
    book = {r["student"]: r for r in rows((tmp_path / "out" / "gradebook.csv").read_text(encoding="utf-8"))}
    assert "Canvas marked it late (_LATE)" in book["陈伟_51003"]["reason"]
    assert "nothing to grade" in book["davisdan_51004"]["reason"]


def test_a_term_on_moodle_fills_the_grading_worksheet_with_late_penalties_from_its_times(tmp_path):
    folder = build.moodle_download(tmp_path / "dl")
    (tmp_path / "worksheet.csv").write_text(build.MOODLE_WORKSHEET, encoding="utf-8")
    proc = kata(
        "grade",
        str(folder),
        "--out",
        str(tmp_path / "out"),
        "-a",
        "week1",
        "-e",
        build.EX,
        "--due",
        build.DUE,
        "--roster",
        str(tmp_path / "worksheet.csv"),
    )
    assert proc.returncode in (0, 1), proc.stderr  # 1: Dan's PDF is not gradable
    sheet = {r["Identifier"]: r for r in rows((tmp_path / "out" / "moodle-worksheet.csv").read_text(encoding="utf-8"))}
    assert list(sheet["Participant 1234501"]) == build.MOODLE_WORKSHEET.splitlines()[0].split(",")  # Moodle's columns
    assert sheet["Participant 1234501"]["Grade"] == "100.00"
    assert sheet["Participant 1234503"]["Grade"] == "70.00"  # 3 days late by the worksheet's own time: -30%
    assert "-30%" in sheet["Participant 1234503"]["Feedback comments"]
    assert sheet["Participant 1234505"]["Grade"] == "0.00"  # enrolled, nothing submitted
    assert sheet["Participant 1234502"]["Last modified (submission)"] == "Sunday, 14 March 2027, 11:58 PM"


def test_a_term_on_gradescope_gives_each_group_member_the_group_grade(tmp_path):
    export = build.gradescope_export(tmp_path / "dl")
    (tmp_path / "roster.csv").write_text(build.GRADESCOPE_ROSTER, encoding="utf-8")
    proc = kata(
        "grade",
        str(export),
        "--out",
        str(tmp_path / "out"),
        "-a",
        "week1",
        "-e",
        build.EX,
        "--due",
        build.DUE,
        "--roster",
        str(tmp_path / "roster.csv"),
    )
    assert 'Gradescope\'s "Export Submissions"' in proc.stdout, proc.stdout + proc.stderr
    scores = [
        (r["SID"], r["Total Score"]) for r in rows((tmp_path / "out" / "gradescope.csv").read_text(encoding="utf-8"))
    ]
    assert sorted(scores) == [
        ("S1001", "100.00"),
        ("S1002", "100.00"),
        ("S1003", "70.00"),
        ("S1004", "100.00"),
        ("S1005", "0.00"),
    ]


# ------------------------------------------------------------------------ the outside attack's breaks
def test_a_canvas_name_ending_in_digits_that_reads_as_another_user_id_is_nobody_s_file(tmp_path):
    """Bob (user 103) whose sortable name is `brownbob_102`: `brownbob_102_103_3_x.py` also reads as
    user 102's. It was graded as José's (102) and Bob scored 0 as missing; now neither gets the file,
    and both rows are refused saying why."""
    d = tmp_path / "dl"
    d.mkdir()
    (d / "garciajose_102_900001_s1_02_anatomy.py").write_bytes(build.STUB)
    (d / "brownbob_102_103_3_s1_02_anatomy.py").write_bytes(build.REFERENCE)
    (d / "andersonalice_101_900002_hw_1_2_s1_02_anatomy.py").write_bytes(build.REFERENCE)  # digits in a file name
    _, found, _ = staged(d)
    assert "more than one user's (102, 103" in found["102"][1]["refused"]
    assert "more than one user's (102, 103" in found["103"][1]["refused"]
    assert "refused" not in found["andersonalice_101"][1]


def test_a_gradescope_submitter_whose_sid_and_email_name_two_students_gives_neither_the_grade(tmp_path):
    ident = {
        "platform": "gradescope",
        "id": "9",
        "members": [{"name": "M", "sid": "S1001", "email": "eve@example.edu"}],
    }
    r = roster_mod.parse(build.GRADESCOPE_ROSTER)
    found = roster_mod.match(r, {"M_submission_9": "M_submission_9"}, {"M_submission_9": ident})
    assert not found.pairing.owner and "M_submission_9" in found.unknown
    assert set(found.pairing.contested) == {"alice.anderson", "eve.evans"}


def test_a_times_file_for_a_download_may_name_students_by_the_platform_s_ids_or_roster_logins(tmp_path):
    """The attack's finding 6: rows keyed on Canvas's user id or the roster's login got 'no row'."""
    from grader.instructor.formats import lms

    records = {
        name: {
            "score": 8,
            "max_score": 8,
            "student": {
                "name": name,
                "source": name,
                "status": "graded",
                "platform": {"platform": "canvas", "id": uid},
            },
        }
        for name, uid in (("andersonalice_51001", "51001"), ("brontëzoë_51002", "51002"))
    }
    times = {"51001": "2027-03-14T12:00:00+00:00", "zoe.bronte": "2027-03-16T12:00:00+00:00"}
    meta = {"late": {"assignment": "week1", "due": build.DUE, "per_day": 10.0}, "submitted_at": "file"}
    table = {r.name: r for r in lms.rows(records, meta, roster_mod.parse(build.CANVAS_ROSTER), times)}
    assert table["andersonalice_51001"].late.days == 0 and not table["andersonalice_51001"].no_time
    assert table["brontëzoë_51002"].late.days == 2


def test_a_moodle_file_uploaded_again_as_name_1_is_the_one_graded(tmp_path):
    """The attack's finding 4: `s1_02_anatomy (1).py` beside the stub was left out and the stub graded."""
    d = tmp_path / "dl" / "José García_2001_assignsubmission_file_"
    d.mkdir(parents=True)
    (d / "s1_02_anatomy.py").write_bytes(build.STUB)
    (d / "s1_02_anatomy (1).py").write_bytes(build.REFERENCE)
    _, found, _ = staged(tmp_path / "dl")
    ((files, _, notes),) = found.values()
    assert files == ["exercises/ch01/s1_02_anatomy.py"]
    layout = platforms.recognise(tmp_path / "dl")
    with platforms.staged(layout, "ch01") as download:
        (entry,), _ = download.entries()
        assert (entry.path / files[0]).read_bytes() == build.REFERENCE
    assert any("graded the latest (s1_02_anatomy (1).py)" in n for n in notes)


def test_names_alike_but_for_case_or_unicode_form_or_one_id_under_two_names_are_never_merged(tmp_path):
    """The attack's finding 5: such copies were merged and one picked with no word."""
    d = tmp_path / "twins"
    d.mkdir()
    (d / "zoë_51002_900002_s1_02_anatomy.py").write_bytes(build.REFERENCE)
    (d / unicodedata.normalize("NFD", "zoë_51002_900002_s1_02_anatomy.py")).write_bytes(build.STUB)
    with pytest.raises(platforms.PlatformError, match="differ only in case or Unicode form"):
        platforms.recognise(d)
    d = tmp_path / "two"
    (d / "Mallory Two_2007_assignsubmission_file_").mkdir(parents=True)
    (d / "Mallory Two_2007_assignsubmission_file_" / "s1_02_anatomy.py").write_bytes(build.REFERENCE)
    (d / "Alice A_2007_assignsubmission_file_").mkdir()
    (d / "Alice A_2007_assignsubmission_file_" / "s1_02_anatomy.py").write_bytes(build.STUB)
    _, found, _ = staged(d)
    (ident,) = [v[1] for v in found.values()]
    assert "comes under two names" in ident["refused"]


def test_two_submissions_naming_one_student_are_contested_not_blamed_on_the_roster():
    """The attack's finding 3: two submissions with one SID stopped the run as 'matches 0 of 2'."""
    r = roster_mod.parse(build.GRADESCOPE_ROSTER)
    ids = {f"s{k}": {"platform": "gradescope", "id": str(k), "members": [{"sid": "S1001"}]} for k in (1, 2)}
    assert roster_mod.refusal(r, {"s1": "s1", "s2": "s2"}, ids) == ""
    assert roster_mod.match(r, {"s1": "s1", "s2": "s2"}, ids).pairing.contested == {"alice.anderson": ["s1", "s2"]}


def test_a_loose_file_named_for_no_exercise_is_said_and_a_kata_notebook_is_graded_by_its_metadata(tmp_path):
    """The second attack's finding 11: `homework.ipynb` scored 0 with nothing in the reason column."""
    import json

    d = tmp_path / "dl"
    d.mkdir()
    nb = {"cells": [], "metadata": {"kata": {"exercise": "s1_02_anatomy"}}, "nbformat": 4, "nbformat_minor": 5}
    (d / "andersonalice_51001_900001_homework.ipynb").write_text(json.dumps(nb))
    (d / "bakerbob_51002_900002_softmax.py").write_bytes(build.REFERENCE)
    layout = platforms.recognise(d)
    with platforms.staged(layout, "ch01", ["s1_02_anatomy", "s1_11_softmax"]) as download:
        entries, _ = download.entries()
        by = {e.source: e for e in entries}
        assert (by["andersonalice_51001"].path / "exercises/ch01/s1_02_anatomy.ipynb").is_file()
        assert any("graded as s1_02_anatomy" in n for n in by["andersonalice_51001"].notes)
        assert any("named for no exercise" in n for n in by["bakerbob_51002"].notes)


def test_lines_an_id_names_but_that_cannot_be_believed_are_checked_before_importing():
    """The second attack's findings 7 and 8: a worksheet naming one participant twice, or another
    name for the download's participant (another assignment's worksheet), put grades on the wrong row."""
    with pytest.raises(roster_mod.RosterError, match="participant 1234501 is already on line 2"):
        roster_mod.parse(build.MOODLE_WORKSHEET + "Participant 1234501,Mallory M,mal@example.edu,,,100.00,Yes,-,-,\n")
    from grader.instructor.formats import lms

    r = roster_mod.parse(build.MOODLE_WORKSHEET.replace("Alice Anderson,alice@", "Mallory M,alice@"))
    rec = {
        "Alice Anderson_1234501": {
            "score": 8,
            "max_score": 8,
            "student": {
                "name": "Alice Anderson_1234501",
                "source": "Alice Anderson_1234501",
                "status": "graded",
                "platform": {"platform": "moodle", "id": "1234501", "name": "Alice Anderson"},
            },
        }
    }
    table = lms.rows(rec, {}, r)
    row = next(x for x in table if x.student and x.student.participant == "1234501")
    assert row.status == "contested" and "is Alice Anderson in the download but Mallory M" in row.doubt
    problems = lms.gate(table, {}, lms.Lms(r))
    assert any("not believed" in line for line in problems)


def test_a_submission_not_graded_is_never_safe_to_import_as_a_zero():
    """The second attack's finding 9: refused submissions gave 0 and 'safe to import'."""
    from grader.instructor.formats import lms

    rec = {
        "bob": {
            "score": 0,
            "max_score": 8,
            "student": {"name": "bob", "source": "bob", "status": "refused", "reason": "bob.zip: not a zip file"},
        }
    }
    problems = lms.gate(lms.rows(rec), {})
    assert any("not graded" in line.lower() for line in problems) and any("not a zip file" in x for x in problems)


def test_the_worksheet_written_back_runs_no_formula_a_student_put_in_their_name():
    """The second attack's m_inj: a Moodle full name `=HYPERLINK(1)` was written back as a live formula."""
    from grader.instructor.formats import lms

    sheet = build.MOODLE_WORKSHEET.replace("Alice Anderson,alice@", "=HYPERLINK(1),\u200b-alice@")
    out = rows(lms.moodle_worksheet([], sheet))
    assert out[0]["Full name"] == "'=HYPERLINK(1)" and out[0]["Email address"] == "'\u200b-alice@example.edu"
    assert out[1]["Last modified (submission)"] == "Sunday, 14 March 2027, 11:58 PM"  # the rest as Moodle wrote it


def test_a_class_folder_with_a_few_names_that_look_like_a_platform_s_is_still_a_class_folder(tmp_path):
    """`carol_2027_03_week1.zip` reads like a Canvas file name; beside most entries that do not,
    the folder is graded as it always was, not refused as a mixed download."""
    cls = tmp_path / "cls"
    for name in ("alice", "bob"):
        shutil.copytree(build.SOLUTIONS, cls / name)
    (cls / "carol_2027_03_week1.zip").write_bytes(build.submit_zip())
    assert platforms.recognise(cls) is None
