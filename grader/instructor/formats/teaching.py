"""What the class summary tells a teacher to act on.

- `progress(records)`: per exercise, how many graded students did not attempt it (the stub left as
  given, attempts.py), attempted it and got full marks, or attempted it and lost points: only the
  last is a teaching problem.
- `mistakes(records)`: each mistake the checks recognised by name ("dividing by d_k instead of
  sqrt(d_k)"), with how many students made it, most common first.
- `heatmap_png(records, order)`: students × exercises, each cell the share of the exercise's points
  (grey: not attempted).
- `grouped_notes(records)`: the notes of every report collapsed into one line per kind of note,
  with the students it concerns (the detail is in each student's report).

Texts are in the instructor's language, the heatmap's where matplotlib has a Chinese font
(grader/course/figure_text.py), as the rest of the summary (summary.py).
"""

from __future__ import annotations

import functools
import re
import textwrap
from collections import defaultdict
from dataclasses import dataclass, field

from ...course.figure_text import label, png_bytes, rc_params
from ...course.messages import pick, t
from ..batch.records import exercise_rows, status_of


def _graded(records: dict[str, dict]):
    for name, doc in records.items():
        if status_of(doc) in (None, "graded"):  # a report without a student block: graded
            yield name, doc


def attempted_ids(doc: dict) -> set[str]:
    """The exercises of a report that count as attempted (no flag: attempted, as before)."""
    return {e.id for e in exercise_rows(doc) if e.tried}


@dataclass
class Progress:
    id: str
    section: str
    max_score: float
    not_attempted: list[str] = field(default_factory=list)
    full: list[str] = field(default_factory=list)
    failing: list[str] = field(default_factory=list)  # attempted, points lost
    scores: list[float] = field(default_factory=list)  # of the attempts


def progress(records: dict[str, dict]) -> list[Progress]:
    rows: dict[str, Progress] = {}
    for name, doc in _graded(records):
        tried = attempted_ids(doc)
        for e in exercise_rows(doc):
            p = rows.setdefault(e.id, Progress(e.id, e.section or "", e.out_of))
            if e.id not in tried:
                p.not_attempted.append(name)
                continue
            score = e.got
            p.scores.append(score)
            (p.full if score >= p.max_score - 1e-9 else p.failing).append(name)
    return list(rows.values())


def mistakes(records: dict[str, dict]) -> list[tuple[str, str, list[str]]]:
    """[(exercise, mistake, students)], the most students first."""
    seen: dict[tuple[str, str], set[str]] = defaultdict(set)
    for name, doc in _graded(records):
        for c in doc.get("checks", []):
            if c.get("mistake") and c.get("status") != "passed":
                seen[(c.get("exercise", ""), c["mistake"])].add(name)
    ranked = sorted(seen.items(), key=lambda kv: (-len(kv[1]), kv[0]))
    return [(ex, m, sorted(names)) for (ex, m), names in ranked]


_FIELD = re.compile(r"\{[a-z_]+\}")


@functools.lru_cache(maxsize=1)
def _templates() -> list[tuple[re.Pattern, str, int]]:
    """Every message of the catalog as a pattern (its {fields} match anything) and its kind (the
    message with each field shown as …), the longest fixed text first: a note is matched by the
    message that wrote it, whatever file names it quotes."""
    from ...course.messages import CATALOG

    out = []
    for texts in CATALOG.values():
        for text in texts.values():
            if not _FIELD.search(text) or len(_FIELD.sub("", text).strip()) < 12:
                continue  # a message that is mostly its fields ("{a}: {b}") says nothing of a note
            parts = _FIELD.split(text)
            pattern = "(?s)" + ".*?".join(re.escape(p) for p in parts)
            out.append((re.compile(pattern + r"\Z"), _FIELD.sub("…", text), len("".join(parts))))
    out.sort(key=lambda x: -x[2])
    return out


def note_kind(note: str) -> str:
    """A note without its particulars: the catalog message that wrote it, its fields as …; a note
    that no message wrote, or one that is mostly its particulars (another message quoted in a
    field), stays as it is, shortened."""
    for pattern, kind, fixed in _templates():
        if fixed >= 0.3 * len(note) and pattern.match(note):
            return kind
    return textwrap.shorten(note, 240, placeholder="…")


