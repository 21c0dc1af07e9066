"""Small per-student JSON files under the project's `.kata/` folder.

A file that cannot be read back (half written, edited by hand, not JSON, the wrong shape) is
never fatal: it is moved aside to `<name>.damaged` and the command starts from an empty state,
saying so once. Writes are atomic, so an interrupted command leaves the old file whole.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from ..course import atomic


def kata_dir(root: Path) -> Path:
    return Path(root) / ".kata"


@dataclass
class StateFile:
    path: Path
    schema: int
    data: dict = field(default_factory=dict)
    problem: str = ""  # why the file on disk was not usable; "" when it was (or did not exist)
    moved_to: Path | None = None

    @classmethod
    def open(cls, path: Path, schema: int) -> StateFile:
        state = cls(Path(path), schema)
        try:
            text = state.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return state
        except (OSError, UnicodeDecodeError) as e:
            state._damaged(f"{type(e).__name__}: {e}")
            return state
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as e:
            state._damaged(f"not JSON (line {e.lineno}: {e.msg})")
            return state
        if not isinstance(doc, dict) or doc.get("schema") != schema or not isinstance(doc.get("data"), dict):
            state._damaged(f"not a schema-{schema} state file")
            return state
        state.data = doc["data"]
        return state

    def _damaged(self, why: str) -> None:
        self.problem = why
        target = self.path.with_name(self.path.name + ".damaged")
        try:
            os.replace(self.path, target)
            self.moved_to = target
        except OSError:
            self.moved_to = None

    def save(self) -> None:
        atomic.write_json(
            self.path, {"schema": self.schema, "data": self.data}, indent=1, sort_keys=True, mode=0o600
        )  # a student's own progress and hints: not for other users of the machine
