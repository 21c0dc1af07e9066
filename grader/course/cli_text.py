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

from .messages import CATALOG, language, t

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
    """ "zh" or "en": the last `--lang X` / `--lang=X` of `argv`, else KATA_LANG or the locale."""
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
            lang = arg[len("--lang=") :]
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


class CellWrappingFormatter(argparse.HelpFormatter):
    """argparse's help, wrapped by display cells (its own wrapping counts characters, which makes
    Chinese lines twice as wide as the terminal) by the kata's one rule (grader/course/wrapping.py:
    between Chinese characters, never inside a code span or between a number and its unit)."""

    def _split_lines(self, text, width):
        from .wrapping import wrap_cells

        return wrap_cells(self._whitespace_matcher.sub(" ", text).strip(), width)

    def _fill_text(self, text, width, indent):
        from .wrapping import wrap_cells

        return "\n".join(
            indent + line for line in wrap_cells(self._whitespace_matcher.sub(" ", text).strip(), width - len(indent))
        )


def _places(parser: argparse.ArgumentParser, command: str = "kata"):
    """(catalog keys, English, setter) of every help text of `parser` and its subcommands."""

    def setter(obj, attr):
        return lambda text: setattr(obj, attr, text)

    yield [f"cli_{command}_description"], parser.description, setter(parser, "description")
    yield [f"cli_{command}_epilog"], parser.epilog, setter(parser, "epilog")
    groups = [g for g in parser._action_groups if g not in (parser._positionals, parser._optionals)]
    for n, group in enumerate(groups, 1):
        yield [f"cli_{command}_group{n}_title"], group.title, setter(group, "title")
        yield [f"cli_{command}_group{n}_description"], group.description, setter(group, "description")
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:
                name = choice.dest if command == "kata" else f"{command}_{choice.dest}"
                yield [f"cli_{name}"], choice.help, setter(choice, "help")
            for name, subparser in action.choices.items():
                yield from _places(subparser, name if command == "kata" else f"{command}_{name}")
        elif not isinstance(action, argparse._HelpAction):  # -h: argparse's own words (argparse_words)
            yield [f"cli_{command}_{action.dest}", f"cli_{action.dest}"], action.help, setter(action, "help")


def _said(english) -> bool:
    return bool(english) and english != argparse.SUPPRESS


def translate(parser: argparse.ArgumentParser, lang: str, command: str = "kata") -> argparse.ArgumentParser:
    """Every help text of `parser` and its subcommands in `lang` (English: unchanged)."""
    if lang != "zh":
        return parser
    places = list(_places(parser, command))  # the walk reads the English before any is replaced
    for p in [parser, *(sub for sub in _subparsers(parser))]:
        p.formatter_class = CellWrappingFormatter
    for keys, english, put in places:
        put(_text(keys, english))
    return parser


def _subparsers(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield sub
                yield from _subparsers(sub)


def untranslated(parser: argparse.ArgumentParser) -> list[str]:
    """The help texts (of an English parser) with no current Chinese in the catalog: `kata verify`
    names each by the key it would be read from."""
    return [
        t("clitext_no_chinese", name=keys[0], english=english)
        for keys, english, _ in _places(parser)
        if _said(english) and _text(keys, english) == english
    ]
