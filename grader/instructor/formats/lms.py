"""One row per student for the term's gradebooks, and the LMS import files made from them.

`rows(records, meta, roster, times)` joins the graded records with the roster (students on it
without a submission get a "missing" row scoring 0; a line two or more submissions claim is
"contested", scores 0 and goes to none of them; submissions on no roster line are kept and
flagged "not on the roster"; the matching is names.py's) and applies the assignment's late
policy (late.py). Each row's `reason` says, in one line, everything that moved or may move its
score: not graded and why, files changed since `kata submit`, skipped links, lateness, a
roster line it claims without getting it, no usable submission time. One student's record
never stops the others' rows. `attention_lines` puts what to settle first at the top of
summary.md.

The import files, in the columns their platforms document for a gradebook import:
- `canvas.csv`: Canvas's Grades → Import: `Student, ID, SIS User ID, SIS Login ID, Section`,
  then one column named after the assignment; a `Points Possible` row as Canvas's own export
  has. Canvas matches a row by ID, SIS User ID or SIS Login ID (the roster's `canvas_id`, `id`
  and login): give a roster with Canvas's ids for a clean import.
- `moodle.csv`: Moodle's Grades → Import → CSV file: `Email address, Username, ID number,
  Full name`, the grade, and a feedback column (the reason). On import, map "Email address" (or
  Username) to the user and the grade column to the grade item.
Every text cell is one line and one that starts like a formula gets a leading ' (csv_cell); a
cell holding `;` is quoted (csv_text).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...course.messages import pick, t
from ...course.points import pts
from ...course.safe_text import csv_cell, csv_text, one_line
from ..batch.records import status_of, student_of
from . import late as late_mod
from . import names as names_mod
from .roster import Roster, Student, match

NO_RECORD = ("missing", "contested")  # roster lines without a submission of their own
TIMES_FILE = "submitted_at.csv"  # how a reason names the platform's timestamp file (OUT's copy)


@dataclass
class Row:
    name: str  # the batch's name for the student (the roster's login for a missing student)
    status: str  # graded | refused | error | missing | contested (a roster line two submissions claim)
    score: float
    max_score: float
    final: float  # after the late penalty
    reason: str
    student: Student | None = None  # the roster's line (None: no roster, or not on it)
    late: late_mod.Late | None = None
    on_roster: bool = True
    source: str = ""  # the entry's name in the class folder
    claims: str = ""  # a roster login this submission claims without getting it (contested, look-alike)
    loosely: str = ""  # the roster login it got by a look-alike name (case, spaces, punctuation)
    no_time: str = ""  # why it has no usable submission time (late policy not applied)
    extension: str = ""  # the row of the extensions file that is this submission's (its own due date)
    members: tuple = ()  # a Gradescope submission's submitters ({name, sid, email}): each gets its grade
    identity: dict | None = None  # who the student is on the platform whose download was graded (platforms.py)
    doubt: str = ""  # a contested line: why the platform's id that names it was not believed


def reasons(doc: dict) -> list[str]:
    """What a record itself says about its score: not graded and why, skipped links, and files
    that differ from the `kata submit` manifest."""
    student = student_of(doc)
    out = [student.reason] if student is not None and student.reason else []
    m = doc.get("manifest") or {}
    for key, words in (
        ("changed", "changed after kata submit"),
        ("missing", "missing from the kata submit zip"),
        ("added", "added after kata submit"),
    ):
        if m.get(key):
            out.append(f"{words}: {', '.join(map(str, m[key]))}")
    if m.get("error"):
        out.append(f"kata submit manifest unreadable: {m['error']}")
    return out


def _source(doc: dict, name: str) -> str:
    st = student_of(doc)
    return st.source if st is not None and st.source else name


def _quoted(sources: list[str]) -> str:
    """Entries by their names in the class folder, quoted as Python does: ' alice', 'alice' and
    'alice\\u200b' read apart."""
    return ", ".join(repr(s) for s in sources)


def rows(
    records: dict[str, dict],
    meta: dict | None = None,
    roster: Roster | None = None,
    times: dict[str, str] | None = None,
    now=None,
    extensions: dict[str, str] | None = None,
) -> list[Row]:
    """One Row per record (and per roster line without one); `times`: a platform's timestamps
    (late.read_times), used when meta's submitted_at is "file"; `now`: what "the future" is
    measured from (default: now); `extensions`: students' own due dates (late.read_extensions),
    matched to the entries' own names as the timestamps are: a late penalty is measured from the
    student's own due date. One student's record never stops the others' rows."""
    meta = meta or {}
    policy = meta.get("late")
    source = meta.get("submitted_at") or ""
    max_total = next((_float(d.get("max_score")) for d in records.values()), 0.0)
    own = {name: names_mod.own_name(doc, name) for name, doc in records.items()}
    sources = {name: _source(doc, name) for name, doc in records.items()}
    ids = {name: st.platform for name, doc in records.items() if (st := student_of(doc)) and st.platform is not None}
    found = match(roster, own, ids) if roster is not None else None  # once: times, rows and import files agree
    if source == PLATFORM and roster is not None and policy:  # Moodle's worksheet holds the submission times
        records = _worksheet_times(records, roster, found, ids, policy)
    if times is not None and source == "file" and ids:  # a download's rows may name a student by the platform's ids
        times = _times_by_platform(times, own, ids, found)
    timing = names_mod.pair(list(times), own) if times is not None and source == "file" else None
    extended = {e: row for row, e in names_mod.pair(list(extensions), own).owner.items()} if extensions else {}
    out: list[Row] = []
    for name, doc in records.items():
        ext = extended.get(name)
        try:
            own_policy = late_mod.extended(policy, extensions[ext]) if policy and ext is not None else policy
            row = _row(name, doc, own_policy, source, times, timing, sources, now)
            if ext is not None and policy:
                row.reason = "; ".join(x for x in (t("late_extension", due=extensions[ext]), row.reason) if x)
        except Exception as e:  # a record this code cannot read: said in its row, the class still written
            row = Row(
                name,
                "error",
                0.0,
                max_total,
                0.0,
                f"the gradebook cannot read this record ({type(e).__name__}): grade it again with --force",
                source=sources[name],
            )
        row.extension = ext or ""
        if name in ids:
            row.identity = ids[name]
            row.members = tuple(ids[name].get("members") or ())
        out.append(row)
    if roster is not None:
        out = _with_roster(out, found, sources, max_total)
    return out


