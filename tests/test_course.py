"""The manifest loader: what the course is, and errors that name the entry."""

import pytest

from grader.course import manifest as course
from tests.conftest import ROOT


def edit(root, old, new):
    p = root / "course.toml"
    text = p.read_text()
    assert old in text
    p.write_text(text.replace(old, new, 1))


def test_loads_every_exercise_in_book_order():
    c = course.load(ROOT)
    ids = [ex.id for ex in c.exercises]
    assert ids[0] == "s1_01_next_token"
    sections = [tuple(int(p) for p in ex.section.split(".")) for ex in c.exercises]
    assert sections == sorted(sections)
    softmax = c.get("s1_11_softmax")
    assert "torch.softmax" in softmax.forbidden and softmax.hints
    assert all(ex.checks and sum(ch.points for ch in ex.checks) == ex.points for ex in c.exercises)
    assert {lst.id for lst in c.listings} >= {f"1.{i}" for i in range(1, 20)}  # every code listing 1.1–1.19


def test_unknown_key_is_named(tmp_course):
    edit(tmp_course, 'title = "Attention scores"', 'title = "Attention scores"\ncolour = "red"')
    with pytest.raises(course.CourseError, match=r"s1_11_attention_scores.*unknown key\(s\) colour"):
        course.load(tmp_course)


def test_duplicate_id_is_named(tmp_course):
    edit(tmp_course, 'id = "s1_12_context"', 'id = "s1_12_scaled_attention"')
    with pytest.raises(course.CourseError, match="duplicate exercise id 's1_12_scaled_attention'"):
        course.load(tmp_course)


def test_missing_solution_file_is_named(tmp_course):
    (tmp_course / "solutions/ch01/s1_12_context.py").unlink()
    with pytest.raises(
        course.CourseError, match=r"s1_12_context: solution file solutions/ch01/s1_12_context.py is missing"
    ):
        course.load(tmp_course)


def test_missing_stub_is_named(tmp_course):
    (tmp_course / "exercises/ch01/s1_11_matmul.py").unlink()
    with pytest.raises(course.CourseError, match=r"s1_11_matmul: stub exercises/ch01/s1_11_matmul.py is missing"):
        course.load(tmp_course)


def test_listing_without_check_is_an_error(tmp_course):
    edit(tmp_course, 'listings = ["1.5"]', 'listings = ["1.5", "1.99"]')
    edit(
        tmp_course,
        '[[listing]]\nid = "1.1"',
        '[[listing]]\nid = "1.99"\nsection = "1.11"\ntitle = "x"\ntitle_zh = "示例"\n\n[[listing]]\nid = "1.1"',
    )
    with pytest.raises(course.CourseError, match=r"s1_11_attention_scores: listing 1.99 has no check"):
        course.load(tmp_course)


def test_listing_no_exercise_covers(tmp_course):
    edit(
        tmp_course,
        '[[listing]]\nid = "1.1"',
        '[[listing]]\nid = "1.77"\nsection = "1.11"\ntitle = "x"\ntitle_zh = "示例"\n\n[[listing]]\nid = "1.1"',
    )
    with pytest.raises(course.CourseError, match=r"\[\[listing\]\] 1.77: no exercise checks this listing"):
        course.load(tmp_course)


def test_points_must_match_checks(tmp_course):
    edit(tmp_course, 'points = 5\nhints = [\n  "Each context', 'points = 7\nhints = [\n  "Each context')
    with pytest.raises(course.CourseError, match="s1_12_context: points = 7 but its checks add up to 5"):
        course.load(tmp_course)


def test_stray_solution_file_is_an_error(tmp_course):
    (tmp_course / "solutions/ch01/s1_12_extra.py").write_text("x = 1\n")
    with pytest.raises(course.CourseError, match="s1_12_extra.*which course.toml does not list"):
        course.load(tmp_course)


def test_id_must_match_section(tmp_course):
    edit(tmp_course, 'section = "1.12"\ntitle = "Context vectors"', 'section = "1.13"\ntitle = "Context vectors"')
    with pytest.raises(course.CourseError, match="id s1_12_context does not match section 1.13"):
        course.load(tmp_course)


def test_bad_toml_names_the_file(tmp_course):
    (tmp_course / "course.toml").write_text("[course\n")
    with pytest.raises(course.CourseError, match="course.toml"):
        course.load(tmp_course)


def test_an_exercise_s_preload_lists_module_names(tmp_course):
    assert course.load(ROOT).get("s1_23_evaluation").preload == ("sklearn.metrics", "torch._dynamo")
    edit(tmp_course, 'preload = ["sklearn.metrics", "torch._dynamo"]', 'preload = ["os; rm -rf /"]')
    with pytest.raises(course.CourseError, match=r"s1_23_evaluation.*preload must be a list of module names"):
        course.load(tmp_course)
