"""The capstone's commands: `kata train` and `kata assets fetch|status|pack|unpack`."""
from __future__ import annotations

import sys

from ..course.commandline import load_course, shown


def cmd_train(args) -> int:
    from .training.loop import main_cli

    course = load_course(args)
    if args.code == "auto":
        args.code = "reference" if (course.root / "solutions").is_dir() else "student"
    return main_cli(args, course.root)


def cmd_assets(args) -> int:
    from ..course.messages import t
    from . import assets

    def show(items) -> None:
        marks = {"ok": "✔", "skipped": "·"}
        for it in items:
            where = f"  {shown(it.path)}" if it.path is not None else ""
            mark = marks.get(it.status, "·" if it.optional else "✘")
            print(f"{mark} {it.name:<16} {t('assets_status_' + it.status):<8} {it.detail}{where}")

    if args.action == "fetch":
        items = assets.fetch(log=lambda m: print(m, file=sys.stderr))
        show(items)
        failed = [it for it in items if it.status == "failed"]
        if failed:
            print(t("assets_fetch_failed", count=len(failed)), file=sys.stderr)
        return 1 if failed else 0
    if args.action == "status":
        show(assets.status())
        return 0
    if not args.file:
        print(f"kata assets {args.action}: give the archive's file name", file=sys.stderr)
        return 2
    try:
        if args.action == "pack":
            out, files, size = assets.pack(args.file)
            print(t("assets_packed", file=shown(out), files=files, mb=f"{size / 2**20:.1f}", manifest=assets.MANIFEST,
                    name=out.name))
        else:
            installed = assets.unpack(args.file)
            print(t("assets_unpacked", files=len(installed), file=args.file))
            show(assets.status())
    except assets.AssetsError as e:
        print(f"kata assets: {e}", file=sys.stderr)
        return 2
    return 0
