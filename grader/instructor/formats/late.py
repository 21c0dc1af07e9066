"""When each submission came in, and what an assignment's late policy takes off.

The time of a submission comes from one source, chosen with `--submitted-at`:
- `mtime`: the newest modification time among the entry's files as they sit in the class folder
  (recorded for every submission at grading time). A zip's own time on the host is the time it
  was written there; but files extracted from a student's archive (`unzip`, many "download all"
  folders) keep the times the student's machine wrote, which the student can set to anything:
  not evidence for grades unless the platform writes the files itself;
- `manifest`: the `created` time `kata submit` wrote into its manifest. The student's machine
  wrote it, so it can be edited: use it for practice weeks, not for grades;
- `FILE`: a CSV exported from the submission platform, with a student column (`student`,
  `login`, `folder`, ...) and a time column (`submitted_at`, `timestamp`, `time`, `date`) in ISO
  8601 with its offset or Z (`2027-03-14T23:59:00+08:00`). Its rows are matched to the entries'
  own names in the class folder as the roster is (names.py).

A time that cannot be used is no time: not a time, out of range, and for the student-controlled
sources one in the future or more than a year before the due date (a file restored with its 1980
zip time, a forged manifest). Such a submission, or one with no time at all, gets no late penalty
and a reason saying so (`no submission time: late policy not applied`), and summary.md lists it
at the top. Those bounds only catch impossible times: a plausible backdated time passes.

The policy (course.toml `[[assignment]]`): `late_grace_minutes` after the due time cost nothing;
after that, each started day late costs `late_per_day` percent of the score; more than
`late_max_days` days late scores 0. Students' own reports never change: the penalty is applied
in the gradebook and the LMS files, with the reason written beside it.

The term policy, one for a whole run, its shards and every later `kata gradebook OUT`, is stored
in OUT's batch.json:
- `late_rule`: the assignment's rule and course.toml's due date (None: the run has no assignment);
- `term`: what the instructor gave: `due` (`--due`, on `kata grade` or `kata gradebook`), `missing`
  (`--missing zero|blank`: what canvas.csv and moodle.csv give an enrolled student without a
  submission), `extensions` (`--extensions FILE`, copied into OUT: a student's own due date),
  `assignments` (a due date given with `kata gradebook OUT -a ID` for an assignment the run is not)
  and `later` (the keys a `kata gradebook` set: a merge of shards keeps them over the shards' own);
- `late`: what is applied, from the two (`settle`): the rule with the given due date, else the
  rule's own; None when no due date is known.
An extension is measured with the same rule from the student's own due date (`extended`).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from ...course.assignments import parse_time
from ...course.messages import t
from ...course.safe_text import one_line
from .names import nfc
from .roster import KEY_COLUMNS, _norm

TIME_COLUMNS = ("submittedat", "submissiontime", "timestamp", "time", "date", "submitted")
DUE_COLUMNS = ("due", "dueat", "duedate", "extendeddue", "newdue")  # an extensions file's date column
MISSING = ("zero", "blank")  # --missing: an enrolled student without a submission gets 0, or an empty cell
TERM = ("due", "missing", "extensions")  # what `term` holds that a command gives (--due, --missing, --extensions)
SOURCES = ("mtime", "manifest")
STUDENT_SET = SOURCES  # the sources whose times the student's machine wrote
EARLIEST = timedelta(days=366)  # a student-set time this long before the due date is no submission time
SLACK = timedelta(minutes=5)  # a student-set time this far after now is in the future


class TimesError(ValueError):
    """A timestamp file that cannot be used; the message names the file and line."""


@dataclass
class Late:
    submitted_at: str = ""  # ISO, UTC ("" unknown)
    days: int = 0  # started days late after the grace period (0: on time)
    penalty: float = 0.0  # percent of the score taken off
    reason: str = ""  # "" when on time
    due: str = ""  # the due date it was measured from (the student's own, with an extension)


def rule_of(meta: dict) -> dict | None:
    """The late rule of OUT's run: batch.json's `late_rule`, else (an OUT written before it was
    stored) its late policy."""
    rule = meta.get("late_rule") or meta.get("late")
    return dict(rule) if isinstance(rule, dict) else None


def term_of(meta: dict) -> dict:
    """batch.json's `term` (see the module's docstring); {} when there is none."""
    term = meta.get("term")
    return term if isinstance(term, dict) else {}


def settle(meta: dict) -> dict:
    """Set meta["late"], the policy the gradebook applies, from the run's rule and the due date
    given (`term`'s `due`, else the rule's own from course.toml); None when no due date is known.
    A meta without `late_rule` or `term` (written by hand, or before they were stored) keeps its
    `late` as it is."""
    if "late_rule" not in meta and "term" not in meta:
        return meta
    rule = rule_of(meta)
    due = term_of(meta).get("due") or (rule or {}).get("due")
    meta["late"] = {**rule, "due": due} if rule and due else None
    return meta


def missing_of(meta: dict | None) -> str:
    """What the LMS files give an enrolled student without a submission: "zero" or "blank"."""
    missing = term_of(meta or {}).get("missing")
    return missing if missing in MISSING else "zero"


def extended(policy: dict, due: str) -> dict:
    """`policy` measured from a student's own due date (an extension)."""
    return {**policy, "due": due}