def grouped_notes(records: dict[str, dict]) -> list[tuple[str, list[str]]]:
    """[(kind of note, students)], the most students first."""
    groups: dict[str, set[str]] = defaultdict(set)
    for name, doc in _graded(records):
        for note in doc.get("notes", []) or []:
            groups[note_kind(str(note))].add(name)
    return sorted(((k, sorted(v)) for k, v in groups.items()), key=lambda kv: (-len(kv[1]), kv[0]))


def heatmap_png(records: dict[str, dict], order: list[str] | None = None, title: str = "") -> bytes:
    import matplotlib
    import numpy as np
    from matplotlib.colors import LinearSegmentedColormap
    from matplotlib.figure import Figure

    students = [(name, doc) for name, doc in _graded(records)]
    ids = list(order or [])
    for _, doc in students:
        for e in exercise_rows(doc):
            if e.id not in ids:
                ids.append(e.id)
    grid = np.full((max(len(students), 1), max(len(ids), 1)), np.nan)
    for i, (_, doc) in enumerate(students):
        tried = attempted_ids(doc)
        for e in exercise_rows(doc):
            if e.id in tried and e.id in ids:
                m = e.out_of
                grid[i, ids.index(e.id)] = e.got / m if m else 1.0
    cmap = LinearSegmentedColormap.from_list("kata", ["#cf222e", "#f2cc60", "#1a7f37"]).with_extremes(bad="#d0d7de")
    with matplotlib.rc_context(rc_params()):  # around the saving too: fonts are looked up when drawing
        fig = Figure(figsize=(min(2.5 + 0.28 * len(ids), 16), min(1.6 + 0.22 * len(students), 40)))
        ax = fig.add_subplot()
        image = ax.imshow(np.ma.masked_invalid(grid), cmap=cmap, vmin=0, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_xticks(
            range(len(ids)), [i.split("_", 2)[-1] if i.count("_") >= 2 else i for i in ids], rotation=90, fontsize=7
        )
        ax.set_yticks(range(len(students)), [n[:24] for n, _ in students], fontsize=7)
        head = textwrap.shorten(title, 70, placeholder="…") + "\n" if title else ""
        ax.set_title(head + label("summary_fig_heatmap"), fontsize=9)
        fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02)
        return png_bytes(fig)


def names_list(names: list[str], limit: int = 8) -> str:
    """The first `limit` names, escaped for Markdown, and how many more, in the instructor's language."""
    from ...course.safe_text import markdown

    shown = pick(", ", "、").join(markdown(n) for n in names[:limit])
    return t("summary_names_more", names=shown, count=len(names) - limit) if len(names) > limit else shown


def markdown_lines(records: dict[str, dict]) -> list[str]:
    """The summary's teaching sections: attempted vs not, and the named mistakes."""
    from ...course.safe_text import markdown

    lines = [
        "",
        "## " + t("summary_h_progress"),
        "",
        t("summary_progress_intro"),
        "",
        f"![{t('summary_alt_heatmap')}](heatmap.png)",
        "",
        t("summary_progress_header"),
        "|---|---|---:|---:|---:|---:|",
    ]
    for p in progress(records):
        mean = f"{sum(p.scores) / len(p.scores):.2f}/{round(p.max_score, 2):g}" if p.scores else "-"
        lines.append(f"| {p.section} | {p.id} | {len(p.not_attempted)} | {len(p.full)} | {len(p.failing)} | {mean} |")
    found = mistakes(records)
    chinese = {
        (c.get("exercise", ""), c["mistake"]): c["mistake_zh"]
        for _, doc in _graded(records)
        for c in doc.get("checks", [])
        if c.get("mistake") and c.get("mistake_zh")
    }
    lines += ["", "## " + t("summary_h_mistakes"), ""]
    if not found:
        lines.append(t("summary_no_mistakes"))
    else:
        lines += [t("summary_mistakes_header"), "|---:|---|---|---|"]
        for ex, m, names in found:
            shown = pick(m, chinese.get((ex, m), ""))  # the check's own Chinese name where it gave one
            lines.append(f"| {len(names)} | {ex} | {markdown(shown)} | {names_list(names)} |")
    return lines
