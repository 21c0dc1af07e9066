"""The message catalog: every text a student sees, in English and Chinese.

Two ways to write a text, both checked by `kata verify` and tests/test_i18n.py:
- a key of `CATALOG` (key -> {"en", "zh"}), rendered with `t(key, **fields)` or held as
  `Msg.key(key, **fields)`. The texts live in a gettext catalog, `grader/locale/zh/messages.po`
  (msgctxt: the key; msgid: the English; msgstr: the Chinese), which Poedit, Weblate or polib edit
  like the stubs' catalogs (locale/zh/); this module reads it at import (load_catalog);
- inline in a check, `Msg(en, zh, **fields)`: two templates with the same {fields}, or two
  f-strings interpolating the same expressions. `code(text)` is text that reads the same in
  both languages (a Python expression such as `softmax([2, 3, -inf])`).

The language is `KATA_LANG` (set by `kata --lang`), else the locale (`LC_ALL`, `LC_MESSAGES`,
`LANG`): Chinese for any zh* locale, English otherwise and as the fallback.
"""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import re
import string
from pathlib import Path

LANGS = ("en", "zh")

# ---------------------------------------------------------------- the catalog file (issue 28, X3)
CATALOG_FILE = Path(__file__).resolve().parent.parent / "locale" / "zh" / "messages.po"
_CACHE_FORMAT = 1  # bump when parse_catalog reads the file differently


class CatalogError(RuntimeError):
    """The message catalog cannot be read (missing, not UTF-8, not a gettext catalog)."""


def parse_catalog(path: Path | str = CATALOG_FILE, text: str | None = None) -> dict[str, dict[str, str]]:
    """key -> {"en", "zh"} from the gettext catalog at `path` (or its `text`), read with polib:
    msgctxt is the key, msgid the English, msgstr the Chinese. A fuzzy or empty translation reads ""
    (the English is shown, as gettext does); obsolete entries, entries without msgctxt and a key's
    later repeats are left out. `kata verify` names each of these (grader/course/i18n.py)."""
    try:
        import polib
    except ImportError:  # setup.sh unpacks the offline archive with the system Python, before the venv
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as e:
                raise CatalogError(f"{path}: not a readable gettext catalog: {e}") from e
        return _parse_plain(text)
    try:
        po = polib.pofile(text if text is not None else str(path), wrapwidth=0)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise CatalogError(f"{path}: not a readable gettext catalog: {e}") from e
    catalog: dict[str, dict[str, str]] = {}
    for e in po:
        if e.obsolete or not e.msgctxt or e.msgctxt in catalog:
            continue
        catalog[e.msgctxt] = {"en": e.msgid, "zh": "" if "fuzzy" in e.flags else e.msgstr}
    return catalog


def _parse_plain(text: str) -> dict[str, dict[str, str]]:
    """parse_catalog without polib (the same result on the kata's catalog: tests/test_message_catalog.py):
    entries separated by blank lines, msgctxt/msgid/msgstr with continuation lines, `#,` flags,
    `#~` obsolete entries; strings unquoted as Python literals (the same escapes as gettext's)."""
    import ast

    catalog: dict[str, dict[str, str]] = {}
    entry: dict[str, str] = {}
    flags: set[str] = set()
    field, obsolete = None, False

    def flush():
        nonlocal entry, flags, field, obsolete
        key = entry.get("msgctxt")
        if key and not obsolete and key not in catalog and "msgid" in entry:
            catalog[key] = {"en": entry["msgid"], "zh": "" if "fuzzy" in flags else entry.get("msgstr", "")}
        entry, flags, field, obsolete = {}, set(), None, False

    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            flush()
        elif line.startswith("#~"):
            obsolete = True
        elif line.startswith("#,"):
            flags |= {f.strip() for f in line[2:].split(",")}
        elif line.startswith("#"):
            continue
        elif line.startswith('"') and field:
            entry[field] += ast.literal_eval(line)
        else:
            name, _, rest = line.partition(" ")
            field = name if name in ("msgctxt", "msgid", "msgid_plural", "msgstr") else None
            if field:
                entry[field] = ast.literal_eval(rest.strip())
    flush()
    return catalog


