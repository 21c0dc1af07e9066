"""Figures of the chapter, drawn with matplotlib in the trusted process (`kata run --plot`, HTML).

A listing module describes a figure with plain values — a `Heatmap`, `Curves` or a `Table` —
computed from the student's code through the sandboxed proxy; `render` turns the description
into PNG bytes here, with the Agg backend (no display, no pyplot state). Nothing the worker
returns is drawn before `check_matrix` has made sure it is a finite-sized 2-D array of numbers.

Figure texts come from the message catalog; Chinese is used only where matplotlib has a font
with Chinese glyphs (otherwise the figure falls back to English rather than drawing boxes). That
choice and the font are grader/course/figure_text.py's, shared with `kata train`'s figures.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

# label and text_language stay this module's names for the listings (grader/listings/s1_*.py)
from ..course.figure_text import label, rc_params, text_language  # noqa: F401
from ..course.messages import t


# What is drawn is bounded: a figure's texts and sizes come from the student's code (a BPE merge
# of 12 KB strings took minutes to lay out in the grader's own process). Longer texts are cut
# with an ellipsis, a longer table says how many rows were left out, and a matrix or curve
# past these sizes is not drawn at all (FigureError).
MAX_TEXT = 120  # characters of one table cell, tick label, title or legend entry
MAX_ROWS = 40  # rows of a table drawn
MAX_COLUMNS = 12  # columns of a table
MAX_SIDE = 4096  # rows or columns of a heatmap (the book's position encodings: 1024 x 768)
MAX_CELLS = 2**22  # cells of a heatmap
MAX_PANELS = 8  # panels of a curve figure, and series in one panel
MAX_POINTS = 20_000  # points of one curve


class FigureError(Exception):
    """The student's values cannot be drawn (wrong shape, not numbers, ...): the reason, for the student."""


@dataclass
class Heatmap:
    name: str  # file-name part, e.g. "weights"
    title: str
    values: list  # rows of numbers (a 2-D tensor or nested lists)
    xlabel: str = ""
    ylabel: str = ""
    xticks: list[str] | None = None  # one label per column (None: numbers)
    yticks: list[str] | None = None
    annotate: bool = False  # write each value in its cell (small matrices)
    cmap: str = "viridis"


@dataclass
class Series:
    label: str
    y: list
    color: str


@dataclass
class Panel:
    title: str
    series: list[Series]


@dataclass
class Curves:
    name: str
    title: str
    x: list
    panels: list[Panel]
    xlabel: str = ""
    ylabel: str = ""


@dataclass
class Table:
    name: str
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)


def check_matrix(what: str, values, rows: int | None = None, cols: int | None = None):
    """`values` as a 2-D float numpy array, or FigureError saying in plain words why not."""
    import numpy as np

    try:
        if hasattr(values, "detach"):
            values = values.detach().to("cpu").double().numpy()
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError, RuntimeError):
        raise FigureError(t("plot_not_numbers", what=what, got=type(values).__name__)) from None
    expected = (rows, cols)
    if arr.ndim != 2 or any(e is not None and e != a for e, a in zip(expected, arr.shape)):
        want = "(" + ", ".join("?" if e is None else str(e) for e in expected) + ")"
        raise FigureError(t("plot_shape", what=what, expected=want, actual=tuple(arr.shape)))
    return arr


def clip(text, limit: int = MAX_TEXT) -> str:
    """`text` as a string of at most `limit` characters (cut with "…")."""
    text = str(text)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bounded(spec):
    """A copy of the figure description `spec` within the limits above: texts clipped, a table's
    extra rows and columns left out (its last row says how many rows), a heatmap, curve or
    panel list past its size refused with FigureError."""
    import dataclasses

    if isinstance(spec, Table):
        columns = [clip(c) for c in list(spec.columns)[:MAX_COLUMNS]]
        width = len(columns)
        rows = [([clip(c) for c in list(r)[:width]] + [""] * width)[:width] for r in list(spec.rows)[:MAX_ROWS]]
        if len(spec.rows) > MAX_ROWS:
            rows.append([label("plot_rows_more", count=len(spec.rows) - MAX_ROWS)] + [""] * (width - 1))
        return dataclasses.replace(spec, title=clip(spec.title), columns=columns, rows=rows)
    if isinstance(spec, Heatmap):
        for ticks in (spec.xticks, spec.yticks):
            if ticks is not None and len(ticks) > MAX_SIDE:
                raise FigureError(t("plot_too_large", what=clip(spec.title, 60), limit=MAX_SIDE))
        return dataclasses.replace(
            spec,
            title=clip(spec.title),
            xlabel=clip(spec.xlabel),
            ylabel=clip(spec.ylabel),
            xticks=None if spec.xticks is None else [clip(x, 30) for x in spec.xticks],
            yticks=None if spec.yticks is None else [clip(y, 30) for y in spec.yticks],
        )
    if isinstance(spec, Curves):
        if (
            len(spec.panels) > MAX_PANELS
            or any(len(p.series) > MAX_PANELS for p in spec.panels)
            or len(spec.x) > MAX_POINTS
            or any(len(s.y) > MAX_POINTS for p in spec.panels for s in p.series)
        ):
            raise FigureError(t("plot_too_large", what=clip(spec.title, 60), limit=MAX_POINTS))
        panels = [
            Panel(clip(p.title), [Series(clip(s.label, 60), s.y, s.color) for s in p.series]) for p in spec.panels
        ]
        return dataclasses.replace(
            spec, title=clip(spec.title), xlabel=clip(spec.xlabel), ylabel=clip(spec.ylabel), panels=panels
        )
    return spec


