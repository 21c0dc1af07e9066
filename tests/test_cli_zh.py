"""`kata --lang zh`: every command's help, argparse's own words and the commands' printed lines are
Chinese (issue 36).

A text passes when no English written by the kata is left in it once the names it may keep are
taken out: backticked code, quoted examples, option strings, ALL-CAPS metavars and acronyms,
{choice,sets}, paths and file names, identifiers (with a digit or an underscore), the usage block
argparse writes from those, the argument and command names at the start of a help row, and a few
proper nouns (ALLOWED). Any run of three or more Latin letters left is English the kata wrote."""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys

from rich.cells import cell_len as cells

from grader.cli import build_parser
from grader.course.cli_text import argparse_words, chosen_language
from tests.conftest import ROOT
from tests.test_cli_help import commands

# the words of a command line: the commands and their positional choices (`kata assets pack`)
COMMANDS = sorted(
    {
        name
        for path, parser in commands(build_parser("en"))
        for name in path.split()[1:] + [c for a in parser._actions if not a.option_strings for c in (a.choices or ())]
    },
    key=len,
    reverse=True,
)
# names, not words: products, formats and tools that read the same in a Chinese text
ALLOWED = {
    "kata",
    "transformer",
    "gpt",
    "bert",
    "imdb",
    "nbgrader",
    "gradescope",
    "canvas",
    "moodle",
    "exercism",
    "pytorch",
    "torch",
    "torchrun",
    "tiktoken",
    "copydetect",
    "jupyter",
    "python",
    "adamw",
    "apple",
    "slurm",
    "hugging",
    "face",
    "parquet",
    "pypi",
    "wheel",
    "zip",
    "tar",
    "json",
    "html",
    "csv",
    "gpu",
    "cpu",
    "id",
    "png",
}

_CODE = [
    re.compile(r"\bkata(?: (?:" + "|".join(COMMANDS) + r")\b)+"),  # the commands: kata release, kata export nbgrader
    re.compile(r"\bnbgrader [a-z_]+"),  # and nbgrader's: nbgrader autograde
    re.compile(r"`[^`]*`"),  # backticked code
    re.compile(r"'[^'\n]*'"),  # quoted examples: 'Attention (48213)'
    re.compile(r"\{[^{}\s]*\}"),  # argparse's {choice,sets}
    re.compile(r"\[\[[a-z_]+\]\]"),  # course.toml's [[assignment]]
    re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*"),  # option strings
    re.compile(r"[\w.<>*:~-]*/[\w.<>*/:~-]*"),  # paths: exercises/, .kata/assets, ch01/x.py
    re.compile(r"[\w<>-]*\.\w[\w.<>-]*"),  # file names: setup.sh, tar.gz, .kata
    re.compile(r"\b\w*[\d_]\w*\b"),  # identifiers: s1_11, budget_s, sha256, week2
    re.compile(r"\b[A-Z][A-Z0-9]+\b"),  # metavars and acronyms: OUT, CUDA, LMS
]


def english_left(text: str, names: set[str] = frozenset()) -> list[str]:
    """The English words of `text` that are none of the names above (nor `names`: a parser's
    positionals and subcommands at the start of a help row)."""
    lines = []
    in_usage = False
    for line in text.splitlines():
        if line.startswith("用法：") or line.startswith("usage: "):
            in_usage = True
        elif in_usage and not line.strip():
            in_usage = False
        if in_usage:
            continue
        row = line.strip().split("  ", 1)
        first = row[0].split(",")[0].split(" ")[0]
        if line.startswith("  ") and (first.startswith("-") or first in names):
            line = row[1] if len(row) > 1 else ""
        lines.append(line)
    text = "\n".join(lines)
    for pattern in _CODE:
        text = pattern.sub(" ", text)
    return [w for w in re.findall(r"[A-Za-z]{3,}", text) if w.lower() not in ALLOWED]


def _names(parser: argparse.ArgumentParser) -> set[str]:
    out = set()
    for action in parser._actions:
        if not action.option_strings:
            out.add(action.metavar or action.dest)
        if isinstance(action, argparse._SubParsersAction):
            out |= set(action.choices)
    return out


def zh_help(monkeypatch) -> dict[str, str]:
    """`kata ... --help` of every command path, in Chinese, one line per paragraph (a wide terminal)."""
    monkeypatch.setenv("COLUMNS", "100000")
    with argparse_words("zh"):
        return {path: parser.format_help() for path, parser in commands(build_parser("zh"))}