PLATFORM = "platform"  # --submitted-at platform: the times the platform's own files give (platforms.py)


def _worksheet_times(records: dict, roster: Roster, found, ids: dict, policy: dict) -> dict:
    """`records` with each Moodle submission's time from the grading worksheet's "Last modified
    (submission)" (read in the due date's UTC offset: Moodle writes none) in its platform identity."""
    from ...course.assignments import parse_time
    from .roster import worksheet_time

    if roster.shape != "moodle_worksheet":
        return records
    tz = parse_time(policy["due"]).tzinfo
    line = {name: student for student, name in found.enrolled if name is not None}
    out = dict(records)
    for name, student in line.items():
        ident = ids.get(name)
        if ident is None or ident.get("platform") != "moodle":
            continue
        at = worksheet_time(student.submitted_raw, tz)
        ids[name] = {**ident, "submitted_at": at, "submitted_raw": student.submitted_raw}
        doc = records[name]
        out[name] = {**doc, "student": {**(doc.get("student") or {}), "platform": ids[name]}}
    return out


def _times_by_platform(times: dict, own: dict, ids: dict, found) -> dict:
    """`times` with each row that names a download's submission by the platform's ids (Canvas's user
    id, Moodle's participant id, a Gradescope submitter's SID or email) or by its roster login keyed
    on the submission's own name instead, so that it is matched as any other row. A row that names
    two submissions this way is left as it is (and matches neither)."""
    logins = {name: student.login for student, name in found.enrolled if name is not None} if found else {}
    alias: dict[str, set[str]] = {}
    for name, ident in ids.items():
        keys = {str(ident.get("id") or "")} | {logins.get(name, "")}
        for m in ident.get("members") or [ident]:
            keys |= {str(m.get("sid") or ""), str(m.get("email") or "")}
        for k in keys - {""}:
            alias.setdefault(names_mod.nfc(k).casefold(), set()).add(name)
    owns = {names_mod.nfc(o).casefold() for o in own.values()}
    out = {}
    for key, at in times.items():
        hits = alias.get(names_mod.nfc(key).casefold(), set())
        if len(hits) == 1 and names_mod.nfc(key).casefold() not in owns:
            key = own[next(iter(hits))]
        out[key] = at if key not in out else max(out[key], at)
    return out


