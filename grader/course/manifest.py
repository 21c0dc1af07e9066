"""The course manifest (`course.toml`) — what the course is, validated on load.

Every error names the entry it is about. The manifest is one-to-one with the files: each
exercise has a solution, a stub and a check module named after its id, and every listing the
manifest names is checked by at least one check (found by reading the check files' `@check`
decorators, without importing them).

Everything a student reads is in English and Chinese: `title`/`title_zh` of the course, its
exercises and listings, `hints`/`hints_zh` (as many of each), `forbidden_hint`/`forbidden_hint_zh`,
and each check's `@check(title=..., title_zh=...)`. A missing Chinese text is an error here.
"""

from __future__ import annotations

import ast
import hashlib
import json
import os
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from . import assignments
from .messages import Msg, pick, t

PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the grader package (this file is grader/course/manifest.py)
ID_RE = re.compile(r"^s(\d+)_(\d+)_[a-z0-9_]+$")


class CourseError(Exception):
    """The manifest or the files it names are inconsistent. The message names the entry."""


def edition() -> dict | None:
    """What `kata release` (edition "student") or `kata export gradescope` (edition "autograder")
    wrote beside the package in grader/release.json; None for the instructor's course. An edition
    has no solutions/; a student edition's check modules hold only the public checks."""
    try:
        info = json.loads((PACKAGE_DIR / "release.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as e:
        raise CourseError(t("courseerr_release_unreadable", error=e)) from None
    return info if isinstance(info, dict) else None


@dataclass(frozen=True)
class CheckInfo:
    name: str
    points: float
    listings: tuple[str, ...]
    hidden: bool
    line: int
    title: str = ""
    title_zh: str = ""

    def display_title(self, lang: str | None = None) -> str:
        return pick(self.title, self.title_zh, lang)


@dataclass
class Exercise:
    id: str
    section: str
    title: str
    file: str  # relative to exercises/ and solutions/, e.g. "ch01/s1_11_softmax.py"
    listings: list[str]
    points: float
    time_limit_s: float
    memory_mb: int
    output_mb: int
    forbidden: list[str] = field(default_factory=list)
    forbidden_hint: str = ""
    forbidden_ops: list[str] = field(default_factory=list)  # aten operator names, e.g. "aten::_softmax"
    # modules its checks make slow to import (sklearn.metrics, torch._dynamo when an optimizer is
    # made: a second each): imported once by the sandbox's fork server, at its first check, and by
    # the grader before it forks lanes or gradings, so that every later check shares them
    preload: tuple[str, ...] = ()
    hints: list[str] = field(default_factory=list)
    checks: list[CheckInfo] = field(default_factory=list)
    title_zh: str = ""
    hints_zh: list[str] = field(default_factory=list)
    forbidden_hint_zh: str = ""
    beyond_book: bool = False  # goes beyond the chapter: no book listing, its decisions in ERRATA.md's K- entries

    @property
    def module(self) -> str:
        return Path(self.file).stem

    def display_title(self, lang: str | None = None) -> str:
        return pick(self.title, self.title_zh, lang)

    def display_hints(self, lang: str | None = None) -> list[str]:
        return self.hints_zh if (self.hints_zh and pick("en", "zh", lang) == "zh") else self.hints

    def display_forbidden_hint(self, lang: str | None = None) -> str:
        return pick(self.forbidden_hint, self.forbidden_hint_zh, lang)


@dataclass
class Listing:
    id: str
    section: str
    title: str
    title_zh: str = ""

    def display_title(self, lang: str | None = None) -> str:
        return pick(self.title, self.title_zh, lang)


@dataclass
class Course:
    root: Path
    title: str
    chapter: str
    torch: str
    exercises: list[Exercise]
    listings: list[Listing]
    title_zh: str = ""
    assignments: list = field(default_factory=list)  # of assignments.Assignment, in course.toml's order
    budget_s: float = 300.0  # a submission's grading budget: wall seconds across all its checks
    budget_cpu_s: float = 600.0  # ... and CPU seconds of all its sandbox's processes (where a cgroup counts them)

    def display_title(self, lang: str | None = None) -> str:
        return pick(self.title, self.title_zh, lang)

    @property
    def solutions_dir(self) -> Path:
        return self.root / "solutions"

    @property
    def exercises_dir(self) -> Path:
        return self.root / "exercises"

    @property
    def assets_dir(self) -> Path:
        """Data the exercises may read (tokenizer files), fetched at set-up; read-only in the sandbox:
        the course's .kata/assets, or the kata's own course's for a copy without one (assets_folder.assets_dir)."""
        from .assets_folder import assets_dir

        return assets_dir(self.root)

    @property
    def checks_dir(self) -> Path:
        return PACKAGE_DIR / "checks"

    @property
    def fixtures_dir(self) -> Path:
        return PACKAGE_DIR / "fixtures"

    def check_file(self, ex: Exercise) -> Path:
        return self.checks_dir / f"test_{ex.id}.py"

    def get(self, ex_id: str) -> Exercise:
        for ex in self.exercises:
            if ex.id == ex_id:
                return ex
        raise KeyError(ex_id)

    @property
    def max_score(self) -> float:
        return sum(ex.points for ex in self.exercises)


_MODULE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")  # a module's dotted name
COURSE_KEYS = {"title", "title_zh", "chapter", "torch", "defaults", "budget_s", "budget_cpu_s"}
DEFAULT_KEYS = {"time_limit_s", "memory_mb", "output_mb"}
EXERCISE_KEYS = {
    "id",
    "section",
    "title",
    "file",
    "listings",
    "points",
    "time_limit_s",
    "memory_mb",
    "output_mb",
    "forbidden",
    "forbidden_hint",
    "forbidden_hint_zh",
    "forbidden_ops",
    "hints",
    "title_zh",
    "hints_zh",
    "beyond_book",
    "preload",
}
LISTING_KEYS = {"id", "section", "title", "title_zh"}


def find_root(start: Path | None = None) -> Path:
    """The project folder: the nearest parent holding course.toml."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / "course.toml").is_file():
            return d
    if (PACKAGE_DIR.parent / "course.toml").is_file():
        return PACKAGE_DIR.parent
    raise CourseError(t("courseerr_no_course_toml", here=here))


def _unknown(where: str, table: dict, allowed: set[str]) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise CourseError(
            t("courseerr_unknown_keys", where=where, keys=", ".join(extra), allowed=", ".join(sorted(allowed)))
        )


def read_checks(path: Path) -> list[CheckInfo]:
    """The `@check(...)` metadata of a check module, read statically (the module is not run)."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except SyntaxError as e:
        raise CourseError(t("courseerr_check_syntax", path=path, line=e.lineno, error=e.msg)) from None
    found = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not node.name.startswith("test_"):
            continue
        for dec in node.decorator_list:
            if isinstance(dec, ast.Call) and getattr(dec.func, "id", None) == "check":
                try:
                    kw = {k.arg: ast.literal_eval(k.value) for k in dec.keywords}
                except ValueError:
                    raise CourseError(t("courseerr_check_literals", path=path, line=dec.lineno)) from None
                listings = kw.get("listings", ())
                if isinstance(listings, str):
                    listings = (listings,)
                for key in ("title", "title_zh"):
                    if not isinstance(kw.get(key), str) or not kw[key].strip():
                        raise CourseError(
                            t("courseerr_check_title", path=path, line=dec.lineno, name=node.name, field=key)
                        )
                found.append(
                    CheckInfo(
                        node.name,
                        float(kw.get("points", 1)),
                        tuple(listings),
                        bool(kw.get("hidden", False)),
                        node.lineno,
                        kw["title"],
                        kw["title_zh"],
                    )
                )
                break
        else:
            raise CourseError(t("courseerr_no_check_decorator", path=path, line=node.lineno, name=node.name))
    return found


class _ChecksIndex:
    """`read_checks` remembered by each check module's sha256, in `.kata/checks-index.json`:
    parsing the 37 modules took 0.23 s of every command's start (a third of a warm `kata check`).
    A module whose bytes changed is parsed again; the file is only a cache (unreadable, or a
    read-only folder: everything is parsed, nothing is lost)."""

    def __init__(self, path: Path):
        self.path = path
        self.changed = False
        self.used: set[str] = set()
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            self.known = doc if isinstance(doc, dict) and doc.get("schema") == 1 else {"schema": 1}
        except (OSError, ValueError):
            self.known = {"schema": 1}

    def read(self, path: Path) -> list[CheckInfo]:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        self.used.add(digest)
        rows = self.known.get(digest)
        if isinstance(rows, list):
            try:
                return [CheckInfo(r[0], float(r[1]), tuple(r[2]), bool(r[3]), int(r[4]), r[5], r[6]) for r in rows]
            except (TypeError, ValueError, IndexError):
                pass
        found = read_checks(path)
        self.known[digest] = [
            [c.name, c.points, list(c.listings), c.hidden, c.line, c.title, c.title_zh] for c in found
        ]
        self.changed = True
        return found

    def save(self) -> None:
        if not self.changed:
            return
        self.known = {k: v for k, v in self.known.items() if k == "schema" or k in self.used}
        try:
            self.path.parent.mkdir(exist_ok=True)
            tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}")
            tmp.write_text(json.dumps(self.known), encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError:
            pass


def _pairs(where: str, item: dict) -> None:
    """Every English text of an exercise has its Chinese one: hints one for one."""
    hints, hints_zh = item.get("hints", []), item.get("hints_zh", [])
    if len(hints) != len(hints_zh):
        raise CourseError(t("courseerr_hints_count", where=where, hints=len(hints), hints_zh=len(hints_zh)))
    if item.get("forbidden_hint") and not item.get("forbidden_hint_zh"):
        raise CourseError(t("courseerr_forbidden_hint_zh", where=where))


def load(root: Path | None = None, check_files: bool = True, require_stubs: bool = True) -> Course:
    """The course of the project folder at or above `root` (default: the working directory).
    `check_files`: validate the files against the manifest; `require_stubs=False` lets a
    student's exercise file be missing (the student commands say so and offer `kata reset`)."""
    root = find_root(root)
    path = root / "course.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise CourseError(f"{path}: {e}") from None
    _unknown(str(path), data, {"course", "listing", "exercise", "assignment"})
    meta = data.get("course", {})
    _unknown("[course]", meta, COURSE_KEYS)
    defaults = meta.get("defaults", {})
    _unknown("[course.defaults]", defaults, DEFAULT_KEYS)

    listings = []
    for i, item in enumerate(data.get("listing", [])):
        where = f"[[listing]] #{i + 1} ({item.get('id', '?')})"
        _unknown(where, item, LISTING_KEYS)
        for key in ("id", "section", "title", "title_zh"):
            if key not in item:
                raise CourseError(t("courseerr_missing_key", where=where, field=key))
        listings.append(Listing(str(item["id"]), str(item["section"]), item["title"], item["title_zh"]))
    seen_listing: set[str] = set()
    for lst in listings:
        if lst.id in seen_listing:
            raise CourseError(t("courseerr_duplicate_listing", id=lst.id))
        seen_listing.add(lst.id)

    exercises: list[Exercise] = []
    seen: set[str] = set()
    for i, item in enumerate(data.get("exercise", [])):
        where = f"[[exercise]] #{i + 1} ({item.get('id', '?')})"
        _unknown(where, item, EXERCISE_KEYS)
        for key in ("id", "section", "title", "title_zh", "file", "points"):
            if key not in item:
                raise CourseError(t("courseerr_missing_key", where=where, field=key))
        _pairs(where, item)
        ex_id = item["id"]
        if not ID_RE.match(ex_id):
            raise CourseError(t("courseerr_bad_id", where=where))
        if ex_id in seen:
            raise CourseError(t("courseerr_duplicate_exercise", where=where, id=ex_id))
        seen.add(ex_id)
        ch, sec = ID_RE.match(ex_id).groups()
        if str(item["section"]) != f"{int(ch)}.{int(sec)}":
            raise CourseError(t("courseerr_id_section", where=where, id=ex_id, section=item["section"]))
        if Path(item["file"]).stem != ex_id:
            raise CourseError(t("courseerr_file_name", where=where, file=item["file"], id=ex_id))
        for lst in item.get("listings", []):
            if lst not in seen_listing:
                raise CourseError(t("courseerr_listing_undeclared", where=where, listing=repr(lst)))
        preload = item.get("preload", [])
        if not isinstance(preload, list) or not all(isinstance(m, str) and _MODULE.fullmatch(m) for m in preload):
            raise CourseError(t("courseerr_preload", where=where, value=repr(preload)))
        if not isinstance(item.get("beyond_book", False), bool):
            raise CourseError(t("courseerr_beyond_book", where=where))
        exercises.append(
            Exercise(
                id=ex_id,
                section=str(item["section"]),
                title=item["title"],
                file=item["file"],
                listings=list(item.get("listings", [])),
                points=float(item["points"]),
                time_limit_s=float(item.get("time_limit_s", defaults.get("time_limit_s", 10))),
                memory_mb=int(item.get("memory_mb", defaults.get("memory_mb", 6144))),
                output_mb=int(item.get("output_mb", defaults.get("output_mb", 16))),
                forbidden=list(item.get("forbidden", [])),
                forbidden_hint=item.get("forbidden_hint", ""),
                forbidden_ops=list(item.get("forbidden_ops", [])),
                hints=list(item.get("hints", [])),
                title_zh=item["title_zh"],
                hints_zh=list(item.get("hints_zh", [])),
                forbidden_hint_zh=item.get("forbidden_hint_zh", ""),
                beyond_book=item.get("beyond_book", False),
                preload=tuple(preload),
            )
        )

    if "title" in meta and "title_zh" not in meta:
        raise CourseError(t("courseerr_title_zh"))
    try:
        assigned = assignments.parse(data.get("assignment", []), exercises)
    except assignments.AssignmentError as e:
        raise CourseError(str(e)) from None
    budgets = {}
    for key in ("budget_s", "budget_cpu_s"):
        value = meta.get(key, Course.__dataclass_fields__[key].default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
            raise CourseError(t("courseerr_budget", setting=key, value=repr(value)))
        budgets[key] = float(value)
    course = Course(
        root,
        meta.get("title", ""),
        meta.get("chapter", "ch01"),
        str(meta.get("torch", "")),
        exercises,
        listings,
        meta.get("title_zh", ""),
        assigned,
        **budgets,
    )
    if check_files:
        validate_files(course, require_stubs)
    return course


def validate_files(course: Course, require_stubs: bool = True) -> None:
    """Manifest and files one-to-one; every listing checked; points add up."""
    released = edition()
    student = released is not None and released.get("edition") == "student"
    covered: set[str] = set()
    index = _ChecksIndex(course.root / ".kata" / "checks-index.json")
    for ex in course.exercises:
        where = f"[[exercise]] {ex.id}"
        sol = course.solutions_dir / ex.file
        if released is None and not sol.is_file():
            raise CourseError(t("courseerr_solution_missing", where=where, path=sol.relative_to(course.root)))
        if require_stubs and not (course.exercises_dir / ex.file).is_file():
            raise CourseError(t("courseerr_stub_missing", where=where, path=Path("exercises", ex.file)))
        check_path = course.check_file(ex)
        if not check_path.is_file():
            raise CourseError(t("courseerr_check_module_missing", where=where, name=check_path.name))
        ex.checks = index.read(check_path)
        if not ex.checks:
            raise CourseError(t("courseerr_no_checks", where=where, name=check_path.name))
        total = sum(c.points for c in ex.checks)
        if student:  # the bundle holds the public checks; the hidden ones make up the rest of the points
            shipped = (released.get("exercises") or {}).get(ex.id)
            if not isinstance(shipped, dict):
                raise CourseError(t("courseerr_not_in_release", where=where))
            expected = float(shipped.get("public_points", -1))
            if abs(total - expected) > 1e-9:
                raise CourseError(t("courseerr_public_points", where=where, total=total, expected=expected))
        elif abs(total - ex.points) > 1e-9:
            raise CourseError(t("courseerr_points_mismatch", where=where, points=ex.points, total=total))
        checked = {lst for c in ex.checks for lst in c.listings}
        for lst in ex.listings:
            if lst not in checked and not student:  # a listing only hidden checks prove
                raise CourseError(t("courseerr_listing_unchecked", where=where, listing=lst))
        for c in ex.checks:
            for lst in c.listings:
                if lst not in ex.listings:
                    raise CourseError(t("courseerr_check_foreign_listing", where=where, check=c.name, listing=lst))
        covered |= checked
    index.save()
    for lst in course.listings:
        if lst.id not in covered and not student:
            raise CourseError(t("courseerr_listing_no_exercise", id=lst.id))
    # One-to-one: no stray solution, stub or check files.
    ids = {ex.id for ex in course.exercises}
    for folder, pattern, kind in (
        (course.solutions_dir, "**/s*_*.py", "courseerr_kind_solution"),
        (course.exercises_dir, "**/s*_*.py", "courseerr_kind_stub"),
        (course.checks_dir, "test_*.py", "courseerr_kind_check"),
    ):
        for f in folder.glob(pattern):
            stem = f.stem.removeprefix("test_")
            if stem not in ids:
                raise CourseError(t("courseerr_stray_file", file=f, kind=Msg.key(kind), stem=stem))
