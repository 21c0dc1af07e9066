"""`kata release OUT`: the student bundle, with nothing hidden inside.

The bundle is a project folder a student installs (`./setup.sh`, or `pip install -e .`):
course.toml, exercises/ (the stubs), README.md (the course's student guide and workshop
notes, docs/student/guide.md and docs/instructor/offline-workshops.md, in the bundle's language), ERRATA.md, setup.sh, pyproject.toml and the `grader` package with
everything `kata check/list/watch/hint/reset/run/submit/notebook` need. What it leaves out:

- solutions/ and tests/; each stub is shipped a second time inside the package
  (grader/release_stubs/) so that `kata reset` and `kata list` work without the solutions;
- the hidden checks: each check module is cut down to its public checks and the helpers they
  use (grader/instructor/release/release_source.py), comments included, `make_fixtures` removed;
- the hidden fixture values: a fixture keeps only the keys the public checks, the listings
  and their figures read when run on the solutions (grader/instructor/release/release_record.py);
- grader/checks/bert_reference.py, the §1.23 model written out for the checks: the bundle's
  grader/checks/bert_public.py keeps its public helpers (names, shapes, seeded weights, printing)
  and answers the model calls the public checks make from a recorded table;
- grader/checks/tokenizer_reference.py, the s1_23_tokenizer reference: the tokenizer checks reach
  it through helpers that the bundle answers from the same table (release_record.REPLAYED_HELPERS),
  and `kata train` tokenizes with the exercise's own file (grader/capstone/training/tokenizer.py);
- ERRATA.md entries proved only by hidden checks keep where and what the book prints, not the
  true value; hidden check names are replaced by "a hidden check of <exercise>".

grader/release.json marks the package as a student edition: the course then loads without
solutions, and an exercise's checks add up to its public points. Before the bundle is moved
into place, `scan` looks through every file for what must not be there (hidden check names,
lines of the solutions that the stubs do not show, the reference model's code); any finding
refuses the release. No shipped module may hold a solution's lines: the scan has no exceptions.

`kata release OUT --assignment ID` bundles one [[assignment]]: its exercises and the exercises
of other assignments they import (release_assignment.py), recorded, cut and written as above;
course.toml keeps only their tables, release.json and the README name the assignment, and the
scan also refuses any file of an exercise outside the bundle.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from ... import __version__
from ...course.manifest import PACKAGE_DIR, Course, edition
from ...course.messages import t
from ...listings import errata as errata_i18n
from .release_source import function_signature_stub, imported_names, prune, public_check_roots

REFERENCE = "bert_reference"
PUBLIC_REFERENCE = "bert_public"
# Trusted modules of grader/checks that re-implement exercises and never ship, not even by name.
TRUSTED_ONLY = (REFERENCE, "tokenizer_reference")
# The reference's own TinyBERT forward: the instructor's public training checks run the student's
# trained weights through it, which no recorded table can answer. The bundle leaves it out, and
# there the student's own forward stands in (a student grading themselves fools only themselves).
TRUSTED_FUNCTIONS = {"tiny_bert", "tiny_bert_problem"}
RELEASE_FILE = "release.json"
STUBS_DIR = "release_stubs"
INSTRUCTOR_ONLY = "instructor/release"  # the tools that build the bundle: this folder of the package
MIN_SOLUTION_LINE = 24  # shorter solution lines ("return out") are too common to prove anything


class ReleaseError(Exception):
    """The bundle cannot be built (or would leak); the message says why."""


@dataclass
class Built:
    out: Path
    exercises: int
    public_checks: int
    hidden_checks: int
    keys_kept: int
    keys_total: int
    calls: int
    listings: int
    duration_s: float
    notes: list[str] = field(default_factory=list)
    assignment: str | None = None  # the assignment's id, for `kata release OUT -a ID`
    needed: list[str] = field(default_factory=list)  # exercises of other assignments its exercises use


# ----------------------------------------------------------------------------- sources
def _with_replay_import(source: str) -> str:
    """`source` with `from grader.checking import replay` after its last top-level import."""
    tree = ast.parse(source)
    last = max(n.end_lineno for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom)))
    lines = source.splitlines()
    lines.insert(last, "from grader.checking import replay")
    return "\n".join(lines) + "\n"


def _replay_stubs(source: str, label: str, names, where: str) -> dict[str, str]:
    """Stand-ins of the helpers `names` of `source` that answer from the replay table."""
    from .release_record import names_wrong_answers

    defined = {n.name for n in ast.parse(source).body if isinstance(n, ast.FunctionDef)}
    missing = sorted(set(names) - defined)
    if missing:
        raise ReleaseError(f"{where}: no function {', '.join(missing)} (named in release_record's replay lists)")
    return {
        name: function_signature_stub(
            source,
            name,
            f"return replay.lookup({label!r}, {name!r}, locals()"
            + (", default=[])" if names_wrong_answers(name) else ")"),
        )
        for name in names
    }


def public_sources(course: Course, shipped: dict[str, str], exercises=None) -> tuple[dict[str, str], str]:
    """(exercise id -> public check module text, bert_public text) of `exercises` (default: all).
    `shipped`: the other Python files of the bundle (relative path -> text), whose imports from
    check modules are kept."""
    from .release_record import REPLAYED_HELPERS

    sources = {ex.id: course.check_file(ex).read_text(encoding="utf-8") for ex in exercises or course.exercises}
    split = {i: public_check_roots(src, f"test_{i}.py") for i, src in sources.items()}
    stubs = {}
    for i, src in sources.items():
        names = REPLAYED_HELPERS.get(f"test_{i}", ())
        if names:
            sources[i] = _with_replay_import(src)
            stubs[i] = _replay_stubs(sources[i], f"test_{i}", names, f"grader/checks/test_{i}.py")
    roots = {i: set(public) for i, (public, _) in split.items()}
    while True:
        pruned = {
            i: prune(src, roots[i], split[i][1] | {"make_fixtures"}, stubs.get(i), filename=f"test_{i}.py")
            for i, src in sources.items()
        }
        needed: dict[str, set[str]] = {}
        for text in [*pruned.values(), *shipped.values()]:
            for module, names in imported_names(text).items():
                needed.setdefault(module, set()).update(names)
        grown = False
        for i in sources:
            extra = needed.get(f"test_{i}", set()) - roots[i]
            hidden = extra & split[i][1]
            if hidden:
                raise ReleaseError(
                    f"grader/checks/test_{i}.py: {', '.join(sorted(hidden))} is a hidden check, "
                    "but shipped code imports it"
                )
            if extra:
                roots[i] |= extra
                grown = True
        if not grown:
            break
    absent = sorted(m for m in needed if m.startswith("test_") and m.removeprefix("test_") not in sources)
    if absent:
        raise ReleaseError(f"shipped code imports {', '.join(absent)}, whose exercise is not in the bundle")
    return pruned, public_reference(needed.get(REFERENCE, set()) - TRUSTED_FUNCTIONS)


def public_reference(used: set[str]) -> str:
    """bert_public.py: the reference module's public helpers, and stand-ins of its model
    functions that answer from the recorded table."""
    from .release_record import REFERENCE_LABEL, REPLAYED

    path = PACKAGE_DIR / "checks" / f"{REFERENCE}.py"
    original = path.read_text(encoding="utf-8")
    source = _with_replay_import(original)
    replace = _replay_stubs(source, REFERENCE_LABEL, REPLAYED, f"grader/checks/{REFERENCE}.py")
    body = prune(source, set(used), replace=replace, filename=path.name)
    doc = ast.get_docstring(ast.parse(original), clean=False) or ""
    new_doc = (
        '"""The public part of the §1.23 reference helpers, for the student bundle (`kata release`).\n\n'
        "Names, shapes, seeded weights and the printed form of modules are as in the instructor's\n"
        "grader. The model functions (embedding, attention, ...) answer only the calls the public\n"
        "checks make, from values recorded on the reference solutions (grader/checking/replay.py).\n"
        '"""'
    )
    return body.replace(f'"""{doc}"""', new_doc, 1)