def test_every_command_s_help_is_chinese(monkeypatch):
    helps = zh_help(monkeypatch)
    assert {"kata", "kata train", "kata export nbgrader", "kata assets", "kata grade"} <= set(helps)
    parsers = dict(commands(build_parser("zh")))
    left = {path: words for path, text in helps.items() if (words := english_left(text, _names(parsers[path])))}
    assert not left, "English left in `kata --lang zh CMD --help`:\n" + "\n".join(
        f"{path}: {' '.join(words)}" for path, words in left.items()
    )


def test_argparse_s_own_words_are_chinese(monkeypatch):
    text = zh_help(monkeypatch)["kata grade"]
    assert text.startswith("用法：kata grade [-h]")
    assert "\n位置参数:\n" in text and "\n选项:\n" in text
    assert "  -h, --help " in text and " 显示此帮助信息并退出\n" in text


def test_chinese_help_fits_an_80_cell_terminal(monkeypatch):
    """argparse counts characters; a Chinese character takes two cells, so its own wrapping would
    give lines twice as wide as the terminal."""
    monkeypatch.setenv("COLUMNS", "80")
    with argparse_words("zh"):
        helps = {path: parser.format_help() for path, parser in commands(build_parser("zh"))}
    wide = [
        f"{path}: {line}"
        for path, text in helps.items()
        for line in text.splitlines()
        if re.search(r"[\u4e00-\u9fff]", line) and not line.startswith("用法：") and cells(line) > 80
    ]
    assert not wide, "lines wider than the terminal:\n" + "\n".join(wide)
    assert (
        "\n                        记录分数，日志会说明原因）或 `limits-only`（用于不允许\n"
        in helps["kata export gradescope"]
    )


def test_english_help_is_unchanged():
    with argparse_words("en"):
        text = build_parser("en")._subparsers._group_actions[0].choices["stubs"].format_help()
    assert text.startswith("usage: kata stubs [-h]")
    assert "  -h, --help         show this help message and exit" in text
    assert "only report stale stubs (in any language)" in text


def test_the_language_is_chosen_before_the_parser_is_built(monkeypatch):
    monkeypatch.setenv("KATA_LANG", "en")
    assert chosen_language(["--lang", "zh", "check"]) == "zh"
    assert chosen_language(["stubs", "--lang=zh"]) == "zh"
    assert chosen_language(["check"]) == "en"
    assert chosen_language(["run", "--", "--lang", "zh"]) == "en"
    monkeypatch.setenv("KATA_LANG", "zh")
    assert chosen_language(["check"]) == "zh"


def _kata(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "grader", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **(env or {})},
    )


def test_the_command_line_s_errors_are_chinese():
    wrong = _kata("--lang=zh", "nosuch")
    assert wrong.returncode == 2
    assert wrong.stderr.startswith("用法：kata ")
    assert "kata：错误：参数 command：无效的选项值：'nosuch'（可选：" in wrong.stderr
    missing = _kata("grade", env={"KATA_LANG": "zh"})
    assert "kata grade：错误：缺少以下参数：path" in missing.stderr
    english = _kata("grade", env={"LANG": "C"})
    assert "kata grade: error: the following arguments are required: path" in english.stderr
    budget = _kata("grade", "x", "--budget", "0", "--lang", "zh", env={"LANG": "C"})
    assert "kata grade：错误：参数 --budget：'0' 不是大于 0 的秒数" in budget.stderr


