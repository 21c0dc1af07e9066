"""`kata new ID`: the skeleton of a new exercise, the parts written by hand (CONTRIBUTING.md).

Writes, never overwriting a file, and only once every check below has passed:
- course.toml: an [[exercise]] entry at the end of its section (book order), worth 1 point, its
  Chinese title empty (pending) unless given; with `--listing`, a [[listing]] entry too;
- solutions/<chapter>/<id>.py: one function, named after the id, its answer between
  `# BEGIN SOLUTION` and `# END SOLUTION`, its docstring citing the section;
- grader/checks/test_<id>.py: make_fixtures and one public check, which the stub fails and the
  solution passes;
- grader/listings/<id>.py with `--listing`: the listing re-run, the book's output left to paste;
- locale/<lang>/<chapter>/<id>.po: every English text of the solution, untranslated;
- tests/test_ex_<id>.py: the reference scores full marks, the stub nothing, a wrong answer is named.

What it leaves is generated (the stub: `kata stubs`; the fixture: `kata fixtures -e ID`) or
written by hand (the answer, more checks, wrong answers, the Chinese). `kata verify --draft`
passes on the skeleton once the stub and the fixture are generated, listing the Chinese (and a
listing's book output) as pending. A refused id (malformed, or taken by an entry or a file)
writes nothing.
"""

from __future__ import annotations

import json
import keyword
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..course import atomic
from ..course.manifest import ID_RE, PACKAGE_DIR, Course, CourseError, edition, load
from ..course.messages import LANGS, t
from . import stub_i18n, stubs

LISTING_RE = re.compile(r"^\d+\.\d+(/[a-z0-9][a-z0-9-]*)?$")  # 1.44, 1.11/softmax
HEADER_RE = re.compile(r"^\[\[?[A-Za-z_.]+\]\]?\s*(#.*)?$")  # a table's header in course.toml


class Refused(Exception):
    """The id cannot be added; the message says why (nothing was written)."""


@dataclass
class Skeleton:
    id: str
    section: str
    function: str
    listing: str | None
    root: Path  # the course
    files: dict[str, Path]  # by role: solution, stub, checks, fixture, tests, listing, po_<lang>
    written: list[Path] = field(default_factory=list)  # the new files, in the order written
    after: str = ""  # the exercise the entry follows in course.toml ("" when it comes first)


def _key(section: str) -> tuple[int, ...]:
    return tuple(int(part) for part in section.split("."))


