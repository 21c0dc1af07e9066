"""The course author's commands: `kata new`, `kata verify`, `kata stubs` and `kata fixtures`."""

from __future__ import annotations

import os
import sys

from ..course.commandline import select
from ..course.messages import t


def cmd_new(args) -> int:
    from . import new_exercise

    try:
        s = new_exercise.create(
            getattr(args, "root", None), args.id, args.section, args.title, args.title_zh, args.listing
        )
    except new_exercise.Refused as e:  # nothing was written
        print(t("new_refused", id=args.id, reason=str(e)), file=sys.stderr)
        return 2
    print(
        t("new_added", id=s.id, section=s.section, after=s.after)
        if s.after
        else t("new_added_first", id=s.id, section=s.section)
    )
    for path in s.written:
        print(t("wrote_file", path=path.relative_to(s.root).as_posix()))
    print(t("new_left"))
    for n, step in enumerate(new_exercise.steps(s), 1):
        print(t("new_step", n=n, step=step))
    return 0


def cmd_verify(args) -> int:
    from .verify import verify

    helps = getattr(args, "untranslated_help", None)
    only = None
    if getattr(
        args, "exercise", None
    ):  # the grading half for these alone; a course that does not load is verify's to say
        from ..course.manifest import CourseError, load

        try:
            course = load(getattr(args, "root", None), check_files=False)
        except CourseError:
            course = None
        if course is not None:
            only = [ex.id for ex in select(course, args.exercise)]
    draft = getattr(args, "draft", False)
    v = verify(
        getattr(args, "root", None),
        grade=not args.no_grade,
        only=only,
        command_line=helps() if helps else None,
        draft=draft,
    )
    for fact in v.facts:
        print(t("verify_ok", fact=fact))
    for p in v.pending:
        print(t("verify_pending", problem=p))
    for p in v.problems:
        print(t("verify_fail", problem=p))
    if not v.ok:
        print(t("verify_problems", count=len(v.problems)))
    elif v.pending:
        print(t("verify_passed_draft", count=len(v.pending)))
    else:
        print(t("verify_passed"))
    return 0 if v.ok else 1


def cmd_stubs(args) -> int:
    from ..course.manifest import CourseError, load
    from . import stubs

    try:  # a new exercise has no stub yet: do not demand the files this command writes
        course = load(getattr(args, "root", None), check_files=False)
    except CourseError as e:
        print(f"kata: course.toml: {e}", file=sys.stderr)
        return 2
    if args.update_catalogs:
        for line in stubs.update_catalogs(course):
            print(line)
        return 0
    if args.check:
        stale = [
            ex.id
            for ex in course.exercises
            if not (course.exercises_dir / ex.file).is_file()
            or (course.exercises_dir / ex.file).read_text(encoding="utf-8") not in stubs.stub_variants(course, ex)
        ]
        for s in stale:
            print(t("stubs_stale", path=f"exercises/{course.get(s).file}"))
        return 1 if stale else 0
    written = stubs.write_stubs(course)
    for w in written:
        print(t("wrote_file", path=os.path.relpath(w)))
    if not written:
        print(t("stubs_up_to_date"))
    return 0


def cmd_fixtures(args) -> int:
    from ..course.manifest import load
    from .fixturegen import generate

    # the files held to what `kata grade` holds them to (titles, points, listings), stubs aside:
    # fixtures written for a check that grading then refuses would only defer the refusal
    course = load(getattr(args, "root", None), require_stubs=False)
    for p in generate(course, select(course, args.exercise)):
        print(t("wrote_file", path=os.path.relpath(p)))
    return 0