def _student_table(path: Path, columns: tuple[str, ...]) -> tuple[list[list[str]], int | None, int | None]:
    """A CSV's rows, and the columns of its student (roster.KEY_COLUMNS) and of `columns` (None:
    not there); TimesError when it cannot be read as UTF-8 text."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as e:
        raise TimesError(f"{path}: cannot be read: {e}") from None
    rows = list(csv.reader(io.StringIO(text)))
    header = [_norm(h) for h in rows[0]] if rows else []
    who = next((header.index(k) for k in KEY_COLUMNS if k in header), None)
    when = next((header.index(k) for k in columns if k in header), None)
    return rows, who, when


def read_extensions(path: str | Path) -> dict[str, str]:
    """{student (as the file writes it, in NFC, without surrounding spaces): their own due date,
    ISO with its offset} from a CSV with a student column (roster.KEY_COLUMNS: `student`, `login`,
    ...) and `due` (ISO 8601 with its offset or Z). A student on two rows with different dates is
    an error naming both lines; TimesError names the file and line of anything that cannot be used."""
    path = Path(path)
    rows, who, when = _student_table(path, DUE_COLUMNS)
    if who is None or when is None:
        raise TimesError(
            t("extensions_header", file=path, students=", ".join(KEY_COLUMNS), dues=", ".join(DUE_COLUMNS))
        )
    dues: dict[str, str] = {}
    lines: dict[str, int] = {}
    for n, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue
        student = nfc(row[who].strip()) if who < len(row) else ""
        value = row[when] if when < len(row) else ""
        if not student:
            raise TimesError(t("extensions_no_student", file=path, line=n))
        try:
            due = parse_time(value).isoformat()
        except ValueError:
            raise TimesError(t("extensions_bad_due", file=path, line=n, value=one_line(value)[:60])) from None
        if student in dues and parse_time(dues[student]) != parse_time(due):
            raise TimesError(t("extensions_twice", file=path, line=n, student=student, first=lines[student]))
        dues.setdefault(student, due)
        lines.setdefault(student, n)
    return dues


def read_times(path: str | Path) -> dict[str, str]:
    """{student (as the file writes it, in NFC, without surrounding spaces): ISO time in UTC} from
    a platform's CSV export; a student on several rows (several attempts): the latest."""
    path = Path(path)
    rows, who, when = _student_table(path, TIME_COLUMNS)
    if who is None or when is None:
        raise TimesError(
            f"{path}:1: needs a student column ({', '.join(KEY_COLUMNS)}) and a time column ({', '.join(TIME_COLUMNS)})"
        )
    times: dict[str, str] = {}
    for n, row in enumerate(rows[1:], 2):
        if not any(c.strip() for c in row):
            continue
        student = nfc(row[who].strip()) if who < len(row) else ""  # josé in NFD and NFC: one student
        try:
            at = parse_time(row[when]).astimezone(timezone.utc)
        except (ValueError, IndexError):
            raise TimesError(
                f"{path}:{n}: {row[when] if when < len(row) else ''!r} is not a time such as "
                "2027-03-14T23:59:00+08:00 (with its UTC offset)"
            ) from None
        if student and (student not in times or at > datetime.fromisoformat(times[student])):
            times[student] = at.isoformat()
    return times


