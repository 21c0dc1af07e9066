"""The HTML feedback page: `kata check --html FILE`, `kata grade PATH --html FILE`.

`render(doc, figures)` works from report.to_dict's JSON document (schema 1), so a page can be
written again later from a stored report. The page is one self-contained file: inline CSS,
figures as data: URIs, no scripts and nothing fetched from anywhere. Every text that comes
from a submission or a check (messages, titles, notes, paths) is HTML-escaped.

Failures first: right under the score, every check that did not pass, grouped by exercise in
book order, with its message; then the score by section and each exercise, whose passed checks
are folded into a closed `<details>` ("12 passed checks") so that a page of green rows never
stands between the student and what to fix.

`figures`: optional list of grader.reports.figures.Drawn.as_dict() entries
({"exercise", "listings", "name", "title", "png_base64", "error"}), shown under their exercise.
`write_html(course, path, doc, out)` writes the page of one grading with the listings' figures
drawn from the same submission (`kata check --html`, `kata grade --html`).
"""

from __future__ import annotations

import html
from collections import defaultdict
from pathlib import Path

from ..course import atomic
from ..course.messages import language, t

STATUS = {"passed": "✔", "failed": "✘", "skipped": "–"}
MAX_MESSAGE = 8000  # characters of one check's message shown (a report's texts come from the student's code)
MAX_NOTES = 100  # notes shown; the rest are counted

CSS = """
:root { --ok: #1a7f37; --ok-bg: #dafbe1; --bad: #cf222e; --bad-bg: #ffebe9; --skip: #9a6700; --skip-bg: #fff8c5;
        --line: #d0d7de; --muted: #57606a; }
* { box-sizing: border-box; }
body { font: 15px/1.45 system-ui, -apple-system, "Segoe UI", "Noto Sans", "Noto Sans CJK SC", "PingFang SC",
       "Microsoft YaHei", sans-serif; color: #1f2328; background: #fff; margin: 0; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 26px; margin: 0 0 6px; }
h2 { font-size: 20px; margin: 30px 0 10px; padding-bottom: 4px; border-bottom: 2px solid var(--line);
     display: flex; justify-content: space-between; align-items: baseline; }
h3 { font-size: 16px; margin: 0; display: flex; justify-content: space-between; gap: 12px; }
code { font: 13px ui-monospace, "DejaVu Sans Mono", monospace; }
.total { font-size: 20px; margin: 8px 0; }
.meta, .muted { color: var(--muted); font-size: 13px; }
.bar { height: 14px; background: var(--bad-bg); border: 1px solid var(--line); border-radius: 7px; overflow: hidden;
       min-width: 120px; }
.bar > span { display: block; height: 100%; background: var(--ok); }
.warn { background: var(--skip-bg); border-left: 4px solid var(--skip); padding: 6px 10px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 5px 8px; border-bottom: 1px solid var(--line); vertical-align: top; }
th { font-size: 13px; color: var(--muted); font-weight: 600; }
td.num, th.num { text-align: right; white-space: nowrap; }
.exercise { border: 1px solid var(--line); border-left: 6px solid var(--ok); border-radius: 6px; margin: 14px 0;
            padding: 10px 14px; }
.exercise.failed { border-left-color: var(--bad); }
.exercise.skipped { border-left-color: var(--skip); }
table.checks td:first-child { width: 1%; white-space: nowrap; }
.badge { display: inline-block; white-space: nowrap; min-width: 76px; text-align: center; color: #fff; font-weight: 600; font-size: 13px;
         padding: 2px 8px; border-radius: 4px; }
.badge.passed { background: var(--ok); } .badge.failed { background: var(--bad); } .badge.skipped { background: var(--skip); }
tr.failed td { background: var(--bad-bg); } tr.skipped td { background: var(--skip-bg); }
pre.msg { white-space: pre-wrap; word-break: break-word; margin: 4px 0 0; font: 13px/1.4 ui-monospace,
          "DejaVu Sans Mono", monospace; }
figure { margin: 14px 0 4px; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line); }
figcaption { color: var(--muted); font-size: 13px; }
.figerr { color: var(--bad); }
details.passed-checks > summary { cursor: pointer; color: var(--ok); font-weight: 600; margin: 4px 0; }
details.passed-checks[open] > summary { margin-bottom: 6px; }
p.not-passed a { color: var(--bad); font-weight: 600; }
"""


