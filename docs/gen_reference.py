"""Writes docs/reference/cli.md (and cli.zh.md) from the code itself: every command and option of the
real `kata` parser with its help text, the JSON report's schema (grader/reports/report.py) and the keys
course.toml accepts (grader/course/manifest.py, assignments.py). Run it after changing any of them:

    .venv/bin/python docs/gen_reference.py          # rewrite the two pages
    .venv/bin/python docs/gen_reference.py --check  # exit 1 when a committed page is stale

tests/test_docs_reference.py runs the check, so a new option or key cannot go undocumented.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = {"en": ROOT / "docs" / "reference" / "cli.md", "zh": ROOT / "docs" / "reference" / "cli.zh.md"}

# One line for each key course.toml accepts; a key the code accepts and this table lacks fails the
# check (and the test), so that every key is documented.
KEY_HELP = {
    "course": {
        "title": ("the chapter's title", "章节标题"),
        "title_zh": ("its Chinese title", "中文标题"),
        "chapter": (
            "the chapter's folder under exercises/ and solutions/ (`ch01`)",
            "exercises/ 与 solutions/ 下的章节文件夹（`ch01`）",
        ),
        "torch": ("the torch version the fixtures were computed with", "计算 fixture 时使用的 torch 版本"),
        "defaults": (
            "the table `[course.defaults]`: limits per call for every exercise",
            "表 `[course.defaults]`：每个练习每次调用的限制",
        ),
        "budget_s": (
            "a submission's grading budget, seconds of wall time (300)",
            "一份提交的评分预算，墙钟秒数（300）",
        ),
        "budget_cpu_s": (
            "its budget of CPU seconds, every process of its sandbox (600)",
            "CPU 秒数预算，计入沙箱中的所有进程（600）",
        ),
    },
    "course.defaults": {
        "time_limit_s": ("seconds one call may take", "一次调用可用的秒数"),
        "memory_mb": ("memory of the sandbox, in MB", "沙箱内存上限，单位 MB"),
        "output_mb": ("printed output and file size, in MB", "打印输出与文件大小上限，单位 MB"),
    },
    "listing": {
        "id": (
            "the listing's id (`1.6`, or a worked example `1.11/softmax`)",
            "代码清单的 id（`1.6`，或示例 `1.11/softmax`）",
        ),
        "section": ("its section of the chapter", "所在小节"),
        "title": ("what it shows", "它展示的内容"),
        "title_zh": ("the same in Chinese", "中文标题"),
    },
    "exercise": {
        "id": ("the exercise id, `s<chapter>_<section>_<name>`", "练习 id，`s<章>_<节>_<名称>`"),
        "section": ("its section", "所在小节"),
        "title": ("what the student builds", "学生要实现的内容"),
        "title_zh": ("the same in Chinese", "中文标题"),
        "file": ("its file under exercises/ and solutions/", "exercises/ 与 solutions/ 下的文件"),
        "listings": ("the listings its checks prove", "其检查所验证的代码清单"),
        "points": ("what it is worth", "分值"),
        "time_limit_s": ("overrides `[course.defaults]`", "覆盖 `[course.defaults]`"),
        "memory_mb": ("overrides `[course.defaults]`", "覆盖 `[course.defaults]`"),
        "output_mb": ("overrides `[course.defaults]`", "覆盖 `[course.defaults]`"),
        "forbidden": (
            'the APIs the student may not use (a "write it yourself" exercise)',
            "学生不得使用的 API（“自己实现”的练习）",
        ),
        "forbidden_hint": ("what to write instead, shown with a violation", "违规时显示的替代写法"),
        "forbidden_hint_zh": ("the same in Chinese", "中文版本"),
        "forbidden_ops": ("torch operators the runtime guard refuses", "运行时守卫拒绝的 torch 算子"),
        "hints": ("`kata hint`'s hints, in order", "`kata hint` 的提示，按顺序"),
        "hints_zh": ("the same in Chinese, as many", "中文提示，数量相同"),
        "beyond_book": (
            "true for an exercise beyond the chapter (`s1_23_mlm`)",
            "超出本章内容的练习为 true（`s1_23_mlm`）",
        ),
        "preload": (
            "modules each sandbox imports once, at the first check that asks",
            "每个沙箱在第一次需要时导入一次的模块",
        ),
    },
    "assignment": {
        "id": ("the assignment's id (`week2`)", "作业 id（`week2`）"),
        "title": ("its title", "标题"),
        "title_zh": ("the same in Chinese", "中文标题"),
        "sections": ("the sections it holds", "包含的小节"),
        "exercises": ("and/or the exercises it holds", "以及/或者包含的练习"),
        "due": ("its due date, a date-time with its UTC offset", "截止时间，带 UTC 偏移的日期时间"),
        "points": ("what it is worth in the gradebook (scores are scaled to it)", "在成绩册中的分值（得分按此缩放）"),
        "late_per_day": (
            "percent of the score taken per started day late",
            "每迟交一天（不足一天按一天计）扣除的百分比",
        ),
        "late_max_days": ("0 past this many days late", "迟交超过此天数记 0 分"),
        "late_grace_minutes": ("minutes late that cost nothing", "不扣分的宽限分钟数"),
        "lms_assignment": (
            "the LMS's column, `Title (id)` as in Canvas's export",
            "学习平台的成绩列名，如 Canvas 导出中的 `Title (id)`",
        ),
    },
}

WORDS = {
    "en": {
        "title": "Commands and options",
        "intro": "Generated from the code by `docs/gen_reference.py` (do not edit by hand): every command and "
        "option of the real `kata` parser, the JSON report's schema and the keys `course.toml` accepts.",
        "commands": "Commands",
        "option": "option",
        "help": "help",
        "default": "default",
        "report": "The JSON report's schema",
        "report_intro": "From `grader/reports/report.py` (schema version {schema}); each field is explained in "
        "[The JSON report](json-report.md).",
        "toml": "course.toml's keys",
        "table": "table",
        "key": "key",
        "means": "meaning",
        "example": "in this course",
        "toml_intro": "Any other key is refused, naming the file and the keys allowed (`kata verify`, and every command).",
    },
    "zh": {
        "title": "命令与选项",
        "intro": "由 `docs/gen_reference.py` 从代码生成（请勿手工编辑）：真实 `kata` 解析器的每个命令和选项、"
        "JSON 报告的结构，以及 `course.toml` 接受的键。",
        "commands": "命令",
        "option": "选项",
        "help": "说明",
        "default": "默认值",
        "report": "JSON 报告的结构",
        "report_intro": "取自 `grader/reports/report.py`（schema 版本 {schema}）；各字段的含义见 [JSON 报告](json-report.zh.md)。",
        "toml": "course.toml 的键",
        "table": "表",
        "key": "键",
        "means": "含义",
        "example": "本课程中的值",
        "toml_intro": "其他键一律拒绝，并给出文件名和允许的键（`kata verify` 和每个命令都会检查）。",
    },
}


def _cell(text: str) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _subparsers(parser: argparse.ArgumentParser):
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, helps.get(name, ""), sub


def _options(parser: argparse.ArgumentParser, words: dict) -> list[str]:
    rows = []
    for a in parser._actions:
        if isinstance(a, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        if a.option_strings:
            name = ", ".join(f"`{o}`" for o in a.option_strings)
            if a.nargs != 0:
                metavar = a.metavar or (("{" + ",".join(map(str, a.choices)) + "}") if a.choices else a.dest.upper())
                name += f" `{' '.join(metavar) if isinstance(metavar, tuple) else metavar}`"
        else:
            name = f"`{a.metavar or a.dest}`"
        help_text = (a.help or "") % {"default": a.default, "prog": parser.prog} if a.help else ""
        if (
            a.default not in (None, False, argparse.SUPPRESS)
            and a.option_strings
            and a.nargs != 0
            and "default" not in help_text
        ):
            help_text += f" ({words['default']}: `{a.default}`)"
        rows.append(f"| {name} | {_cell(help_text)} |")
    if not rows:
        return []
    return [f"| {words['option']} | {words['help']} |", "|---|---|", *rows, ""]


def _commands(parser: argparse.ArgumentParser, prefix: str, words: dict, level: int) -> list[str]:
    out = []
    for name, help_text, sub in _subparsers(parser):
        full = f"{prefix} {name}"
        out += [f"{'#' * level} `{full}`", ""]
        if help_text:
            out += [_cell(help_text), ""]
        usage = " ".join(sub.format_usage().split()).split(" ", 1)[-1]  # argparse's "usage:" word is translated
        out += ["```text", usage, "```", ""]
        out += _options(sub, words)
        out += _commands(sub, full, words, min(level + 1, 4))
    return out


def _report_schema() -> tuple[int, str]:
    from grader.reports import report

    doc = report.__doc__ or ""
    body = doc.split("\n", 2)[2] if doc.count("\n") >= 2 else doc
    return report.SCHEMA, body.strip()


def _toml_keys() -> dict[str, set[str]]:
    from grader.course import assignments, manifest

    return {
        "course": manifest.COURSE_KEYS - set(),
        "course.defaults": manifest.DEFAULT_KEYS,
        "listing": manifest.LISTING_KEYS,
        "exercise": manifest.EXERCISE_KEYS,
        "assignment": assignments.KEYS,
    }


def _example(data: dict, table: str, key: str) -> str:
    if table == "course":
        node = data.get("course", {})
    elif table == "course.defaults":
        node = data.get("course", {}).get("defaults", {})
    else:
        node = next((item for item in data.get(table, []) if key in item), {})
    if key not in node or isinstance(node[key], dict):
        return ""
    value = node[key]
    text = repr(value) if not isinstance(value, str) else f'"{value}"'
    text = " ".join(text.split())
    return f"`{text[:60]}{'…' if len(text) > 60 else ''}`".replace("|", "\\|")


def render(lang: str) -> str:
    from grader.cli import build_parser

    words = WORDS[lang]
    parser = build_parser(lang)
    out = [
        f"# {words['title']}",
        "",
        words["intro"],
        "",
        "## `kata`",
        "",
        "```text",
        " ".join(parser.format_usage().split()).split(" ", 1)[-1],
        "```",
        "",
    ]
    out += _options(parser, words)
    out += [f"## {words['commands']}", ""]
    out += _commands(parser, "kata", words, 3)

    schema, body = _report_schema()
    out += [f"## {words['report']}", "", words["report_intro"].format(schema=schema), "", "```text", body, "```", ""]

    data = tomllib.loads((ROOT / "course.toml").read_text(encoding="utf-8"))
    out += [f"## {words['toml']}", "", words["toml_intro"], ""]
    pick = 0 if lang == "en" else 1
    for table, keys in _toml_keys().items():
        head = f"[{table}]" if table.startswith("course") else f"[[{table}]]"
        out += [f"### `{head}`", "", f"| {words['key']} | {words['means']} | {words['example']} |", "|---|---|---|"]
        for key in sorted(keys):
            out.append(f"| `{key}` | {_cell(KEY_HELP[table][key][pick])} | {_example(data, table, key)} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def missing_help() -> list[str]:
    """Keys the code accepts that KEY_HELP does not describe."""
    return [
        f"[{table}] {key}"
        for table, keys in _toml_keys().items()
        for key in sorted(keys)
        if key not in KEY_HELP.get(table, {})
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a committed page differs from the code")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    if missing_help():
        print(
            "docs/gen_reference.py: describe these course.toml keys in KEY_HELP: " + ", ".join(missing_help()),
            file=sys.stderr,
        )
        return 1
    stale = []
    for lang, path in OUT.items():
        text = render(lang)
        if args.check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, encoding="utf-8")
    if stale:
        print("stale, run `.venv/bin/python docs/gen_reference.py`: " + ", ".join(stale), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