def _platform_time(doc: dict) -> tuple[str, str]:
    """(ISO time, "") or ("", why there is none) from the platform's own files: Gradescope's
    `created_at`, Moodle's worksheet; Canvas's download has no time, only its `_LATE` mark: a
    submission Canvas did not mark late is on time, one it marked is untimed (said, exit 5)."""
    ident = (doc.get("student") or {}).get("platform") or {}
    kind = ident.get("platform")
    if ident.get("submitted_at"):
        return late_mod.checked(ident["submitted_at"], t(f"time_source_{kind}"))
    if kind == "canvas":
        return ("", t("time_canvas_late")) if ident.get("late") else ("", "")
    if kind == "moodle":
        raw = ident.get("submitted_raw")
        return "", t("time_moodle_unread", value=repr(raw)) if raw.strip() not in ("", "-") else t("time_moodle_none")
    if kind == "gradescope":
        return "", t("time_gradescope_none")
    return "", t("time_platform_none")


def _float(x) -> float:
    try:
        return float(x or 0)
    except (TypeError, ValueError):
        return 0.0


def _row(name: str, doc: dict, policy: dict | None, source: str, times, timing, sources: dict, now) -> Row:
    score, max_score = float(doc.get("score", 0)), float(doc.get("max_score", 0))
    why = reasons(doc)
    lt, no_time = None, ""
    if policy and source:
        try:
            at, no_time = _time(name, doc, policy, source, times, timing, sources, now)
            lt = late_mod.assess(at, policy)
        except Exception as e:  # never one student's time stopping the class: no time, said so
            lt, no_time = late_mod.Late(), f"{source}: {type(e).__name__}"
        if no_time:
            lt = late_mod.Late()
            why.append(t("late_no_time", why=no_time))
        elif lt.reason:
            why.append(lt.reason)
    final = round(score * (1 - (lt.penalty if lt else 0) / 100), 6)
    return Row(
        name,
        status_of(doc) or "graded",  # a report without a student block: graded
        score,
        max_score,
        final,
        "; ".join(why),
        late=lt,
        source=sources[name],
        no_time=no_time,
    )


def _time(name: str, doc: dict, policy: dict, source: str, times, timing, sources: dict, now) -> tuple[str, str]:
    """(ISO time, "") or ("", why there is no usable one) for the record `name`."""
    if source == PLATFORM:
        return _platform_time(doc)
    if source != "file":
        return late_mod.checked(late_mod.recorded(doc, source), source, policy.get("due"), now)
    if timing is None:
        return "", t("time_none", source=TIMES_FILE)
    row = timing.row_of(name)
    if row is not None:
        return late_mod.checked(times[row], TIMES_FILE)
    contested = timing.contested_row(name)
    if contested is not None:
        return "", t(
            "time_contested",
            source=TIMES_FILE,
            row=contested,
            names=_quoted([sources[n] for n in timing.contested[contested]]),
        )
    if name in timing.lookalike:
        row, owner = timing.lookalike[name]
        return "", t("time_lookalike", source=TIMES_FILE, row=row, owner=_quoted([sources[owner]]))
    if name in timing.ambiguous:
        return "", t(
            "time_ambiguous", source=TIMES_FILE, name=_quoted([sources[name]]), rows=", ".join(timing.ambiguous[name])
        )
    own = names_mod.stem(sources[name])
    near = names_mod.closest(own, list(times))
    hint = t("time_closest", differ=names_mod.differ(own, near[0])) if near else ""
    return "", t("time_no_row", source=TIMES_FILE, name=_quoted([sources[name]])) + hint


def _with_roster(out: list[Row], found, sources: dict, max_total: float) -> list[Row]:
    """The rows in the roster's order (a missing or contested line scoring 0; a Gradescope group's
    other submitters each a copy of the group's row), then those on no line, each saying why."""
    from dataclasses import replace

    p = found.pairing
    by_name = {r.name: r for r in out}
    ordered = []
    for student, name in found.enrolled:
        if name is not None:
            r = by_name[name]
            r.student = student
            r.loosely = student.login if name in p.loosely else ""
            ordered.append(r)
        elif student.login in p.contested:
            claim = p.contested[student.login]
            doubt = found.doubts.get(student.login, "")
            ordered.append(
                Row(
                    student.login,
                    "contested",
                    0.0,
                    max_total,
                    0.0,
                    doubt or t("roster_contested", count=len(claim), names=_quoted([sources[n] for n in claim])),
                    student,
                    doubt=doubt,
                )
            )
        elif student.login in found.shared:
            group = by_name[found.shared[student.login]]
            ordered.append(
                replace(
                    group,
                    name=student.login,
                    student=student,
                    members=(),
                    reason="; ".join(x for x in (t("roster_group", source=_quoted([group.source])), group.reason) if x),
                )
            )
        else:
            ordered.append(Row(student.login, "missing", 0.0, max_total, 0.0, "no submission", student))
    for name in found.unknown:
        r = by_name[name]
        r.on_roster = False
        claim = ""
        login = p.contested_row(name)
        if login is not None:
            r.claims = login
            others = [sources[n] for n in p.contested[login] if n != name]
            claim = t("roster_claimant", login=login, others=_quoted(others)) if others else found.doubts.get(login, "")
        elif name in p.lookalike:
            r.claims, owner = p.lookalike[name]
            claim = t("roster_lookalike", login=r.claims, owner=_quoted([sources[owner]]))
        r.reason = "; ".join(x for x in ("not on the roster", claim, r.reason) if x)
        ordered.append(r)
    return ordered