# ----------------------------------------------------------------------------- errata
ENTRY = re.compile(r"^### (E-[\w.-]+)\s*$(.*?)(?=^### |^## |^---|\Z)", re.M | re.S)
PROOF = re.compile(r"(`?)\b(s\d+_\d+_\w+)::(test_\w+)\b(`?)")
REPRODUCE = re.compile(r"^## How to reproduce$.*?(?=^## |\Z)", re.M | re.S)


# The words public_errata writes, in ERRATA.md's language and in each translation's (locale/<lang>/errata.po)
ERRATA_WORDS = {
    "en": {
        "proved": "Proved by",
        "kept": ("- **Where:**", "- **Book:**", "- **Classification:**"),
        "true": "- **True:** shown by the hidden checks, which grade it; this entry is complete in the instructor's "
        "edition.",
        "check_of": "a hidden check of {exercise}",
        "another": "another hidden check",
    },
    "zh": {
        "proved": "证明：",
        "kept": ("- **位置：**", "- **书中：**", "- **分类：**"),
        "true": "- **真实值：**由隐藏检查给出并计分；本条目的完整内容在讲师版中。",
        "check_of": "{exercise} 的一项隐藏检查",
        "another": "另一项隐藏检查",
    },
}


def public_errata(text: str, hidden: set[tuple[str, str]], lang: str = "en") -> str:
    """ERRATA.md without what only hidden checks show: an entry proved only by hidden checks keeps
    where and what the book prints and its classification; a hidden check named anywhere
    becomes "a hidden check of `<exercise>`"; the script that recomputes listings 1.3-1.7 (the
    code of several exercises) stays in the instructor's edition. `lang`: the language of `text`
    (the entries of a translation, cut the same way: grader/listings/errata.py:public_catalog)."""
    words = ERRATA_WORDS[lang]

    def proofs(body: str) -> list[tuple[str, str]]:
        tail = body.split(words["proved"], 1)[1] if words["proved"] in body else ""
        return [(m.group(2), m.group(3)) for m in PROOF.finditer(tail)]

    def entry(m: re.Match) -> str:
        found = proofs(m.group(2))
        if found and all(p in hidden for p in found):
            kept = [line for line in m.group(2).splitlines() if line.startswith(words["kept"])]
            kept.append(words["true"])
            return f"### {m.group(1)}\n" + "\n".join(kept) + "\n\n"
        return m.group(0)

    text = ENTRY.sub(entry, text)
    text = REPRODUCE.sub(
        "## How to reproduce\n\nThe script that recomputes these values is in the instructor's "
        "edition; `kata run LISTING --book` shows each listing's output from your code.\n\n",
        text,
    )
    text = PROOF.sub(
        lambda m: (
            words["check_of"].format(exercise=f"{m.group(1)}{m.group(2)}{m.group(4)}")
            if (m.group(2), m.group(3)) in hidden
            else m.group(0)
        ),
        text,
    )
    names = {name for _, name in hidden}
    return re.sub(r"`?::(test_\w+)`?", lambda m: words["another"] if m.group(1) in names else m.group(0), text)


