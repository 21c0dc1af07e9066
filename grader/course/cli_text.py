"""The `kata` command line in the reader's language: its help texts and argparse's own words.

The language is chosen before the parser is built (`chosen_language`): `--lang X` or `--lang=X`
anywhere on the command line, else KATA_LANG or the locale (grader/course/messages.py).

Help texts stay English literals in grader/cli.py; `translate(parser, lang)` replaces each by the
catalog entry its place names, when that entry's English (msgid) is the text in the code:
- a command's one-line help: `cli_<command>` (`cli_export_nbgrader`), its description
  `cli_<command>_description` (the top level's command is `kata`);
- an argument's help: `cli_<command>_<dest>`, else `cli_<dest>` for the options many commands share
  (`cli_lang`, `cli_course`);
- an argument group's title and description: `cli_<command>_group<n>_title`, `..._description`.
An English text changed without its entry reads in English (tests/test_cli_zh.py finds it).

argparse takes its own words ("usage: ", "invalid choice: ...") from `gettext.gettext` through its
module name `_` when it formats or fails; `argparse_words(lang)` points that name at the catalog's
`argparse_*` entries while the parser is built and parses. In Chinese, the help is wrapped by
display cells (CellWrappingFormatter): argparse counts characters, and a Chinese one takes two.
"""
from __future__ import annotations

import argparse
import contextlib
import re
import unicodedata

from .messages import CATALOG, language

# argparse's words a user can read (its errors for a programmer's mistakes stay English) -> key
ARGPARSE_KEYS = {
    "usage: ": "argparse_usage",
    "positional arguments": "argparse_positionals",
    "options": "argparse_options",
    "show this help message and exit": "argparse_help",
    "%(prog)s: error: %(message)s\n": "argparse_error",
    "argument %(argument_name)s: %(message)s": "argparse_argument",
    "the following arguments are required: %s": "argparse_required",
    "one of the arguments %s is required": "argparse_one_required",
    "not allowed with argument %s": "argparse_not_allowed",
    "unrecognized arguments: %s": "argparse_unrecognized",
    "ambiguous option: %(option)s could match %(matches)s": "argparse_ambiguous",
    "invalid choice: %(value)r (choose from %(choices)s)": "argparse_invalid_choice",
    "invalid %(type)s value: %(value)r": "argparse_invalid_value",
    "expected one argument": "argparse_expected_one",
    "expected at least one argument": "argparse_expected_at_least_one",
    "expected at most one argument": "argparse_expected_at_most_one",
    "expected %s argument": "argparse_expected_n",
    "expected %s arguments": "argparse_expected_n",
    "ignored explicit argument %r": "argparse_ignored_explicit",
    "unknown parser %(parser_name)r (choices: %(choices)s)": "argparse_unknown_parser",
    "can't open '%(filename)s': %(error)s": "argparse_cannot_open",
}


def chosen_language(argv) -> str:
    """"zh" or "en": the last `--lang X` / `--lang=X` of `argv`, else KATA_LANG or the locale."""
    return lang_option(argv) or language()


def lang_option(argv) -> str | None:
    """The last `--lang X` / `--lang=X` of `argv` (before any `--`), if it is a language."""
    lang = None
    argv = list(argv)
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        if arg == "--lang" and i + 1 < len(argv):
            lang = argv[i + 1]
        elif arg.startswith("--lang="):
            lang = arg[len("--lang="):]
    return lang if lang in ("en", "zh") else None


def _zh(key: str, english: str) -> str | None:
    """The Chinese of catalog entry `key` when its English is `english`."""
    entry = CATALOG.get(key)
    if entry and entry["en"] == english and entry["zh"]:
        return entry["zh"]
    return None


def _word(lang: str):
    def gettext(message: str) -> str:
        key = ARGPARSE_KEYS.get(message)
        entry = CATALOG.get(key) if lang == "zh" and key else None
        return entry["zh"] if entry and entry["zh"] else message
    return gettext


@contextlib.contextmanager
def argparse_words(lang: str):
    """argparse's own words in `lang` until the block ends."""
    saved = argparse._, argparse.ngettext
    word = _word(lang)
    argparse._ = word
    argparse.ngettext = lambda singular, plural, n: word(singular if n == 1 else plural)
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved


def _text(keys, english):
    if not english or english == argparse.SUPPRESS:
        return english
    for key in keys:
        zh = _zh(key, english)
        if zh:
            return zh
    return english


_TOKEN = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]|[^\s\u2e80-\u9fff\uf900-\ufaff\uff00-\uffef]+| ")
_NO_LINE_START = "，。；：、）」』！？…"  # Chinese punctuation stays at the end of its line


def cells(text: str) -> int:
    """Display width: a Chinese character or full-width sign takes two cells."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def wrap_cells(text: str, width: int) -> list[str]:
    """`text` (whitespace already single spaces) in lines of at most `width` display cells: a line
    may break between two Chinese characters, never inside a Latin word or before 。，）."""
    lines, line = [], ""
    for token in _TOKEN.findall(text):
        if token == " " and not line:
            continue
        if not line or cells(line) + cells(token) <= width:
            line += token
        elif token in _NO_LINE_START:  # the Chinese character it follows goes to the next line with it
            keep = len(line.rstrip(_NO_LINE_START))
            if keep > 1 and cells(line[keep - 1]) == 2:
                lines.append(line[:keep - 1].rstrip())
                line = line[keep - 1:] + token
            else:
                line += token  # nothing to carry over: the line runs over
        else:
            lines.append(line.rstrip())
            line = "" if token == " " else token
    return lines + [line.rstrip()] if line.strip() else lines


class CellWrappingFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped by display cells (its own wrapping counts characters, which makes
    Chinese lines twice as wide as the terminal) and between Chinese characters."""

    def _split_lines(self, text, width):
        return wrap_cells(self._whitespace_matcher.sub(" ", text).strip(), width)

    def _fill_text(self, text, width, indent):
        return "\n".join(indent + line
                         for line in wrap_cells(self._whitespace_matcher.sub(" ", text).strip(), width - len(indent)))


def translate(parser: argparse.ArgumentParser, lang: str, command: str = "kata") -> argparse.ArgumentParser:
    """Every help text of `parser` and its subcommands in `lang` (English: unchanged)."""
    if lang != "zh":
        return parser
    parser.formatter_class = CellWrappingFormatter
    parser.description = _text([f"cli_{command}_description"], parser.description)
    parser.epilog = _text([f"cli_{command}_epilog"], parser.epilog)
    groups = [g for g in parser._action_groups if g not in (parser._positionals, parser._optionals)]
    for n, group in enumerate(groups, 1):
        group.title = _text([f"cli_{command}_group{n}_title"], group.title)
        group.description = _text([f"cli_{command}_group{n}_description"], group.description)
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                name = choice.dest if command == "kata" else f"{command}_{choice.dest}"
                choice.help = _text([f"cli_{name}"], choice.help)
            for name, subparser in action.choices.items():
                translate(subparser, lang, name if command == "kata" else f"{command}_{name}")
        else:
            action.help = _text([f"cli_{command}_{action.dest}", f"cli_{action.dest}"], action.help)
    return parser
