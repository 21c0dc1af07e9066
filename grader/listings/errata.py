"""ERRATA.md's entries in the reader's language: `kata run LISTING --book` shows them under 勘误 / ERRATA.

ERRATA.md is written in English. Its translations live in one gettext catalog per language,
`locale/<lang>/errata.po`, like the stubs' (grader/authoring/stub_i18n.py): one entry per ERRATA.md
entry, `msgctxt` its id (`E-1.12-d`), `msgid` its English (the text under its `### ` heading, stripped),
`msgstr` the translation. Any gettext tool (Poedit, Weblate, polib) edits it; `kata stubs --lang zh
--update-catalogs` adds the entries ERRATA.md gained and marks as fuzzy the ones whose English changed
(the old English kept as `#| msgid`, as gettext's msgmerge does); `kata verify` refuses a catalog
that lacks an entry, or holds a fuzzy or stale one.

An entry with no finished translation (none, fuzzy, or made for English that has since changed) is
shown in English: a stale translation may say what the entry no longer says.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

import polib

from ..course.messages import t

ERRATA = "ERRATA.md"
ENTRY = re.compile(r"^### ([EK]-[\w.-]+)\s*$(.*?)(?=^### |^## |\Z)", re.M | re.S)


def catalog_path(root: Path, lang: str) -> Path:
    return Path(root) / "locale" / lang / "errata.po"


def english(root: Path) -> dict[str, str]:
    """id -> the English of every entry of the course's ERRATA.md (none if it is missing)."""
    try:
        text = (Path(root) / ERRATA).read_text(encoding="utf-8")
    except OSError:
        return {}
    return {m.group(1): m.group(2).strip() for m in ENTRY.finditer(text)}


def load(path: Path) -> dict[tuple[str, str], str]:
    """(id, English) -> translation, for the finished entries of a catalog (none if it is missing
    or unreadable: the entries are then shown in English, and `kata verify` says why)."""
    try:
        st = path.stat()
    except OSError:
        return {}
    return _load(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, size: int) -> dict[tuple[str, str], str]:
    try:
        po = polib.pofile(path, wrapwidth=0)
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return {(e.msgctxt or "", e.msgid): e.msgstr for e in po if e.msgstr and not e.obsolete and "fuzzy" not in e.flags}


def entries(root: Path, ids: list[str], lang: str = "en") -> list[str]:
    """The named entries as `kata run --book` shows them ("<id>\\n<text>"), each in `lang` where its
    translation is finished and made for the English ERRATA.md holds now, else in English."""
    found = english(root)
    done = load(catalog_path(root, lang)) if lang != "en" else {}
    out = []
    for entry_id in ids:
        if entry_id in found:
            out.append(f"{entry_id}\n{done.get((entry_id, found[entry_id])) or found[entry_id]}")
    return out


def shown_ids(course) -> set[str]:
    """The ids of the entries some listing of the course shows (`errata=[...]` in grader/listings/)."""
    from . import load as load_listings

    return {entry_id for lst in load_listings(course).values() for entry_id in lst.errata}


def wanted_ids(course) -> set[str]:
    """The entries a translation must hold: every entry of ERRATA.md, and every id a listing names
    (one ERRATA.md lacks is then reported)."""
    return set(english(course.root)) | shown_ids(course)


