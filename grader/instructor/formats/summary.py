"""The class summary: a score histogram and each check's failure rate, as PNG and Markdown.

`stats(records)` computes the numbers; `histogram_png` and `failures_png` draw them with
matplotlib's Agg backend (no display, no pyplot state); `markdown` writes summary.md, which
shows both pictures and says, with reasons, which submissions could not be graded and which
entries of the class folder were not submissions.
"""
from __future__ import annotations

import io
import statistics
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field

from ...course.safe_text import markdown as md_text
from . import teaching

CHECK_ROWS = 30  # rows of the failure-rate table; the rest are counted


@dataclass
class CheckRate:
    exercise: str
    name: str
    visibility: str
    failed: int
    ran: int

    @property
    def rate(self) -> float:
        return self.failed / self.ran if self.ran else 0.0


@dataclass
class Stats:
    percents: list[float] = field(default_factory=list)  # of graded submissions
    statuses: dict[str, int] = field(default_factory=dict)
    checks: list[CheckRate] = field(default_factory=list)  # worst first
    exercises: list[dict] = field(default_factory=list)  # {"id", "section", "mean", "max_score", "full"}


def stats(records: dict[str, dict]) -> Stats:
    s = Stats()
    rates: dict[tuple, CheckRate] = {}
    per_ex: dict[str, list] = defaultdict(list)
    ex_info: dict[str, dict] = {}
    for doc in records.values():
        status = (doc.get("student") or {}).get("status", "graded")
        s.statuses[status] = s.statuses.get(status, 0) + 1
        if status != "graded":
            continue
        max_score = float(doc.get("max_score", 0))
        s.percents.append(100.0 * float(doc.get("score", 0)) / max_score if max_score else 0.0)
        tried = {e["id"] for e in doc.get("exercises", []) if e.get("attempted", True)}
        for c in doc.get("checks", []):
            if c.get("exercise", "") not in tried:  # an untouched stub fails every check: no news
                continue
            key = (c.get("exercise", ""), c.get("name", ""))
            r = rates.setdefault(key, CheckRate(key[0], key[1], c.get("visibility", ""), 0, 0))
            r.ran += 1
            r.failed += c.get("status") != "passed"
        for e in doc.get("exercises", []):
            per_ex[e["id"]].append(float(e.get("score", 0)))
            ex_info.setdefault(e["id"], {"id": e["id"], "section": e.get("section", ""),
                                         "max_score": float(e.get("max_score", 0))})
    s.checks = sorted(rates.values(), key=lambda r: (-r.rate, r.exercise, r.name))
    for ex_id, scores in per_ex.items():
        info = ex_info[ex_id]
        s.exercises.append({**info, "mean": statistics.fmean(scores),
                            "full": sum(x >= info["max_score"] for x in scores) / len(scores)})
    return s


def _png(fig) -> bytes:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()


def histogram_png(s: Stats, title: str = "") -> bytes:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 3.6))
    ax = fig.add_subplot()
    ax.hist(s.percents, bins=[i * 10 for i in range(11)], color="#1a7f37", edgecolor="white")
    ax.set_xlim(0, 100)
    ax.set_xlabel("score (% of the points)")
    ax.set_ylabel("submissions")
    ax.yaxis.get_major_locator().set_params(integer=True)
    n = len(s.percents)
    mean = f", mean {statistics.fmean(s.percents):.0f}%" if n else ""
    head = textwrap.shorten(title, 70, placeholder="…") + "\n" if title else ""
    ax.set_title(f"{head}{n} graded submission{'s' if n != 1 else ''}{mean}", fontsize=10)
    return _png(fig)