# ----------------------------------------------------------------------------- the other files
README_HEAD = """# The Transformer kata (student edition)

Exercises for the chapter *"{title}"*:
implement each section in `exercises/{chapter}/`, then check your code with the public checks. Your instructor grades the same exercises with more
(hidden) checks. Built by `kata release` (kata {version}, {built}).

## Set-up

On Debian/Ubuntu with Python ≥ 3.11:

```bash
./setup.sh                  # bubblewrap (the sandbox), .venv with torch==2.13.0 and the kata, the data files
.venv/bin/kata list         # where you stand
```

Elsewhere: `python -m venv .venv && .venv/bin/pip install torch==2.13.0 && .venv/bin/pip install -e .`,
then `.venv/bin/kata assets fetch` (or `kata assets unpack FILE` with the file your instructor gives you).

"""

SETUP_SH = """#!/usr/bin/env bash
# Install the student edition of the Transformer kata: bubblewrap (the sandbox) through apt,
# .venv with torch==2.13.0 (pinned: a bare `torch` would pull a multi-GB CUDA build) and the kata,
# then the data files of the exercises (kata assets fetch; offline: kata assets unpack FILE).
set -euo pipefail
cd "$(dirname "$0")"
# pip writes .venv/bin/kata as a #!/bin/sh launcher that double-quotes this folder's path without
# escaping it: a ", $ or ` there breaks every command (or runs what a $(...) in the name says)
case "$PWD" in
  *[\\"\\$\\`]*) echo "setup: the path of the course's folder holds \\", \\$ or \\` ($PWD): pip's launchers cannot quote them; move or rename the folder" >&2; exit 1 ;;
esac

PYTHON="${PYTHON:-python3}"
PACKAGES=""
command -v bwrap >/dev/null 2>&1 || PACKAGES="bubblewrap"
# Debian and Ubuntu ship `python3 -m venv`'s ensurepip in a package of its own
"$PYTHON" -c 'import ensurepip' >/dev/null 2>&1 || PACKAGES="$PACKAGES python3-venv"
if [ -n "$PACKAGES" ]; then
  if [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES; } || true
  elif command -v sudo >/dev/null 2>&1; then
    { sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $PACKAGES; } || true
  fi
  command -v bwrap >/dev/null 2>&1 || echo "setup: no bubblewrap: the checks stop unless you ask for resource limits only (kata --sandbox limits-only check, or KATA_SANDBOX=none)" >&2
fi

"$PYTHON" -c 'import sys; assert sys.version_info >= (3, 11), "the kata needs Python >= 3.11"'
# Offline labs: KATA_ASSETS_FILE=FILE is unpacked first, by this Python alone (sha256-checked); where it brought
# wheels (`kata assets pack FILE --with-wheels`: .kata/wheels, or KATA_WHEELS=DIR), pip installs from them only.
if [ -n "${KATA_ASSETS_FILE:-}" ]; then
  "$PYTHON" -m grader.capstone.assets unpack "$KATA_ASSETS_FILE"
fi
WHEELS="${KATA_WHEELS:-$(dirname "${KATA_ASSETS_DIR:-.kata/assets}")/wheels}"
if compgen -G "$WHEELS/*.whl" >/dev/null; then
  WHEELS="$(cd "$WHEELS" && pwd)"
  echo "setup: installing from the wheels in $WHEELS, with no package index" >&2
  # as a file: URL, whose spaces are %20: pip splits PIP_FIND_LINKS at whitespace (a course in "My Course/")
  export PIP_NO_INDEX=1 PIP_FIND_LINKS="$("$PYTHON" -c 'import pathlib, sys; print(pathlib.Path(sys.argv[1]).as_uri())' "$WHEELS")"
fi
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
# The archive's wheels, each checked by pip against the sha256 the course's wheels.lock gives (unpack wrote
# requirements.txt from it): pip's hash-checking mode; the two installs below then find them installed.
if compgen -G "$WHEELS/*.whl" >/dev/null; then
  [ -f "$WHEELS/requirements.txt" ] || { echo "setup: $WHEELS holds wheels the course's wheels.lock did not vouch for (no requirements.txt): unpack the workshop's file again" >&2; exit 1; }
  .venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes --no-deps -r "$WHEELS/requirements.txt"
fi
.venv/bin/python -m pip install -q --disable-pip-version-check "torch==2.13.0" ${KATA_TORCH_PIP_ARGS:-}
.venv/bin/python -m pip install -q --disable-pip-version-check -e .
if [ -n "${KATA_ASSETS_FILE:-}" ]; then
  .venv/bin/kata assets status
else
  .venv/bin/kata assets fetch \\
    || echo "setup: some data files could not be fetched; ask for the workshop's assets file and run \\`.venv/bin/kata assets unpack FILE\\`" >&2
fi
.venv/bin/kata list --no-run
"""


