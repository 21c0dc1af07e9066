"""The language a figure is written in, and the font that draws its Chinese.

matplotlib draws a character its font lacks as an empty box, so a figure is written in the
reader's language (grader/course/messages.py: `kata --lang`, KATA_LANG, the locale) only when
that is English or matplotlib can find a font with Chinese glyphs; otherwise it falls back to
English. `setup.sh` installs one (WenQuanYi Micro Hei).

One implementation for every figure: `kata run --plot` and the HTML report (grader/listings/plots.py)
and `kata train`'s curves.png and cls_attention.png (grader/capstone/training/). matplotlib is
imported inside the functions, and only for a Chinese reader, so importing this module costs nothing.
"""

from __future__ import annotations

import functools

from .messages import language, t

CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans CJK JP",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "AR PL UMing CN",
    "SimHei",
    "Microsoft YaHei",
    "PingFang SC",
)


def text_language() -> str:
    """The language figures are written in: the reader's, when matplotlib can draw it."""
    lang = language()
    return lang if lang == "en" or cjk_font() else "en"


def label(key: str, **fields) -> str:
    """A catalog text for a figure, in `text_language()`."""
    return t(key, lang=text_language(), **fields)


def rc_params() -> dict:
    """matplotlib settings for a figure in `text_language()` (for `matplotlib.rc_context`, around
    both drawing and saving): matplotlib's own defaults, whatever a `matplotlibrc` file said, then
    the Chinese font first for Chinese. matplotlib reads a `matplotlibrc` in the working directory
    before any other, and an instructor may run `kata gradebook` inside a student's folder: one that
    carried `axes.facecolor: red` coloured the class summary, and `text.usetex: True` stopped it."""
    font = cjk_font() if text_language() == "zh" else None
    return {**defaults(), **({"font.sans-serif": [font, "DejaVu Sans"], "axes.unicode_minus": False} if font else {})}


# settings that are no style (matplotlib's own list, style.core's): the backend, the session's
NOT_STYLE = frozenset(
    {
        "interactive",
        "backend",
        "backend_fallback",
        "webagg.port",
        "webagg.address",
        "webagg.port_retries",
        "webagg.open_in_browser",
        "toolbar",
        "timezone",
        "figure.max_open_warning",
        "figure.raise_window",
        "savefig.directory",
        "tk.window_focus",
        "docstring.hardcopy",
        "date.epoch",
    }
)


@functools.lru_cache(maxsize=1)
def _defaults() -> tuple:
    import warnings

    import matplotlib

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return tuple((k, v) for k, v in matplotlib.rcParamsDefault.items() if k not in NOT_STYLE)


def defaults() -> dict:
    """matplotlib's own default settings (no backend, no interactive mode): what every figure of
    the grader is drawn with, never a settings file's."""
    return dict(_defaults())


@functools.lru_cache(maxsize=1)
def cjk_font() -> str | None:
    """The name of a font matplotlib has with Chinese glyphs (one of CJK_FONTS), or None."""
    from matplotlib import font_manager

    names = {f.name for f in font_manager.fontManager.ttflist}
    found = next((n for n in CJK_FONTS if n in names), None)
    if found is None:  # installed after matplotlib cached its font list (setup.sh installs one): look on disk
        for path in font_manager.findSystemFonts():
            if any(part in path.lower() for part in ("wqy", "notosanscjk", "noto-cjk", "sourcehansans")):
                try:
                    font_manager.fontManager.addfont(path)
                except (OSError, RuntimeError, ValueError):
                    continue
        names = {f.name for f in font_manager.fontManager.ttflist}
        found = next((n for n in CJK_FONTS if n in names), None)
    return found


def png_bytes(fig) -> bytes:
    """A matplotlib Figure as PNG bytes (drawn with the Agg backend, no display needed)."""
    import io

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    return buf.getvalue()
