"""Per-exercise limits in course.toml (issue 7, item 5): call time, memory and output, with
defaults in [course.defaults]; when one is hit the student reads which, and how much, in plain
words ("your code took longer than the 1 s limit", "used more than 1024 MB of memory", ...)."""
from __future__ import annotations

import json

from grader import course
from grader.cli import main
from tests.conftest import ROOT, checks_of, make_submission


def _set(root, exercise: str, line: str) -> None:
    """Add `line` to the [[exercise]] table of `exercise` in root/course.toml."""
    p = root / "course.toml"
    text = p.read_text()
    anchor = f'id = "{exercise}"\n'
    assert text.count(anchor) == 1
    p.write_text(text.replace(anchor, anchor + line + "\n"))


def test_limits_have_defaults_and_per_exercise_values(tmp_course):
    meta = course.load(ROOT)
    default = meta.get("s1_11_softmax")
    assert (default.time_limit_s, default.memory_mb, default.output_mb) == (10, 6144, 16)
    assert meta.get("s1_23_training").time_limit_s == 60  # set in its own table
    _set(tmp_course, "s1_11_matmul", "time_limit_s = 1\nmemory_mb = 1024\noutput_mb = 2")
    (tmp_course / "course.toml").write_text((tmp_course / "course.toml").read_text().replace(
        "defaults = { time_limit_s = 10, memory_mb = 6144, output_mb = 16 }",
        "defaults = { time_limit_s = 7, memory_mb = 4096, output_mb = 8 }"))
    changed = course.load(tmp_course, check_files=False)
    ex = changed.get("s1_11_matmul")
    assert (ex.time_limit_s, ex.memory_mb, ex.output_mb) == (1, 1024, 2)
    other = changed.get("s1_11_softmax")
    assert (other.time_limit_s, other.memory_mb, other.output_mb) == (7, 4096, 8)


def test_each_limit_hit_is_named_with_its_value(tmp_course, tmp_path, monkeypatch):
    """Lower limits for three exercises in the manifest, and code that goes past each: the
    messages name the limit and its value from course.toml, not the defaults."""
    _set(tmp_course, "s1_11_matmul", "time_limit_s = 1")
    _set(tmp_course, "s1_12_context", "output_mb = 1")
    _set(tmp_course, "s1_12_scaled_attention", "memory_mb = 1024")
    sub = make_submission(tmp_path, {
        "s1_11_matmul": "import time\n\ndef matmul(A, B):\n    time.sleep(5)\n    return A\n",
        "s1_12_context": "def context_vectors(w, v):\n    print('x' * (3 << 20))\n    return w @ v\n",
        "s1_12_scaled_attention": "import torch\n\n"
                                  "def scale_scores(scores, d_k):\n    return torch.empty(1 << 29) and scores\n\n"
                                  "def attention_weights(scores, d_k):\n    return [bytes(1 << 26) for _ in range(64)]\n",
    })
    out = tmp_path / "r.json"
    monkeypatch.chdir(tmp_course)
    monkeypatch.setenv("KATA_LANG", "en")
    assert main(["grade", str(sub), "--json", str(out), "--quiet",
                 "-e", "s1_11_matmul", "-e", "s1_12_context", "-e", "s1_12_scaled_attention"]) == 0
    report = json.loads(out.read_text())
    for ex, words in (("s1_11_matmul", "your code took longer than the 1 s limit"),
                      ("s1_12_context", "printed or wrote more than 1 MB of output"),
                      ("s1_12_scaled_attention", "used more than 1024 MB of memory")):
        checks = checks_of(report, ex)
        assert checks and all(c["score"] == 0 and words in c["message"] for c in checks), \
            [(c["name"], c["message"]) for c in checks]
