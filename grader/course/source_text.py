"""A student's Python file as the text Python runs: one decoding for everything the trusted side reads.

Python's importer does not read a file as UTF-8: it honours a UTF-8 byte-order mark and a PEP 263
coding line (`# -*- coding: latin-1 -*-` on line 1 or 2). A scan that decoded the bytes as UTF-8
once saw a different program from the one the worker ran: `# coding: utf-7` turns a line that is one
comment in UTF-8 into code (`+AAo-import torch+AAo-...`), and a BOM or a latin-1 line hid an import of
tiktoken from a scan that gave up on the file. So every reader of a student's source on the trusted
side (the forbidden-API scan, the exercise files it follows, the attempt flags, `kata similarity`,
the notebooks' .py, the nbgrader export's cell scan) reads it through `decode` here:

- the bytes are decoded exactly as Python decodes them (`importlib.util.decode_source`, which is
  `tokenize.detect_encoding` plus universal newlines), and the result is proved: the code Python's
  own compiler builds from the raw bytes, as the importer does, must equal the code it builds from
  the decoded text (code objects compare their bytecode, constants, names and line tables, nested
  functions and classes included), so what the worker runs is the text the scan reads. A file where
  they differ is refused ("mismatch"), never scanned as text. (Comparing `ast.dump` of the two
  syntax trees says the same for the course's files, tests/test_source_decoding.py checks it over a
  corpus of encodings, but took 1.2 s for 256 KB of dense code where this takes 0.2 s: every
  exercise file is read when a submission is opened, outside its grading budget.);
- a coding line naming anything but UTF-8 (in any spelling: `utf8`, `UTF_8`, `utf-8-unix`) is
  refused ("coding"): the grader reads one encoding, the one Python uses by default. The text is
  still decoded, so `kata similarity` compares what Python would run;
- bytes Python cannot decode are refused ("not_utf8"); a file Python cannot compile is "syntax"
  (its import fails in the worker too, with Python's own message); a file too long to prove cheaply
  is "too_large" and one nested too deeply for the parser "too_deep".

`SourceText.text` is the text Python runs (None when there is none the grader can vouch for);
`kind` is "" for a file that may be graded.
"""

from __future__ import annotations

import codecs
import importlib.util
import io
import re
import tokenize
import warnings
from dataclasses import dataclass

from .messages import t

# The scan's limit (256 K characters, grader/course/scan.py), in bytes: past it the grader does not
# spend its own time compiling the file (the scan refuses it as too long; the course's longest
# solution is 7 KB). At most 0.2 s per file on a busy 2-core machine.
MAX_BYTES = 256 * 1024
UTF8 = frozenset({"utf-8", "utf-8-sig"})
# PEP 263's pattern, as tokenize has it
COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")
# the refusals that stop the file being graded at all (the others are Python's own, or the scan's)
REFUSED = frozenset({"coding", "not_utf8", "mismatch"})


@dataclass(frozen=True)
class SourceText:
    text: str | None  # what Python runs, BOM and coding line honoured; None when the grader cannot vouch for any
    kind: str = ""  # "" (graded as usual), "coding", "not_utf8", "mismatch", "syntax", "too_large", "too_deep"
    line: int = 1  # where the trouble is
    detail: str = ""  # the encoding named, or Python's own error message (never more than 80 characters)
    lines: int = 1  # how many lines the file has

    def refusal(self, file: str, exercise: str) -> str:
        """The message of a file refused outright (`kind` in REFUSED), naming the file and the line."""
        return t(f"src_{self.kind}", file=file, line=self.line, encoding=self.detail, exercise=exercise)


def _cookie_line(data: bytes) -> int:
    """The line (1 or 2) of the coding line Python honours, 1 when none is found."""
    lines = data.split(b"\n", 2)[:2]
    for i, line in enumerate(lines, 1):
        if COOKIE.match(line.split(b"\r")[0]):
            return i
    return 1


def _line_of(data: bytes, pos: int) -> int:
    head = data[:pos]
    return head.count(b"\n") + (head.count(b"\r") - head.count(b"\r\n")) + 1


def _code(source, name: str):
    """What the importer compiles from `source` (SourceLoader.source_to_code)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for "\d" and the like: the student's, not ours
        return compile(source, name, "exec", dont_inherit=True)


def decode(data: bytes, name: str = "<submission>") -> SourceText:
    """The text Python runs from the file holding `data` (see the module doc)."""
    lines = data.count(b"\n") + 1
    if len(data) > MAX_BYTES:
        return SourceText(None, "too_large", 1, "", lines)
    try:
        encoding = tokenize.detect_encoding(io.BytesIO(data).readline)[0]
        text = importlib.util.decode_source(data)
    except (SyntaxError, UnicodeDecodeError, LookupError) as e:
        pos = getattr(e, "start", None)
        line = _line_of(data, pos) if isinstance(pos, int) else _cookie_line(data)
        return SourceText(None, "not_utf8", line, "", lines)
    lines = text.count("\n") + 1
    try:
        python = _code(data, name)
    except SyntaxError as e:  # NUL bytes, an unclosed bracket, ...: the worker's import fails too
        return SourceText(text, "syntax", e.lineno or 1, str(e.msg)[:80], lines)
    except ValueError as e:  # NUL bytes, on some Pythons
        return SourceText(text, "syntax", 1, str(e)[:80], lines)
    except (RecursionError, MemoryError):
        return SourceText(None, "too_deep", 1, "", lines)
    try:
        ours = _code(text, name)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        ours = None
    if ours != python:
        return SourceText(None, "mismatch", 1, "", lines)
    if codecs.lookup(encoding).name not in UTF8:
        return SourceText(text, "coding", _cookie_line(data), codecs.lookup(encoding).name[:40], lines)
    return SourceText(text, "", 1, "", lines)


def of_text(code: str, name: str = "<submission>") -> SourceText:
    """A text about to be written as a UTF-8 .py (a notebook's cells), read as Python will read that file."""
    return decode(code.encode("utf-8", "surrogatepass"), name)
