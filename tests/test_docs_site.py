"""The documentation site builds strictly, in English and Chinese, and works from file:// without the network:
no page loads a script, a stylesheet or a font from elsewhere, and search reads its index from a local script
(Material's offline plugin; the iframe-worker shim is vendored in docs/assets/). Skipped where the docs tools
(docs/requirements.txt) are not installed; CI installs them (.ci/run)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def test_the_site_builds_strictly_and_needs_no_network(tmp_path):
    pytest.importorskip("mkdocs", reason="the docs tools are not installed: pip install -r docs/requirements.txt")
    pytest.importorskip("material")
    site = tmp_path / "site"
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--quiet", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    pages = sorted(site.rglob("*.html"))
    assert (site / "index.html").is_file() and (site / "zh" / "index.html").is_file()
    assert "学生指南" in (site / "zh" / "student" / "guide.html").read_text(encoding="utf-8")
    assert (site / "search" / "search_index.js").is_file()
    remote = re.compile(r"<(?:script|link|img)\b[^>]*\b(?:src|href)=\"(?:https?:)?//[^\"]*\"[^>]*>")
    loads = {
        p.relative_to(site).as_posix(): m
        for p in pages
        for m in remote.findall(p.read_text(encoding="utf-8"))
        if "<link" not in m or re.search(r'rel="(?:stylesheet|preconnect|preload|icon)"', m)
    }
    assert not loads, loads
    shutil.rmtree(site)
