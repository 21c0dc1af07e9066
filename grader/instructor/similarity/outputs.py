"""What `kata similarity` writes into OUT, and what the class summary reads back.

    similarity.csv   one row per pair of students who both submitted an exercise's file:
                     exercise, student_a, student_b, similarity_a_to_b, similarity_b_to_a (fractions of
                     each one's own code found in the other's), matched_tokens, own_tokens_a,
                     own_tokens_b (their code that is not the stub's), flagged (yes/no), reason
                     (empty); one row per member of a cluster (the same file from CLUSTER_MIN or
                     more students) with its first student, flagged "same code", or "no" when the
                     file has too little code of its own, and why; then one row per student and
                     exercise not compared: the exercise,
                     student_a, flagged "not compared" and the reason (a submission that could not be
                     read: a row for each exercise)
    similarity.md    the pairs above the threshold, ranked; the pairs of students flagged on several
                     exercises; each exercise's figures; the submissions and files not compared
    similarity.html  one self-contained page: each flagged pair's two files side by side as they
                     were compared (canonical.py, the page says so), the matching regions
                     highlighted. Inline CSS, no script, nothing loaded from anywhere (a
                     Content-Security-Policy says so to the browser); the code is escaped.

copydetect's own report (copydetect.CopyDetector.generate_html_report) is not used: its template
loads Bootstrap's CSS and JavaScript from a CDN (cdn.jsdelivr.net), so offline it shows unstyled
and its "View matched code" buttons do nothing; it also draws with pyplot's global state.
"""

from __future__ import annotations

import csv
import html
import io
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ...course.safe_text import csv_cell
from ...course.safe_text import csv_text as safe_csv_text
from ...course.safe_text import markdown as md_text
from . import CLUSTER_MIN, MIN_TOKENS

CSV = "similarity.csv"
MD = "similarity.md"
HTML = "similarity.html"
FILES = (CSV, MD, HTML)
HEADER = [
    "exercise",
    "student_a",
    "student_b",
    "similarity_a_to_b",
    "similarity_b_to_a",
    "matched_tokens",
    "own_tokens_a",
    "own_tokens_b",
    "flagged",
    "reason",
]
NOT_COMPARED = "not compared"  # the flagged cell of a student's row when their file was not compared
SAME_CODE = "same code"  # the flagged cell of a cluster member's row: the same code as the cluster's first student


@dataclass
class Pair:
    exercise: str
    a: str
    b: str
    a_to_b: float
    b_to_a: float
    tokens: int
    own_a: int
    own_b: int
    flagged: bool
    slices: tuple = ()  # (A's, B's) character ranges, for the page
    code_a: str = ""
    code_b: str = ""
    group_a: int = 1  # students A stands for: a cluster's first student stands for all who handed in its code
    group_b: int = 1

    @property
    def top(self) -> float:
        return max(self.a_to_b, self.b_to_a)

    @property
    def name_a(self) -> str:
        return _member_of(self.a, self.group_a)

    @property
    def name_b(self) -> str:
        return _member_of(self.b, self.group_b)


def _member_of(name: str, group: int) -> str:
    """A name as the reports show it: `alice (+12)` for the first of 13 who handed in the same code."""
    return name if group <= 1 else f"{name} (+{group - 1})"


@dataclass
class Cluster:
    """Students who handed in the same file for one exercise (as compared and tokenised: comments,
    names, strings, layout do not matter), at least CLUSTER_MIN of them: one line, not every pair.
    `little`: it has less than MIN_TOKENS of code of its own (the untouched stub, a stub with only a
    syntax error added, a one-line answer): nothing to flag, listed apart."""

    exercise: str
    members: list[str]  # sorted; the first stands for all in the pairs
    tokens: int  # own tokens of that code
    little: bool = False


