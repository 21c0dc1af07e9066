"""The guides' shell blocks (```bash in docs/, English and Chinese) are commands a reader copies, so:

- every `kata` command in them parses with the real parser (`grader.cli.build_parser`): no command or
  option the kata does not have, in either language;
- a block that cannot run here (a Slurm cluster, an LMS's own export, minutes of training) says so with
  `<!-- not run: REASON -->` on the line before it, and the reason is given;
- every other English block runs, as a reader would run it, in a throwaway copy of the course whose
  `.venv/bin/kata` records each command's exit status: 0, 1 (checks that fail, submissions that could
  not be graded: a stub fails its checks) and 5 (graded, check before importing) are what the guides
  lead to; 2 (bad input, a usage error), 3, 4 and any traceback fail the test. The Chinese pages hold
  the same commands as their English ones and are only parsed.

The parsing runs in the default suite; the blocks run in the slow one (the student guide's take about a
minute on two cores, the instructor pages' grade whole submissions).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
NOT_RUN = re.compile(r"<!--\s*not run:(.*?)-->")
FENCE = re.compile(r"^(?P<indent>[ \t]*)```bash\n(?P<body>.*?)^(?P=indent)```", re.M | re.S)
ALLOWED = {0, 1, 5}


def blocks(lang: str = "en") -> list[tuple[str, int, str, str | None]]:
    """(page, line, body, reason it is not run or None) of every bash block of the guides in `lang`."""
    out = []
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(DOCS).as_posix()
        is_zh = rel.endswith(".zh.md")
        if (lang == "zh") != is_zh or rel.startswith("reference/cli"):
            continue
        text = path.read_text(encoding="utf-8")
        for m in FENCE.finditer(text):
            before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1].strip()
            marked = NOT_RUN.fullmatch(before)
            body = "\n".join(line[len(m.group("indent")) :] for line in m.group("body").splitlines())
            out.append((rel, text.count("\n", 0, m.start()) + 1, body, marked.group(1).strip() if marked else None))
    return out


def kata_commands(body: str) -> list[list[str]]:
    """The argument lists of every `kata` (or `python -m grader`) command in a block."""
    commands = []
    joined = re.sub(r"\\\n\s*", " ", body)
    for line in joined.splitlines():
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        parts, current = [], []
        for w in words:
            if w in ("&&", "||", ";", "|"):
                parts.append(current)
                current = []
            else:
                current.append(w)
        parts.append(current)
        for part in parts:
            while part and re.fullmatch(r"[A-Z_]+=.*", part[0]):  # VAR=value before the command
                part = part[1:]
            if part and (part[0] == "kata" or part[0].endswith("/kata")):
                commands.append(part[1:])
            elif "-m" in part and part[part.index("-m") + 1 :][:1] == ["grader"]:
                commands.append(part[part.index("-m") + 2 :])
    return commands


def test_every_kata_command_of_the_guides_and_the_readme_parses_with_the_real_parser():
    from grader.cli import build_parser

    where = [(f"docs/{page}", line, body) for lang in ("en", "zh") for page, line, body, _ in blocks(lang)]
    for name in ("README.md", "CONTRIBUTING.md"):  # the front door's commands too
        text = (ROOT / name).read_text(encoding="utf-8")
        where += [(name, text.count("\n", 0, m.start()) + 1, m.group("body")) for m in FENCE.finditer(text)]
    bad = []
    seen = 0
    for place, line, body in where:
        for args in kata_commands(body):
            seen += 1
            try:
                build_parser("en").parse_args(args)
            except SystemExit as e:
                if e.code != 0:  # --help exits 0
                    bad.append(f"{place}:{line}: kata {' '.join(args)}")
    assert seen > 45, seen
    assert not bad, "commands the parser refuses:\n" + "\n".join(bad)


def test_a_block_that_is_not_run_says_why():
    marked = [
        (page, line, reason) for lang in ("en", "zh") for page, line, _, reason in blocks(lang) if reason is not None
    ]
    assert marked, "no block is marked: the marker's form changed?"
    assert all(len(reason) > 10 for _, _, reason in marked), marked
    for page, _, _, reason in blocks():  # each names the test that runs it instead, or why nothing can
        print(f"not run: docs/{page}: {reason}")
    text = "".join(p.read_text(encoding="utf-8") for p in DOCS.rglob("*.md"))
    assert len(NOT_RUN.findall(text)) == len(marked), "a `not run` marker that is not right before a ```bash block"


def _course_copy(tmp: Path) -> Path:
    """A course folder as a student or instructor has one: the course's files, a `.venv` whose `kata`
    logs its exit statuses, s1_11_softmax solved, and a class of two (alice, wang) in submissions/ and in
    submissions/week2/ (which the whole class's commands list as an entry that is not a submission)."""
    course = tmp / "course"
    course.mkdir()
    for name in (
        "course.toml",
        "solutions",
        "exercises",
        "locale",
        "ERRATA.md",
        "pyproject.toml",
        "wheels.lock",
        "recipes",
    ):
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy)(src, course / name)
    shutil.copy(ROOT / "solutions" / "ch01" / "s1_11_softmax.py", course / "exercises" / "ch01" / "s1_11_softmax.py")
    bin_ = course / ".venv" / "bin"
    bin_.mkdir(parents=True)
    for tool in ("python", "pip", "torchrun"):
        (bin_ / tool).symlink_to(ROOT / ".venv" / "bin" / tool)
    (bin_ / "kata").write_text(
        "#!/usr/bin/env bash\n"
        f'{shlex.quote(str(ROOT / ".venv" / "bin" / "kata"))} "$@"\n'
        'rc=$?\nprintf "%s\\t%s\\n" "$rc" "$*" >> "$KATA_DOCS_LOG"\nexit $rc\n'
    )
    (bin_ / "kata").chmod(0o755)
    for student in ("alice", "wang"):  # wang is in the 2nd of 4 shards, alice in the 4th
        folder = course / "submissions" / student / "ch01"
        shutil.copytree(course / "exercises" / "ch01", folder)
        if student == "wang":
            shutil.copy(ROOT / "exercises" / "ch01" / "s1_11_softmax.py", folder / "s1_11_softmax.py")
        shutil.copytree(folder, course / "submissions" / "week2" / student / "ch01")  # a week's class of its own
    with zipfile.ZipFile(course / "alice.zip", "w") as z:
        for f in sorted((course / "submissions" / "alice").rglob("*.py")):
            z.write(f, f.relative_to(course / "submissions" / "alice").as_posix())
    return course


def _runnable():
    for page, line, body, reason in blocks():
        if reason is None:
            yield pytest.param(page, body, id=f"{page}:{line}")


@pytest.mark.slow
@pytest.mark.parametrize(("page", "body"), list(_runnable()))
def test_the_guides_blocks_run_in_a_course_copy(page, body, tmp_path):
    course = _course_copy(tmp_path)
    log = tmp_path / "kata.log"
    log.touch()
    env = {
        **os.environ,
        "KATA_DOCS_LOG": str(log),
        "KATA_WARM": "0",
        "KATA_LANG": "en",
        "KATA_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PIP_NO_INDEX": "1",
        "COLUMNS": "100",
        "HOME": str(tmp_path),
    }
    proc = subprocess.run(["bash", "-c", body], cwd=course, env=env, capture_output=True, text=True, timeout=900)
    ran = [line.split("\t", 1) for line in log.read_text().splitlines()]
    said = proc.stdout + proc.stderr
    assert ran, f"docs/{page}: no kata command ran:\n{said[-3000:]}"
    bad = [(rc, args) for rc, args in ran if int(rc) not in ALLOWED]
    assert not bad, f"docs/{page}: {bad}\n{said[-3000:]}"
    assert "Traceback" not in said, said[-3000:]