def load_catalog(path: Path | str = CATALOG_FILE) -> dict[str, dict[str, str]]:
    """parse_catalog(path), through a JSON copy in `__pycache__/` beside it, used while its SHA-256
    of the catalog matches: polib takes ~20 ms and the copy ~1 ms, and every kata command imports
    this module. The copy is written atomically (even under PYTHONDONTWRITEBYTECODE: without it every
    command would parse again), and not at all where the folder is read-only."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CatalogError(f"{path}: the grader's message catalog cannot be read: {e.strerror or e}") from e
    digest = hashlib.sha256(data).hexdigest()
    cache = path.parent / "__pycache__" / f"{path.name}.json"
    try:
        cached = json.loads(cache.read_bytes())
        if cached["format"] == _CACHE_FORMAT and cached["sha256"] == digest:
            return cached["catalog"]
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise CatalogError(f"{path}:{line}: not UTF-8 ({e.reason})") from e
    catalog = parse_catalog(path, text)
    _write_cache(cache, {"format": _CACHE_FORMAT, "sha256": digest, "catalog": catalog})
    return catalog


def _write_cache(cache: Path, content: dict) -> None:
    import tempfile

    tmp = None
    try:
        cache.parent.mkdir(exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=cache.parent, prefix=f".{cache.name}.", suffix=".tmp")
        os.fchmod(fd, 0o644)  # readable by whoever reads the catalog beside it
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump(content, f, ensure_ascii=False)
        os.replace(tmp, cache)
        tmp = None
    except OSError:
        pass  # a cache only: the next import parses again
    finally:
        if tmp is not None:
            try:
                os.unlink(tmp)
            except OSError:
                pass


# ---------------------------------------------------------------- end of the catalog file (X3)

# key -> {"en": English, "zh": Chinese}, from grader/locale/zh/messages.po (load_catalog above): add and
# translate messages there (README, "Translating"), never here.
CATALOG: dict[str, dict[str, str]] = load_catalog()


def language() -> str:
    """ "zh" or "en": KATA_LANG, else the POSIX locale variables in their order of precedence."""
    for var in ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def pick(en: str, zh: str, lang: str | None = None) -> str:
    """`zh` when the language is Chinese and there is a Chinese text, else `en`."""
    return zh if (lang or language()) == "zh" and zh else en


# ---------------------------------------------------------------- spacing in Chinese
# One rule for Chinese text next to Latin letters and digits: a space between them ("有 3 个值",
# "这看起来像是 eps 加在了…"). The catalog's own texts are written so (tests/test_message_catalog.py
# holds it); where a {field} meets Chinese, the space is added when the field is filled in, since
# only then is it known whether the value starts or ends with a Latin letter or a digit.
HAN = re.compile(r"[\u3400-\u9fff]")
LATIN = re.compile(r"[A-Za-z0-9`]")


def needs_space(left: str, right: str) -> bool:
    """Whether the characters `left` and `right` are Chinese and Latin (either way round)."""
    return bool(HAN.match(left) and LATIN.match(right) or LATIN.match(left) and HAN.match(right))


def spacing_problems(zh: str) -> list[str]:
    """The spacing rule on a Chinese text as written: a Chinese character right next to a Latin
    letter, a digit or a `code span` (fields are filled in by spaced_format, code spans are code)."""
    text = re.sub(r"`[^`\n]*`", "`x`", zh)
    text = re.sub(r"\{[A-Za-z_][^{}]*\}", "{}", text)
    for i in range(len(text) - 1):
        if needs_space(text[i], text[i + 1]):
            return [t("i18n_spacing", snippet=text[max(0, i - 8) : i + 10], left=text[i], right=text[i + 1])]
    return []


def spaced_format(template: str, fields: dict) -> str:
    """`template.format_map(fields)` (an unknown field stays as written), with a space wherever a
    field's value meets the text around it Chinese-to-Latin (needs_space)."""
    f = string.Formatter()
    out, after_field = "", False
    for literal, name, spec, conv in f.parse(template):
        if literal:
            if after_field and out and needs_space(out[-1], literal[0]):
                out += " "
            out += literal
            after_field = False
        if name is None:
            continue
        try:
            value, _ = f.get_field(name, (), fields)
        except KeyError:
            value = None
        if value is None and name.split(".")[0].split("[")[0] not in fields:
            piece = "{" + name + (f"!{conv}" if conv else "") + (f":{spec}" if spec else "") + "}"
        else:
            piece = f.format_field(f.convert_field(value, conv), f.vformat(spec, (), fields) if spec else "")
        if piece and out and needs_space(out[-1], piece[0]):
            out += " "
        out += piece
        after_field = bool(piece)
    return out