def _one(text: str) -> str:
    return csv_cell(one_line(text))


def _importable(table: list[Row]) -> list[Row]:
    """The rows an LMS may import: a submission on no roster line has no identity there (it is
    listed in summary.md's "Check before importing" instead), so it never reaches these files,
    where a login made of its folder's name (`ALICE`, or `bob-2` made up for `bob.zip`) could match
    a real student's."""
    return [r for r in table if r.on_roster]


def _login(r: Row, owners: dict[str, int] | None = None) -> str:
    """The login an LMS matches a row on: the roster's; without a roster the folder's own name
    (without .zip), never one the grader made up to keep two entries apart (`bob-2` for `bob.zip`).
    `owners` counts the rows' own names compared loosely (case, spaces, punctuation), as a roster
    line is matched: an own name that another entry shares, even loosely, is contested and no row
    gets it (`bob/` and `bob.zip`; `alice/` and `ALICE/`, which an LMS matching logins ignoring
    case would both give to alice: the seventh outside attack put ALICE's 13/13 on alice's login).
    An entry renamed only because an earlier run's made-up name took its own (`alice-2/`, handed in
    late, graded as `alice-2-2` because `alice.zip` was graded as `alice-2`) keeps its own name."""
    if r.student is not None:
        return r.student.platform_login
    if r.identity:  # a platform's download names no login: its ids stand in the other columns
        return ""
    if not r.source:
        return r.name
    own = names_mod.stem(r.source)
    return own if (owners or {}).get(names_mod.loose(own), 1) == 1 else ""


def _owners(table: list[Row]) -> dict[str, int]:
    """How many rows of a table without a roster have each own name (the folder's, no .zip),
    compared loosely."""
    count: dict[str, int] = {}
    for r in table:
        if r.student is None and r.source:
            own = names_mod.loose(names_mod.stem(r.source))
            count[own] = count.get(own, 0) + 1
    return count


def _as_student(r: Row) -> Student | None:
    """What a platform's download says of a row with no roster line: Canvas's user id (the import's
    ID), a Gradescope submitter's SID and email, the name as the platform wrote it; None otherwise."""
    ident = r.identity
    if not ident:
        return None
    return Student(
        "",
        id=str(ident.get("sid") or ""),
        canvas_id=str(ident.get("id") or "") if ident.get("platform") == "canvas" else "",
        name=str(ident.get("name") or ""),
        email=str(ident.get("email") or ""),
        lms_login="",
    )


def _points_possible(r: Row) -> bool:
    """A row Canvas's importer would take for its Points Possible row (it looks for those words in
    the first cell): written as a student, a second one sets the assignment's points."""
    s = r.student
    return "pointspossible" in names_mod.loose(s.name if s and s.name else r.name).replace("_", "")


def _grade(r: Row, missing: str = "zero") -> str:
    """The grade cell: the final score, two decimals at most; empty for an enrolled student without
    a submission when `missing` is "blank" (--missing blank: the LMS keeps the grade it has)."""
    return "" if r.status == "missing" and missing == "blank" else f"{round(r.final, 2):g}"


def canvas_csv(table: list[Row], column: str, points: float, missing: str = "zero") -> str:
    """`missing`: "zero" (0) or "blank" (an empty cell) for an enrolled student without a submission."""
    lines = [
        ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", _one(column)],
        ["Points Possible", "", "", "", "", f"{points:g}"],
    ]
    owners = _owners(table)
    for r in _importable(table):
        if _points_possible(r):  # never a second Points Possible row (listed at summary.md's top)
            continue
        s = r.student or _as_student(r)
        display = s.name if s and s.name else r.name
        lines.append(
            [
                _one(display),
                _one(s.canvas_id if s else ""),
                _one(s.id if s else ""),
                _one(_login(r, owners)),
                _one(s.section if s else ""),
                _grade(r, missing),
            ]
        )
    return csv_text(lines)


