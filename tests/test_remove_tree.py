"""Cleanup of folders a submission can shape (issue 25 part 2, round 2): a worker's folder, a staged
copy, a batch's scratch. shutil.rmtree and os.walk recurse (Python 3.11), and a tree 3,000 folders
deep made root's cleanup raise RecursionError and fail a Gradescope grading."""

from __future__ import annotations

import os
import sys

from grader.course import files


def _deep(top: str, name: str, depth: int) -> None:
    here = os.getcwd()
    os.chdir(top)
    try:
        for _ in range(depth):
            os.mkdir(name)
            os.chdir(name)
        with open("bottom", "w") as f:
            f.write("x")
    finally:
        os.chdir(here)


def test_a_tree_past_the_recursion_limit_and_past_path_max_is_removed_without_following_links(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("mine")
    top = tmp_path / "work"
    top.mkdir()
    _deep(str(top), "d", sys.getrecursionlimit() + 200)  # deeper than any recursive walk reaches
    _deep(str(top), "n" * 200, 30)  # 6,000 bytes: past PATH_MAX
    (top / "d" / "link").symlink_to(outside)
    (top / "closed").mkdir()
    (top / "closed" / "f").write_text("x")
    (top / "closed").chmod(0)
    folders, others = files.folders_and_files(top)
    assert len(folders) > sys.getrecursionlimit() and any(p.endswith("link") for p in others)
    assert files.remove_tree(top) is True
    assert not top.exists()
    assert (outside / "keep").read_text() == "mine"


def test_a_link_given_as_the_tree_is_removed_itself_and_nothing_is_taken_from_where_it_points(tmp_path):
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("mine")
    link = tmp_path / "link"
    link.symlink_to(target)
    assert files.remove_tree(link) is True
    assert not os.path.lexists(link) and (target / "keep").read_text() == "mine"
    assert files.remove_tree(tmp_path / "never-was") is True
