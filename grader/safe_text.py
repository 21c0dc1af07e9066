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