def moodle_csv(table: list[Row], column: str, missing: str = "zero") -> str:
    """`missing` "blank": an enrolled student without a submission gets an empty grade and feedback."""
    lines = [["Email address", "Username", "ID number", "Full name", _one(column), _one(f"{column} (feedback)")]]
    owners = _owners(table)
    for r in _importable(table):
        s = r.student or _as_student(r)
        blank = r.status == "missing" and missing == "blank"
        lines.append(
            [
                _one(s.email if s else ""),
                _one(_login(r, owners)),
                _one(s.id if s else ""),
                _one(s.name if s else ""),
                _grade(r, missing),
                "" if blank else _one(feedback(r)),
            ]
        )
    return csv_text(lines)


def _points_of(r: Row, out_of: float | None) -> str:
    """The row's grade with two decimals, on the platform's scale `out_of` (None: the course's points)."""
    if r.max_score and out_of:
        return f"{round(r.final / r.max_score * out_of, 2):.2f}"
    return f"{round(r.final, 2):.2f}"


def moodle_worksheet(table: list[Row], original: str, missing: str = "zero") -> str:
    """Moodle's grading worksheet (roster shape `moodle_worksheet`) with `Grade` (two decimals, on
    the worksheet's `Maximum Grade`) and a one-line `Feedback comments` filled in, every other cell
    and column as Moodle wrote them, ready for "Upload grading worksheet". A line no submission
    of this run owns (contested), or a missing student's with `missing` "blank", keeps its cells."""
    import csv
    import io

    from .roster import _dialect, _norm

    text = original.lstrip("\ufeff")
    rows = list(csv.reader(io.StringIO(text), delimiter=_dialect(text)))
    header = [_norm(h) for h in rows[0]]
    grade, most = header.index("grade"), header.index("maximumgrade") if "maximumgrade" in header else None
    comments = header.index("feedbackcomments") if "feedbackcomments" in header else None
    by_line = {r.student.line: r for r in table if r.student is not None and r.status != "contested"}
    out = [rows[0]]
    for n, row in enumerate(rows[1:], 2):
        row = list(row) + [""] * (len(rows[0]) - len(row))
        r = by_line.get(n)
        if r is not None and not (r.status == "missing" and missing == "blank"):
            try:
                out_of = float(row[most]) if most is not None and row[most].strip() else None
            except ValueError:
                out_of = None
            row[grade] = _points_of(r, out_of)
            if comments is not None:
                row[comments] = _one(worksheet_comment(r))
        out.append([_one(c) if i in (grade, comments) else _inert(c) for i, c in enumerate(row)])
    return csv_text(out)


def _inert(cell: str) -> str:
    """A cell of the platform's own file kept as it is, unless a spreadsheet would run it: a name
    such as `=HYPERLINK(...)` (a student's Moodle profile) gets the ' every other cell gets."""
    from ...course.safe_text import _formula

    return "'" + cell if _formula(cell) else cell


def worksheet_comment(r: Row) -> str:
    """The one line Moodle's "Feedback comments" shows the student: the autograder's score, and the
    late penalty or that nothing was submitted (feedback)."""
    words = feedback(r)
    if r.status == "missing":
        return words
    if r.status in ("refused", "error"):
        return t("lms_comment_not_graded")
    score = t("lms_comment_score", score=f"{round(r.score, 2):g}", max=f"{round(r.max_score, 2):g}")
    return f"{score}; {words}" if words else score


def gradescope_csv(table: list[Row], missing: str = "zero") -> str:
    """Scores for Gradescope, in the columns of its own grade export (`Name, SID, Email, Total
    Score`), one line per submitter of each submission (a group's members each get the group's
    grade), for an assignment whose scores are entered from a spreadsheet. Only rows that came from
    Gradescope's "Export Submissions" (their record carries the submitters) or a roster line."""
    lines = [["Name", "SID", "Email", "Total Score"]]
    seen: set[tuple[str, str]] = set()
    for r in _importable(table):
        if r.status == "contested":
            continue
        # with a roster each submitter has a row of their own (a group's others: a copy of the group's)
        members = (
            [{"name": r.student.name, "sid": r.student.id, "email": r.student.email}] if r.student else list(r.members)
        )
        for m in members:
            key = (m.get("sid") or "", (m.get("email") or "").casefold())
            if not any(key) or key in seen:
                continue
            seen.add(key)
            lines.append(
                [
                    _one(m.get("name", "")),
                    _one(m.get("sid", "")),
                    _one(m.get("email", "")),
                    "" if r.status == "missing" and missing == "blank" else f"{round(r.final, 2):.2f}",
                ]
            )
    return csv_text(lines)