@dataclass
class Result:
    threshold: float
    k: int
    exercises: list[tuple[str, str]]  # (id, file) compared, in course order
    students: int
    pairs: list[Pair] = field(default_factory=list)
    submitted: dict[str, int] = field(default_factory=dict)  # exercise -> students with its file
    refused: list[tuple[str, str]] = field(default_factory=list)  # (student, why): submissions not read
    notes: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str, str]] = field(default_factory=list)  # (exercise, student, why): files not compared
    clusters: list[Cluster] = field(default_factory=list)

    @property
    def agreeing(self) -> dict[tuple[str, str], int]:
        """(A, B) -> on how many exercises the pair is flagged."""
        count: dict[tuple[str, str], int] = defaultdict(int)
        for p in self.pairs:
            count[(p.a, p.b)] += p.flagged
        return count

    @property
    def flagged(self) -> list[Pair]:
        """The flagged pairs, the students who agree on the most exercises first, then the most alike."""
        agree = self.agreeing
        return sorted(
            (p for p in self.pairs if p.flagged),
            key=lambda p: (-agree[(p.a, p.b)], -p.top, -p.tokens, p.exercise, p.a, p.b),
        )

    def cluster_groups(self, little: bool = False) -> list[tuple[list[str], list[str], int]]:
        """(members, exercises, tokens): the clusters with the same students merged across
        exercises, the largest first; `little`: those with too little code of their own instead."""
        order = {ex: i for i, (ex, _) in enumerate(self.exercises)}
        groups: dict[tuple[str, ...], list[Cluster]] = defaultdict(list)
        for c in self.clusters:
            if c.little == little:
                groups[tuple(c.members)].append(c)
        out = [
            (list(m), sorted((c.exercise for c in cs), key=lambda e: order.get(e, 0)), sum(c.tokens for c in cs))
            for m, cs in groups.items()
        ]
        return sorted(out, key=lambda g: (-len(g[0]) * len(g[1]), g[0]))


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def csv_text(r: Result) -> str:
    """similarity.csv: every cell with a `;` quoted too (safe_text.csv_text), for spreadsheets that split on it."""
    order = {ex: i for i, (ex, _) in enumerate(r.exercises)}
    rows = [HEADER]
    for p in sorted(r.pairs, key=lambda p: (order.get(p.exercise, 0), -p.top, -p.tokens, p.a, p.b)):
        rows.append(
            [
                p.exercise,
                csv_cell(p.a),
                csv_cell(p.b),
                f"{p.a_to_b:.3f}",
                f"{p.b_to_a:.3f}",
                p.tokens,
                p.own_a,
                p.own_b,
                "yes" if p.flagged else "no",
                "",
            ]
        )
    for c in sorted(r.clusters, key=lambda c: (order.get(c.exercise, 0), c.members)):
        first = c.members[0]
        for other in c.members[1:]:
            if c.little:  # never flagged: nothing of their own to compare
                share = "1.000" if c.tokens else "0.000"
                rows.append(
                    [
                        c.exercise,
                        csv_cell(first),
                        csv_cell(other),
                        share,
                        share,
                        c.tokens,
                        c.tokens,
                        c.tokens,
                        "no",
                        f"the same file as {len(c.members)} students, with too little code of its own "
                        f"to compare ({csv_cell(first)} stands for them)",
                    ]
                )
                continue
            rows.append(
                [
                    c.exercise,
                    csv_cell(first),
                    csv_cell(other),
                    "1.000",
                    "1.000",
                    c.tokens,
                    c.tokens,
                    c.tokens,
                    SAME_CODE,
                    f"the same code as {len(c.members)} students ({csv_cell(first)} stands for them)",
                ]
            )
    for ex, student, why in not_compared(r):
        rows.append([ex, csv_cell(student), "", "", "", "", "", "", NOT_COMPARED, csv_cell(why)])
    return safe_csv_text(rows)


def not_compared(r: Result) -> list[tuple[str, str, str]]:
    """(exercise, student, why) for every file not compared, in course order: a submission that
    could not be read counts on every exercise."""
    order = {ex: i for i, (ex, _) in enumerate(r.exercises)}
    rows = r.skipped + [(ex, name, why) for name, why in r.refused for ex, _ in r.exercises]
    return sorted(rows, key=lambda row: (order.get(row[0], 0), row[1]))


