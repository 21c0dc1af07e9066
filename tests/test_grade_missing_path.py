"""`kata grade` given a path that does not exist says so, in English and Chinese, for one
submission and for a class (`--out`), instead of a message about what the path should be."""

from __future__ import annotations

import pytest

from tests.conftest import kata


@pytest.mark.parametrize("lang, said", [("en", "does not exist"), ("zh", "不存在")])
def test_a_class_folder_that_does_not_exist_is_named_as_missing(tmp_path, lang, said):
    missing, out = tmp_path / "class" / "nonexistent", tmp_path / "g2"
    proc = kata("--lang", lang, "grade", str(missing), "--out", str(out))
    assert proc.returncode == 2
    assert f"{missing} {said}" in proc.stderr
    assert "class folder" not in proc.stderr and "班级文件夹，即" not in proc.stderr
    assert not out.exists()  # nothing written for a run that never started


def test_an_existing_file_given_as_a_class_is_still_told_what_a_class_folder_is(tmp_path):
    (tmp_path / "notes.txt").write_text("not a class")
    proc = kata("grade", str(tmp_path / "notes.txt"), "--out", str(tmp_path / "g"))
    assert proc.returncode == 2
    assert "must be a class folder" in proc.stderr and "does not exist" not in proc.stderr


@pytest.mark.parametrize("lang, said", [("en", ": no such file or folder"), ("zh", "：没有这个文件或文件夹")])
def test_one_submission_that_does_not_exist_is_named_as_missing(tmp_path, lang, said):
    proc = kata("--lang", lang, "grade", str(tmp_path / "nonexistent"))
    assert proc.returncode == 2
    assert f"{tmp_path / 'nonexistent'}{said}" in proc.stderr
    assert "Traceback" not in proc.stderr