def feedback(r: Row) -> str:
    """What the LMS's feedback column shows the student: the late penalty or that nothing was
    submitted, in the student's terms; never the instructor's diagnostics (roster matching,
    submission times that could not be used, changed files): those are in gradebook.csv."""
    if r.status == "missing":
        return t("lms_feedback_missing")
    if r.late is not None and r.late.days and not r.no_time:
        return t("lms_feedback_late", days=r.late.days, penalty=pts(r.late.penalty))
    return ""


def late_page(r: Row | None, meta: dict | None = None) -> dict | None:
    """What a student's feedback.html shows of the late policy (grader/reports/report_html.py): when
    the submission came in, the due time, the days late, the penalty and the grade the LMS files
    give (`final`, of `max_score`); None when no penalty was applied (on time, no usable time)."""
    if r is None or r.late is None or not r.late.days or r.no_time or r.status in NO_RECORD:
        return None
    policy = (meta or {}).get("late") or {}
    return {
        "submitted_at": r.late.submitted_at,
        "due": r.late.due or policy.get("due", ""),
        "late_days": r.late.days,
        "late_penalty": r.late.penalty,
        "max_days": policy.get("max_days"),
        "score": r.score,
        "final": r.final,
        "max_score": r.max_score,
    }


EXIT_CHECK = 5  # `kata grade`/`kata gradebook`: the LMS files were written, but check before importing them


@dataclass
class Lms:
    """What the LMS files are made from besides the table: the roster as read, the column."""

    roster: Roster | None = None
    column: str = ""  # canvas.csv's assignment column
    entries: int = 0  # submissions in the class folder
    extensions: dict | None = None  # the students' own due dates (late.read_extensions), by the file's names
    extensions_name: str = ""  # the file given to --extensions (what summary.md calls it)


def gate(table: list[Row], meta: dict | None = None, lms: Lms | None = None) -> list[str]:
    """What makes canvas.csv and moodle.csv unsafe to import as they are, one Markdown line each
    ([] when they are safe): graded work that reaches no LMS row, a roster line claimed twice, a
    look-alike, a late policy that could not be applied, times the students control, a Canvas
    column that names no assignment of the Canvas export, a row Canvas would take for Points
    Possible."""
    meta, lms = meta or {}, lms or Lms()
    contested = [r for r in table if r.status == "contested"]
    lookalikes = [r for r in table if r.claims and r.claims not in {c.name for c in contested}]
    doubted = [r for r in contested if r.doubt]
    contested = [r for r in contested if not r.doubt]
    not_graded = [r for r in _importable(table) if r.status in ("refused", "error")]
    unknown = [r for r in table if not r.on_roster and not r.claims]
    untimed = [r for r in table if r.no_time]
    source, policy = meta.get("submitted_at") or "", meta.get("late")
    out: list[str] = []
    if unknown:
        roster = lms.roster
        logins = [s.login for s in roster.students] if roster else []
        out += ["", t("gate_unknown", count=len(unknown)), ""]
        for r in unknown:
            near = names_mod.closest(names_mod.stem(r.source or r.name), logins)
            hint = (
                t(
                    "gate_closest",
                    login=_md(near[0]),
                    differ=_md(names_mod.differ(names_mod.stem(r.source or r.name), near[0])),
                )
                if near
                else ""
            )
            out.append(f"- {_md(repr(r.source or r.name))} (→ {_md(r.name)}){hint}")
    if not_graded:  # a 0 in the LMS files for work handed in: look first (a refused zip, the grader's failure)
        out += ["", t("gate_not_graded", count=len(not_graded)), ""]
        out += [f"- {_md(r.name)}: {_md(r.reason)}" for r in not_graded]
    if doubted:
        out += ["", t("gate_doubted"), ""]
        out += [f"- {_md(r.name)}: {_md(r.doubt)}" for r in doubted]
    if contested:
        out += ["", t("gate_contested"), ""]
        for r in contested:
            who = [c for c in table if c.claims == r.name]
            out.append(
                f"- {_md(r.name)}: "
                + ", ".join(t("gate_graded_as", source=_md(repr(c.source)), name=_md(c.name)) for c in who)
            )
    if lookalikes:
        out += ["", t("gate_lookalikes"), ""]
        for r in lookalikes:
            out.append(
                "- "
                + t(
                    "gate_lookalike",
                    source=_md(repr(r.source)),
                    name=_md(r.name),
                    login=_md(r.claims),
                    differ=_md(names_mod.differ(names_mod.stem(r.source), r.claims)),
                )
            )
    if untimed:
        out += ["", t("gate_untimed_one" if len(untimed) == 1 else "gate_untimed_many", count=len(untimed)), ""]
        for r in untimed:
            out.append(f"- {_md(r.name)}: {_md(r.no_time)}")
    if policy and source in late_mod.STUDENT_SET:
        out += ["", t("gate_student_times", source=source, words=t(f"gate_source_{source}"))]
    if source and not policy:  # times given, but no due date to measure them from: nobody's penalty applied
        out += ["", t("gate_times_no_due", source=_md(TIMES_FILE if source == "file" else source))]
    out += _extension_problems(table, policy, lms)
    roster = lms.roster
    if roster is not None and roster.shape == "canvas" and lms.column and lms.column not in roster.assignments:
        out += [
            "",
            t(
                "gate_canvas_column",
                column=_md(lms.column),
                roster=_md(roster.source),
                known=", ".join(_md(a) for a in roster.assignments) or "-",
            ),
        ]
    pp = [r for r in _importable(table) if _points_possible(r)]
    if pp:
        out += ["", t("gate_points_possible", names=", ".join(_md(repr(r.source or r.name)) for r in pp))]
    return out


