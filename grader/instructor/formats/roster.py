"""The class roster (`--roster FILE`): who is enrolled, and how each student's submission is named.

A CSV file with a header row. One column says which submission is the student's: `folder`,
`login`, `username`, `student` or `entry` (the first of these present), matched with the entry's
own name in DIR without `.zip`/`.ipynb`: exactly, or ignoring case, spaces and punctuation when
that is unambiguous (names.py; never with a name the grader generated, such as `bob-2`).
Optional columns: `id` (or `student_id`, `sis_user_id`, `sis id`: the institution's id),
`canvas_id` (Canvas's own user id, its gradebook's "ID" column), `name` (or
`full name`, `student name`), `email` (or `email address`), `section`. Column names are
compared without case, spaces or underscores. A BOM (Excel's UTF-8) is fine.

`match(roster, entries)` says who is enrolled and graded, who submitted without being on the
roster (unknown), who is on it without a submission (missing: they score 0 in the LMS files),
and which roster lines two or more entries claim (contested: none of them gets the line).
"""
from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from pathlib import Path

from .names import Pairing, loose, pair

KEY_COLUMNS = ("folder", "login", "username", "student", "entry")
OPTIONAL = {"id": ("id", "studentid", "sisuserid", "sisid"), "canvas_id": ("canvasid", "canvasuserid"), "name": ("name", "fullname", "studentname"),
            "email": ("email", "emailaddress"), "section": ("section",)}
MAX_BYTES = 16 * 2**20


class RosterError(ValueError):
    """The roster cannot be used; the message names the file and the line."""


@dataclass
class Student:
    login: str
    id: str = ""
    canvas_id: str = ""
    name: str = ""
    email: str = ""
    section: str = ""
    line: int = 0


@dataclass
class Roster:
    students: list[Student] = field(default_factory=list)
    source: str = ""

    def get(self, name: str) -> Student | None:
        key = name.casefold()
        for s in self.students:
            if s.login.casefold() == key:
                return s
        return None


def _norm(header: str) -> str:
    return "".join(ch for ch in header.casefold() if ch not in " _-.")


def parse(text: str, source: str = "roster.csv") -> Roster:
    rows = list(csv.reader(io.StringIO(text.lstrip("\ufeff"))))
    if not rows:
        raise RosterError(f"{source}: empty (a header row is needed: login,id,name,email)")
    header = [_norm(h) for h in rows[0]]
    key = next((header.index(k) for k in KEY_COLUMNS if k in header), None)
    if key is None:
        raise RosterError(f"{source}:1: no column saying which submission is whose (one of: "
                          f"{', '.join(KEY_COLUMNS)}); the header is {', '.join(rows[0]) or 'empty'}")
    where = {name: next((header.index(a) for a in aliases if a in header), None) for name, aliases in OPTIONAL.items()}
    roster, seen, alike = Roster(source=source), {}, {}
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        login = row[key].strip() if key < len(row) else ""
        if not login:
            raise RosterError(f"{source}:{n}: the {rows[0][key]} cell is empty")
        if login.casefold() in seen:
            raise RosterError(f"{source}:{n}: {login} is already on line {seen[login.casefold()]}")
        if loose(login) in alike:  # one entry could be either: say so now
            raise RosterError(f"{source}:{n}: {login} differs from line {alike[loose(login)]} only in spaces, "
                              "punctuation or invisible characters: a submission could be either")
        seen[login.casefold()] = n
        if loose(login):
            alike[loose(login)] = n
        cells = {name: (row[i].strip() if i is not None and i < len(row) else "") for name, i in where.items()}
        roster.students.append(Student(login, line=n, **cells))
    return roster


def read(path: str | Path) -> Roster:
    path = Path(path)
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_BYTES + 1)
    except OSError as e:
        raise RosterError(f"{path}: cannot be read: {e.strerror or e}") from None
    if len(data) > MAX_BYTES:
        raise RosterError(f"{path}: larger than {MAX_BYTES // 2**20} MB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[:e.start].count(b"\n") + 1
        raise RosterError(f"{path}:{line}: not UTF-8 text (save it as CSV UTF-8)") from None
    return parse(text, str(path))


@dataclass
class Match:
    enrolled: list[tuple[Student, str | None]]  # roster order: (student, batch name or None: missing or contested)
    unknown: list[str]  # batch names on no roster line (a claimant of a contested line too)
    pairing: Pairing = field(default_factory=Pairing)  # how they were matched: contested lines, look-alikes

    @property
    def missing(self) -> list[Student]:
        return [s for s, name in self.enrolled if name is None and s.login not in self.pairing.contested]


def match(roster: Roster, entries: dict[str, str] | list[str]) -> Match:
    """`entries`: {batch name: the entry's own name in DIR} (names.own_name), or batch names that
    are their own names."""
    if not isinstance(entries, dict):
        entries = {n: n for n in entries}
    p = pair([s.login for s in roster.students], entries)
    enrolled = [(s, p.owner.get(s.login)) for s in roster.students]
    matched = set(p.owner.values())
    return Match(enrolled, [n for n in entries if n not in matched], p)