STUDENT_PAGES = ("student/guide", "instructor/offline-workshops")  # the students' part of the course's docs/


def docs_sections(docs: Path, pages: tuple[str, ...], lang: str = "en") -> str:
    """The course's documentation pages `docs/<page>.md` (`docs/<page>.<lang>.md` where the bundle's
    language has one), in this order, as `## ` sections of the bundle's README: each heading one level
    down, HTML comments dropped, and links to other pages of the site kept as their text (the bundle
    has no docs/). A page the course lacks is left out."""
    out = []
    for page in pages:
        path = docs / f"{page}.{lang}.md" if lang != "en" else docs / f"{page}.md"
        if not path.is_file():
            path = docs / f"{page}.md"
        if not path.is_file():
            continue
        text = re.sub(r"(?s)<!--.*?-->\n?", "", path.read_text(encoding="utf-8"))
        text = re.sub(r"\[([^\]]+)\]\((?![a-z]+:)[^)]*\)", r"\1", text)
        lines, fence = [], False
        for line in text.splitlines():
            if line.lstrip().startswith("```"):
                fence = not fence
            lines.append("#" + line if not fence and re.match(r"#{1,5} ", line) else line)
        out.append("\n".join(lines).strip() + "\n")
    return "\n".join(out)


# ----------------------------------------------------------------------------- leaks
def solution_lines(course: Course) -> dict[str, set[str]]:
    """Exercise id -> the stripped lines of its solution blocks that no stub shows."""
    from ...authoring.stubs import blocks, stub_text

    shown = {line.strip() for ex in course.exercises for line in stub_text(course, ex, "en").splitlines()}
    out: dict[str, set[str]] = {}
    for ex in course.exercises:
        source = (course.solutions_dir / ex.file).read_text(encoding="utf-8")
        lines = source.splitlines()
        found = set()
        for b in blocks(source, ex.file):
            for line in lines[b.start : b.end - 1]:
                s = line.strip()
                if len(s) >= MIN_SOLUTION_LINE and not s.startswith("#") and s not in shown:
                    found.add(s)
        out[ex.id] = found
    return out