class _Safe(dict):
    def __missing__(self, key):
        return "{" + key + "}"


# Whether texts are being rendered for a hidden check (the runner sets it while one runs: it is
# checking.compare.HIDDEN): a field marked `from_input` then shows as "…".
CONCEAL: contextvars.ContextVar[bool] = contextvars.ContextVar("kata_hidden", default=False)
CONCEALED = "…"


class FromInput:
    """A field value that comes from a check's input (`Msg(..., x=from_input(x))`): a hidden
    check's message never shows it, in any language, whatever its type or size. Rendered
    normally everywhere else, with the field's format spec."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __format__(self, spec: str) -> str:
        return CONCEALED if CONCEAL.get() else format(self.value, spec)

    def __str__(self) -> str:
        return format(self, "")

    def __repr__(self) -> str:
        return f"from_input({self.value!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, FromInput) and _same(self.value, other.value)

    __hash__ = None


class _Concealed:
    """What a `from_input` field becomes in a hidden check: "…" however the template formats it
    (`{x}`, `{x!r}`, `{x:.3g}`, `{x.shape}`, `{x[0]}`)."""

    def __format__(self, spec: str) -> str:
        return CONCEALED

    __str__ = __repr__ = lambda self: CONCEALED

    def __getattr__(self, name):
        return self

    def __getitem__(self, key):
        return self


def _field(value, lang: str):
    """A field's value as the template formats it: a Msg rendered in `lang`, a `from_input` value
    concealed in a hidden check and otherwise formatted as itself (a Msg inside: rendered in `lang`)."""
    if isinstance(value, FromInput):
        if CONCEAL.get():
            return _Concealed()
        value = value.value
    return value.render(lang) if isinstance(value, Msg) else value


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # a tensor's == is elementwise
        return a is b


def from_input(value) -> FromInput:
    """Mark a message field as the check's input (or derived from it): masked in hidden checks.
    The rule follows the value, not how its text looks: a token id 42, a list, a shape."""
    return FromInput(value)


class Msg:
    """A text in English and Chinese, rendered in the reader's language when shown.

    With fields, `en` and `zh` are templates (`str.format` syntax) and fields may be Msgs
    themselves (rendered in the same language). Without fields they are final texts (e.g.
    f-strings), never formatted, so braces in them are safe. A field marked `from_input(value)`
    is the check's input: a hidden check's message shows it as "…" (CONCEAL).
    """

    __slots__ = ("en", "zh", "fields")

    def __init__(self, en: str, zh: str, /, **fields):
        if not isinstance(en, str) or not isinstance(zh, str):
            raise TypeError("Msg(en, zh): both texts must be strings")
        self.en = en
        self.zh = zh
        self.fields = fields

    @classmethod
    def key(cls, key: str, /, **fields) -> "Msg":
        entry = CATALOG[key]
        return cls(entry["en"], entry["zh"], **fields)

    @classmethod
    def of(cls, exc: BaseException) -> "Msg":
        """The message of an error that is already in the reader's language (a StudentError's,
        a CheckFailure's)."""
        if not isinstance(exc, BaseException):
            raise TypeError(f"Msg.of takes an exception, not {type(exc).__name__}")
        text = str(exc)
        return cls(text, text)

    def render(self, lang: str | None = None, conceal: bool | None = None) -> str:
        """The text in `lang` (default: the reader's). `conceal`: render as a hidden check's, every
        `from_input` field as "…" (default: whether a hidden check is running, CONCEAL)."""
        if conceal is not None and conceal != CONCEAL.get():
            token = CONCEAL.set(conceal)
            try:
                return self.render(lang)
            finally:
                CONCEAL.reset(token)
        lang = lang or language()
        text = self.zh if lang == "zh" and self.zh else self.en
        if not self.fields:
            return text
        fields = {k: _field(v, lang) for k, v in self.fields.items()}
        try:
            return spaced_format(text, fields) if text is self.zh else text.format_map(_Safe(fields))
        except (ValueError, TypeError, IndexError, AttributeError, KeyError):
            return self.en.format_map(_Safe(fields))

    def __str__(self) -> str:
        return self.render()

    def __format__(self, spec: str) -> str:
        return format(self.render(), spec)

    def __repr__(self) -> str:
        return f"Msg({self.en!r}, {self.zh!r}{''.join(f', {k}={v!r}' for k, v in self.fields.items())})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Msg) and (self.en, self.zh, self.fields) == (other.en, other.zh, other.fields)

    __hash__ = None


