"""Text a submission had a hand in, made safe to show anywhere: a terminal, a report, a page.

A student's exception message, file name or notebook text may hold terminal control: ANSI escape
sequences (colours, cursor moves, a cleared line), a carriage return that lets the next text
overwrite the line, a backspace, C1 controls, or Unicode bidirectional overrides that show text
in another order than it is. Printed as they are, they could draw a fake green
"Score: 440 / 440" line in the grader's own output. `plain` removes every such sequence and
character, keeping newlines and tabs, so the text reads the same as it did minus the tricks.
`printable` (grader/checking/runner.py) applies it to every student-derived string of a
report, so every output format gets it.
"""

from __future__ import annotations

import re

# An escape sequence (CSI with its parameters; OSC/DCS/APC/PM/SOS strings with their terminator,
# or, unterminated, their introducer alone; ESC and one more character), then any C0 control but
# tab and newline, DEL, the C1 controls, and the bidirectional embeddings, overrides, isolates.
_CONTROL = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]{0,512}(?:\x07|\x1b\\|\x9c)"
    r"|\x9b[0-?]*[ -/]*[@-~]?"
    r"|[\x9d\x90\x98\x9e\x9f][^\x07\x1b\x9c]{0,512}(?:\x07|\x1b\\|\x9c)"
    r"|\x1b[ -~]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
)


def plain(text: str) -> str:
    """`text` without terminal control sequences or control characters (newline and tab kept)."""
    return _CONTROL.sub("", text)


def escaped(text) -> str:
    """`text` with every character that does not print as itself (controls and escapes, format
    characters such as a zero-width space or a BOM, line breaks, any space but " ") written as an
    escape (\\x1b, \\u200b): for a name someone else chose (a member of an archive), shown so that
    it can neither drive the terminal nor pass for another name."""
    return "".join(c if c == " " or c.isprintable() else ascii(c)[1:-1] for c in str(text))


# -- one rule per output format for text a submission had a hand in (names, messages, notes)

NEWLINE_MARK = "⏎"
_LINE_BREAKS = re.compile("\r\n|[\n\r\u2028\u2029\x85\x0b\x0c]")


def one_line(text) -> str:
    """`text` made plain and kept on one line: every line break (a file or folder named
    "x\\n✔ alice ... 58 / 58") becomes a visible ⏎, a tab a space. For names and notes, which
    are one line wherever they are shown (a terminal, a CSV cell, a table)."""
    return plain(_LINE_BREAKS.sub(NEWLINE_MARK, str(text))).replace("\t", " ")


def indent_lines(text, indent: str = "  ") -> str:
    """`text` made plain with every line after the first indented by `indent`: a message's own
    lines stay under the grader's line that introduces it and none starts at column 0."""
    first, *rest = plain(str(text)).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join([first, *(indent + line for line in rest)])


def block(text, indent: int = 2, style: str = ""):
    """A rich renderable of `text` whose every line, a wrapped one too, starts `indent` columns
    in: a student's message printed under the grader's own line, never at column 0. Wrapped by
    the kata's rule (grader/course/wrapping.py): a code span (`keys.T`), an English word or a
    number and its unit is never split across lines."""
    from rich.padding import Padding

    from .wrapping import Wrapped

    return Padding(Wrapped(plain(str(text)), style), (0, 0, 0, indent))


_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def csv_cell(text) -> str:
    """A CSV cell for text a submission had a hand in: on one line, and prefixed with ' when it
    starts like a spreadsheet formula (= + - @ tab CR: OWASP's CSV-injection rule), so a
    spreadsheet shows it as text and never evaluates it. The same holds for each piece after a
    `;`: a spreadsheet whose list separator is `;` (Excel in a German or French locale) may split
    the cell there, and `x;=2+3` must not give a cell `=2+3` (csv_text also quotes such a cell)."""
    text = str(text)
    first, *rest = one_line(text).split(";")
    if _formula(text) or _formula(first):
        first = "'" + first
    return ";".join([first, *("'" + p if _formula(p) else p for p in rest)])


def _formula(text: str) -> bool:
    """`text` starts like a formula, after any spaces and invisible characters a spreadsheet may
    skip (a no-break space, U+200B, a BOM: `\ufeff=1+1` is a formula to some)."""
    import unicodedata

    if text.startswith(_FORMULA_START):
        return True
    rest = text.lstrip()
    while rest and (unicodedata.category(rest[0]) in ("Cf", "Zs") or rest[0].isspace()):
        rest = rest[1:]
    return rest.startswith(_FORMULA_START)


_CSV_QUOTE = re.compile(r'[,;"\r\n]')


def csv_text(rows) -> str:
    """Rows of cells as CSV text (comma-separated, "\\n" line ends): a cell holding a comma, a
    quote, a line break or a `;` is quoted, so a spreadsheet that splits on `;` keeps it whole
    too (Python's csv module quotes only for its own delimiter)."""

    def cell(value) -> str:
        value = str(value)
        return '"' + value.replace('"', '""') + '"' if _CSV_QUOTE.search(value) else value

    return "".join(",".join(cell(v) for v in row) + "\n" for row in rows)


# what makes a link or an image ([ ]), an autolink or an HTML tag (< >), an entity (&), emphasis
# (* ~, and _ unless it is inside a word, where CommonMark never reads it so), code (`), math ($)
# or a table cell (|) inside a line (the text never starts a line, where # or - would matter)
_MD_SPECIAL = re.compile(r"([\\`*~\[\]<>&|$]|(?<![^\W_])_|_(?![^\W_]))")


# what GitHub-flavoured Markdown (and mistune's url plugin, markdown-it's linkify) turns into a
# link without any markup: a scheme's `://` (https://, ftp://), `www.`, an e-mail's `@`
_AUTOLINK = re.compile(r"(:)(?=//)|(?i:(?<=www)(\.))|(@)")


def markdown(text) -> str:
    """`text` as literal Markdown text on one line, for inside a line (a table cell, a list item
    after its marker): each character that could start a link, an image, emphasis, code, math,
    a table cell, an entity or an HTML tag (`<img onerror=...>`) is backslash-escaped, which
    CommonMark allows for every ASCII punctuation character and shows as the character; so is
    what a GFM viewer would make a link of on its own (the `:` of `https://`, the `.` of `www.`,
    an `@`), which keeps it plain text there and still reads the same. The rest
    (`alice.zip: no 'ch01/' folder`, `s1_11_matmul.py`) reads as it is."""
    return _AUTOLINK.sub(lambda m: "\\" + m.group(0), _MD_SPECIAL.sub(r"\\\1", one_line(text)))
