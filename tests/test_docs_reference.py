"""docs/reference/cli.md (and cli.zh.md) are generated from the code by docs/gen_reference.py: every command
and option of the real parser, the JSON report's schema and course.toml's keys. A committed page that
differs from what the code writes today is stale (a new option, a changed help text): regenerate it."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_reference", ROOT / "docs" / "gen_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_reference_is_what_the_code_writes_today():
    gen = _generator()
    assert not gen.missing_help(), f"docs/gen_reference.py KEY_HELP: describe {gen.missing_help()}"
    for lang, path in gen.OUT.items():
        assert path.read_text(encoding="utf-8") == gen.render(lang), (
            f"{path.relative_to(ROOT)} is stale: run `.venv/bin/python docs/gen_reference.py`"
        )


def test_the_reference_names_every_command_and_option():
    from grader.cli import build_parser

    text = (ROOT / "docs" / "reference" / "cli.md").read_text(encoding="utf-8")
    parser = build_parser("en")
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    for name, command in sub.choices.items():
        assert f"### `kata {name}`" in text, name
        for action in command._actions:
            for option in () if action.dest == "help" else action.option_strings:
                assert f"`{option}`" in text, (name, option)
    for key in ("budget_s", "forbidden", "lms_assignment", "late_per_day", "memory_mb"):
        assert f"| `{key}` |" in text
    assert '"schema": 1' in text and "visibility" in text
