"""Which submission is which row of an instructor's file (the roster, a platform's timestamp CSV).

A submission is known by its own name in the class folder: the entry's name without `.zip` or
`.ipynb` (`student.source` of its record). Never by the name the grader gave it in OUT, which may
be a generated `bob-2` that a real student's login happens to be.

A row belongs to an entry whose own name is exactly the row's name. Otherwise it may be matched
loosely (`loose`), ignoring case, spaces anywhere, invisible characters (U+200B ...) and punctuation
(`Alice`, ` alice`, `alice\u200b` and `alice` are alike, and so are `Mary Ann`, `mary.ann` and
`maryann`), but only when that is unambiguous:
- an entry named exactly like the row keeps it, whatever the sort order; the look-alikes do not
  get it (`lookalike`);
- two or more entries that claim one row with no exact owner (`ALICE/` and ` alice/`), or
  several exact ones (`bob/` and `bob.zip`), leave the row to none of them (`contested`): the
  instructor decides, by renaming a folder or fixing the file;
- an entry alike to several rows gets none of them (`ambiguous`).

Every comparison, exact or loose, is between NFC forms (`nfc`): `josé` typed on Linux (NFC) and
`josé` from a macOS folder or a platform's export (NFD: `e` + U+0301) are one name, as they
look. Names that still differ while looking alike (another script's `а`, a ligature) are shown
with the first character where they differ, as code points (`differ`).
"""

from __future__ import annotations

import difflib
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field

from ..batch.records import student_of

SUFFIXES = (".zip", ".ipynb")


def stem(source: str) -> str:
    """An entry's name in the class folder without .zip/.ipynb: what the batch names a student
    after (discover.student_name) and what a roster or an LMS matches."""
    for suffix in SUFFIXES:
        if source.lower().endswith(suffix):
            source = source[: -len(suffix)]
    return source


def own_name(doc: dict, name: str) -> str:
    """The entry's own name in the class folder, without .zip/.ipynb (a record without its
    source, written by an older version: its name in OUT)."""
    st = student_of(doc)
    source = st.source if st is not None and st.source else name
    return stem(source) or source


def nfc(text: str) -> str:
    """`text` in Unicode's composed form (NFC), what every name comparison uses."""
    return unicodedata.normalize("NFC", str(text))


def differ(a: str, b: str) -> str:
    """How two names that may look alike differ, for a message: both as Python writes them and
    the first character where they part, as code points (`'josе' vs 'jose': U+0435 CYRILLIC
    SMALL LETTER IE vs U+0065 LATIN SMALL LETTER E`)."""

    def point(ch: str) -> str:
        return f"U+{ord(ch):04X} {unicodedata.name(ch, '?')}" if ch else "(end)"

    if difflib.SequenceMatcher(None, a, b).ratio() < 0.75:  # not alike: the names say enough
        return f"{a!r} vs {b!r}"
    i = next((k for k, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"{a!r} vs {b!r}: {point(a[i : i + 1])} vs {point(b[i : i + 1])}"


def closest(name: str, names, n: int = 1, cutoff: float = 0.6) -> list[str]:
    """The `n` names of `names` most like `name` (difflib on the loose NFC forms), best first."""
    by_key: dict[str, str] = {}
    for x in names:
        by_key.setdefault(loose(x) or nfc(x), x)
    found = difflib.get_close_matches(loose(name) or nfc(name), list(by_key), n=n, cutoff=cutoff)
    return [by_key[k] for k in found]


NEAR = 0.7  # difflib's ratio of two loose forms from which a name is a near miss ('a1ice', 'alice': 0.8)


def near_miss(name: str, names) -> str | None:
    """The one of `names` that `name` nearly is, or None: the most alike by difflib's ratio of the
    loose forms when that is at least NEAR (a typo, a look-alike character, a dropped letter), or
    one whose loose form holds the other's or is held by it, three characters at least (a folder
    named `Alice Liddell` for the login `alice`). `alice` and `grace` (0.6), or a name and an ID
    number such as S1001, are no near miss: a hint that names them would only mislead."""
    key = loose(name) or nfc(name)
    best, best_ratio = None, 0.0
    for other in names:
        k = loose(other) or nfc(other)
        ratio = difflib.SequenceMatcher(None, key, k).ratio()
        held = min(len(key), len(k)) >= 3 and (key in k or k in key)
        if (ratio >= NEAR or held) and ratio > best_ratio:
            best, best_ratio = other, ratio
    return best


def loose(text: str) -> str:
    """`text` compared loosely: its letters and digits only (with their combining marks, which
    some scripts' letters need), NFC, case folded; spaces, punctuation (`.`, `-`, `_` too),
    symbols and invisible (format) characters dropped wherever they are: `Mary Ann`, `mary_ann`
    and `maryann` are alike. "" when nothing is left: such a name only ever matches exactly."""
    kept = "".join(ch for ch in nfc(text) if unicodedata.category(ch)[0] in "LNM")
    return nfc(kept.casefold())


@dataclass
class Pairing:
    owner: dict[str, str] = field(default_factory=dict)  # row -> the entry it belongs to
    loosely: dict[str, str] = field(default_factory=dict)  # entry -> its row, matched by a look-alike name
    contested: dict[str, list[str]] = field(default_factory=dict)  # row -> the entries claiming it (none has it)
    lookalike: dict[str, tuple[str, str]] = field(default_factory=dict)  # entry -> (row, the exact owner)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)  # entry -> the rows it is alike to

    def row_of(self, entry: str) -> str | None:
        return next((row for row, e in self.owner.items() if e == entry), None)

    def contested_row(self, entry: str) -> str | None:
        return next((row for row, es in self.contested.items() if entry in es), None)


def pair(rows: list[str], entries: dict[str, str]) -> Pairing:
    """Rows (their names, each once) to entries ({entry id: own name}), by the rules above."""
    exact = {nfc(row): row for row in rows}
    alike = defaultdict(list)
    for row in rows:
        if loose(row):
            alike[loose(row)].append(row)
    claims: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    p = Pairing()
    for entry, own in entries.items():
        if nfc(own) in exact:
            claims[exact[nfc(own)]].append((entry, True))
            continue
        found = alike.get(loose(own), []) if loose(own) else []
        if len(found) > 1:
            p.ambiguous[entry] = found
        elif found:
            claims[found[0]].append((entry, False))
    for row, who in claims.items():
        exacts = [e for e, is_exact in who if is_exact]
        if len(exacts) == 1:
            p.owner[row] = exacts[0]
            for e, is_exact in who:
                if not is_exact:
                    p.lookalike[e] = (row, exacts[0])
        elif len(who) == 1:
            p.owner[row] = who[0][0]
            p.loosely[who[0][0]] = row
        else:
            p.contested[row] = [e for e, _ in who]
    return p