def _toml(text: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(text, ensure_ascii=False)


def insert_entry(text: str, table: str, section: str, entry: str) -> tuple[str, str]:
    """course.toml's `text` with `entry` (a [[table]] block) after the last [[table]] entry whose
    section is not after `section`, or before the first one; and the id it follows ("" if none)."""
    lines = text.splitlines()
    headers = [i for i, line in enumerate(lines) if HEADER_RE.match(line)]
    blocks = []  # (start, end, section, id) of each [[table]] entry; end: the next header
    for n, start in enumerate(headers):
        if lines[start].split("#")[0].strip() != f"[[{table}]]":
            continue
        end = headers[n + 1] if n + 1 < len(headers) else len(lines)
        body = "\n".join(lines[start + 1 : end])
        sec = re.search(r'(?m)^section\s*=\s*"([\d.]+)"', body)
        ident = re.search(r'(?m)^id\s*=\s*"([^"]+)"', body)
        blocks.append((start, end, sec.group(1) if sec else "0", ident.group(1) if ident else ""))
    before = [b for b in blocks if _key(b[2]) <= _key(section)]
    new = entry.rstrip("\n").splitlines()
    if before:
        start, end, _, after = before[-1]
        at = end
        while at > start + 1 and (not lines[at - 1].strip() or lines[at - 1].lstrip().startswith("#")):
            at -= 1  # blank lines and comments before the next header belong to it
        lines[at:at] = [""] + new
    elif blocks:
        at, after = blocks[0][0], ""
        lines[at:at] = new + [""]
    else:
        after = ""
        lines += [""] + new
    return "\n".join(lines) + "\n", after


def _default_title(name: str) -> str:
    return name.replace("_", " ").strip().capitalize()


def plan(course: Course, ex_id: str, section: str | None, listing: str | None) -> tuple[str, str, dict[str, Path]]:
    """(section, function name, the files to write by role) for a new exercise, or Refused."""
    m = ID_RE.match(ex_id)
    if not m:
        raise Refused(t("new_bad_id", id=ex_id))
    chapter, sec = m.groups()
    name = ex_id.split("_", 2)[2]
    if not name.isidentifier() or keyword.iskeyword(name) or not name[0].isalpha():
        raise Refused(t("new_bad_name", id=ex_id, name=name))
    own = f"{int(chapter)}.{int(sec)}"
    course_chapter = re.sub(r"\D", "", course.chapter)
    if course_chapter and int(course_chapter) != int(chapter):
        raise Refused(t("new_other_chapter", id=ex_id, chapter=course.chapter))
    if section is not None and section != own:
        raise Refused(t("new_section_mismatch", id=ex_id, own=own, given=section))
    if any(ex.id == ex_id for ex in course.exercises):
        raise Refused(t("new_id_taken", id=ex_id))
    if listing is not None:
        if not LISTING_RE.match(listing):
            raise Refused(t("new_bad_listing", listing=listing))
        if any(lst.id == listing for lst in course.listings):
            raise Refused(t("new_listing_taken", listing=listing))
    file = f"{course.chapter}/{ex_id}.py"
    files = {
        "solution": course.solutions_dir / file,
        "stub": course.exercises_dir / file,
        "checks": course.checks_dir / f"test_{ex_id}.py",
        "fixture": course.fixtures_dir / f"{ex_id}.safetensors",
        "tests": course.root / "tests" / f"test_ex_{ex_id}.py",
    }
    if listing is not None:
        files["listing"] = PACKAGE_DIR / "listings" / f"{ex_id}.py"
    for lang in LANGS:
        if lang != "en":
            files[f"po_{lang}"] = stub_i18n.catalog_path(course.root, lang, file)
    for path in files.values():
        if path.exists() or path.is_symlink():
            raise Refused(t("new_file_exists", id=ex_id, path=_rel(course, path)))
    return own, name, files


def _rel(course: Course, path: Path) -> str:
    try:
        return path.relative_to(course.root).as_posix()
    except ValueError:
        return str(path)


SOLUTION = '''"""§@SECTION@ @TITLE@@CITE@.

TODO: what the student builds here and why, in a few lines, as the book explains it.
"""
import torch


def @FN@(x: torch.Tensor) -> torch.Tensor:
    """TODO: what @FN@ returns@CITE_FN@.

    x: a tensor of any shape. Returns a tensor of the same shape.
    """
    # BEGIN SOLUTION TODO: what to write, in a few words (the stub raises NotImplementedError with it)
    return 2 * x
    # END SOLUTION
'''

CHECKS = '''"""Checks of §@SECTION@, @TITLE_LOWER@."""
import torch

from grader.checking import Msg, check, expect_tensor, fixtures

EXERCISE = "@ID@"


def make_fixtures(sol):
    """The inputs and the reference's outputs: `kata fixtures -e @ID@` saves them to
    grader/fixtures/@ID@.safetensors."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, generator=g)
    return {"x": x, "out": sol.@FN@(x)}


def fx():
    return fixtures.load(EXERCISE)


# TODO: the Chinese of each title_zh and Msg (kata verify --draft lists them as pending); a check per
# property, public first (kata check runs them), hidden ones (hidden=True) for other shapes and seeds.
@check(points=1@LISTINGS@, title="@FN@ of a small tensor", title_zh="TODO")
def test_@FN@_small(sub):
    f = fx()
    out = sub.@FN@(f["x"])
    expect_tensor(out, f["out"], what=Msg("the output of @FN@", "TODO"))
'''

LISTING = '''"""Listing @LISTING@, re-run with the student's code."""
import torch

from grader.listings import listing


# TODO: paste between the quotes what the book prints for listing @LISTING@ (kata verify --draft lists
# it as pending; kata run @LISTING@ --book shows it beside the student's output).
@listing("@LISTING@", book="""\\
""")
def listing_@SLUG@(sub, show):
    """TODO: what listing @LISTING@ computes, as the book's code does."""
    x = torch.arange(6.0).reshape(2, 3)
    show(sub.@FN@(x))
'''

TESTS = '''"""§@SECTION@ @TITLE_LOWER@ graded for real: the reference scores full marks, the stub nothing, and
each wrong answer loses points with a message that names the mistake.

TODO: a test per mistake a student makes, each also an entry of tests/mistakes.py (which
tests/test_public_teaching.py grades: a mistake that costs points must fail a public check)."""
from tests.conftest import failed_checks, grade, score_of, solution_with

EX = "@ID@"
MAX = 1


def test_the_reference_scores_full_marks(submission):
    assert score_of(grade(submission(), "-e", EX), EX) == MAX


def test_the_stub_scores_nothing(submission):
    assert score_of(grade(submission(from_stubs=True), "-e", EX), EX) == 0


# TODO: this wrong answer edits the skeleton's placeholder (`return 2 * x`); once the real solution
# is written, solution_with stops here ("... is not in the solution"): replace it with the
# mistakes students make, each an edit of the real solution.
def test_a_wrong_factor_is_caught(submission):
    wrong = solution_with(EX, "return 2 * x", "return 3 * x")
    assert "test_@FN@_small" in failed_checks(grade(submission({EX: wrong}), "-e", EX), EX)
'''


def _fill(template: str, **values: str) -> str:
    wanted = set(re.findall(r"@([A-Z_]+)@", template))
    assert wanted <= {name.upper() for name in values}, wanted
    return re.sub(r"@([A-Z_]+)@", lambda m: values[m.group(1).lower()], template)


def create(
    root=None,
    ex_id: str = "",
    section: str | None = None,
    title: str | None = None,
    title_zh: str | None = None,
    listing: str | None = None,
) -> Skeleton:
    """Write the skeleton of exercise `ex_id` in the course at or above `root` (module docstring)."""
    try:
        course = load(root, check_files=False)
    except CourseError as e:
        raise Refused(f"course.toml: {e}") from None
    if edition() is not None or course.root.resolve() != PACKAGE_DIR.parent.resolve():
        raise Refused(t("new_not_this_kata", root=str(course.root), package=str(PACKAGE_DIR)))
    own, fn, files = plan(course, ex_id, section, listing)
    title = (title or "").strip() or _default_title(fn)
    if any(bad in text for text in (title, title_zh or "") for bad in ("\n", "\\", '"""')):
        raise Refused(t("new_bad_title"))
    cite = f" (listing {listing})" if listing else ""
    values = dict(
        section=own,
        title=title,
        title_lower=title[0].lower() + title[1:],
        id=ex_id,
        fn=fn,
        cite=cite,
        cite_fn=f", listing {listing}" if listing else "",
        listings=f", listings=[{_toml(listing)}]" if listing else "",
        listing=listing or "",
        slug=re.sub(r"\W", "_", listing or ""),
    )
    solution = _fill(SOLUTION, **values)
    stubs.make_stub(solution, ex_id, files["solution"].name)  # a template the stub generator takes
    entry = "\n".join(
        [
            "[[exercise]]",
            f"id = {_toml(ex_id)}",
            f"section = {_toml(own)}",
            f"title = {_toml(title)}",
            f"title_zh = {_toml(title_zh or '')}" + ("" if title_zh else "  # TODO: in Chinese (pending)"),
            f"file = {_toml(f'{course.chapter}/{ex_id}.py')}",
            f"listings = [{_toml(listing) if listing else ''}]",
            "points = 1  # the sum of its checks' points",
        ]
    )
    manifest = course.root / "course.toml"
    text, after = insert_entry(manifest.read_text(encoding="utf-8"), "exercise", own, entry)
    if listing:
        text, _ = insert_entry(
            text,
            "listing",
            own,
            "\n".join(
                [
                    "[[listing]]",
                    f"id = {_toml(listing)}",
                    f"section = {_toml(own)}",
                    f"title = {_toml(title)}  # TODO: the listing's caption in the book",
                    'title_zh = ""  # TODO: in Chinese (pending)',
                ]
            ),
        )
    ids = [e["id"] for e in tomllib.loads(text).get("exercise", [])]
    assert ex_id in ids, ids  # the entry is a table of its own, in the manifest's order
    out = Skeleton(ex_id, own, fn, listing, course.root, files, after=after)
    new_files = [
        (files["solution"], solution),
        (files["checks"], _fill(CHECKS, **values)),
        (files["tests"], _fill(TESTS, **values)),
    ]
    if listing:
        new_files.append((files["listing"], _fill(LISTING, **values)))
    for path, body in new_files:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(path, "x", encoding="utf-8") as f:  # never overwrites, even a file made since plan()
            f.write(body)
        out.written.append(path)
    for lang in LANGS:
        if lang != "en":
            stub_i18n.update(
                solution,
                stubs.blocks(solution, files["solution"].name),
                files[f"po_{lang}"],
                lang,
                f"{course.title} {ex_id}",
            )
            out.written.append(files[f"po_{lang}"])
    atomic.write_text(manifest, text, keep_mode=True)
    return out


def steps(s: Skeleton) -> list[str]:
    """What is left to do, in order, each a line of the catalog (CONTRIBUTING.md says the same)."""
    rel = {role: path.relative_to(s.root).as_posix() for role, path in s.files.items()}
    out = [
        t("new_step_write", solution=rel["solution"], checks=rel["checks"]),
        t("new_step_stubs", stub=rel["stub"]),
        t("new_step_fixtures", id=s.id, fixture=rel["fixture"]),
        t("new_step_loop", id=s.id),
    ]
    if s.listing:
        out.append(t("new_step_listing", listing=s.listing, module=rel["listing"]))
    out += [
        t("new_step_mistakes", tests=rel["tests"]),
        t("new_step_translate", po=", ".join(v for k, v in rel.items() if k.startswith("po_"))),
        t("new_step_verify", id=s.id),
    ]
    return out
