"""Numbers a person writes into course.toml, cases.toml or the command line are checked alike (core/numbers.py):
finite, in range, in plain ASCII decimal notation; and said with every digit they need."""

import math

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.core.course import CourseError, late_rules, load_course, parse_deadline
from autograder.core.numbers import NumberError, checked, plain_number, shown
from conftest import copy_course


@pytest.mark.parametrize("text", ["nan", "inf", "-inf", "1e400", "1_0", "\uff15", "\u0665", "5 points", "", "0x10"])
def test_only_plain_finite_decimal_numbers_are_numbers(text):
    # The trial: `--points 1_0` was read as 10 and a full-width 5 as 5; float() reads both.
    with pytest.raises(NumberError):
        checked(text, 0, 1000)


def test_plain_numbers_and_their_range():
    assert [plain_number(t) for t in ("5", "-0.5", "2.5e1", ".5", "+3")] == [5, -0.5, 25, 0.5, 3]
    assert checked(2, 0, 5) == 2.0
    for value in (math.nan, math.inf, True, 6, -0.1):
        with pytest.raises(NumberError):
            checked(value, 0, 5)


def test_a_number_is_shown_with_every_digit_it_needs():
    # The trial: `adjust --score 5.0000001` was refused as "would get 5 / 5 ... above the maximum".
    assert shown(5.0000001) == "5.0000001" and shown(5.0) == "5" and shown(2.5) == "2.5"


def _course_with(tmp_path, **settings):
    course = copy_course(tmp_path / "course")
    text = (course / "course.toml").read_text()
    lines = "".join(f"{key} = {value}\n" for key, value in settings.items())
    (course / "course.toml").write_text(text.replace('[assignment.n-queens]\n# deadline = "2026-12-01T23:59:00-05:00"\n'
                                                     'late_policy = "none"\n', "[assignment.n-queens]\n" + lines, 1))
    return course


@pytest.mark.parametrize("settings", [{"late_policy": '"per-day"', "late_penalty": "nan"},
                                      {"late_policy": '"cap"', "late_cap": "nan"},
                                      {"late_policy": '"per-day"', "late_penalty": "inf"},
                                      {"late_policy": '"cap"', "late_cap": "-1.0"}])
def test_course_toml_late_numbers_are_checked_like_the_command_line_s(tmp_path, settings):
    # The trial: late_penalty = nan took "nan" points off per day, a 0 in the LMS file; late_cap = nan was no cap.
    course = _course_with(tmp_path, deadline="2026-11-05T23:59:00-05:00", **settings)
    with pytest.raises(CourseError, match="late_(penalty|cap)"):
        late_rules(load_course(course), "n-queens")
    done = CliRunner().invoke(main, ["--course", str(course), "grade", "--assignment", "n-queens", "--out",
                                     str(tmp_path / "try"), str(course / "solutions")])
    assert done.exit_code != 0 and "late_" in done.output and not (tmp_path / "try" / "grades.csv").exists()


def test_course_toml_limits_and_points_are_checked(tmp_path):
    course = copy_course(tmp_path / "course")
    text = (course / "course.toml").read_text()
    (course / "course.toml").write_text(text.replace("case_timeout = 5\n", "case_timeout = nan\n", 1))
    with pytest.raises(CourseError, match="case_timeout.*finite"):
        load_course(course)


@pytest.mark.parametrize("args", [["--late-penalty", "1_0"], ["--timeout", "\uff15"]])
def test_grade_takes_only_plain_decimal_numbers(tmp_path, args):
    course = copy_course(tmp_path / "course")
    done = CliRunner().invoke(main, ["--course", str(course), "grade", "--assignment", "n-queens", "--out",
                                     str(tmp_path / "try"), *args, str(course / "solutions")])
    assert done.exit_code == 2 and "plain decimal digits" in done.output


def test_a_deadline_error_says_in_which_zone_a_time_without_offset_is_read():
    # The trial: "(or 2026-12-01 23:59 for local time)", though such a time is read in the deadline's zone.
    from zoneinfo import ZoneInfo
    with pytest.raises(CourseError, match="read in the course deadline's zone"):
        parse_deadline("Friday", ZoneInfo("America/New_York"))
    with pytest.raises(CourseError, match="read in this machine's time zone"):
        parse_deadline("Friday")
