"""The class summary: a score histogram and each check's failure rate, as PNG and Markdown.

`stats(records)` computes the numbers; `histogram_png` and `failures_png` draw them with
matplotlib's Agg backend (no display, no pyplot state); `markdown` writes summary.md, which
shows both pictures and says, with reasons, which submissions could not be graded and which
entries of the class folder were not submissions.

Every text is the instructor's language (grader/course/messages.py: `kata --lang`, KATA_LANG, the
locale), as the rest of `kata grade`'s output: summary.md always, the figures where matplotlib has
a Chinese font (grader/course/figure_text.py), else in English. What the records hold (names,
exercise ids, check names, statuses in tables, reasons) is shown as it is.
"""

from __future__ import annotations

import statistics
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field

from ...course.figure_text import label, png_bytes, rc_params
from ...course.messages import pick, t
from ...course.safe_text import markdown as md_text
from ..batch.records import NOT_GRADED, exercise_rows, status_of, student_of
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
        status = status_of(doc) or "graded"  # a report without a student block: graded
        s.statuses[status] = s.statuses.get(status, 0) + 1
        if status != "graded":
            continue
        max_score = float(doc.get("max_score", 0))
        s.percents.append(100.0 * float(doc.get("score", 0)) / max_score if max_score else 0.0)
        rows = exercise_rows(doc)
        tried = {e.id for e in rows if e.tried}
        for c in doc.get("checks", []):
            if c.get("exercise", "") not in tried:  # an untouched stub fails every check: no news
                continue
            key = (c.get("exercise", ""), c.get("name", ""))
            r = rates.setdefault(key, CheckRate(key[0], key[1], c.get("visibility", ""), 0, 0))
            r.ran += 1
            r.failed += c.get("status") != "passed"
        for e in rows:
            per_ex[e.id].append(e.got)
            ex_info.setdefault(e.id, {"id": e.id, "section": e.section or "", "max_score": e.out_of})
    s.checks = sorted(rates.values(), key=lambda r: (-r.rate, r.exercise, r.name))
    for ex_id, scores in per_ex.items():
        info = ex_info[ex_id]
        s.exercises.append(
            {
                **info,
                "mean": statistics.fmean(scores),
                "full": sum(x >= info["max_score"] for x in scores) / len(scores),
            }
        )
    return s


