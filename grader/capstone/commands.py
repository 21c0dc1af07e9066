"""The capstone's commands: `kata train` and `kata assets fetch|status|pack [--with-wheels]|unpack`."""

from __future__ import annotations

import sys

from ..course.commandline import load_course, shown
from ..course.safe_text import escaped


def cmd_train(args) -> int:
    from .training.loop import main_cli

    course = load_course(args)
    if args.code == "auto":
        args.code = "reference" if (course.root / "solutions").is_dir() else "student"
    return main_cli(args, course.root)


def _course_in_use() -> str:
    """The course of the folder the command runs in (a copy of the course is not the kata's own),
    made the one whose assets every action below reads and writes; a line that names it and the
    assets folder its sandbox gets (a copy without .kata/ borrows the kata's own course's)."""
    from ..course.manifest import CourseError, find_root
    from ..course.messages import t
    from . import gpt2

    try:
        root = find_root()
    except CourseError:
        root = gpt2.course_root()
    gpt2.use_course(root)
    folder = gpt2.assets_dir()
    if folder == gpt2.own_assets_dir():
        return t("assets_course_line", course=str(root), folder=shown(folder))
    return t("assets_course_lent", course=str(root), folder=shown(folder), own=shown(gpt2.own_assets_dir()))


def cmd_assets(args) -> int:
    from rich.cells import cell_len, set_cell_size

    from ..course.messages import t
    from . import assets, wheels

    def show(items) -> None:
        marks = {"ok": "✔", "skipped": "·"}
        for it in items:
            where = f"  {escaped(shown(it.path))}" if it.path is not None else ""
            mark = marks.get(it.status, "·" if it.optional else "✘")
            status = t("assets_status_" + it.status)  # padded by display cells: 已损坏 takes six
            shown_name = escaped(it.name)  # a file someone put there: its name cannot drive the terminal
            name = set_cell_size(shown_name, max(16, cell_len(shown_name)))  # 离线语料 takes eight cells, not four
            print(f"{mark} {name} {set_cell_size(status, max(8, cell_len(status)))} {it.detail}{where}")

    where = _course_in_use()
    if args.action in ("fetch", "status"):
        print(escaped(where))
    if args.action == "fetch":
        items = assets.fetch(log=lambda m: print(escaped(m), file=sys.stderr))
        show(items)
        failed = [it for it in items if it.status == "failed"]
        if failed:
            print(t("assets_fetch_failed", count=len(failed)), file=sys.stderr)
        return 1 if failed else 0
    if args.action == "status":
        show(assets.status())
        return 0
    if args.action == "lock":
        target = wheels.Target(args.python_version, tuple(args.platform or ()))
        try:
            lock, count = assets.lock(target, log=lambda m: print(m, file=sys.stderr))
        except assets.AssetsError as e:
            print(f"kata assets: {escaped(str(e))}", file=sys.stderr)
            return 2
        print(t("wheels_locked", lock=lock.name, count=count, **target.words()))
        return 0
    if not args.file:
        print(t("assets_give_file", action=args.action), file=sys.stderr)
        return 2
    try:
        if args.action == "pack":
            with_wheels = args.with_wheels or bool(args.python_version or args.platform)  # either implies it
            target = wheels.Target(args.python_version, tuple(args.platform or ())) if with_wheels else None
            packed = assets.pack(args.file, target, log=lambda m: print(escaped(m), file=sys.stderr))
            print(
                t(
                    "assets_packed",
                    file=escaped(shown(packed.path)),
                    files=packed.files,
                    mb=f"{packed.size / 2**20:.1f}",
                    manifest=assets.MANIFEST,
                    name=escaped(packed.path.name),
                )
            )
            if target is not None:
                print(
                    t(
                        "wheels_packed",
                        count=packed.wheels,
                        mb=f"{packed.wheels_size / 2**20:.1f}",
                        name=escaped(packed.path.name),
                        **target.words(),
                    )
                )
        else:
            installed = assets.unpack(args.file)
            print(t("assets_unpacked", files=len(installed), file=escaped(args.file)))
            show(assets.status())
    except assets.AssetsError as e:
        print(f"kata assets: {escaped(str(e))}", file=sys.stderr)
        return 2
    return 0
