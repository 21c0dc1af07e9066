"""The errors of a broken course, stub or wheels.lock speak the reader's language: StubError,
LockError and CourseError take their texts from the message catalog (stuberr_, lockerr_,
courseerr_), so `kata --lang zh verify` names a broken course in Chinese."""

import re

import pytest

from grader.authoring import stubs
from grader.capstone import wheels_lock
from grader.course import manifest as course
from grader.course.messages import CATALOG, CJK

PREFIXES = ("stuberr_", "lockerr_", "courseerr_")


def edit(root, old, new):
    p = root / "course.toml"
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new, 1))


def both(monkeypatch, provoke, exc):
    """The message of `exc` raised by provoke() in English and in Chinese."""
    texts = {}
    for lang in ("en", "zh"):
        monkeypatch.setenv("KATA_LANG", lang)
        with pytest.raises(exc) as info:
            provoke()
        texts[lang] = str(info.value)
    assert not CJK.search(texts["en"]), texts["en"]
    assert CJK.search(texts["zh"]) and texts["zh"] != texts["en"], texts
    return texts


def test_every_new_key_has_its_chinese_text():
    keys = [k for k in CATALOG if k.startswith(PREFIXES)]
    for prefix in PREFIXES:
        assert any(k.startswith(prefix) for k in keys), prefix
    for key in keys:
        assert CATALOG[key]["zh"].strip() and CJK.search(CATALOG[key]["zh"]), key


@pytest.mark.parametrize(
    "bad, english",
    [
        ("def f():\n    # BEGIN SOLUTION\n    return 1\n", "f.py:2: BEGIN SOLUTION is never closed"),
        ("def f():\n    return 1\n    # END SOLUTION\n", "f.py:3: END SOLUTION without BEGIN SOLUTION"),
        ("# BEGIN SOLUTION\nx = 1\n# END SOLUTION\n", "f.py:1: a solution block must be inside a function"),
        ("def f():\n    return 1\n", "f.py: no # BEGIN SOLUTION block"),
        (
            "def f():\n    # BEGIN SOLUTION\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n",
            "f.py:3: BEGIN SOLUTION inside another block (opened at line 2)",
        ),
    ],
)
def test_stub_errors_in_chinese(monkeypatch, bad, english):
    texts = both(monkeypatch, lambda: stubs.make_stub(bad, "x", "f.py"), stubs.StubError)
    assert texts["en"] == english
    assert texts["zh"].startswith(english.split(" ")[0].rstrip(":"))


def test_lock_errors_in_chinese(monkeypatch, tmp_path):
    lock = tmp_path / "wheels.lock"
    lock.write_text("# pins\nnumpy 2.0\n")
    texts = both(monkeypatch, lambda: wheels_lock.read(lock), wheels_lock.LockError)
    assert texts["en"] == "wheels.lock:2: not `name==version --hash=sha256:...`: numpy 2.0"
    assert "`name==version --hash=sha256:...`" in texts["zh"] and "numpy 2.0" in texts["zh"]
    texts = both(monkeypatch, lambda: wheels_lock.lines({"numpy.tar.gz": "0" * 64}), wheels_lock.LockError)
    assert texts["en"] == "numpy.tar.gz: not a wheel's file name"


@pytest.mark.parametrize(
    "old, new, english",
    [
        (
            'title = "Attention scores"',
            'title = "Attention scores"\ncolour = "red"',
            r"unknown key\(s\) colour \(allowed: ",
        ),
        ('id = "s1_12_context"', 'id = "s1_12_scaled_attention"', "duplicate exercise id 's1_12_scaled_attention'"),
        (
            'section = "1.12"\ntitle = "Context vectors"',
            'section = "1.13"\ntitle = "Context vectors"',
            "id s1_12_context does not match section 1.13",
        ),
        (
            'points = 5\nhints = [\n  "Each context',
            'points = 7\nhints = [\n  "Each context',
            "s1_12_context: points = 7 but its checks add up to 5$",
        ),
        ('id = "s1_12_context"', 'id = "context"', r"id must look like s1_11_softmax \(s<chapter>_<section>_<name>\)"),
        (
            '[[exercise]]\nid = "s1_12_context"',
            '[[exercise]]\npreload = "torch"\nid = "s1_12_context"',
            "preload must be a list of module names, not 'torch'",
        ),
        ("budget_s = 300", "budget_s = -1", r"\[course\]: budget_s must be a number of seconds above 0, not -1$"),
    ],
)
def test_course_errors_in_chinese(monkeypatch, tmp_course, old, new, english):
    edit(tmp_course, old, new)
    texts = both(monkeypatch, lambda: course.load(tmp_course), course.CourseError)
    assert re.search(english, texts["en"]), texts["en"]


def test_missing_files_and_stray_files_in_chinese(monkeypatch, tmp_course):
    (tmp_course / "exercises/ch01/s1_11_matmul.py").unlink()
    texts = both(monkeypatch, lambda: course.load(tmp_course), course.CourseError)
    assert texts["en"].endswith("s1_11_matmul: stub exercises/ch01/s1_11_matmul.py is missing (run `kata stubs`)")
    assert "初始代码" in texts["zh"] and "`kata stubs`" in texts["zh"]
    (tmp_course / "exercises/ch01/s1_11_matmul.py").write_text("x = 1\n")
    (tmp_course / "solutions/ch01/s1_12_extra.py").write_text("x = 1\n")
    texts = both(monkeypatch, lambda: course.load(tmp_course, require_stubs=False), course.CourseError)
    assert texts["en"].endswith("s1_12_extra.py: solution for 's1_12_extra', which course.toml does not list")
    assert "参考解答" in texts["zh"] and "course.toml" in texts["zh"]


def test_no_course_toml_in_chinese(monkeypatch, tmp_path):
    monkeypatch.setattr(course, "PACKAGE_DIR", tmp_path / "grader")
    texts = both(monkeypatch, lambda: course.find_root(tmp_path), course.CourseError)
    assert texts["en"] == f"no course.toml in {tmp_path} or any folder above it"