def _extension_problems(table: list[Row], policy: dict | None, lms: Lms) -> list[str]:
    """gate's lines on the extensions file: given with no due date (none applied), and its rows that
    match no submission (as the timestamps are matched) and no roster line, with the closest name."""
    ext = lms.extensions or {}
    if not ext:
        return []
    name = _md(lms.extensions_name or "extensions.csv")
    out = ["", t("gate_extensions_no_due", file=name, count=len(ext))] if not policy else []
    used = {r.extension for r in table if r.extension}
    left = [k for k in ext if k not in used]
    logins = [s.login for s in lms.roster.students] if lms.roster is not None else []
    if left and logins:  # an enrolled student without a submission: nothing to penalise, nothing wrong
        enrolled = names_mod.pair(left, {login: login for login in logins}).owner
        left = [k for k in left if k not in enrolled]
    if left:
        known = [names_mod.stem(r.source) for r in table if r.source] + logins
        out += ["", t("gate_extensions_unmatched", count=len(left), file=name), ""]
        for k in left:
            near = names_mod.closest(k, known)
            hint = (
                t("gate_extension_closest", name=_md(near[0]), differ=_md(names_mod.differ(k, near[0]))) if near else ""
            )
            out.append(f"- {_md(repr(k))}{hint}")
    return out


def overview(table: list[Row], meta: dict | None = None, lms: Lms | None = None) -> list[str]:
    """What goes to the LMS, for the top of summary.md and the console: the roster's shape and
    match rate, who is missing (0 in the LMS files), late penalties applied ([] when neither a
    roster nor a late policy is in play)."""
    meta, lms = meta or {}, lms or Lms()
    out: list[str] = []
    roster = lms.roster
    if roster is not None:
        submitted = list({r.source or r.name: r for r in table if r.status not in NO_RECORD}.values())  # a group once
        matched = [r for r in submitted if r.on_roster]
        out.append(
            "- "
            + t(
                "gate_roster",
                roster=_md(roster.source),
                shape=t(f"roster_shape_{roster.shape}"),
                column=_md(roster.key),
                matched=len(matched),
                total=len(submitted),
                enrolled=len(roster.students),
            )
        )
        missing = [r for r in table if r.status == "missing"]
        if missing:
            key = "gate_missing_blank" if late_mod.missing_of(meta) == "blank" else "gate_missing"
            out.append(
                "- "
                + t(
                    key,
                    count=len(missing),
                    names=", ".join(_md(r.name) for r in missing[:20]) + (", …" if len(missing) > 20 else ""),
                )
            )
    if meta.get("late"):
        late = [r for r in table if r.late is not None and r.late.penalty and r.on_roster]
        out.append(
            "- "
            + t(
                "gate_penalties",
                count=len(late),
                names=", ".join(f"{_md(r.name)} (-{pts(r.late.penalty)}%)" for r in late[:20])
                + (", …" if len(late) > 20 else "")
                or "-",
            )
        )
        extended = [r for r in table if r.extension and r.late is not None and r.late.due]
        if extended:
            out.append(
                "- "
                + t(
                    "gate_extensions",
                    count=len(extended),
                    names=", ".join(f"{_md(r.name)} ({_md(r.late.due)})" for r in extended[:20])
                    + (", …" if len(extended) > 20 else ""),
                )
            )
    if lms.column:
        out.append("- " + t("gate_column", column=_md(lms.column)))
    return out


