"""`kata fixtures`: regenerate the expected values of every check from the solutions.

Each check module defines `make_fixtures(sol)`; `sol` is the solution module imported in
this (trusted) process. The tensors are saved to grader/fixtures/<id>.safetensors with the
torch version that produced them.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import torch

from ..checking import fixtures
from ..course.manifest import Course, Exercise


def _import(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def generate(course: Course, exercises: list[Exercise] | None = None) -> list[Path]:
    chapter_dir = course.solutions_dir / course.chapter
    sys.path.insert(0, str(chapter_dir))  # make_fixtures may import other solutions by id
    written = []
    try:
        for ex in exercises or course.exercises:
            sol = _import(course.solutions_dir / ex.file, ex.module)
            checks = _import(course.check_file(ex), f"kata_checks_{ex.id}")
            state = torch.random.get_rng_state()
            try:
                tensors = checks.make_fixtures(sol)
            finally:
                torch.random.set_rng_state(state)
            meta = {"exercise": ex.id, "torch": torch.__version__.split("+")[0], "generator": "kata fixtures"}
            written.append(fixtures.save(ex.id, tensors, meta))
    finally:
        sys.path.remove(str(chapter_dir))
    return written
