"""`kata verify`: the developer's proof that the course is consistent (model: rustlings' dev check).

Fails when the manifest and files are not one-to-one, a listing has no check, a committed stub
differs from the one regenerated from its solution (in any language), a translation
catalog lacks a text or is stale, a translated stub's code is not the English stub's, a stub's
signatures differ from the solution's, a stub contains the answer of an exercise
(grader/authoring/answers.py), a solution uses an
API its exercise forbids, a fixture is missing or was made with another torch, a solution fails any check, a stub passes any check, or a text a student reads
lacks its Chinese (or English) version (grader/course/i18n.py), or a Chinese text uses a variant
the glossary refuses (locale/zh/glossary.toml, grader/authoring/glossary.py), or an ERRATA.md entry
has no finished translation made for its present English (locale/<lang>/errata.po,
grader/listings/errata.py).

An exercise marked `beyond_book = true` in course.toml goes beyond the chapter: the book prints
nothing for its listings, so they alone may have no printed output (and must have none), and
its decisions are ERRATA.md's K- entries (kata decisions, not book errata), at least one of them
proved by one of its checks.

`verify(draft=True)` (`kata verify --draft`) lists what is still to write as pending instead of
failing on it: a Chinese text missing, fuzzy or stale (the message catalog, course.toml, the check
modules, the exercises' and ERRATA.md's catalogs, the command line's help), and the book's printed
output of a listing. Everything else fails as without it; CI runs the strict `kata verify`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import torch

from ..checking import asset_gate, fixtures, lanes
from ..checking.submission import open_submission
from ..course import manifest as course_mod
from ..course import i18n
from ..course.messages import LANGS, t
from ..course.scan import imported, scan
from ..listings import errata as errata_i18n
from . import answers, asset_pins, glossary, stubs


@dataclass
class Verdict:
    problems: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    pending: list[str] = field(default_factory=list)  # --draft: still to write, not failing

    @property
    def ok(self) -> bool:
        return not self.problems


def beyond_book_problems(course, decisions: list[tuple[str, str]], pending: list[str] | None = None) -> list[str]:
    """The listings rule (a re-run listing has the book's printed output unless its exercise goes
    beyond the book, and then has none) and the errata rule (an exercise beyond the book has a K-
    entry of ERRATA.md proved by one of its checks). A listing without the book's output goes to
    `pending` when one is given (a draft)."""
    from .. import listings

    problems = []
    beyond = {ex.id for ex in course.exercises if ex.beyond_book}
    for lst in listings.load(course).values():
        if lst.exercise in beyond and lst.book:
            problems.append(t("verify_listing_beyond_has_book", id=lst.id, exercise=lst.exercise))
        elif lst.exercise not in beyond and not lst.book:
            (problems if pending is None else pending).append(t("verify_listing_no_book", id=lst.id))
    for ex_id in sorted(beyond):
        if not any(f"`{ex_id}::" in body.partition("Proved by")[2] for _, body in decisions):
            problems.append(t("verify_beyond_no_decision", id=ex_id))
    return problems


def verify(
    root=None,
    grade: bool = True,
    only: list[str] | None = None,
    command_line: list[str] | None = None,
    draft: bool = False,
) -> Verdict:
    """Check the course; `only` limits the grading half to those exercise ids. `command_line`: the
    help texts of `kata` that lack their Chinese (grader/course/cli_text.untranslated), which the
    command line, a layer above, hands in. `draft`: what is still to write goes to `pending`
    (the module's docstring), not to `problems`."""
    v = Verdict()

    def failing(found: list[str]) -> list[str]:
        """`found` less what a draft lists as pending (a Chinese text still to write)."""
        if not draft:
            return found
        v.pending += [p for p in found if i18n.pending_translation(p)]
        return [p for p in found if not i18n.pending_translation(p)]

    if command_line is not None:
        (v.pending if draft else v.problems).extend(t("verify_in_command_line", problem=p) for p in command_line)
        if not command_line:
            v.facts.append(t("verify_fact_command_line"))
    try:
        c = course_mod.load(root)
    except course_mod.CourseError as e:
        v.problems.append(t("verify_manifest", error=e))
        return v
    torch_version = torch.__version__.split("+")[0]
    translated = True  # every stub catalog complete, every Chinese stub the English one's code
    for ex in c.exercises:
        sol_src = (c.solutions_dir / ex.file).read_text(encoding="utf-8")
        stub_path = c.exercises_dir / ex.file
        try:
            expected = stubs.stub_variants(c, ex)
            found = stubs.catalog_problems(c, ex)
            v.problems += failing(found)
            translated = translated and not found
        except (stubs.StubError, SyntaxError) as e:
            v.problems.append(t("verify_no_stub", id=ex.id, error=e))
            continue
        committed = stub_path.read_text(encoding="utf-8")
        if committed not in expected:
            v.problems.append(t("verify_stale_stub", id=ex.id, file=ex.file))
        sol_sigs, stub_sigs = stubs.signatures(sol_src), stubs.signatures(committed)
        for name in sorted(set(sol_sigs) | set(stub_sigs)):
            if sol_sigs.get(name) != stub_sigs.get(name):
                v.problems.append(
                    t("verify_signature", id=ex.id, name=name, solution=sol_sigs.get(name), stub=stub_sigs.get(name))
                )
        for bad in scan(sol_src, ex.forbidden, {e.module for e in c.exercises}):
            v.problems.append(t("verify_solution_forbidden", id=ex.id, what=bad.describe(ex.file)))
        by_module = {e.module: e for e in c.exercises}
        seen, todo = {ex.module}, [sol_src]
        while todo:  # the exercise files it imports are scanned under its list too (grader/checking/runner.py)
            for module in sorted(imported(todo.pop()) & set(by_module) - seen):
                seen.add(module)
                dep = by_module[module]
                dep_path = c.solutions_dir / dep.file
                if not dep_path.is_file():
                    continue
                dep_src = dep_path.read_text(encoding="utf-8")
                todo.append(dep_src)
                for bad in scan(dep_src, ex.forbidden, set(by_module)):
                    v.problems.append(t("verify_import_forbidden", id=ex.id, dep=dep.id, what=bad.describe(dep.file)))
        try:
            meta = fixtures.metadata(ex.id)
            if meta.get("torch") != torch_version:
                v.problems.append(t("verify_fixture_torch", id=ex.id, made=meta.get("torch"), running=torch_version))
        except FileNotFoundError:
            v.problems.append(t("verify_fixture_missing", id=ex.id))
    if translated:
        v.facts.append(t("verify_fact_stubs_translated", langs=", ".join(LANGS)))
    leaks = answers.check_course(c)
    v.problems += leaks
    if not leaks:
        v.facts.append(t("verify_fact_no_answers"))
    errata = c.root / "ERRATA.md"
    if errata.is_file():
        known = {f"{ex.id}::{ch.name}" for ex in c.exercises for ch in ex.checks}
        entries = re.findall(
            r"^### ([EK]-[\w.-]+)\s*$(.*?)(?=^### |^## |\Z)", errata.read_text(encoding="utf-8"), re.M | re.S
        )
        for entry_id, body in entries:
            tail = body.split("Proved by", 1)[1] if "Proved by" in body else ""
            proofs = re.findall(r"`(s\d+_\d+_\w+::test_\w+)`", tail)
            tests = re.findall(r"`(tests/[\w/]+\.py)::(test_\w+)`", tail)  # a claim no graded check can show
            if not proofs and not tests:
                v.problems.append(t("verify_erratum_unproved", id=entry_id))
            for proof in proofs:
                if proof not in known:
                    v.problems.append(t("verify_erratum_no_proof", id=entry_id, proof=proof))
            for path, name in tests:
                f = c.root / path
                if not f.is_file() or f"def {name}(" not in f.read_text(encoding="utf-8"):
                    v.problems.append(t("verify_erratum_no_proof", id=entry_id, proof=f"{path}::{name}"))
        decisions = [(entry_id, body) for entry_id, body in entries if entry_id.startswith("K-")]
        v.facts.append(t("verify_fact_errata", entries=len(entries) - len(decisions), decisions=len(decisions)))
        v.problems += beyond_book_problems(c, decisions, v.pending if draft else None)
        wanted = errata_i18n.wanted_ids(c)
        untranslated = [p for lang in LANGS if lang != "en" for p in errata_i18n.problems(c.root, lang, wanted)]
        v.problems += failing([t("verify_in_errata", problem=p) for p in untranslated])
        if not untranslated:
            v.facts.append(
                t(
                    "verify_fact_errata_translated",
                    count=len(wanted),
                    langs=", ".join(lang for lang in LANGS if lang != "en"),
                )
            )
    else:
        v.problems.append(t("verify_no_errata"))
    beyond = [ex.id for ex in c.exercises if ex.beyond_book]
    if beyond:
        v.facts.append(t("verify_fact_beyond_book", ids=", ".join(beyond)))
    v.facts.append(
        t(
            "verify_fact_counts",
            exercises=len(c.exercises),
            checks=sum(len(ex.checks) for ex in c.exercises),
            listings=len(c.listings),
        )
    )
    untranslated = i18n.problems(c)
    v.problems += failing([t("verify_in_languages", problem=p) for p in untranslated])
    if not untranslated:
        v.facts.append(t("verify_fact_languages", count=len(i18n.CATALOG)))
    variants = glossary.problems(c.root)
    v.problems += [t("verify_in_glossary", problem=p) for p in variants]
    if not variants:
        v.facts.append(t("verify_fact_glossary", path=glossary.GLOSSARY.as_posix()))
    pinned, said = asset_pins.problems(c)
    v.problems += pinned
    v.facts += said
    if not grade or v.problems:
        return v
    graded = [ex for ex in c.exercises if not only or ex.id in only]
    expected = sum(len(ex.checks) for ex in graded)
    try:
        asset_gate.require(c, graded)  # the gradings below would stop on it: said as a problem
    except asset_gate.AssetUnavailable as e:
        v.problems.append(str(e))
        return v
    with open_submission(c.solutions_dir, c.chapter, c.exercises) as sub:
        res = lanes.run(c, sub, graded)  # as `kata grade` runs one submission: in lanes, on every core
    if len(res.results) != expected:
        v.problems.append(t("verify_result_count", results=len(res.results), checks=expected))
    for r in res.results:
        if r.status != "passed":
            v.problems.append(t("verify_solution_fails", check=f"{r.exercise}::{r.name}", message=r.message))
    v.facts.append(
        t("verify_fact_solutions", score=f"{res.score:g}/{res.max_score:g}", seconds=f"{res.duration_s:.1f}")
    )
    with open_submission(c.exercises_dir, c.chapter, c.exercises) as sub:
        res = lanes.run(c, sub, graded)
    for r in res.results:
        if r.status == "passed":
            v.problems.append(t("verify_stub_passes", check=f"{r.exercise}::{r.name}"))
    v.facts.append(t("verify_fact_stubs", score=f"{res.score:g}/{res.max_score:g}", seconds=f"{res.duration_s:.1f}"))
    return v