def _e(value) -> str:
    return html.escape(str(value), quote=True)


def _clip(text, limit: int) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit] + " …"


def _num(x) -> str:
    """Points as every report shows them (report.pts: two decimals at most, 67.39 / 100, 0/2.17): the
    stored report keeps their precision, the page rounds only what it shows."""
    from ..course.points import pts

    return pts(x)


def _when(iso: str, like: str = "") -> str:
    """A time as a person reads it (2027-03-16 10:00 UTC+08:00), in the offset of `like` (the due
    time's) where it has one; as written when it is not a time."""
    from datetime import datetime

    try:
        at = datetime.fromisoformat(str(iso))
        zone = datetime.fromisoformat(str(like)).tzinfo if like else None
    except ValueError:
        return str(iso)
    if zone is not None and at.tzinfo is not None:
        at = at.astimezone(zone)
    offset = at.strftime("%z")
    shown = "UTC" if offset in ("+0000", "-0000") else f"UTC{offset[:3]}:{offset[3:]}" if offset else ""
    return f"{at:%Y-%m-%d %H:%M} {shown}".strip()


def _late(late: dict | None, tr) -> list[str]:
    """Under the score, for a late submission: when it came in, the penalty, and the grade the
    course's gradebook gets (the LMS files' number, formats/lms.py)."""
    if not late:
        return []
    due = str(late.get("due") or "")
    fields = dict(
        submitted=_when(late.get("submitted_at", ""), due),
        due=_when(due, due) if due else "-",
        days=late.get("late_days", 0),
        penalty=_num(late.get("late_penalty", 0)),
    )
    max_days = late.get("max_days")
    key = "html_late"
    if max_days is not None and late.get("late_days", 0) > max_days:
        key, fields["max_days"] = "html_late_zero", _num(max_days)
    final, full = float(late.get("final", 0)), float(late.get("max_score", 0))
    pct = 100.0 * final / full if full else 0.0
    return [
        f'<p class="warn" id="late">{tr(key, **fields)}</p>',
        f'<p class="total" id="final">{tr("html_lms_grade")}: <b>{_num(final)} / {_num(full)}</b> ({pct:.0f}%)</p>',
    ]


def _section_key(section: str):
    return tuple(int(p) if p.isdigit() else 0 for p in str(section).split("."))


def _bar(score: float, max_score: float) -> str:
    pct = 100.0 * score / max_score if max_score else 0.0
    return f'<div class="bar" role="img" aria-label="{pct:.0f}%"><span style="width:{pct:.1f}%"></span></div>'


def _status_of(checks: list[dict]) -> str:
    statuses = {c.get("status") for c in checks}
    if "failed" in statuses:
        return "failed"
    if statuses and statuses <= {"skipped"}:
        return "skipped"
    return "passed"