def code(text: str, /, **fields) -> Msg:
    """Text that reads the same in both languages: code, numbers, names (`softmax([1, 2])`)."""
    return Msg(text, text, **fields)


def joined(items, sep: str = "; ", sep_zh: str = "；") -> Msg:
    """Several texts as one, separated by `sep` (`sep_zh` in Chinese)."""
    items = list(items)
    for item in items:
        if not isinstance(item, Msg):
            raise TypeError(f"joined() takes Msg items, not {type(item).__name__} {item!r}")
    names = {f"i{n}": item for n, item in enumerate(items)}
    en = sep.join("{" + name + "}" for name in names)
    zh = sep_zh.join("{" + name + "}" for name in names)
    return Msg(en, zh, **names) if names else Msg("", "")


def t(key: str, lang: str | None = None, **fields) -> str:
    """The catalog text `key` with its {fields}, in `lang` (default: the current language)."""
    return Msg.key(key, **fields).render(lang)


# ---------------------------------------------------------------- completeness
CJK = re.compile(r"[\u3400-\u9fff]")  # ideographs: punctuation alone is not Chinese


def placeholders(template: str) -> set[str]:
    """The field names a template uses ({what}, {index}, {err:.3g} -> err). Raises ValueError
    for a malformed template (a single brace)."""
    names = set()
    for _, name, _, _ in string.Formatter().parse(template):
        if name is not None:
            if name == "" or name.isdigit():
                raise ValueError(t("i18n_positional_field", field="{" + name + "}", template=template))
            names.add(name.split(".")[0].split("[")[0])
    return names


def pair_problems(en: str, zh: str, templates: bool = True, empty: bool = True) -> list[str]:
    """What is wrong with one English/Chinese pair: an empty side (unless `empty` is false: the
    caller names it its own way), Chinese text without Chinese, or (for templates) different or
    malformed {fields}. Worded in the reader's language (`kata verify` prints them)."""
    problems = []
    if not en.strip() and empty:
        problems.append(t("i18n_pair_en_empty"))
    pending = False  # the Chinese is still to write ("" or "TODO"): its fields are compared once it is
    if not zh.strip():
        pending = True
        if empty:
            problems.append(t("i18n_pair_zh_empty"))
    elif not CJK.search(zh) and re.search(r"[A-Za-z]", re.sub(r"\{[^{}]*\}", "", en)):
        pending = True
        problems.append(t("i18n_pair_no_chinese", zh=zh))
    problems += spacing_problems(zh)
    if templates and not pending:
        try:
            a, b = placeholders(en), placeholders(zh)
        except ValueError as e:
            problems.append(str(e))
        else:
            if a != b:
                problems.append(t("i18n_pair_fields_differ", en=sorted(a), zh=sorted(b)))
    return problems


def catalog_problems(catalog: dict | None = None) -> list[str]:
    """Every catalog entry has exactly an English and a Chinese text with the same fields."""
    problems = []
    for key, entry in (CATALOG if catalog is None else catalog).items():
        langs = set(entry)
        if langs != set(LANGS):
            missing = sorted(set(LANGS) - langs)
            extra = sorted(langs - set(LANGS))
            problems.append(
                f"message {key!r}: "
                + "; ".join(
                    ([f"no {', '.join(missing)} text"] if missing else [])
                    + ([f"unknown language(s) {extra}"] if extra else [])
                )
            )
            continue
        problems += [f"message {key!r}: {p}" for p in pair_problems(entry["en"], entry["zh"])]
    return problems