def attention_lines(table: list[Row], meta: dict | None = None, lms: Lms | None = None) -> list[str]:
    """The top of summary.md: what the LMS files hold (overview) and, when they are not safe to
    import as they are, why (gate) under "Check before importing" ([] when nothing is in play)."""
    problems, facts = gate(table, meta, lms), overview(table, meta, lms)
    if problems:
        return ["", "## " + t("gate_title_check"), "", t("gate_intro_check", code=EXIT_CHECK), "", *facts, *problems]
    if facts:
        return ["", "## " + t("gate_title_safe"), "", *facts]
    return []


def _source_words(source: str) -> str:
    """What the submission times of `source` are, in the summary's language."""
    if source in late_mod.STUDENT_SET:
        return t(f"gate_source_{source}")
    return t("summary_source_file", file=TIMES_FILE) if source == "file" else source


def summary_lines(table: list[Row], meta: dict | None = None) -> str:
    """The class summary's section on the roster and lateness (empty when neither is in play), in
    the summary's language (names, logins and times as they are)."""
    meta = meta or {}
    missing = [r for r in table if r.status == "missing"]
    contested = [r for r in table if r.status == "contested"]
    unknown = [r for r in table if not r.on_roster]
    loosely = [r for r in table if r.loosely]
    late = [r for r in table if r.late is not None and r.late.days]
    untimed = [r for r in table if r.no_time]
    sep = pick(", ", "、")
    lines: list[str] = []
    if any(r.student is not None for r in table) or missing:
        claimed = (
            t(
                "summary_roster_contested_one" if len(contested) == 1 else "summary_roster_contested_many",
                count=len(contested),
            )
            if contested
            else ""
        )
        lines += [
            "",
            "## " + t("summary_h_roster"),
            "",
            t(
                "summary_roster_counts",
                submitted=len(table) - len(missing) - len(contested) - len(unknown),
                missing=len(missing),
                unknown=len(unknown),
                contested=claimed,
            ),
        ]
        if missing:
            lines.append(t("summary_roster_missing", names=sep.join(_md(r.name) for r in missing)))
        if unknown:
            lines.append(t("summary_roster_unknown", names=sep.join(_md(r.name) for r in unknown)))
        if loosely:
            lines.append(
                t(
                    "summary_roster_loosely",
                    pairs=sep.join(f"{_md(repr(r.source))} → {_md(r.loosely)}" for r in loosely),
                )
            )
    if meta.get("late"):
        policy = meta["late"]
        source = meta.get("submitted_at")
        lines += ["", "## " + t("summary_h_late"), ""]
        if not source:
            lines.append(t("summary_late_no_times", assignment=policy["assignment"], due=policy["due"]))
        else:
            lines.append(
                t(
                    "summary_late_counts",
                    due=policy["due"],
                    source=source,
                    words=_source_words(source),
                    late=len(late),
                    untimed=len(untimed),
                )
            )
            extended = [r for r in table if r.extension and r.late is not None and r.late.due]
            if extended:
                lines.append(
                    t("summary_late_extensions", names=sep.join(f"{_md(r.name)} ({_md(r.late.due)})" for r in extended))
                )
            max_days = policy.get("max_days")
            for r in late:
                zero = max_days is not None and r.late.days > max_days
                lines.append(
                    t(
                        "summary_late_line_zero" if zero else "summary_late_line",
                        name=_md(r.name),
                        days=r.late.days,
                        penalty=pts(r.late.penalty),
                        max_days=pts(max_days) if max_days is not None else "",
                        submitted=r.late.submitted_at,
                    )
                )
    return "\n".join(lines) + ("\n" if lines else "")


def _md(text: str) -> str:
    from ...course.safe_text import markdown

    return markdown(one_line(text))