def _body_lines(source: str, functions) -> set[str]:
    """The stripped lines (long enough to prove something) of the bodies of `functions`, docstrings left out."""
    lines = source.splitlines()
    found = set()
    for node in functions:
        start = node.body[1].lineno if ast.get_docstring(node) and len(node.body) > 1 else node.body[0].lineno
        for line in lines[start - 1 : node.end_lineno]:
            s = line.strip()
            if len(s) >= MIN_SOLUTION_LINE and not s.startswith(("#", '"""')):
                found.add(s)
    return found


def reference_lines(course: Course | None = None) -> set[str]:
    """The body lines of the reference model's functions (what bert_public must not hold) and of
    the reference tokenizer's methods, less the lines the stubs show (the exercise's given
    argument checks), when `course` is given."""
    from .release_record import REPLAYED

    source = (PACKAGE_DIR / "checks" / f"{REFERENCE}.py").read_text(encoding="utf-8")
    found = _body_lines(
        source, [n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name in (*REPLAYED, "_norm")]
    )
    source = (PACKAGE_DIR / "checks" / "tokenizer_reference.py").read_text(encoding="utf-8")
    methods = [
        m
        for n in ast.parse(source).body
        if isinstance(n, ast.ClassDef)
        for m in n.body
        if isinstance(m, ast.FunctionDef)
    ]
    tokenizer = _body_lines(source, methods)
    if course is not None:
        from ...authoring.stubs import stub_text

        tokenizer -= {line.strip() for ex in course.exercises for line in stub_text(course, ex, "en").splitlines()}
    return found | tokenizer