def render(spec) -> bytes:
    """The figure as PNG bytes, within the limits of `bounded`."""
    spec = bounded(spec)
    import matplotlib
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    with matplotlib.rc_context(rc_params()):
        if isinstance(spec, Heatmap):
            fig = _heatmap(Figure, spec)
        elif isinstance(spec, Curves):
            fig = _curves(Figure, spec)
        elif isinstance(spec, Table):
            fig = _table(Figure, spec)
        else:
            raise TypeError(f"not a figure description: {type(spec).__name__}")
        FigureCanvasAgg(fig)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100)
    return buf.getvalue()


def _heatmap(Figure, spec: Heatmap):
    import numpy as np

    arr = check_matrix(spec.title, spec.values)
    if max(arr.shape) > MAX_SIDE or arr.size > MAX_CELLS:
        raise FigureError(t("plot_too_large", what=spec.title, limit=MAX_SIDE))
    small = arr.shape[0] <= 16 and arr.shape[1] <= 16
    fig = Figure(figsize=(6.4, 5.2) if small else (9, 5.5), layout="constrained")
    ax = fig.add_subplot()
    shown = np.ma.masked_invalid(arr)
    im = ax.imshow(
        shown, cmap=spec.cmap, aspect="equal" if small else "auto", interpolation="nearest" if small else "antialiased"
    )
    fig.colorbar(im, ax=ax, shrink=0.85)
    ax.set_title(spec.title)
    ax.set_xlabel(spec.xlabel)
    ax.set_ylabel(spec.ylabel)
    if spec.xticks is not None:
        ax.set_xticks(range(len(spec.xticks)), spec.xticks)
    if spec.yticks is not None:
        ax.set_yticks(range(len(spec.yticks)), spec.yticks)
    if spec.annotate and small:
        finite = arr[np.isfinite(arr)]
        mid = (finite.min() + finite.max()) / 2 if finite.size else 0.0
        for (i, j), v in np.ndenumerate(arr):
            ax.text(
                j,
                i,
                f"{v:.4f}" if np.isfinite(v) else str(v),
                ha="center",
                va="center",
                fontsize=8,
                color="black" if np.isfinite(v) and v > mid else "white",
            )
    return fig


def _curves(Figure, spec: Curves):
    n = len(spec.panels)
    fig = Figure(figsize=(9, 2.1 * n + 0.6), layout="constrained")
    axes = fig.subplots(n, 1, sharex=True, squeeze=False)[:, 0]
    for ax, panel in zip(axes, spec.panels):
        for s in panel.series:
            ax.plot(spec.x, s.y, color=s.color, label=s.label, linewidth=0.9)
        ax.set_title(panel.title, fontsize=10)
        ax.set_ylabel(spec.ylabel)
        ax.legend(loc="upper right", fontsize=8)
        ax.grid(alpha=0.3)
    axes[-1].set_xlabel(spec.xlabel)
    fig.suptitle(spec.title)
    return fig


def _table(Figure, spec: Table):
    fig = Figure(figsize=(10, 0.3 * (len(spec.rows) + 1) + 0.7), layout="constrained")
    ax = fig.add_subplot()
    ax.axis("off")
    ax.set_title(spec.title)
    table = ax.table(
        cellText=spec.rows or [[""] * len(spec.columns)],
        colLabels=spec.columns,
        bbox=(0, 0, 1, 1),
        cellLoc="left",
        colLoc="left",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(9)
    table.auto_set_column_width(list(range(len(spec.columns))))
    for (row, _col), cell in table.get_celld().items():
        if row == 0:
            cell.set_text_props(weight="bold")
            cell.set_facecolor("#e8eef7")
    return fig