def failures_png(s: Stats, limit: int = 40) -> bytes:
    from matplotlib.figure import Figure

    rows = [r for r in s.checks if r.failed][:limit] or s.checks[:1]
    fig = Figure(figsize=(7.5, 0.8 + 0.26 * max(len(rows), 1)))
    ax = fig.add_subplot()
    labels = [f"{r.exercise}::{r.name.removeprefix('test_')}" + (" (hidden)" if r.visibility == "hidden" else "")
              for r in rows]
    ax.barh(range(len(rows)), [100 * r.rate for r in rows], color="#cf222e")
    ax.set_yticks(range(len(rows)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("failed (% of the submissions that attempted the exercise)")
    ax.set_title("checks most often failed" if any(r.failed for r in rows) else "no check failed")
    return _png(fig)


def _cell(text) -> str:
    """Text from a submission (a name, an entry, a reason, a note) as literal Markdown on one line:
    no link, image, emphasis, HTML tag or table cell of its own (grader/course/safe_text.py)."""
    return md_text(text)


def _percent(fraction) -> str:
    """A fraction from similarity.csv as a percentage ("?" when it is not a number)."""
    try:
        return f"{100 * float(fraction):.0f}%"
    except (TypeError, ValueError):
        return "?"


def similarity_lines(rows: list[dict], limit: int = 10) -> list[str]:
    """The Similarity section: the flagged rows of `kata similarity`'s similarity.csv (most alike
    first), the first `limit` of them; the rest are in similarity.md."""
    lines = ["", "## Similarity", ""]
    if not rows:
        return lines + ["`kata similarity` flagged no pair of students ([similarity.md](similarity.md))."]
    lines += [f"`kata similarity` flagged {len(rows)} pair{'s' if len(rows) != 1 else ''} of submissions whose code "
              "is alike beyond its threshold (the stubs never count): [similarity.md](similarity.md), side by side "
              "in [similarity.html](similarity.html).", "",
              "| exercise | student A | student B | A in B | B in A |", "|---|---|---|---:|---:|"]
    for row in rows[:limit]:
        lines.append(f"| {_cell(row.get('exercise', ''))} | {_cell(row.get('student_a', ''))} | "
                     f"{_cell(row.get('student_b', ''))} | {_percent(row.get('similarity_a_to_b'))} | "
                     f"{_percent(row.get('similarity_b_to_a'))} |")
    if len(rows) > limit:
        lines += ["", f"... and {len(rows) - limit} more in similarity.md."]
    return lines


def markdown(records: dict[str, dict], s: Stats, meta: dict | None = None,
             similarity: list[dict] | None = None, attention: list[str] | None = None) -> str:
    """summary.md; `similarity`: the flagged rows of OUT's similarity.csv (None: no section);
    `attention`: lines to settle before the grades are used (lms.attention_lines), put first."""
    meta = meta or {}
    n = len(records)
    lines = ["# Class summary", ""]
    counts = ", ".join(f"{v} {k}" for k, v in sorted(s.statuses.items()))
    lines.append(f"{n} submission{'s' if n != 1 else ''}: {counts or 'none'}.  ")
    if meta:
        lines.append(f"kata {meta.get('kata_version', '?')}, course {meta.get('course', '?')}; "
                     f"exercises: {len(meta.get('exercises', []))}"
                     + (", public checks only" if meta.get("public_only") else "") + ".")
    lines += attention or []
    if s.percents:
        p = s.percents
        lines += ["", f"Scores of the graded submissions: mean {statistics.fmean(p):.1f}%, "
                      f"median {statistics.median(p):.1f}%, lowest {min(p):.1f}%, highest {max(p):.1f}%.",
                  "", "![score histogram](histogram.png)"]
    if s.exercises:
        lines += teaching.markdown_lines(records)
    failing = [r for r in s.checks if r.failed]
    lines += ["", "## Checks by failure rate", "",
              "Counted over the submissions that attempted the check's exercise."]
    if failing:
        lines += ["", "![per-check failure rate](failures.png)", "",
                  "| exercise | check | visibility | failed | rate |", "|---|---|---|---:|---:|"]
        for r in failing[:CHECK_ROWS]:
            lines.append(f"| {r.exercise} | {r.name.removeprefix('test_')} | {r.visibility} | {r.failed}/{r.ran} "
                         f"| {100 * r.rate:.0f}% |")
        if len(failing) > CHECK_ROWS:
            lines += ["", f"... and {len(failing) - CHECK_ROWS} more checks failed at least once (each student's "
                          "report.json has them all)."]
    else:
        lines += ["", "No check failed."]
    if similarity is not None:
        lines += similarity_lines(similarity)
    bad = [(name, doc["student"]) for name, doc in records.items()
           if (doc.get("student") or {}).get("status") in ("refused", "error")]
    if bad:
        lines += ["", "## Not graded", "", "| student | entry | status | reason |", "|---|---|---|---|"]
        for name, st in bad:
            lines.append(f"| {_cell(name)} | {_cell(st.get('source', ''))} | {_cell(st['status'])} | {_cell(st.get('reason', ''))} |")
        if any(st["status"] == "error" for _, st in bad):
            lines += ["", "Submissions with status `error` are graded again by the next run of the same command."]
    stale = sorted(name for name, doc in records.items()
                   if meta.get("course") and (doc.get("student") or {}).get("course") not in (None, meta["course"]))
    if stale:
        lines += ["", "## Graded with another course version", "",
                  f"These records were graded before the course changed (now {meta['course']}); "
                  f"`kata grade DIR --out OUT --force` grades them again: {', '.join(_cell(n) for n in stale)}."]
    skipped = meta.get("skipped") or []
    if skipped:
        lines += ["", "## Entries that are not submissions", "", "| entry | reason |", "|---|---|"]
        for sk in skipped:
            lines.append(f"| {_cell(sk.get('source', ''))} | {_cell(sk.get('reason', ''))} |")
    groups = teaching.grouped_notes(records)
    renamed = meta.get("renamed") or []
    if groups or renamed:
        lines += ["", "## Notes", "", "Each kind of note once, with the students it concerns; the notes themselves "
                                      "are in each student's report and feedback page.", ""]
        for r in renamed:
            lines.append(f"- {_cell(r)}")
        for kind, names in groups:
            shown = ", ".join(_cell(n) for n in names[:10]) + (f" and {len(names) - 10} more" if len(names) > 10 else "")
            lines.append(f"- {len(names)} student{'s' if len(names) != 1 else ''}: {_cell(kind)} ({shown})")
    return "\n".join(lines) + "\n"