def histogram_png(s: Stats, title: str = "") -> bytes:
    """The score histogram, its texts in the figures' language (drawn and saved with its font)."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(rc_params()):  # around the saving too: fonts are looked up when drawing
        fig = Figure(figsize=(6.4, 3.6))
        ax = fig.add_subplot()
        ax.hist(s.percents, bins=[i * 10 for i in range(11)], color="#1a7f37", edgecolor="white")
        ax.set_xlim(0, 100)
        ax.set_xlabel(label("summary_fig_score"))
        ax.set_ylabel(label("summary_fig_submissions"))
        ax.yaxis.get_major_locator().set_params(integer=True)
        n = len(s.percents)
        mean = label("summary_fig_mean", mean=f"{statistics.fmean(s.percents):.0f}") if n else ""
        head = textwrap.shorten(title, 70, placeholder="…") + "\n" if title else ""
        ax.set_title(
            head + label("summary_fig_graded_one" if n == 1 else "summary_fig_graded_many", count=n, mean=mean),
            fontsize=10,
        )
        return png_bytes(fig)


def failures_png(s: Stats, limit: int = 40) -> bytes:
    """The checks most often failed, as bars; texts in the figures' language, check names as they are."""
    import matplotlib
    from matplotlib.figure import Figure

    with matplotlib.rc_context(rc_params()):
        rows = [r for r in s.checks if r.failed][:limit] or s.checks[:1]
        fig = Figure(figsize=(7.5, 0.8 + 0.26 * max(len(rows), 1)))
        ax = fig.add_subplot()
        hidden = label("summary_fig_hidden")
        labels = [
            f"{r.exercise}::{r.name.removeprefix('test_')}" + (hidden if r.visibility == "hidden" else "") for r in rows
        ]
        ax.barh(range(len(rows)), [100 * r.rate for r in rows], color="#cf222e")
        ax.set_yticks(range(len(rows)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xlim(0, 100)
        ax.set_xlabel(label("summary_fig_failed"))
        ax.set_title(label("summary_fig_most_failed" if any(r.failed for r in rows) else "summary_fig_none_failed"))
        return png_bytes(fig)


def _cell(text) -> str:
    """Text from a submission (a name, an entry, a reason, a note) as literal Markdown on one line:
    no link, image, emphasis, HTML tag or table cell of its own (grader/course/safe_text.py)."""
    return md_text(text)


def _status(status: str) -> str:
    """A submission's status for the counts line, in the instructor's language (one the grader does
    not know is shown as recorded)."""
    key = f"summary_status_{status}"
    return t(key) if status in ("graded", "refused", "error") else status


def _visibility(visibility: str) -> str:
    """A check's visibility ("public", "hidden") in the instructor's language."""
    return t(f"summary_visibility_{visibility}") if visibility in ("public", "hidden") else visibility


RECORDED = ("batch_skip_not_submission", "batch_skip_not_regular")  # reasons the grader writes with no fields


def _recorded(reason: str) -> str:
    """A reason as recorded, in the instructor's language where it is one the grader wrote in
    either language (batch.json keeps the language of the run that wrote it)."""
    for key in RECORDED:
        if reason in (t(key, "en"), t(key, "zh")):
            return t(key)
    return reason


def _percent(fraction) -> str:
    """A fraction from similarity.csv as a percentage ("?" when it is not a number)."""
    try:
        return f"{100 * float(fraction):.0f}%"
    except (TypeError, ValueError):
        return "?"


def similarity_lines(rows: list[dict], limit: int = 10) -> list[str]:
    """The Similarity section: the flagged rows of `kata similarity`'s similarity.csv (most alike
    first), the first `limit` of them; the rest are in similarity.md."""
    lines = ["", "## " + t("summary_h_similarity"), ""]
    if not rows:
        return lines + [t("summary_similarity_none")]
    lines += [
        t("summary_similarity_one" if len(rows) == 1 else "summary_similarity_many", count=len(rows)),
        "",
        t("summary_similarity_header"),
        "|---|---|---|---:|---:|",
    ]
    for row in rows[:limit]:
        lines.append(
            f"| {_cell(row.get('exercise', ''))} | {_cell(row.get('student_a', ''))} | "
            f"{_cell(row.get('student_b', ''))} | {_percent(row.get('similarity_a_to_b'))} | "
            f"{_percent(row.get('similarity_b_to_a'))} |"
        )
    if len(rows) > limit:
        lines += ["", t("summary_similarity_more", count=len(rows) - limit)]
    return lines


def markdown(
    records: dict[str, dict],
    s: Stats,
    meta: dict | None = None,
    similarity: list[dict] | None = None,
    attention: list[str] | None = None,
) -> str:
    """summary.md; `similarity`: the flagged rows of OUT's similarity.csv (None: no section);
    `attention`: lines to settle before the grades are used (lms.attention_lines), put first."""
    meta = meta or {}
    n = len(records)
    lines = ["# " + t("summary_title"), ""]
    counts = pick(", ", "，").join(
        t("summary_status_count", count=v, status=_status(k)) for k, v in sorted(s.statuses.items())
    )
    lines.append(
        t(
            "summary_submissions_one" if n == 1 else "summary_submissions_many",
            count=n,
            counts=counts or t("summary_none"),
        )
        + "  "
    )
    if meta:
        lines.append(
            t(
                "summary_meta",
                version=meta.get("kata_version", "?"),
                course=meta.get("course", "?"),
                count=len(meta.get("exercises", [])),
                public=t("summary_public_only") if meta.get("public_only") else "",
            )
        )
    lines += attention or []
    if s.percents:
        p = s.percents
        lines += [
            "",
            t(
                "summary_scores",
                mean=f"{statistics.fmean(p):.1f}",
                median=f"{statistics.median(p):.1f}",
                lowest=f"{min(p):.1f}",
                highest=f"{max(p):.1f}",
            ),
            "",
            f"![{t('summary_alt_histogram')}](histogram.png)",
        ]
    if s.exercises:
        lines += teaching.markdown_lines(records)
    failing = [r for r in s.checks if r.failed]
    lines += ["", "## " + t("summary_h_checks"), "", t("summary_checks_counted")]
    if failing:
        lines += [
            "",
            f"![{t('summary_alt_failures')}](failures.png)",
            "",
            t("summary_checks_header"),
            "|---|---|---|---:|---:|",
        ]
        for r in failing[:CHECK_ROWS]:
            lines.append(
                f"| {r.exercise} | {r.name.removeprefix('test_')} | {_visibility(r.visibility)} | {r.failed}/{r.ran} "
                f"| {100 * r.rate:.0f}% |"
            )
        if len(failing) > CHECK_ROWS:
            lines += ["", t("summary_checks_more", count=len(failing) - CHECK_ROWS)]
    else:
        lines += ["", t("summary_no_check_failed")]
    if similarity is not None:
        lines += similarity_lines(similarity)
    bad = [(name, st) for name, doc in records.items() if (st := student_of(doc)) and st.status in NOT_GRADED]
    if bad:
        lines += ["", "## " + t("summary_h_not_graded"), "", t("summary_not_graded_header"), "|---|---|---|---|"]
        for name, st in bad:
            lines.append(
                f"| {_cell(name)} | {_cell(st.source or '')} | {_cell(_status(st.status))} | "
                f"{_cell(_recorded(st.reason or ''))} |"
            )
        if any(st.status == "error" for _, st in bad):
            lines += ["", t("summary_error_again")]
    stale = sorted(
        name
        for name, doc in records.items()
        if meta.get("course") and (st := student_of(doc)) and st.course not in (None, meta["course"])
    )
    if stale:
        lines += [
            "",
            "## " + t("summary_h_stale"),
            "",
            t("summary_stale", course=meta["course"], names=pick(", ", "、").join(_cell(n) for n in stale)),
        ]
    skipped = meta.get("skipped") or []
    if skipped:
        lines += ["", "## " + t("summary_h_skipped"), "", t("summary_skipped_header"), "|---|---|"]
        for sk in skipped:
            lines.append(f"| {_cell(sk.get('source', ''))} | {_cell(_recorded(sk.get('reason', '')))} |")
    groups = teaching.grouped_notes(records)
    renamed = meta.get("renamed") or []
    if groups or renamed:
        lines += ["", "## " + t("summary_h_notes"), "", t("summary_notes_intro"), ""]
        for r in renamed:
            lines.append(f"- {_cell(r)}")
        for kind, names in groups:
            lines.append(
                "- "
                + t(
                    "summary_note_one" if len(names) == 1 else "summary_note_many",
                    count=len(names),
                    kind=_cell(kind),
                    names=teaching.names_list(names, 10),
                )
            )
    return "\n".join(lines) + "\n"
