"""Where the kata's terminal text may break into lines: one rule for every message and table
cell that `kata list`, `kata check`, `kata watch` and `kata grade` print.

A line may break at a space, and between two Chinese characters (with the punctuation that may
not start or end a line, "，" "（", kept on its side); never inside a word, a code span
(`kata watch`, `keys.T`), a points cell ("3/5"), nor between a number and the word after it:
what it counts or its unit ("1 个检查", "0/38 exercises", "12 s", "32 × 256 个").

rich wraps only at spaces (`rich._wrap.divide_line`, which also breaks at U+00A0, a `\\s` to
Python) and folds a longer run of characters anywhere: a Chinese sentence is one long "word" to it,
cut at the column's edge, "1 " | "个检查" or "`" | "kata watch`". `Wrapped` lays a rich Text out
by this rule instead, wherever rich puts it: printed alone or in a table's cell.
"""

from __future__ import annotations

import re

from rich.cells import cell_len, chop_cells
from rich.containers import Lines
from rich.measure import Measurement
from rich.text import Text

_CJK = "\u2e80-\u2fff\u3000-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef"
_NO_START = "，。、；：！？）」』】》〉”’・…" + ",.;:!?)\\]}%"  # kept with the unit before them
_NO_END = "（「『【《〈“‘" + "(\\[{"  # kept with the unit after them
_SPAN = r"`[^`\n]+`"
# One unit a line may break before: a run of spaces, a CJK character, or a run of anything else (a
# word, a code span with the spaces inside it, a number): punctuation that may not start or end a
# line stays with the unit on its side.
_UNIT = re.compile(rf"\s+|[{_NO_END}]*(?:[{_CJK}]|(?:{_SPAN}|[^\s{_CJK}`]|`)+)[{_NO_START}]*")
_NUMBER = re.compile(r"[(\[（]?[-+±~≈]?\d+(?:[.,/:]\d+)*%?")
_CJK_START = re.compile(f"[{_NO_END}]*[{_CJK}]")
_OPERATOR = {"×", "x", "*", "+", "-", "–", "/", "÷"}


def units(text: str) -> list[tuple[int, str]]:
    """(offset, unit) of one line of `text`, each unit a piece no line break may fall inside. A
    number, the space after it and the unit after that are one: "1 个", "12 s", "0/38 exercises";
    so is a product or sum of numbers, "32 × 256 个"."""
    found = [(m.start(), m.group()) for m in _UNIT.finditer(text)]
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(found):
        start, unit = found[i]
        i += 1
        numeric = bool(_NUMBER.fullmatch(unit))
        while numeric and i < len(found):
            nxt = found[i][1]
            if nxt == " " and i + 1 < len(found) and not found[i + 1][1].isspace():
                follow = found[i + 1][1]
                if (
                    follow in _OPERATOR
                    and i + 3 < len(found)
                    and found[i + 2][1] == " "
                    and _NUMBER.fullmatch(found[i + 3][1])
                ):  # "32 × 256": still a number
                    unit += f" {follow} {found[i + 3][1]}"
                    i += 4
                    continue
                unit += " " + follow  # "1 个", "12 s"
                i += 2
            elif _CJK_START.match(nxt):  # "5个"
                unit += nxt
                i += 1
            numeric = False
        out.append((start, unit))
    return out


def breaks(text: str, width: int, fold: bool = True) -> list[int]:
    """The offsets at which one line of `text` (no newline in it) is cut into lines of at most
    `width` cells (a CJK character takes two): before a unit that does not fit on the line. A unit
    wider than a whole line goes on a line of its own, folded there (`fold`) or left to overflow;
    spaces where a line breaks end the line before (and are trimmed), never start the next."""
    width = max(1, width)
    cuts: list[int] = []
    used, has_text = 0, False
    for start, unit in units(text):
        size = cell_len(unit)
        if unit.isspace():
            used += size
            continue
        if has_text and used + size > width:
            cuts.append(start)
            used = 0
        if size > width - used and fold:  # wider than a line: folded, as rich folds it
            pieces = chop_cells(unit, width - used) if used else chop_cells(unit, width)
            if used and len(pieces) > 1:  # after an indent: the rest of the unit on full lines
                rest = unit[len(pieces[0]) :]
                pieces = [pieces[0], *chop_cells(rest, width)]
            at = start
            for piece in pieces[:-1]:
                at += len(piece)
                cuts.append(at)
            used = cell_len(pieces[-1])
        else:
            used += size
        has_text = True
    return cuts


def wrap_cells(text: str, width: int) -> list[str]:
    """`text` cut into lines of at most `width` cells by the rule above; its own line breaks kept,
    spaces at the end of a line trimmed."""
    out: list[str] = []
    for paragraph in text.split("\n"):
        edges = [0, *breaks(paragraph, width), len(paragraph)]
        out.extend(paragraph[a:b].rstrip() for a, b in zip(edges, edges[1:]))
    return out


class Wrapped:
    """A rich Text laid out by the kata's rule, not rich's: printed alone or as a table's cell,
    with its styles, justification and overflow as the Text's. (A renderable holding the Text,
    not a Text: `Console.print` joins the Texts it is given into a new plain Text.)"""

    def __init__(self, text: str | Text, style: str = ""):
        self.text = text if isinstance(text, Text) else Text(text, style=style)

    def lines(self, console, width: int, justify=None, overflow=None) -> Lines:
        text = self.text
        justify = text.justify or justify or "default"
        overflow = text.overflow or overflow or "fold"
        out = Lines()
        for line in text.split(allow_blank=True):
            if "\t" in line.plain:
                line.expand_tabs(text.tab_size or console.tab_size)
            cuts = [] if text.no_wrap else breaks(line.plain, width, fold=overflow == "fold")
            for piece in line.divide(cuts):
                piece.rstrip()
                # justified and cut to the width as rich does it, the piece on one line
                out.extend(piece.wrap(console, width, justify=justify, overflow=overflow, no_wrap=True))
        return out

    def __rich_console__(self, console, options):
        lines = self.lines(console, options.max_width, options.justify, options.overflow)
        yield from Text("\n").join(lines).render(console, end=self.text.end)

    def __rich_measure__(self, console, options) -> Measurement:
        """At least its widest unbreakable unit (a code span, "3/5"), at most its longest line."""
        lines = self.text.plain.split("\n")
        longest = max((cell_len(line) for line in lines), default=0)
        widest = max((cell_len(u) for line in lines for _, u in units(line) if not u.isspace()), default=0)
        return Measurement(min(widest, longest), longest).clamp(max_width=options.max_width)
