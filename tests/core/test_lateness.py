"""Deadlines and late policies: course.toml's [assignment.<id>] keys, flags, and what each policy costs."""

from datetime import datetime, timedelta, timezone

import pytest

from autograder.core.course import CourseError, LateRules, late_rules, load_course
from autograder.core.lateness import assess
from conftest import set_assignment_table

DEADLINE = datetime(2026, 3, 1, 23, 59, tzinfo=timezone(timedelta(hours=-5)))


def write_course(course_copy, table):
    set_assignment_table(course_copy, table)
    return load_course(course_copy)


def test_course_toml_takes_a_toml_date_time_or_a_string_and_flags_override(course_copy):
    course = write_course(course_copy, "deadline = 2026-03-01T23:59:00-05:00\nlate_policy = \"cap\"\nlate_cap = 2.5\n")
    rules = late_rules(course, "n-queens")
    assert (rules.deadline, rules.policy, rules.cap) == (DEADLINE, "cap", 2.5)
    flagged = late_rules(course, "n-queens", deadline="2026-03-02T23:59:00-05:00", policy="per-day", penalty=1)
    assert (flagged.deadline.day, flagged.policy, flagged.penalty) == (2, "per-day", 1.0)
    assert late_rules(course, "uninformed-search") == LateRules()        # no table: nothing judged


@pytest.mark.parametrize("table, words", [
    ('deadline = "tomorrow"\n', "not an ISO 8601 time"),
    ('deadline = "2026-03-01T23:59:00"\n', "needs its UTC offset"),
    ('late_policy = "harsh"\n', "is not one of none, per-day, cap"),
    ('late_policy = "per-day"\n', "needs late_penalty"),
    ('late_policy = "cap"\n', "needs late_cap"),
])
def test_bad_late_settings_are_one_clear_error(course_copy, table, words):
    course = write_course(course_copy, table)
    with pytest.raises(CourseError, match=words):
        late_rules(course, "n-queens")


def test_per_day_counts_started_days_and_never_goes_below_zero():
    rules = LateRules(DEADLINE, "per-day", 2.0)
    assert assess("2026-03-02T04:59:00+00:00", None, 5.0, rules).score == 5.0          # 23:59 in New York: on time
    one = assess("2026-03-02T04:59:01+00:00", None, 5.0, rules)
    assert (one.late, one.penalty, one.score) == (True, 2.0, 3.0)
    three = assess("2026-03-04T05:00:00+00:00", None, 5.0, rules)
    assert (three.penalty, three.score) == (5.0, 0.0)                                   # 3 days: capped at 0


def test_the_lms_mark_decides_whether_and_the_deadline_how_much():
    rules = LateRules(DEADLINE, "per-day", 0.5)
    extension = assess("2026-03-03T12:00:00+00:00", False, 5.0, rules)
    assert (extension.late, extension.score) == (False, 5.0) and "extension" in extension.note
    marked = assess(None, True, 5.0, rules)                   # late by Canvas, time unknown: one day
    assert (marked.late, marked.score) == (True, 4.5) and "counted as 1 day" in marked.note
    naive = assess("2026-03-02T00:30:00", None, 5.0, rules)   # a zip's time: read in the deadline's zone
    assert naive.late and naive.seconds == 31 * 60


def test_without_a_deadline_nothing_is_judged_but_the_lms_mark():
    assert assess("2026-03-03T12:00:00+00:00", None, 5.0, LateRules()).late is None
    assert assess("2026-03-03T12:00:00+00:00", True, 5.0, LateRules()).late is True
    capped = assess("2026-03-03T12:00:00+00:00", True, 5.0, LateRules(None, "cap", cap=2.5))
    assert (capped.score, capped.penalty) == (2.5, 2.5)


def test_a_later_deadline_of_ones_own_never_makes_a_hand_in_late_the_lms_took_as_on_time():
    # The trial: Canvas wrote no _LATE_ for Bob (it knew of an extension, or its clock said so), his times file
    # says an hour after the course deadline; 30 more minutes here, or an accommodation of 0.0000001 days, made
    # him late.  A deadline of his own is later than the course's: it can only help.
    rules = LateRules(DEADLINE, "per-day", 0.5)
    an_hour_after = (DEADLINE + timedelta(hours=1)).isoformat()
    for own in (DEADLINE + timedelta(minutes=30), DEADLINE + timedelta(seconds=0.0086)):
        found = assess(an_hour_after, False, 2.9, LateRules(own, "per-day", 0.5), extended="extension")
        assert (found.late, found.score, found.penalty) == (False, 2.9, 0.0)
        assert "the LMS marked it on time" in found.note
    # A LATE mark still gives way to the student's own deadline when the hand-in time says it met it ...
    met = assess(an_hour_after, True, 2.9, LateRules(DEADLINE + timedelta(hours=2), "per-day", 0.5), "extension")
    assert (met.late, met.score) == (False, 2.9)
    # ... and stays late, counted from their own deadline, when it did not.
    missed = assess(an_hour_after, True, 2.9, LateRules(DEADLINE + timedelta(minutes=30), "per-day", 0.5), "extension")
    assert (missed.late, missed.score, missed.seconds) == (True, 2.4, 1800)
    assert assess(an_hour_after, False, 2.9, rules).late is False