def recorded(doc: dict, source: str):
    """What the record `doc` holds as its submission time for `source` ("mtime" or "manifest"):
    as written there, not checked (None: nothing)."""
    if source == "mtime":
        return (doc.get("student") or {}).get("mtime") or None
    manifest = doc.get("manifest")
    return (manifest.get("created") or None) if isinstance(manifest, dict) else None


def checked(value, source: str, due: str | None = None, now: datetime | None = None) -> tuple[str, str]:
    """(ISO time in UTC, "") when `value` is a usable submission time from `source`, else ("",
    why not). For the sources the student's machine wrote, a time in the future or more than
    EARLIEST before `due` is not usable."""
    if value is None or value == "":
        return "", t("time_none", source=source)
    shown = one_line(value if isinstance(value, str) else repr(value))[:60]
    try:
        at = parse_time(value).astimezone(timezone.utc)
    except ValueError:
        return "", t("time_bad", source=source, value=shown)
    if source in STUDENT_SET:
        now = now or datetime.now(timezone.utc)
        if at > now + SLACK:
            return "", t("time_future", source=source, value=at.isoformat())
        try:
            early = due is not None and at < parse_time(due) - EARLIEST
        except (ValueError, OverflowError):
            early = False
        if early:
            return "", t("time_early", source=source, value=at.isoformat())
    return at.isoformat(), ""


def assess(at: str, policy: dict) -> Late:
    """What `policy` (Assignment.late_policy()) takes off a submission that came in at `at`
    (a time `checked` passed; "": none, no penalty)."""
    if not at:
        return Late("", 0, 0.0, "")
    due = parse_time(policy["due"])
    late_s = (parse_time(at) - due).total_seconds() - 60 * float(policy.get("grace_minutes") or 0)
    if late_s <= 0:
        return Late(at, due=policy["due"])
    days = math.ceil(late_s / 86400)
    max_days = policy.get("max_days")
    if max_days is not None and days > max_days:
        return Late(at, days, 100.0, f"{days} day(s) late, more than {max_days:g}: 0", policy["due"])
    penalty = min(100.0, days * float(policy.get("per_day") or 0))
    return Late(
        at, days, penalty, f"{days} day(s) late: -{penalty:g}%" if penalty else f"{days} day(s) late", policy["due"]
    )


def newest_mtime(path: Path) -> str:
    """The newest modification time of the regular files in `path` (a file or a folder; links
    are not followed), as ISO UTC; "" when there is none."""
    import os
    import stat

    newest = None
    try:
        st = os.lstat(path)
    except OSError:
        return ""
    if stat.S_ISREG(st.st_mode):
        newest = st.st_mtime
    elif stat.S_ISDIR(st.st_mode):
        for dirpath, dirnames, filenames in os.walk(path, followlinks=False):
            for f in filenames:
                try:
                    s = os.lstat(os.path.join(dirpath, f))
                except OSError:
                    continue
                if stat.S_ISREG(s.st_mode):
                    newest = s.st_mtime if newest is None else max(newest, s.st_mtime)
    try:  # a time past what datetime holds (year 10000) is no time
        return datetime.fromtimestamp(newest, timezone.utc).isoformat() if newest is not None else ""
    except (OverflowError, OSError, ValueError):
        return ""
