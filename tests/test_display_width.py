"""Chinese mode as the terminal shows it: tables line up by display width (a Chinese character takes two
cells, rich's cell_len), and no English word is left inside a Chinese message."""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from rich.cells import cell_len

ROOT = Path(__file__).resolve().parent.parent


def test_the_per_check_table_is_aligned_in_chinese(tmp_course):
    # a finished exercise whose check titles mix Chinese and English ("书中示例的 softmax")
    shutil.copy(tmp_course / "solutions/ch01/s1_11_softmax.py", tmp_course / "exercises/ch01/s1_11_softmax.py")
    env = {k: v for k, v in os.environ.items() if k not in ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG")}
    proc = subprocess.run(
        [sys.executable, "-m", "grader", "--lang", "zh", "check", "s1_11_softmax"],
        cwd=tmp_course,
        capture_output=True,
        text=True,
        timeout=600,
        env={**env, "COLUMNS": "250", "PYTHONPATH": str(ROOT)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if re.match(r"\s+✔ .*\S\s+\d+/\d+$", line)]
    assert len(rows) >= 3 and any(re.search(r"[\u4e00-\u9fff]", r) for r in rows), proc.stdout
    points_at = {cell_len(re.sub(r"\d+/\d+$", "", row)) for row in rows}  # the column where the points start
    assert len(points_at) == 1, "\n".join(rows)


def test_an_exact_tolerance_is_said_in_chinese(monkeypatch):
    # "（容差 exact）": the tolerance's name was English inside a Chinese message
    import pytest
    import torch

    from grader.checking.compare import CheckFailure, expect_tensor

    monkeypatch.setenv("KATA_LANG", "zh")
    with pytest.raises(CheckFailure) as failed:
        expect_tensor(torch.tensor([1, 2, 4]), torch.tensor([1, 2, 3]), tol="exact")
    message = str(failed.value)
    assert "容差 0（须完全相等）" in message and "exact" not in message, message
    monkeypatch.setenv("KATA_LANG", "en")
    with pytest.raises(CheckFailure) as failed:
        expect_tensor(torch.tensor([1, 2, 4]), torch.tensor([1, 2, 3]), tol="exact")
    assert "(tolerance exact)" in str(failed.value), str(failed.value)