def _zh_run(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    """`kata --lang zh ARGS` in `cwd`, in an English environment: the option alone picks Chinese."""
    return subprocess.run(
        [sys.executable, "-m", "grader", "--lang", "zh", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env={
            "PATH": "/usr/bin:/bin",
            "PYTHONPATH": str(ROOT),
            "LANG": "C",
            "HOME": os.environ.get("HOME", "/tmp"),
            "MPLBACKEND": "Agg",
        },
    )


def _chinese_output(proc: subprocess.CompletedProcess, command: str) -> str:
    """stdout and stderr, the lines of other libraries (matplotlib's font search) left out; fails on
    English the kata wrote."""
    lines = [line for line in (proc.stdout + proc.stderr).splitlines() if not line.startswith("findfont:")]
    text = "\n".join(lines)
    assert not english_left(text), f"English left in `kata --lang zh {command}`: {english_left(text)}\n{text}"
    return text


def test_kata_stubs_speaks_chinese(tmp_course):
    stub = tmp_course / "exercises/ch01/s1_11_softmax.py"
    stub.write_text(stub.read_text(encoding="utf-8") + "\n# changed\n", encoding="utf-8")
    check = _zh_run("stubs", "--check", cwd=tmp_course)
    assert check.returncode == 1
    assert "已过时：exercises/ch01/s1_11_softmax.py" in _chinese_output(check, "stubs --check")
    wrote = _zh_run("stubs", cwd=tmp_course)
    assert wrote.returncode == 0, wrote.stderr
    assert "已写出 exercises/ch01/s1_11_softmax.py" in _chinese_output(wrote, "stubs")
    again = _zh_run("stubs", cwd=tmp_course)
    assert _chinese_output(again, "stubs").strip() == "初始代码已是最新"


def test_kata_assets_speaks_chinese():
    status = _zh_run("assets", "status")
    assert status.returncode == 0, status.stderr
    rows = [line for line in _chinese_output(status, "assets status").splitlines() if line[:1] in "✔·✘"]
    assert len(rows) >= 3 and "gpt2.tiktoken" in rows[0]
    from rich.cells import cell_len  # the status column lines up in display cells, Chinese names too

    assert len({cell_len(row[: row.index(row.split()[2])]) for row in rows}) == 1, rows
    pack = _zh_run("assets", "pack")
    assert pack.returncode == 2
    assert _chinese_output(pack, "assets pack").strip() == "kata assets pack：请给出归档文件的文件名"


def test_kata_release_and_export_speak_chinese(tmp_path):
    release = _zh_run("release", str(tmp_path / "bundle"), "-a", "week1")
    assert release.returncode == 0, release.stderr
    text = _chinese_output(release, "release")
    assert "kata release：已写出" in text and "作业 week1：" in text and "其中没有发现任何隐藏内容" in text
    nbgrader = _zh_run("export", "nbgrader", str(tmp_path / "nbg"), "-e", "s1_11_softmax")
    assert nbgrader.returncode == 0, nbgrader.stderr
    _chinese_output(nbgrader, "export nbgrader")
    gradescope = _zh_run("export", "gradescope", str(tmp_path / "gs.zip"), "-e", "s1_11_softmax")
    assert gradescope.returncode == 0, gradescope.stderr
    assert "隐藏检查的结果在成绩发布后显示" in _chinese_output(gradescope, "export gradescope")


def test_kata_release_refuses_in_chinese(tmp_path):
    unknown = _zh_run("release", str(tmp_path / "bundle"), "-a", "week9")
    assert unknown.returncode == 2
    assert "course.toml 中没有作业 'week9'（已有的作业：week1, week2, week3, week4）" in _chinese_output(
        unknown, "release"
    )
    (tmp_path / "full" / "x").mkdir(parents=True)
    full = _zh_run("release", str(tmp_path / "full"))
    assert full.returncode == 2
    assert f"{tmp_path / 'full'} 已存在且不为空（用 --force 替换它）" in _chinese_output(full, "release")


def test_kata_assets_fetch_says_its_downloads_in_chinese(tmp_path, monkeypatch):
    """`kata assets fetch` with no local copy of GPT-2's ranks: pip's download and its failure."""
    import types

    from grader.capstone import gpt2, pypi

    monkeypatch.setenv("KATA_LANG", "zh")
    monkeypatch.setattr(gpt2, "_local_copies", lambda: [])
    monkeypatch.setattr(
        pypi.subprocess,
        "run",
        lambda cmd, **kw: types.SimpleNamespace(returncode=1, stdout="", stderr="ERROR: no network"),
    )
    said = []
    try:
        gpt2.fetch_assets(tmp_path, log=said.append)
    except gpt2.AssetMissing as e:
        said.append(str(e))
    assert said[0] == "gpt2：正在从 PyPI 下载 `openai-whisper` 的源码包（用于 gpt2.tiktoken）"
    assert said[1].startswith("`pip download openai-whisper` 失败：")
    assert not english_left(said[0])


def test_kata_verify_speaks_chinese():
    verify = _zh_run("verify", "--no-grade")
    assert verify.returncode == 0, verify.stdout
    text = _chinese_output(verify, "verify --no-grade")
    assert re.search(r"^通过：\d+ 个练习、\d+ 项检查", text, re.M) and text.rstrip().endswith("kata verify：通过")


def test_kata_verify_names_a_help_text_without_its_chinese():
    """Issue 36: the command line's rule is in `kata verify` too. The parser is a layer above
    authoring, so `kata verify` is handed the help texts that lack their Chinese."""
    from grader.authoring.verify import verify
    from grader.cli import _build_parser
    from grader.course.cli_text import untranslated

    assert untranslated(_build_parser()) == []
    parser = _build_parser()
    check = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["check"]
    check.add_argument("--brand-new", action="store_true", help="an option added without its Chinese")
    found = untranslated(parser)
    assert found == [
        "cli_check_brand_new: 'an option added without its Chinese' has no Chinese "
        "(messages.po: msgctxt 'cli_check_brand_new', msgid its English)"
    ]
    v = verify(ROOT, grade=False, command_line=found)
    assert f"command line: {found[0]}" in v.problems and not v.ok
