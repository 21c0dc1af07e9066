"""The three platforms' bulk downloads of one small class, written in their own shapes (README.md
here cites where each shape comes from). Every download holds the same students:

- Alice Anderson: the reference solution, on time;
- Zoë Brontë (her name in NFD, as macOS writes it): first the stub, then the reference uploaded again
  under the same name (the latest upload must be the one graded);
- 陈伟 (Chen Wei): a `kata submit` zip of the reference, handed in late;
- Dan Davis: something that is not code (a text entry, an online text, a PDF);
- Eve Evans: enrolled, uploaded nothing.

The exercise is s1_02_anatomy (cheap to grade); the rosters are each platform's own export.
"""

from __future__ import annotations

import io
import os
import unicodedata
import zipfile
from pathlib import Path

from tests.conftest import EXERCISES, SOLUTIONS

EX = "s1_02_anatomy"
REFERENCE = (SOLUTIONS / "ch01" / f"{EX}.py").read_bytes()
STUB = (EXERCISES / "ch01" / f"{EX}.py").read_bytes()
NFD_ZOE = unicodedata.normalize("NFD", "Zoë Brontë")
DUE = "2027-03-14T23:59:00+08:00"
ON_TIME, LATE = 1_805_032_000, 1_805_300_000  # 2027-03-14 20:26 +08:00; 2027-03-17 22:53 +08:00


def submit_zip() -> bytes:
    """A `kata submit` zip holding the reference for EX."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr(f"exercises/ch01/{EX}.py", REFERENCE)
    return buf.getvalue()


def _write(path: Path, data: bytes, when: int = ON_TIME) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    os.utime(path, (when, when))


# ----------------------------------------------------------------------------------------- Canvas
CANVAS_FILES = {  # lib/content_zipper.rb: <sortable name, no punctuation, lower>[_LATE]_<user id>_<attachment id>_<name>
    "andersonalice_51001_900001_s1_02_anatomy.py": REFERENCE,
    unicodedata.normalize("NFD", "brontëzoë") + "_51002_900002_s1_02_anatomy.py": STUB,
    unicodedata.normalize("NFD", "brontëzoë") + "_51002_900010_s1_02_anatomy-1.py": REFERENCE,
    "陈伟_LATE_51003_900003_kata-submission.zip": None,  # submit_zip()
    "davisdan_51004_text.html": b"<p>I could not make it work</p>",
}

CANVAS_ROSTER = (  # Grades -> Export (lib/gradebook_exporter.rb), with the assignment's column
    "Student,ID,SIS User ID,SIS Login ID,Section,kata week1 (48213),Current Score\n"
    "    Points Possible,,,,,100,\n"
    '"Anderson, Alice",51001,S1001,alice.anderson,Section A,,\n'
    f'"{NFD_ZOE.split()[1]}, {NFD_ZOE.split()[0]}",51002,S1002,zoe.bronte,Section A,,\n'
    '"陈, 伟",51003,S1003,chen.wei,Section B,,\n'
    '"Davis, Dan",51004,S1004,dan.davis,Section B,,\n'
    '"Evans, Eve",51005,S1005,eve.evans,Section B,,\n'
    '"Student, Test",51999,,,,,\n'
)


def canvas_download(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in CANVAS_FILES.items():
        _write(folder / name, submit_zip() if data is None else data, LATE if "_LATE_" in name else ON_TIME)
    return folder


def as_zip(folder: Path, zip_path: Path) -> Path:
    """The download as the platform serves it: one zip of the folder's files."""
    with zipfile.ZipFile(zip_path, "w") as zf:
        for p in sorted(folder.rglob("*")):
            if p.is_file():
                zf.write(p, p.relative_to(folder).as_posix())
    return zip_path