def render(doc: dict, figures: list[dict] | None = None, lang: str | None = None, late: dict | None = None) -> str:
    """The whole page as a string. `late`: the late policy's part in the grade the course's gradebook
    gets (formats/lms.late_page: submitted_at, due, late_days, late_penalty, max_days, final,
    max_score), shown under the score; None: no penalty applied."""
    lang = lang or language()

    def tr(key: str, **fields) -> str:
        return _e(t(key, lang=lang, **fields))

    checks_by_ex: dict[str, list[dict]] = defaultdict(list)
    for c in doc.get("checks", []):
        checks_by_ex[c.get("exercise", "")].append(c)
    figs_by_ex: dict[str, list[dict]] = defaultdict(list)
    for f in figures or []:
        figs_by_ex[f.get("exercise", "")].append(f)
    sections: dict[str, list[dict]] = defaultdict(list)
    for ex in doc.get("exercises", []):
        sections[str(ex.get("section", ""))].append(ex)
    order = sorted(sections, key=_section_key)

    score, max_score = float(doc.get("score", 0)), float(doc.get("max_score", 0))
    pct = 100.0 * score / max_score if max_score else 0.0
    out = [
        f'<!DOCTYPE html>\n<html lang="{"zh-CN" if lang == "zh" else "en"}"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{tr('html_title')} — {_num(late['final'] if late else score)}/{_num(max_score)}</title>",
        f"<style>{CSS}</style></head><body><main>",
        f"<h1>{tr('html_title')}</h1>",
        f'<p class="total" id="total">{tr("html_score")}: <b>{_num(score)} / {_num(max_score)}</b> ({pct:.0f}%)</p>',
        _bar(score, max_score),
        *_late(late, tr),
        '<p class="meta">'
        + tr(
            "html_meta",
            submission=doc.get("submission", ""),
            version=doc.get("kata_version", ""),
            torch=doc.get("torch", ""),
            sandbox=doc.get("sandbox", ""),
            seconds=f"{float(doc.get('duration_s') or 0):.0f}",
        )
        + "</p>",
    ]
    if doc.get("sandbox") not in (None, "bubblewrap"):
        out.append(f'<p class="warn">{tr("html_limits_only")}</p>')
    notes = list(doc.get("notes", []))
    for note in notes[:MAX_NOTES]:
        out.append(f'<p class="warn">{tr("html_note", note=_clip(note, MAX_MESSAGE))}</p>')
    if len(notes) > MAX_NOTES:
        out.append(f'<p class="warn">{tr("html_notes_more", count=len(notes) - MAX_NOTES)}</p>')
    out.append(_not_passed(order, sections, checks_by_ex, tr))

    out.append(
        f"<h2>{tr('html_by_section')}</h2><table class='summary'><thead><tr><th>§</th>"
        f"<th>{tr('html_exercises')}</th><th class='num'>{tr('html_points')}</th><th></th></tr></thead><tbody>"
    )
    for section in order:
        exs = sections[section]
        got, total = sum(float(e.get("score", 0)) for e in exs), sum(float(e.get("max_score", 0)) for e in exs)
        out.append(
            f'<tr><td><a href="#s{_e(section)}">§{_e(section)}</a></td><td>{len(exs)}</td>'
            f'<td class="num">{_num(got)}/{_num(total)}</td><td style="width:40%">{_bar(got, total)}</td></tr>'
        )
    out.append("</tbody></table>")

    for section in order:
        exs = sections[section]
        got, total = sum(float(e.get("score", 0)) for e in exs), sum(float(e.get("max_score", 0)) for e in exs)
        out.append(
            f'<section id="s{_e(section)}"><h2><span>§{_e(section)}</span><span>{_num(got)} / {_num(total)}</span></h2>'
        )
        for ex in exs:
            out.append(_exercise(ex, checks_by_ex.get(ex.get("id", ""), []), figs_by_ex.get(ex.get("id", ""), []), tr))
        out.append("</section>")
    out.append("</main></body></html>\n")
    return "\n".join(out)


def _not_passed(order: list[str], sections: dict, checks_by_ex: dict, tr) -> str:
    """The checks that did not pass, by exercise in book order, open ("" when every check passed)."""
    parts = []
    for section in order:
        for ex in sections[section]:
            ex_id = ex.get("id", "")
            rows = [c for c in checks_by_ex.get(ex_id, []) if c.get("status") != "passed"]
            if not rows:
                continue
            parts.append(
                f'<article class="exercise {_status_of(rows)}" id="not-passed-{_e(ex_id)}">'
                f'<h3><span><a href="#{_e(ex_id)}">§{_e(section)} {_e(ex.get("title", ex_id))}</a> '
                f'<code class="muted">{_e(ex_id)}</code></span>'
                f"<span>{_num(ex.get('score', 0))} / {_num(ex.get('max_score', 0))}</span></h3>"
                f"{_checks_table(rows, tr)}</article>"
            )
    if not parts:
        return ""
    return (
        f'<section id="not-passed"><h2><span>{tr("html_not_passed")}</span></h2>\n' + "\n".join(parts) + "\n</section>"
    )


