"""Every argument of every `kata` command says what it does in `--help`.

An option added without help text shows up in `kata CMD --help` as a bare name (`--warmup
WARMUP`), which tells a user nothing; this walks the real parser, subcommands included, so such
an option fails here instead."""

from __future__ import annotations

import argparse
import subprocess
import sys

from grader.cli import build_parser
from tests.conftest import ROOT


def commands(parser: argparse.ArgumentParser, path: str = "kata"):
    """(command path, parser) of `parser` and of every subcommand below it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, f"{path} {name}")


def subcommand_help(parser: argparse.ArgumentParser):
    """(command path, its one-line help) of every subcommand, as `kata CMD --help` lists them."""
    for path, p in commands(parser):
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for choice in action._choices_actions:
                    yield f"{path} {choice.dest}", choice.help


def test_every_argument_of_every_command_has_help_text():
    missing = [
        f"{path}: {'/'.join(a.option_strings) or a.dest}"
        for path, p in commands(build_parser())
        for a in p._actions
        if not isinstance(a, argparse._SubParsersAction)
        and (a.help is None or a.help == argparse.SUPPRESS or not str(a.help).strip())
    ]
    assert not missing, "arguments without help text:\n" + "\n".join(missing)


def test_every_subcommand_has_a_one_line_help():
    missing = [path for path, text in subcommand_help(build_parser()) if not (text or "").strip()]
    assert not missing, "subcommands without help: " + ", ".join(missing)


def test_the_walk_sees_kata_train_and_its_options():
    """The walk above reaches the nested commands (a walk that saw nothing would pass vacuously)."""
    found = dict(commands(build_parser()))
    assert {"kata grade", "kata train", "kata export nbgrader", "kata export gradescope"} <= set(found)
    train = {s for a in found["kata train"]._actions for s in a.option_strings}
    assert {"--dim", "--warmup", "--val-fraction", "--truncation", "--device"} <= train


def test_kata_train_help_gives_each_option_its_default():
    out = subprocess.run(
        [sys.executable, "-m", "grader", "train", "--help"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())  # argparse wraps lines as the terminal's width says
    assert (
        "--warmup WARMUP share of all steps over which the learning rate rises linearly to --lr (default 0.06)" in text
    )
    assert "--eval-every EVAL_EVERY validate every N steps (default 0: once per epoch)" in text
    assert "--val-fraction VAL_FRACTION share of the training set held out for validation" in text
    assert "--heads HEADS attention heads per block; must divide --dim (default 4)" in text


def test_reading_the_command_line_loads_no_heavy_library():
    """Every command starts by building the parser: numpy, torch, matplotlib or copydetect loaded
    there would be paid by each `kata check` and each save in `kata watch` (numpy alone was 0.1-0.17 s,
    through `kata similarity`'s default threshold)."""
    code = (
        "import sys; from grader.cli import build_parser; build_parser(); "
        "print(sorted(m for m in ('numpy', 'torch', 'matplotlib', 'copydetect', 'pytest') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
