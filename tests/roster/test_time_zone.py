"""The course's time zone by name: a time written without a UTC offset is read on its own date's clock.

The trial: uninformed-search was due 2026-10-30T23:59-04:00 (EDT); `extend --until 2026-11-05` became 23:59 at
-04:00, 22:59 EST, and Carol, who handed in at 23:30 EST, lost a point for being "late by 31 min".
"""

import csv

import pytest

from autograder.core.course import CourseError, check_timezone
from semesters import CANVAS_ROSTER, canvas_zip, cli

SUMMER_DEADLINE = "2026-10-30T23:59:00-04:00"


def _course(course, zone):
    text = (course / "course.toml").read_text()
    if zone:
        text = text.replace("[course]\n", f'[course]\ntimezone = "{zone}"\n', 1)
    text = text.replace('[assignment.n-queens]\n# deadline = "2026-12-01T23:59:00-05:00"\nlate_policy = "none"',
                        f'[assignment.n-queens]\ndeadline = "{SUMMER_DEADLINE}"\nlate_policy = "per-day"\n'
                        "late_penalty = 1")
    assert SUMMER_DEADLINE in text and (not zone or zone in text)
    (course / "course.toml").write_text(text)
    return course


def _carol_after_an_extension(course, folder):
    (folder / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(folder / "export.csv"))
    times = folder / "times.csv"
    # Carol's with its offset (23:30 EST); Dave's as Moodle's worksheet writes one, with none (23:30 EST too).
    times.write_text("student,submitted_at\ncanvas:1003,2026-11-05T23:30:00-05:00\ncanvas:1004,2026-11-01T23:30:00\n")
    download = canvas_zip(folder / "nq.zip", "n-queens", ["carol", "dave"], late=["carol", "dave"])
    graded = cli(course, "grade", "--assignment", "n-queens", "--out", str(course / "grades" / "n-queens"),
                 "--times", str(times), str(download))
    extended = cli(course, "extend", "--assignment", "n-queens", "--student", "Carol King", "--until", "2026-11-05")
    with open(course / "grades" / "n-queens" / "grades.csv", newline="") as handle:
        rows = {row["name"]: row for row in csv.DictReader(handle)}
    return " ".join((graded.stdout + graded.stderr).split()), extended.stdout, rows["Carol King"], rows["Dave Lee"]


@pytest.mark.slow
def test_an_extension_by_date_and_a_time_without_offset_are_read_on_their_own_date_s_clock(course_copy, tmp_path):
    course = _course(course_copy, "America/New_York")
    graded, extended, carol, dave = _carol_after_an_extension(course, tmp_path)
    assert "until 2026-11-05T23:59:00-05:00" in extended          # 23:59 EST, not EDT's offset a week late
    assert (carol["late"], carol["penalty"], carol["score"]) == ("no", "0", "4.3"), carol    # her raw score
    # 48.5 h after the deadline (47.5 h at EDT's offset): 3 started days, not 2.
    assert dave["late"] == "yes" and "per-day policy: 3 started day(s)" in dave["late_note"], dave
    assert "carry no UTC offset" not in graded


@pytest.mark.slow
def test_without_a_time_zone_a_time_without_offset_is_read_at_the_deadline_s_and_the_run_says_so(course_copy,
                                                                                                  tmp_path):
    course = _course(course_copy, None)
    graded, _, carol, _ = _carol_after_an_extension(course, tmp_path)
    assert (carol["late"], carol["penalty"]) == ("yes", "1")   # the extension read at EDT's offset: 22:59 EST
    assert "1 hand-in time(s) carry no UTC offset, so they are read at the deadline's (UTC-04:00)" in graded
    assert "[course] timezone" in graded


def test_a_time_zone_that_is_not_one_is_refused_with_an_example():
    assert check_timezone("Europe/Paris", "x") == "Europe/Paris" and check_timezone("", "x") == ""
    for wrong in ("Mars/Olympus", "../../etc/passwd", "EST5EDT,M3", "nan"):
        with pytest.raises(CourseError, match="is not a time zone's name"):
            check_timezone(wrong, "course.toml: [course] timezone")
