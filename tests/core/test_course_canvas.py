"""course.toml's Canvas settings: Canvas's address, the course's id, and each assignment's Canvas id."""

import pytest

from autograder.core.course import CourseError, canvas_id, canvas_url, load_course
from conftest import set_assignment_table


@pytest.mark.parametrize("pasted, base", [
    ("https://canvas.uni.edu", "https://canvas.uni.edu"), ("canvas.uni.edu/", "https://canvas.uni.edu"),
    ("https://canvas.uni.edu/courses/4200/assignments/501", "https://canvas.uni.edu"),
    ("https://uni.edu/canvas/courses/4200", "https://uni.edu/canvas"), ("http://localhost:3000", "http://localhost:3000"),
    ("", "")])
def test_canvas_s_address_as_pasted_is_the_api_s_base(pasted, base):
    assert canvas_url(pasted) == base


@pytest.mark.parametrize("wrong", ["http://canvas.uni.edu", "https://me:secret@canvas.uni.edu", "ftp://canvas.uni.edu",
                                   "https://canvas uni.edu"])
def test_an_address_the_token_must_not_travel_to_is_refused(wrong):
    with pytest.raises(CourseError, match="is not Canvas's https address"):
        canvas_url(wrong)


def test_an_id_is_digits():
    assert canvas_id(4200, "x") == canvas_id(" 4200 ", "x") == "4200"
    for wrong in ("0", "-3", "12a", True, "1" * 19):
        with pytest.raises(CourseError, match="is not a Canvas id"):
            canvas_id(wrong, "x")


def test_an_assignment_s_canvas_id_is_its_own_else_its_column_s(course_copy):
    set_assignment_table(course_copy, 'late_policy = "none"\nlms_column = "N-Queens (501)"\n')
    assert load_course(course_copy).canvas_assignment("n-queens") == "501"
    set_assignment_table(course_copy, 'late_policy = "none"\nlms_column = "N-Queens (501)"\ncanvas_assignment = 777\n')
    assert load_course(course_copy).canvas_assignment("n-queens") == "777"
    set_assignment_table(course_copy, 'late_policy = "none"\nlms_column = "N-Queens"\n')
    assert load_course(course_copy).canvas_assignment("n-queens") is None
    set_assignment_table(course_copy, 'late_policy = "none"\ncanvas_assignment = "n-queens"\n')
    with pytest.raises(CourseError, match="canvas_assignment: 'n-queens' is not a Canvas id"):
        load_course(course_copy)
