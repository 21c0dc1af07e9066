"""README.md is the front door: under 150 lines, the two set-up commands, a link for each way in (in
English and Chinese), every link alive, and CI runs exactly the test command it gives."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TEST_COMMAND = ".venv/bin/kata verify && .venv/bin/python -m pytest -q -n 2 --dist loadfile"


def test_the_readme_is_short_and_gives_the_two_set_up_commands():
    assert len(README.splitlines()) < 150
    setup = re.search(r"## Set-up \(two commands\).*?```bash\n(.*?)```", README, re.S).group(1).splitlines()
    assert [line.split("#")[0].strip() for line in setup] == ["./setup.sh", TEST_COMMAND]


def test_ci_runs_the_readmes_test_command():
    assert TEST_COMMAND in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_link_of_the_readme_leads_somewhere():
    links = [link for link in re.findall(r"\]\(([^)#\s]+)", README) if not re.match(r"[a-z]+:", link)]
    assert len(links) > 20
    assert not [link for link in links if not (ROOT / link).exists()]
    for guide in ("docs/student/guide", "docs/instructor/index", "docs/developer/guide"):
        assert f"({guide}.md)" in README and f"({guide}.zh.md)" in README, guide