def foreign_files(out: Path, course: Course, exercises) -> list[str]:
    """The files of the bundle at `out` that belong to an exercise outside `exercises` (its stub,
    check module, fixture or listing module): an assignment's bundle holds none."""
    inside = {ex.id for ex in exercises}
    others = {ex.id: ex for ex in course.exercises if ex.id not in inside}
    owned = {}
    for ex in others.values():
        owned.update(
            {
                f"exercises/{ex.file}": ex.id,
                f"grader/checks/test_{ex.id}.py": ex.id,
                f"grader/fixtures/{ex.id}.safetensors": ex.id,
                f"grader/listings/{ex.id}.py": ex.id,
            }
        )
    findings = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out).as_posix()
        owner = owned.get(rel)
        if owner is None and rel.startswith(f"grader/{STUBS_DIR}/"):
            owner = path.stem if path.stem in others else None
        if owner is not None:
            findings.append(f"{rel}: belongs to {owner}, which is not in this bundle")
    return findings


def scan(out: Path, course: Course, exercises=None) -> list[str]:
    """What must not be in the bundle at `out`, one line per finding (empty: nothing). `exercises`:
    the bundle's (an assignment's); no file of another exercise may be there either."""
    public = {c.name for ex in course.exercises for c in ex.checks if not c.hidden}
    hidden_only = {c.name for ex in course.exercises for c in ex.checks if c.hidden} - public
    name_re = re.compile(r"\b(" + "|".join(map(re.escape, sorted(hidden_only))) + r")\b") if hidden_only else None
    by_exercise = solution_lines(course)
    solution = set().union(*by_exercise.values())
    reference = reference_lines(course)
    findings = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        rel = path.relative_to(out).as_posix()
        if path.name in (*(f"{m}.py" for m in TRUSTED_ONLY), "solutions") or rel.startswith(("solutions/", "tests/")):
            findings.append(f"{rel}: must not be shipped")
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if name_re and (m := name_re.search(text)):
            findings.append(f"{rel}: names the hidden check {m.group(1)}")
        stripped = {line.strip() for line in text.splitlines()}
        for s in sorted(solution & stripped)[:3]:
            findings.append(f"{rel}: holds a line of a solution: {s[:80]}")
        for s in sorted(reference & stripped)[:3]:
            findings.append(f"{rel}: holds a line of a reference (model or tokenizer): {s[:80]}")
        for name in TRUSTED_ONLY:
            if re.search(rf"\b{name}\b", text):
                findings.append(f"{rel}: names {name}")
    for ex in course.exercises:
        shipped = out / "grader" / "checks" / f"test_{ex.id}.py"
        if shipped.is_file():
            names, hidden = public_check_roots(shipped.read_text(encoding="utf-8"))
            wanted = {c.name for c in ex.checks if not c.hidden}
            if hidden or names != wanted:
                findings.append(
                    f"grader/checks/test_{ex.id}.py: checks {sorted(names | hidden)}, expected the "
                    f"public ones {sorted(wanted)}"
                )
    if exercises is not None:
        findings += foreign_files(out, course, exercises)
    return findings


# ----------------------------------------------------------------------------- building
def _package_files(left_out: set[str] = frozenset()) -> list[Path]:
    """The grader package's files that ship as they are (checks and fixtures are rewritten), but
    the listing modules of the exercises `left_out` (not in an assignment's bundle)."""
    out = []
    for p in sorted(PACKAGE_DIR.rglob("*")):
        rel = p.relative_to(PACKAGE_DIR)
        if not p.is_file() or "__pycache__" in rel.parts or p.suffix in (".pyc", ".pyo"):
            continue
        if rel.parts[0] in ("fixtures", STUBS_DIR) or rel.as_posix() == RELEASE_FILE:
            continue
        if rel.parts[0] == "checks" and rel.name != "__init__.py" or rel.as_posix().startswith(INSTRUCTOR_ONLY + "/"):
            continue
        if rel.parts[0] == "listings" and rel.stem in left_out:
            continue
        out.append(p)
    return out