def problems(root: Path, lang: str, wanted: set[str]) -> list[str]:
    """What `locale/<lang>/errata.po` lacks for the entries `wanted` (wanted_ids): a
    missing or unreadable catalog, an entry not translated, one marked fuzzy, one whose English
    changed since it was translated (stale), and translations of entries ERRATA.md no longer has.
    Each names the catalog and, where it has one, the line of the entry."""
    path = catalog_path(root, lang)
    rel = f"locale/{lang}/errata.po"
    if not path.is_file():
        return [t("errata_no_catalog", path=rel, language=lang)]
    try:
        po = polib.pofile(str(path), wrapwidth=0)
    except (OSError, ValueError, UnicodeDecodeError) as e:
        line = re.search(r"\(line (\d+)\)", str(e))
        why = str(e).replace(str(path), "").replace("  ", " ").strip()
        return [t("errata_unreadable", where=f"{rel}{':' + line.group(1) if line else ''}", why=why)]
    found = english(root)
    by_id = {e.msgctxt: e for e in po if not e.obsolete}
    out = []
    for entry_id in sorted(wanted, key=_order):
        if entry_id not in found:
            out.append(t("errata_no_entry", errata=ERRATA, id=entry_id))
            continue
        e = by_id.get(entry_id)
        where = f"{rel}:{e.linenum}" if e is not None else rel
        if e is None or not e.msgstr:
            out.append(t("errata_not_translated", where=where, id=entry_id))
        elif "fuzzy" in e.flags:
            out.append(t("errata_fuzzy", where=where, id=entry_id))
        elif e.msgid != found[entry_id]:
            out.append(t("errata_stale", where=where, id=entry_id, errata=ERRATA, language=lang))
    for entry_id, e in by_id.items():
        if entry_id not in found:
            out.append(t("errata_gone", where=f"{rel}:{e.linenum}", id=entry_id, errata=ERRATA))
    return out


def update(root: Path, lang: str, title: str = "") -> list[str]:
    """Write `locale/<lang>/errata.po` with an entry for every entry of ERRATA.md, in its order:
    translations kept where the English is unchanged; where it changed, the old translation stays,
    marked fuzzy, with the previous English beside it; entries ERRATA.md lost are dropped.
    Returns the ids left to translate (new, or fuzzy)."""
    path = catalog_path(root, lang)
    old = polib.pofile(str(path), wrapwidth=0) if path.is_file() else None
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": f"{title} ERRATA.md".strip(),
        "Language": lang,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    if old is not None:
        po.metadata.update({k: v for k, v in old.metadata.items() if k != "Language"})
    before = {e.msgctxt: e for e in old if not e.obsolete} if old is not None else {}
    left = []
    for entry_id, text in english(root).items():
        entry = polib.POEntry(msgctxt=entry_id, msgid=text, msgstr="")
        prev = before.get(entry_id)
        if prev is not None and prev.msgstr:
            entry.msgstr, entry.flags = prev.msgstr, list(prev.flags)
            if prev.msgid != text:
                entry.flags = sorted(set(entry.flags) | {"fuzzy"})
                entry.previous_msgid = prev.msgid
            elif prev.previous_msgid:
                entry.previous_msgid = prev.previous_msgid
        if not entry.msgstr or "fuzzy" in entry.flags:
            left.append(entry_id)
        po.append(entry)
    path.parent.mkdir(parents=True, exist_ok=True)
    from ..course import atomic

    atomic.write_text(path, str(po), mode=0o644)
    return left


def public_catalog(root: Path, lang: str, public: str, cut) -> str | None:
    """The catalog `kata release` ships beside the student edition's ERRATA.md (`public`: ERRATA.md
    as grader/instructor/release/release.py:public_errata cut it). `cut(text)` cuts the translations
    the same way (entries proved by hidden checks only, hidden checks' names), in their language, so
    each shipped translation says what its shipped English says. Only finished translations made for
    the English of the instructor's ERRATA.md are shipped. None when no entry is left."""
    done = load(catalog_path(root, lang))
    full = english(root)
    translated = "".join(f"### {i}\n{done[(i, text)]}\n\n" for i, text in full.items() if (i, text) in done)
    cut_zh = {m.group(1): m.group(2).strip() for m in ENTRY.finditer(cut(translated))}
    shipped = {m.group(1): m.group(2).strip() for m in ENTRY.finditer(public)}
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Language": lang,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    for entry_id, text in shipped.items():
        if entry_id in full and (entry_id, full[entry_id]) in done and cut_zh.get(entry_id):
            po.append(polib.POEntry(msgctxt=entry_id, msgid=text, msgstr=cut_zh[entry_id]))
    return str(po) if len(po) else None


def _order(entry_id: str):
    """E-1.11-ab after E-1.11-z, E-1.2-a before E-1.12-a."""
    kind, section, letter = entry_id.split("-", 2)
    return (tuple(int(p) for p in section.split(".") if p.isdigit()), kind, len(letter), letter)
