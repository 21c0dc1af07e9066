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

Three shapes are read as the platforms write them (`Roster.shape` says which was recognised):
- `canvas`: Canvas's gradebook export (Grades → Export; lib/gradebook_exporter.rb):
  `Student,ID,SIS User ID,SIS Login ID,[Integration ID,][Root Account,]Section,<custom
  columns>,<Title (id)>...,<totals>` (or `LastName,FirstName,...`), a `    Points Possible` row
  (leading spaces) and sometimes a "Manual Posting"/"Muted" row with empty name cells before it.
  A student is keyed on `SIS Login ID`; `ID` is Canvas's user id (canvas_id), `SIS User ID` the
  institution's (id), `Student` the display name ("Last, First"). The Points Possible and
  manual-posting rows and Canvas's "Student, Test" (the test student) are not students. The
  `Title (id)` columns are kept (`assignments`): the assignments canvas.csv may name.
- `moodle`: Moodle's participants download (`First name,Last name,Email address`, plus the
  site's identity fields such as `Username`, `ID number`) and its grade export (Grades → Export →
  Plain text file: `First name,Last name,ID number,Institution,Department,Email address,<items>`).
  Keyed on `Username` when the file has it, else `ID number` when every row has one, else the
  email address's local part.
- `moodle_worksheet`: Moodle's grading worksheet (Assignment → View all submissions → Grading
  action → Download grading worksheet; assignfeedback_offline): `Identifier` (`Participant
  1234501`), `Full name`, `Email address`, `Status`, `Grade`, `Maximum Grade`, `Grade can be
  changed`, `Last modified (submission)`, `Last modified (grade)`, `Feedback comments`. A student
  is keyed on `<Full name>_<participant id>`, the name of their folder in Moodle's "Download all
  submissions"; the participant id (`participant`) matches that download exactly, and the grades
  go back into the same file (lms.moodle_worksheet).