def _public_fixtures(course: Course, keys: dict[str, set[str]], dest: Path, exercises) -> tuple[int, int]:
    from safetensors import safe_open
    from safetensors.torch import save_file

    from ...checking import fixtures

    kept = total = 0
    dest.mkdir(parents=True, exist_ok=True)
    outside = sorted(set(keys) - {ex.id for ex in exercises})
    if outside:
        raise ReleaseError(f"the public checks read the fixtures of {', '.join(outside)}, which is not in the bundle")
    for ex in exercises:
        path = fixtures.path(ex.id)
        if not path.is_file():
            continue
        with safe_open(str(path), framework="pt") as f:
            names = list(f.keys())
            meta = dict(f.metadata() or {})
            wanted = [k for k in names if k in keys.get(ex.id, set())]
            tensors = {k: f.get_tensor(k).contiguous() for k in wanted}
        total += len(names)
        kept += len(wanted)
        if tensors:
            meta["edition"] = "student: only the values the public checks and the listings read"
            save_file(tensors, str(dest / path.name), metadata=dict(sorted(meta.items())))
    return kept, total


def _write(path: Path, text: str, mode: int | None = None) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)


def build(
    course: Course,
    out: str | Path,
    force: bool = False,
    log=lambda message: None,
    lang: str | None = None,
    assignment: str | None = None,
) -> Built:
    """Write the student bundle to the folder `out` (see the module's docstring), its exercises in
    `lang` (default: the language kata speaks; stubs.stub_lang); `kata reset` there can restore
    the stubs in every language. `assignment`: the id of the [[assignment]] whose exercises (and
    the ones they need, release_assignment.needed) the bundle holds, instead of every exercise."""
    from ...authoring.stubs import stub_lang, stub_text
    from ...checking import replay
    from ...course.assignments import AssignmentError, find
    from ...course.messages import LANGS
    from . import release_assignment
    from .release_record import record

    t0 = time.perf_counter()
    lang = stub_lang(lang)
    out = Path(out).resolve()
    if edition() is not None or not course.solutions_dir.is_dir():
        raise ReleaseError(t("release_not_instructor"))
    chosen, needed, picked = course.exercises, [], None
    if assignment is not None:
        try:
            picked = find(course.assignments, assignment)
        except AssignmentError as e:
            raise ReleaseError(str(e)) from None
        needed = release_assignment.needed(course, picked.exercises)
        chosen = [ex for ex in course.exercises if ex.id in picked.exercises or ex.id in needed]
    if out.exists() and any(out.iterdir()):
        if not force:
            raise ReleaseError(t("release_out_not_empty", out=out))
        if not (out / "grader" / RELEASE_FILE).is_file():
            raise ReleaseError(t("release_out_not_bundle", out=out))
    if (
        out == course.root
        or course.root in out.parents
        and out.parts[len(course.root.parts)] in ("grader", "exercises", "solutions", "tests")
    ):
        raise ReleaseError(t("release_out_inside", out=out))

    log(t("release_recording"))
    rec = record(course, chosen)
    if rec.failures:
        raise ReleaseError(
            "the reference solutions fail what the bundle would check:\n  " + "\n  ".join(rec.failures[:20])
        )

    out.parent.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        files = _package_files({ex.id for ex in course.exercises} - {ex.id for ex in chosen})
        shipped = {
            p.relative_to(PACKAGE_DIR).as_posix(): p.read_text(encoding="utf-8") for p in files if p.suffix == ".py"
        }
        checks, reference = public_sources(course, shipped, chosen)
        pkg = stage / "grader"
        for p in files:
            target = pkg / p.relative_to(PACKAGE_DIR)
            target.parent.mkdir(parents=True, exist_ok=True)
            if p.suffix == ".py":
                target.write_text(p.read_text(encoding="utf-8").replace(REFERENCE, PUBLIC_REFERENCE), encoding="utf-8")
            else:
                shutil.copy2(p, target)
        for ex_id, text in checks.items():
            _write(pkg / "checks" / f"test_{ex_id}.py", text.replace(REFERENCE, PUBLIC_REFERENCE))
        _write(pkg / "checks" / f"{PUBLIC_REFERENCE}.py", reference)
        kept, total = _public_fixtures(course, rec.keys, pkg / "fixtures", chosen)
        replay.save(rec.calls, pkg / "fixtures" / f"{replay.TABLE}.safetensors")

        for ex in chosen:
            _write(stage / "exercises" / ex.file, stub_text(course, ex, lang))
            for other in LANGS:  # English at release_stubs/<file>, the others under release_stubs/<lang>/
                _write(pkg / STUBS_DIR / ("" if other == "en" else other) / ex.file, stub_text(course, ex, other))

        hidden = {(ex.id, c.name) for ex in course.exercises for c in ex.checks if c.hidden}
        built_at = time.strftime("%Y-%m-%d %H:%M:%SZ", time.gmtime())
        info = {
            "schema": 1,
            "edition": "student",
            "kata_version": __version__,
            "built": built_at,
            "torch": course.torch,
            "exercises": {
                ex.id: {
                    "public_checks": sum(1 for c in ex.checks if not c.hidden),
                    "public_points": sum(c.points for c in ex.checks if not c.hidden),
                    "hidden_checks": sum(1 for c in ex.checks if c.hidden),
                    "hidden_points": sum(c.points for c in ex.checks if c.hidden),
                }
                for ex in chosen
            },
        }
        toml = (course.root / "course.toml").read_text(encoding="utf-8")
        if picked is not None:
            info["assignment"] = {"id": picked.id, "exercises": picked.exercises, "needed": needed}
            try:
                toml = release_assignment.course_toml(toml, [ex.id for ex in chosen], picked.id)
            except release_assignment.CutError as e:
                raise ReleaseError(str(e)) from None
        _write(pkg / RELEASE_FILE, json.dumps(info, indent=1, ensure_ascii=False) + "\n")
        _write(stage / "course.toml", toml)
        for name in ("pyproject.toml", ".gitignore", "wheels.lock"):  # wheels.lock: what unpack installs
            if (course.root / name).is_file():
                shutil.copy2(course.root / name, stage / name)
        if (course.root / "ERRATA.md").is_file():
            errata_text = public_errata((course.root / "ERRATA.md").read_text(encoding="utf-8"), hidden)
            _write(stage / "ERRATA.md", errata_text)
            for other in LANGS:  # `kata --lang zh run LISTING --book` shows the entries in Chinese there too
                catalog = (
                    errata_i18n.public_catalog(
                        course.root, other, errata_text, lambda t, lang=other: public_errata(t, hidden, lang)
                    )
                    if other in ERRATA_WORDS and other != "en"
                    else None
                )
                if catalog:
                    _write(stage / "locale" / other / "errata.po", catalog)
        head = README_HEAD.format(title=course.title, chapter=course.chapter, version=__version__, built=built_at)
        if picked is not None:
            head = head.replace(
                "(student edition)", f"(student edition): assignment {picked.id}", 1
            ) + release_assignment.readme(course, picked, needed)
        _write(stage / "README.md", head + docs_sections(course.root / "docs", STUDENT_PAGES, lang))
        _write(stage / "setup.sh", SETUP_SH, 0o755)

        for p in [stage, *stage.rglob("*")]:  # readable by everyone, as a checkout would be
            p.chmod(0o755 if p.is_dir() or p.name == "setup.sh" else 0o644)
        findings = scan(stage, course, chosen if picked is not None else None)
        if findings:
            raise ReleaseError("the bundle would leak what it must not hold:\n  " + "\n  ".join(findings[:30]))
        if out.exists():
            shutil.rmtree(out)
        stage.rename(out)
    finally:
        if stage.exists():
            shutil.rmtree(stage, ignore_errors=True)
    n_public = sum(v["public_checks"] for v in info["exercises"].values())
    n_hidden = sum(v["hidden_checks"] for v in info["exercises"].values())
    return Built(
        out,
        len(chosen),
        n_public,
        n_hidden,
        kept,
        total,
        len(rec.calls),
        rec.listings_run,
        round(time.perf_counter() - t0, 1),
        assignment=picked.id if picked else None,
        needed=needed,
    )