def markdown(r: Result) -> str:
    flagged = r.flagged
    lines = [
        "# Code similarity",
        "",
        f"{r.students} submission{'s' if r.students != 1 else ''} read, {len(r.exercises)} exercise"
        f"{'s' if len(r.exercises) != 1 else ''} compared pair by pair (copydetect's winnowing fingerprints, "
        f"windows of {r.k} tokens). The stubs are boilerplate: code the students were given never counts, "
        "and renamed names, added comments or reordered functions change nothing. What is compared is each "
        "file's code as Python reads it: comments, docstrings and statements that do nothing (`pass`, `...`, "
        "a bare string) removed, keyword arguments sorted by name, the layout Python's own.  ",
        f"A pair is flagged when at least {_pct(r.threshold)} of either student's own code (the code that is "
        "not the stub's) is also in the other's. Similar code is a reason to look, not proof: read the pair "
        f"in [{HTML}]({HTML}).",
        "",
    ]
    groups = r.cluster_groups()
    if groups:
        lines += [
            "## The same code handed in by several students",
            "",
            f"Each line is one code that {CLUSTER_MIN} or more students handed in identically or nearly so "
            "(as compared: whatever its names, strings, comments and layout), often the code of a book, a "
            "solution or a classmate passed round: read it once. In the pairs below, its first student "
            "stands for all of them (`name (+N)`).",
            "",
            "| students | who | exercises |",
            "|---:|---|---|",
        ]
        for members, exs, _ in groups:
            lines.append(f"| {len(members)} | {', '.join(md_text(m) for m in members)} | {', '.join(exs)} |")
        lines.append("")
    little = r.cluster_groups(little=True)
    if little:
        lines += [
            "## The same file with too little code of its own",
            "",
            f"Each line is one file that {CLUSTER_MIN} or more students handed in (as compared) with less "
            f"than {MIN_TOKENS} tokens of code that is not the stub's: the untouched stub, a stub with only a "
            "syntax error added, or an answer too short to tell a copy from the obvious one. Nothing to "
            "flag; one line here instead of a pair per classmate (its first student stands for the others "
            f"in {CSV}).",
            "",
            "| students | who | exercises |",
            "|---:|---|---|",
        ]
        for members, exs, _ in little:
            lines.append(f"| {len(members)} | {', '.join(md_text(m) for m in members)} | {', '.join(exs)} |")
        lines.append("")
    agree = r.agreeing
    lines += [
        "## Pairs above the threshold",
        "",
        "Ranked by the number of exercises on which the two students are flagged, then by similarity.",
        "",
    ]
    if flagged:
        lines += [
            "| # | exercise | student A | student B | A in B | B in A | matched tokens | exercises flagged |",
            "|---:|---|---|---|---:|---:|---:|---:|",
        ]
        for i, p in enumerate(flagged, 1):
            lines.append(
                f"| [{i}]({HTML}#pair-{i}) | {p.exercise} | {md_text(p.name_a)} | {md_text(p.name_b)} | "
                f"{_pct(p.a_to_b)} | {_pct(p.b_to_a)} | {p.tokens} | {agree[(p.a, p.b)]} |"
            )
    else:
        lines.append(f"No pair reaches {_pct(r.threshold)}.")
    by_pair: dict[tuple[str, str], list[Pair]] = defaultdict(list)
    for p in flagged:
        by_pair[(p.a, p.b)].append(p)
    several = sorted(((k, v) for k, v in by_pair.items() if len(v) > 1), key=lambda kv: (-len(kv[1]), kv[0]))
    if several:
        lines += [
            "",
            "## Students flagged on several exercises",
            "",
            "| student A | student B | exercises | matched tokens |",
            "|---|---|---:|---:|",
        ]
        for (a, b), ps in several:
            lines.append(
                f"| {md_text(ps[0].name_a)} | {md_text(ps[0].name_b)} | {len(ps)} | {sum(p.tokens for p in ps)} |"
            )
    lines += [
        "",
        "## Exercises",
        "",
        "| exercise | submitted | not compared | pairs | flagged | highest |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for ex, _ in r.exercises:
        ps = [p for p in r.pairs if p.exercise == ex]
        high = max((p.top for p in ps), default=0.0)
        skipped = sum(s[0] == ex for s in r.skipped)
        lines.append(
            f"| {ex} | {r.submitted.get(ex, 0)} | {skipped} | {len(ps)} | {sum(p.flagged for p in ps)} | {_pct(high)} |"
        )
    if r.refused or r.skipped or r.notes:
        lines += ["", "## Not compared", ""]
        lines += [f"- **{md_text(name)}**: {md_text(why)}" for name, why in r.refused]
        lines += [f"- **{md_text(name)}**: {ex}: {md_text(why)}" for ex, name, why in r.skipped]
        lines += [f"- {md_text(n)}" for n in r.notes]
    return "\n".join(lines) + "\n"


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1f2328}
table{border-collapse:collapse}td,th{border:1px solid #d0d7de;padding:.2em .6em;text-align:left}
.pair{border-top:2px solid #d0d7de;margin-top:2em;padding-top:.5em}
.files{display:flex;gap:1em}.files>div{flex:1;min-width:0}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;font-size:12px;white-space:pre}
mark.a{background:#f2b6b6}mark.b{background:#b6f2b6}
"""


def _highlighted(code: str, ranges, cls: str) -> str:
    """`code` escaped, with each matched range inside <mark>."""
    out, at = [], 0
    for start, stop in zip(*ranges) if len(ranges) else ():
        out += [html.escape(code[at:start]), f'<mark class="{cls}">', html.escape(code[start:stop]), "</mark>"]
        at = stop
    out.append(html.escape(code[at:]))
    return "".join(out)


def html_page(r: Result) -> str:
    e = html.escape
    flagged = r.flagged
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">",
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>Code similarity</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Code similarity</h1>",
        f"<p>{r.students} submissions, {len(r.exercises)} exercises; threshold {_pct(r.threshold)} of either "
        f"student's own code (the stub never counts); windows of {r.k} tokens. "
        f"{len(flagged)} pair{'s' if len(flagged) != 1 else ''} above the threshold. Highlighted: the regions "
        "the two files share. Similar code is a reason to look, not proof.</p>",
        "<p>The code is shown as it was compared, not as it was handed in: comments, docstrings and statements "
        "that do nothing (<code>pass</code>, <code>...</code>, a bare string) removed, keyword arguments sorted "
        "by name, laid out by Python's <code>ast.unparse</code> (a file that does not parse: as written, "
        "without its comment lines).</p>",
    ]
    if flagged:
        parts += [
            "<table><tr><th>#</th><th>exercise</th><th>student A</th><th>student B</th><th>A in B</th>"
            "<th>B in A</th><th>matched tokens</th></tr>"
        ]
        for i, p in enumerate(flagged, 1):
            parts.append(
                f'<tr><td><a href="#pair-{i}">{i}</a></td><td>{e(p.exercise)}</td><td>{e(p.name_a)}</td>'
                f"<td>{e(p.name_b)}</td><td>{_pct(p.a_to_b)}</td><td>{_pct(p.b_to_a)}</td><td>{p.tokens}</td></tr>"
            )
        parts.append("</table>")
    for i, p in enumerate(flagged, 1):
        ra, rb = p.slices if p.slices else ((), ())
        parts += [
            f'<section class="pair" id="pair-{i}"><h2>{i}. {e(p.exercise)}: {e(p.a)} and {e(p.b)}</h2>',
            f"<p>{_pct(p.a_to_b)} of {e(p.a)}'s own code is in {e(p.b)}'s; {_pct(p.b_to_a)} of {e(p.b)}'s "
            f"is in {e(p.a)}'s ({p.tokens} matched tokens).</p>",
            '<div class="files">',
            f"<div><h3>{e(p.a)}</h3><pre><code>{_highlighted(p.code_a, ra, 'a')}</code></pre></div>",
            f"<div><h3>{e(p.b)}</h3><pre><code>{_highlighted(p.code_b, rb, 'b')}</code></pre></div>",
            "</div></section>",
        ]
    if r.refused or r.skipped:
        parts += (
            ["<h2>Not compared</h2><ul>"]
            + [f"<li><b>{e(n)}</b>: {e(w)}</li>" for n, w in r.refused]
            + [f"<li><b>{e(n)}</b>: {e(ex)}: {e(w)}</li>" for ex, n, w in r.skipped]
            + ["</ul>"]
        )
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def read_flagged(out: Path) -> list[dict] | None:
    """The flagged rows of OUT's similarity.csv, the students flagged on the most exercises first,
    then the most similar; None when OUT has none (the class summary then has no Similarity section)."""
    path = Path(out) / CSV
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    rows = [row for row in csv.DictReader(io.StringIO(text)) if row.get("flagged") == "yes"]

    def top(row: dict) -> float:
        try:
            return max(float(row["similarity_a_to_b"]), float(row["similarity_b_to_a"]))
        except (KeyError, TypeError, ValueError):
            return 0.0

    agree: dict[tuple[str, str], int] = defaultdict(int)
    for row in rows:
        agree[(row.get("student_a", ""), row.get("student_b", ""))] += 1
    return sorted(rows, key=lambda row: (-agree[(row.get("student_a", ""), row.get("student_b", ""))], -top(row)))