- `plain`: the documented form above.
Moodle 3.x writes `Surname` where Moodle 4 writes `Last name`: both are read.
A `;` or tab separated file (a locale's CSV) is read as such. Every cell is NFC (names.py).
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass, field
from pathlib import Path

from .names import Pairing, loose, nfc, pair

KEY_COLUMNS = ("folder", "login", "username", "student", "entry")
OPTIONAL = {
    "id": ("id", "studentid", "sisuserid", "sisid"),
    "canvas_id": ("canvasid", "canvasuserid"),
    "name": ("name", "fullname", "studentname"),
    "email": ("email", "emailaddress"),
    "section": ("section",),
}
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
    lms_login: str | None = None  # the platform's login (Canvas SIS Login ID, Moodle username); None: `login`
    participant: str = ""  # Moodle's participant id (the grading worksheet's Identifier)
    submitted_raw: str = ""  # the worksheet's "Last modified (submission)" as Moodle wrote it

    @property
    def platform_login(self) -> str:
        return self.login if self.lms_login is None else self.lms_login


@dataclass
class Roster:
    students: list[Student] = field(default_factory=list)
    source: str = ""
    shape: str = "plain"  # canvas | moodle | moodle_worksheet | plain: the export recognised
    key: str = ""  # the column (as the file names it) each student is keyed on
    assignments: list[str] = field(default_factory=list)  # Canvas's `Title (id)` columns
    _seen: dict = field(default_factory=dict, repr=False, compare=False)  # NFC casefolded login -> line
    _alike: dict = field(default_factory=dict, repr=False, compare=False)  # loose login -> line

    def get(self, name: str) -> Student | None:
        key = nfc(name).casefold()
        for s in self.students:
            if nfc(s.login).casefold() == key:
                return s
        return None


def _norm(header: str) -> str:
    return "".join(ch for ch in header.casefold() if ch not in " _-.")


CANVAS_ASSIGNMENT = re.compile(r"^(?P<title>.*\S) \((?P<id>\d+)\)$")
CANVAS_NOT_STUDENTS = ("Points Possible", "Student, Test")  # the Points Possible row; the test student


def _dialect(text: str) -> str:
    """The separator of the header line: `,`, or `;` / tab where a locale's CSV uses them."""
    head = text.split("\n", 1)[0]
    return max((",", ";", "\t"), key=lambda sep: (len(next(csv.reader([head], delimiter=sep), [])), sep == ","))


def _shape(header: list[str]) -> str:
    if "sisloginid" in header and ("student" in header or {"lastname", "firstname"} <= set(header)) and "id" in header:
        return "canvas"
    if {"identifier", "fullname", "grade"} <= set(header):
        return "moodle_worksheet"
    if (
        "firstname" in header
        and ({"lastname", "surname"} & set(header))
        and ({"emailaddress", "idnumber", "username"} & set(header))
    ):
        return "moodle"
    return "plain"


def parse(text: str, source: str = "roster.csv") -> Roster:
    sep = _dialect(text.lstrip("\ufeff"))
    rows = [[nfc(c) for c in row] for row in csv.reader(io.StringIO(text.lstrip("\ufeff")), delimiter=sep)]
    if not rows:
        raise RosterError(f"{source}: empty (a header row is needed: login,id,name,email)")
    header = [_norm(h) for h in rows[0]]
    shape = _shape(header)
    if shape == "canvas":
        return _canvas(rows, header, source)
    if shape == "moodle":
        return _moodle(rows, header, source)
    if shape == "moodle_worksheet":
        return _worksheet(rows, header, source)
    key = next((header.index(k) for k in KEY_COLUMNS if k in header), None)
    if key is None:
        raise RosterError(
            f"{source}:1: no column saying which submission is whose (one of: "
            f"{', '.join(KEY_COLUMNS)}); the header is {', '.join(rows[0]) or 'empty'}"
        )
    where = {name: next((header.index(a) for a in aliases if a in header), None) for name, aliases in OPTIONAL.items()}
    roster = Roster(source=source, shape="plain", key=rows[0][key].strip())
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        cells = {name: _cell(row, i) for name, i in where.items()}
        _add(roster, _cell(row, key), n, rows[0][key], Student("", line=n, **cells))
    return roster


def _cell(row: list[str], i: int | None) -> str:
    return row[i].strip() if i is not None and i < len(row) else ""


def _add(roster: Roster, login: str, n: int, column: str, student: Student) -> None:
    """`student` keyed on `login` (line n), after the checks every shape shares."""
    source, seen, alike = roster.source, roster._seen, roster._alike
    if not login:
        raise RosterError(f"{source}:{n}: the {column.strip()} cell is empty")
    if nfc(login).casefold() in seen:
        raise RosterError(f"{source}:{n}: {login} is already on line {seen[nfc(login).casefold()]}")
    if loose(login) in alike:  # one entry could be either: say so now
        raise RosterError(
            f"{source}:{n}: {login} differs from line {alike[loose(login)]} only in spaces, "
            "punctuation or invisible characters: a submission could be either"
        )
    seen[nfc(login).casefold()] = n
    if loose(login):
        alike[loose(login)] = n
    student.login = login
    roster.students.append(student)


def _canvas(rows: list[list[str]], header: list[str], source: str) -> Roster:
    col = {h: i for i, h in reversed(list(enumerate(header)))}
    roster = Roster(
        source=source,
        shape="canvas",
        key=rows[0][col["sisloginid"]].strip(),
        assignments=[h.strip() for h in rows[0] if CANVAS_ASSIGNMENT.match(h.strip())],
    )
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        if "student" in col:
            name = _cell(row, col["student"])
        else:
            name = ", ".join(x for x in (_cell(row, col["lastname"]), _cell(row, col["firstname"])) if x)
        canvas_id, login = _cell(row, col["id"]), _cell(row, col["sisloginid"])
        if name in CANVAS_NOT_STUDENTS and not login:
            continue
        if not name and not canvas_id and not login:  # the "Manual Posting" / "Muted" row
            continue
        if not login:
            raise RosterError(
                f"{source}:{n}: {name or canvas_id} has no SIS Login ID in this Canvas export (ask "
                "your Canvas admin to include SIS data in exports, or add the login by hand)"
            )
        _add(
            roster,
            login,
            n,
            rows[0][col["sisloginid"]],
            Student(
                "",
                id=_cell(row, col.get("sisuserid")),
                canvas_id=canvas_id,
                name=name,
                section=_cell(row, col.get("section")),
                line=n,
                lms_login=login,
            ),
        )
    return roster


def _moodle(rows: list[list[str]], header: list[str], source: str) -> Roster:
    col = {h: i for i, h in reversed(list(enumerate(header)))}
    body = [(n, row) for n, row in enumerate(rows[1:], 2) if any(cell.strip() for cell in row)]
    if "username" in col:
        key = "username"
    elif "idnumber" in col and all(_cell(row, col["idnumber"]) for _, row in body):
        key = "idnumber"
    elif "emailaddress" in col:
        key = "emailaddress"
    else:
        raise RosterError(
            f"{source}:1: this Moodle export has no Username, no ID number on every line and no "
            "Email address: nothing says which submission is whose"
        )
    label = rows[0][col[key]].strip() + (" (before @)" if key == "emailaddress" else "")
    roster = Roster(source=source, shape="moodle", key=label)
    for n, row in body:
        email = _cell(row, col.get("emailaddress"))
        login = email.partition("@")[0] if key == "emailaddress" else _cell(row, col[key])
        name = " ".join(
            x for x in (_cell(row, col["firstname"]), _cell(row, col.get("lastname", col.get("surname")))) if x
        )
        _add(
            roster,
            login,
            n,
            rows[0][col[key]],
            Student(
                "",
                id=_cell(row, col.get("idnumber")),
                name=name,
                email=email,
                line=n,
                lms_login=_cell(row, col.get("username")),
            ),
        )
    return roster


PARTICIPANT = re.compile(r"(\d+)\s*$")


def _worksheet(rows: list[list[str]], header: list[str], source: str) -> Roster:
    col = {h: i for i, h in reversed(list(enumerate(header)))}
    roster = Roster(source=source, shape="moodle_worksheet", key=rows[0][col["identifier"]].strip())
    seen: dict[str, int] = {}
    for n, row in enumerate(rows[1:], 2):
        if not any(cell.strip() for cell in row):
            continue
        ident = _cell(row, col["identifier"])
        m = PARTICIPANT.search(ident)
        if not m:
            raise RosterError(f"{source}:{n}: {ident!r} is not a participant identifier such as 'Participant 1234501'")
        if m[1] in seen:
            raise RosterError(f"{source}:{n}: participant {m[1]} is already on line {seen[m[1]]}")
        seen[m[1]] = n
        name = _cell(row, col["fullname"])
        _add(
            roster,
            f"{name}_{m[1]}" if name else m[1],
            n,
            rows[0][col["identifier"]],
            Student(
                "",
                name=name,
                email=_cell(row, col.get("emailaddress")),
                line=n,
                lms_login="",
                participant=m[1],
                submitted_raw=_cell(row, col.get("lastmodified(submission)")),
            ),
        )
    return roster


WORKSHEET_TIMES = ("%A, %d %B %Y, %I:%M %p", "%A, %d %B %Y, %H:%M", "%d %B %Y, %I:%M %p", "%d %B %Y, %H:%M")


def worksheet_time(raw: str, tz) -> str:
    """The worksheet's "Last modified (submission)" (Moodle writes it in the downloading user's time
    zone, without an offset: `Tuesday, 14 March 2027, 11:58 PM`) as ISO UTC, read in `tz` (a
    tzinfo: the due date's offset); "" when it is no time (`-`, another language's words)."""
    from datetime import datetime, timezone

    text = " ".join(raw.split())
    for fmt in WORKSHEET_TIMES:
        try:
            return datetime.strptime(text, fmt).replace(tzinfo=tz).astimezone(timezone.utc).isoformat()
        except ValueError:
            continue
    return ""


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
        line = data[: e.start].count(b"\n") + 1
        raise RosterError(f"{path}:{line}: not UTF-8 text (save it as CSV UTF-8)") from None
    return parse(text, str(path))


@dataclass
class Match:
    enrolled: list[tuple[Student, str | None]]  # roster order: (student, batch name or None: missing or contested)
    unknown: list[str]  # batch names on no roster line (a claimant of a contested line too)
    pairing: Pairing = field(default_factory=Pairing)  # how they were matched: contested lines, look-alikes
    shared: dict[str, str] = field(default_factory=dict)  # login -> the group submission (Gradescope) it shares
    doubts: dict[str, str] = field(default_factory=dict)  # login -> why a platform id naming it was not believed

    @property
    def missing(self) -> list[Student]:
        return [
            s
            for s, name in self.enrolled
            if name is None and s.login not in self.pairing.contested and s.login not in self.shared
        ]


def platform_owner(roster: Roster, identity: dict) -> list[Student]:
    """The roster's students a platform download's identity names (batch/platforms.py): Canvas's
    user id is the gradebook export's ID, Moodle's participant id the worksheet's Identifier; a
    Gradescope submitter's SID or email is the roster's id or email. [] when the identity names
    none (then the folder's name is matched as any other)."""
    kind, pid = identity.get("platform"), str(identity.get("id") or "")
    if kind == "canvas" and pid:
        return [s for s in roster.students if s.canvas_id == pid]
    if kind == "moodle" and pid:
        found = [s for s in roster.students if s.participant == pid]
        name = str(identity.get("name") or "")
        if found and name and found[0].name and loose(name) != loose(found[0].name):  # another assignment's sheet?
            from ...course.messages import t

            raise Conflict(found, t("roster_name_differs", id=pid, folder=name, line=found[0].name))
        return found
    if kind == "gradescope":
        found = []
        for m in identity.get("members") or [identity]:
            sid, email = str(m.get("sid") or ""), str(m.get("email") or "").casefold()
            by_sid = [s for s in roster.students if sid and s.id == sid]
            by_email = [s for s in roster.students if email and s.email.casefold() == email]
            if by_sid and by_email and by_sid != by_email:  # a submitter's SID is one student's, the email another's
                from ...course.messages import t

                raise Conflict(
                    [*by_sid, *by_email],
                    t("roster_sid_email", sid=sid, email=email, first=by_sid[0].login, second=by_email[0].login),
                )
            found += by_sid or by_email
        return [s for i, s in enumerate(found) if s not in found[:i]]
    return []


class Conflict(Exception):
    """A platform identity that names two roster students at once (a Gradescope submitter whose SID
    is one student's and whose email another's): the entry gets neither; both lines are contested."""

    def __init__(self, students: list[Student], why: str):
        super().__init__(why)
        self.students, self.why = students, why


def match(roster: Roster, entries: dict[str, str] | list[str], ids: dict[str, dict] | None = None) -> Match:
    """`entries`: {batch name: the entry's own name in DIR} (names.own_name), or batch names that
    are their own names; `ids`: {batch name: its platform identity} for the entries of a platform's
    download, matched on the platform's ids first (platform_owner): a student two entries name is
    contested, as a line two names claim."""
    if not isinstance(entries, dict):
        entries = {n: n for n in entries}
    by_id: dict[str, list[str]] = {}
    group: dict[str, list[str]] = {}  # a Gradescope group's other submitters: login -> the entries naming them
    conflicts: dict[str, list[str]] = {}
    doubts: dict[str, str] = {}  # login -> why an id that names it cannot be taken at its word
    for name, identity in (ids or {}).items():
        try:
            owners = platform_owner(roster, identity or {}) if name in entries else []
        except Conflict as c:
            for s in c.students:
                conflicts.setdefault(s.login, []).append(name)
                doubts[s.login] = c.why
            continue
        if owners:
            by_id.setdefault(owners[0].login, []).append(name)
        for other in owners[1:]:
            group.setdefault(other.login, []).append(name)
    claimed = {n for names in [*by_id.values(), *conflicts.values()] for n in names}
    rest = {n: own for n, own in entries.items() if n not in claimed}
    p = pair(
        [
            s.login
            for s in roster.students
            if s.login not in by_id and s.login not in group and s.login not in conflicts
        ],
        rest,
    )
    for login, names in conflicts.items():  # named by an identity that also names another student: nobody's
        p.contested[login] = [*names, *by_id.pop(login, []), *group.pop(login, [])]
    for login, names in by_id.items():
        if len(names) == 1 and login not in group:
            p.owner[login] = names[0]
        else:
            p.contested[login] = names + group.get(login, [])
    shared = {}
    for login, names in group.items():
        if login in by_id:
            continue
        if len(names) == 1:
            shared[login] = names[0]
        else:
            p.contested[login] = names
    enrolled = [(s, p.owner.get(s.login)) for s in roster.students]
    matched = set(p.owner.values())
    return Match(enrolled, [n for n in entries if n not in matched], p, shared, doubts)


def refusal(roster: Roster, entries: dict[str, str] | list[str], ids: dict[str, dict] | None = None) -> str:
    """Why `roster` cannot be the class's ("" when it can): it matches fewer than half of the
    submissions, or none of its students. The message names the roster, how it was read, and for
    the first unmatched submissions, as Python writes them, the roster login each nearly is
    (names.near_miss), or "no close match": a roster keyed on ID numbers has none for any folder."""
    from ...course.messages import t
    from .names import differ, near_miss

    if not isinstance(entries, dict):
        entries = {n: n for n in entries}
    if not entries or not roster.students:
        return ""
    found = match(roster, entries, ids)
    claimed = {n for names in found.pairing.contested.values() for n in names if n in (ids or {})}
    matched = sum(1 for _, name in found.enrolled if name is not None) + len(claimed)  # by id: this roster's
    if 2 * matched >= len(entries) and matched:
        return ""
    logins = [s.login for s in roster.students]
    near, far = [], []
    for name in found.unknown[:5]:
        own = entries[name]
        best = near_miss(own, logins)  # a real near miss, or none: never the least unlike of strangers
        if best is None:
            far.append(repr(own))
            continue
        near.append(
            f"{own!r} → {best!r}"
            + (f" ({differ(own, best)})" if nfc(own) != best and loose(own) == loose(best) else "")
        )
    if far:
        near.append(t("roster_no_close", names=", ".join(far)))
    return t(
        "roster_refused",
        roster=roster.source,
        shape=t(f"roster_shape_{roster.shape}"),
        column=roster.key,
        matched=matched,
        total=len(entries),
        enrolled=matched,
        students=len(roster.students),
        closest="; ".join(near) or t("roster_refused_none"),
    )