def _checks_table(checks: list[dict], tr) -> str:
    out = [
        f"<table class='checks'><thead><tr><th></th><th>{tr('html_check')}</th><th>{tr('html_listing')}</th>"
        f"<th class='num'>{tr('html_points')}</th></tr></thead><tbody>"
    ]
    for c in checks:
        st = c.get("status", "")
        name = str(c.get("name", "")).removeprefix("test_")
        hidden = f' <span class="muted">{tr("html_hidden")}</span>' if c.get("visibility") == "hidden" else ""
        message = _clip(c.get("message") or "", MAX_MESSAGE)
        msg = f'<pre class="msg">{_e(message)}</pre>' if message and st != "passed" else ""
        out.append(
            f'<tr class="{_e(st)}"><td><span class="badge {_e(st)}">{STATUS.get(st, "?")} {tr("html_" + st) if st in STATUS else _e(st)}</span></td>'
            f"<td><code>{_e(name)}</code>{hidden}{msg}</td>"
            f"<td>{_e(', '.join(c.get('listing') or []))}</td>"
            f'<td class="num">{_num(c.get("score", 0))}/{_num(c.get("max_score", 0))}</td></tr>'
        )
    out.append("</tbody></table>")
    return "".join(out)


def _exercise(ex: dict, checks: list[dict], figs: list[dict], tr) -> str:
    """One exercise: its score, a link to its checks that did not pass (shown at the top of the
    page), its passed checks folded, and its figures."""
    status = _status_of(checks)
    ex_id = ex.get("id", "")
    out = [
        f'<article class="exercise {status}" id="{_e(ex_id)}">',
        f'<h3><span>{_e(ex.get("title", ex_id))} <code class="muted">{_e(ex_id)}</code></span>'
        f"<span>{_num(ex.get('score', 0))} / {_num(ex.get('max_score', 0))}</span></h3>",
    ]
    not_passed = sum(c.get("status") != "passed" for c in checks)
    if not_passed:
        out.append(
            f'<p class="not-passed"><a href="#not-passed-{_e(ex_id)}">'
            f"{STATUS['failed']} {tr('html_not_passed_link', count=not_passed)}</a></p>"
        )
    passed = [c for c in checks if c.get("status") == "passed"]
    if passed:
        key = "html_passed_one" if len(passed) == 1 else "html_passed_many"
        out.append(
            f'<details class="passed-checks"><summary>{STATUS["passed"]} {tr(key, count=len(passed))}'
            f"</summary>{_checks_table(passed, tr)}</details>"
        )
    for f in figs:
        if f.get("png_base64"):
            out.append(
                f'<figure><img alt="{_e(f.get("title", ""))}" src="data:image/png;base64,{_e(f["png_base64"])}">'
                f"<figcaption>{tr('html_figure', listing=', '.join(f.get('listings') or []))}"
                f"</figcaption></figure>"
            )
        elif f.get("error"):
            out.append(f'<p class="figerr">{_e(f["error"])}</p>')
    out.append("</article>")
    return "\n".join(out)


def write(path: str | Path, doc: dict, figures: list[dict] | None = None, lang: str | None = None) -> Path:
    """Write the page atomically: a browser (or a full disk) never leaves half a page."""
    return atomic.write_text(path, render(doc, figures, lang))  # 0666 & ~umask, as any new file


def write_html(course, path: str | Path, doc: dict, out: str | Path) -> tuple[Path, list]:
    """Write the page for report `doc` of the submission at `path`, with the listings' figures
    drawn from the same submission; also return the figures drawn (grader.reports.figures.Drawn)."""
    from ..checking.submission import SubmissionError
    from . import figures

    graded = [ex["id"] for ex in doc.get("exercises", [])]
    # the figures run the student's code again: on what is left of the grading budget, at most 30 s
    left = getattr(course, "budget_s", figures.FIGURES_BUDGET_S) - float(doc.get("duration_s") or 0)
    try:
        drawn = figures.for_exercises(course, path, graded, min(figures.FIGURES_BUDGET_S, left))
    except SubmissionError:  # it was graded a moment ago; if it is gone now, the page has no figures
        drawn = []
    return write(out, doc, [d.as_dict() for d in drawn]), drawn