# ----------------------------------------------------------------------------------------- Moodle
def moodle_download(folder: Path, flat: bool = False) -> Path:
    """mod/assign/locallib.php download_submissions: `<Full name>_<participant id>_assignsubmission_file_`
    as a folder (the default) or as the prefix of each flat file."""
    files = {
        ("Alice Anderson", "1234501"): {f"{EX}.py": REFERENCE},
        (NFD_ZOE, "1234502"): {f"{EX}.py": REFERENCE},
        ("陈伟", "1234503"): {"kata-submission.zip": submit_zip()},
        ("Dan Davis", "1234504"): {"report.pdf": b"%PDF-1.4\n"},
    }
    folder.mkdir(parents=True, exist_ok=True)
    for (name, pid), uploaded in files.items():
        prefix = f"{name}_{pid}_assignsubmission_file_"
        for fname, data in uploaded.items():
            _write(folder / (prefix + fname if flat else f"{prefix}/{fname}"), data)
    online = "Dan Davis_1234504_assignsubmission_onlinetext_"
    _write(folder / (online + "onlinetext.html" if flat else f"{online}/onlinetext.html"), b"<p>see the PDF</p>")
    return folder


MOODLE_WORKSHEET = (  # assignfeedback_offline: Download grading worksheet (times in the teacher's zone, no offset)
    "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
    "Last modified (submission),Last modified (grade),Feedback comments\n"
    "Participant 1234501,Alice Anderson,alice@example.edu,Submitted for grading,,100.00,Yes,"
    '"Sunday, 14 March 2027, 8:26 PM",-,\n'
    f"Participant 1234502,{NFD_ZOE},zoe@example.edu,Submitted for grading,,100.00,Yes,"
    '"Sunday, 14 March 2027, 11:58 PM",-,\n'
    "Participant 1234503,陈伟,chen@example.edu,Submitted for grading,,100.00,Yes,"
    '"Wednesday, 17 March 2027, 10:53 PM",-,\n'
    "Participant 1234504,Dan Davis,dan@example.edu,Submitted for grading,,100.00,Yes,"
    '"Sunday, 14 March 2027, 9:00 PM",-,\n'
    "Participant 1234505,Eve Evans,eve@example.edu,No submission,,100.00,Yes,-,-,\n"
)


# ------------------------------------------------------------------------------------- Gradescope
def gradescope_export(folder: Path) -> Path:
    """Review Grades -> Export Submissions: assignment_<id>_export/ with submission_<id>/ folders and
    submission_metadata.yml (Ruby's YAML: symbol keys)."""
    root = folder / "assignment_4242_export"
    subs = {
        "submission_777001": {f"{EX}.py": REFERENCE},
        "submission_777002": {f"{EX}.py": REFERENCE},
        "submission_777003": {f"exercises/ch01/{EX}.py": REFERENCE},
        "submission_777004": {"notes.txt": b"no code"},
    }
    for sub, uploaded in subs.items():
        for fname, data in uploaded.items():
            _write(root / sub / fname, data)
    meta = f""":submission_777001:
  :submitters:
  - :name: Alice Anderson
    :sid: 'S1001'
    :email: alice@example.edu
  :created_at: 2027-03-14 20:26:40.123456789 +08:00
  :score: 0.0
:submission_777002:
  :submitters:
  - :name: {NFD_ZOE}
    :sid: 'S1002'
    :email: zoe@example.edu
  - :name: Dan Davis
    :sid: 'S1004'
    :email: dan@example.edu
  :created_at: 2027-03-14 23:58:01.000000000 +08:00
  :history:
  - :id: 776990
    :created_at: 2027-03-13 10:00:00.000000000 +08:00
:submission_777003:
  :submitters:
  - :name: 陈伟
    :sid: 'S1003'
    :email: chen@example.edu
  :created_at: 2027-03-17 22:53:20.000000000 +08:00
:submission_777004:
  :submitters:
  - :name: Frank Ford
    :sid: 'S1006'
    :email: frank@example.edu
  :created_at: 2027-03-14 12:00:00.000000000 +08:00
"""
    (root / "submission_metadata.yml").write_text(meta.replace(":submission_", "submission_"), encoding="utf-8")
    return folder


GRADESCOPE_ROSTER = (  # a plain roster with the institution's ids and emails (or Canvas's export)
    "login,id,name,email\n"
    "alice.anderson,S1001,Alice Anderson,alice@example.edu\n"
    f"zoe.bronte,S1002,{NFD_ZOE},zoe@example.edu\n"
    "chen.wei,S1003,陈伟,chen@example.edu\n"
    "dan.davis,S1004,Dan Davis,dan@example.edu\n"
    "eve.evans,S1005,Eve Evans,eve@example.edu\n"
)
