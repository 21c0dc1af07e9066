"""Terminal tables line up by display width: a Chinese character takes two cells (rich's cell_len)."""
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
    proc = subprocess.run([sys.executable, "-m", "grader", "--lang", "zh", "check", "s1_11_softmax"], cwd=tmp_course,
                          capture_output=True, text=True, timeout=600,
                          env={**env, "COLUMNS": "250", "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line for line in proc.stdout.splitlines() if re.match(r"\s+✔ .*\S\s+\d+/\d+$", line)]
    assert len(rows) >= 3 and any(re.search(r"[\u4e00-\u9fff]", r) for r in rows), proc.stdout
    points_at = {cell_len(re.sub(r"\d+/\d+$", "", row)) for row in rows}  # the column where the points start
    assert len(points_at) == 1, "\n".join(rows)
