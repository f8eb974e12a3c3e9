"""Every number checked before it leaves: at the command line's edge, and against the LMS.

Scores out of range need --allow-over; NaN and infinity never reach the course's records (and one already
stored, by hand or by an older version, is named, not a crash); a Canvas column must be one of the
export's and its points possible agree, or we warn; a bare date is read in the course deadline's zone and
an extension before the deadline is refused; `extend` and `accommodate` say at once when no hand-in time
lets them take effect; `--times` applies to hand-ins already graded and finds students as `--student` does.
"""

import csv
import io
import shutil
import sqlite3

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from conftest import copy_course
from semesters import CANVAS_ROSTER, canvas_zip, cli, configure

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def graded_template(tmp_path_factory):
    """A course with a Canvas roster, n-queens graded from Canvas's download (no hand-in times in it)."""
    root = tmp_path_factory.mktemp("graded")
    course = copy_course(root / "course")
    configure(course)
    (root / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(root / "export.csv"))
    download = canvas_zip(root / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave", "erin"], late=["carol"])
    cli(course, "grade", "--assignment", "n-queens", "--out", str(course / "grades" / "n-queens"), str(download))
    return root


@pytest.fixture
def course(graded_template, tmp_path):
    shutil.copytree(graded_template, tmp_path / "t")
    return tmp_path / "t" / "course"


def run(course, *args):
    return CliRunner().invoke(main, ["--course", str(course), *args])


def grades(course):
    text = (course / "grades" / "n-queens" / "grades.csv").read_text(encoding="utf-8")
    return {row["name"]: row for row in csv.DictReader(io.StringIO(text, newline=""))}


@pytest.mark.parametrize("args", [["--points", "nan"], ["--points", "inf"], ["--points", "-inf"],
                                  ["--score", "1e400"], ["--score", "NaN"], ["--points", "1e308"],
                                  ["--score", "-1"]])
def test_adjust_refuses_what_is_not_a_finite_number_in_range(course, args):
    before = (course / "grades" / "course.db").read_bytes()
    done = run(course, "adjust", "--assignment", "n-queens", "--student", "bjones", "--reason", "x", *args)
    assert done.exit_code == 2 and "Traceback" not in done.output, done.output
    assert "finite" in done.output or "between" in done.output
    assert (course / "grades" / "course.db").read_bytes() == before


@pytest.mark.parametrize("args", [["--extra-days", "1e308"], ["--extra-hours", "inf"], ["--extra-days", "nan"],
                                  ["--extra-days", "400"], ["--extra-hours", "-1"]])
def test_accommodate_refuses_what_is_not_a_time_within_a_semester(course, args):
    done = run(course, "accommodate", "--group", "g", "--student", "dlee", *args)
    assert done.exit_code == 2 and "Traceback" not in done.output, done.output
    assert run(course, "accommodate", "--list").output.strip() == "no accommodations"


def test_a_score_over_the_maximum_or_below_0_needs_allow_over(course):
    over = run(course, "adjust", "--assignment", "n-queens", "--student", "bjones", "--points", "10", "--reason", "x")
    assert over.exit_code == 1 and "above the maximum" in over.output and "--allow-over" in over.output
    under = run(course, "adjust", "--assignment", "n-queens", "--student", "bjones", "--points", "-3", "--reason", "x")
    assert under.exit_code == 1 and "below 0" in under.output
    # The trial: 5.0000001 was refused as "would get 5 / 5 ... above the maximum"; every digit is said.
    barely = run(course, "adjust", "--assignment", "n-queens", "--student", "bjones", "--score", "5.0000001",
                 "--reason", "x")
    assert barely.exit_code == 1 and "would get 5.0000001 / 5" in " ".join(barely.output.split())
    assert grades(course)["Bob Jones"]["score"] == "0"      # his stub earns nothing (issue 33)
    allowed = run(course, "adjust", "--assignment", "n-queens", "--student", "bjones", "--score", "6", "--reason",
                  "bonus for a talk", "--allow-over")
    assert allowed.exit_code == 0, allowed.output
    assert grades(course)["Bob Jones"]["score"] == "6"


def test_a_bad_number_already_stored_is_named_and_can_be_withdrawn(course):
    assert run(course, "adjust", "--assignment", "n-queens", "--student", "bjones", "--points", "1", "--reason",
               "x").exit_code == 0
    with sqlite3.connect(course / "grades" / "course.db") as db:       # what `--points nan` used to store
        db.execute("UPDATE adjustments SET points = NULL WHERE id = 1")
        db.execute("INSERT INTO accommodations VALUES ('huge', 9e999, 'r', 'me', 'now')")   # stored as inf
        db.execute("INSERT INTO group_members VALUES ('huge', 'canvas:1004')")
    listed = run(course, "adjust", "--list")
    assert listed.exit_code == 0 and "#1" in listed.output and "UNUSABLE" in listed.output, listed.output
    assert "unusable" in run(course, "accommodate", "--list").output
    book = run(course, "gradebook", "--to", str(course.parent / "book"))
    assert book.exit_code == 1 and "Traceback" not in book.output, book.output
    assert "adjustment #1" in book.output and "--withdraw 1" in book.output
    book = run(course, "release", "--out", str(course / "grades" / "n-queens"), "--to", str(course.parent / "r"))
    assert book.exit_code == 1 and "adjustment #1" in book.output, book.output
    withdrawn = run(course, "adjust", "--withdraw", "1", "--reason", "broken")
    # Withdrawn, and the gradebook cannot be refreshed yet: the accommodation is named, with Dave Lee.
    assert withdrawn.exit_code == 1 and "accommodation 'huge'" in withdrawn.output, withdrawn.output
    assert "Dave Lee (canvas:1004)" in withdrawn.output
    assert "withdrawn by" in run(course, "adjust", "--list").output
    book = run(course, "gradebook", "--to", str(course.parent / "book"))
    assert book.exit_code == 1 and "accommodation 'huge'" in book.output and "Lee" in book.output, book.output
    assert run(course, "accommodate", "--group", "huge", "--extra-days", "2").exit_code == 0
    book = run(course, "gradebook", "--to", str(course.parent / "book"))
    assert book.exit_code == 0, book.output


def test_a_canvas_column_must_be_one_of_the_export_s(course):
    text = (course / "course.toml").read_text()
    (course / "course.toml").write_text(text.replace("[assignment.n-queens]\n",
                                                     "[assignment.n-queens]\nlms_column = \"N-Queens (999)\"\n"))
    book = run(course, "gradebook", "--to", str(course.parent / "book"))
    assert book.exit_code == 1 and "'N-Queens (999)'" in book.output and "new assignment" in book.output
    assert not (course.parent / "book").exists()
    released = run(course, "release", "--out", str(course / "grades" / "n-queens"), "--to", str(course.parent / "r"))
    assert released.exit_code == 1 and "'N-Queens (999)'" in released.output
    assert not (course.parent / "r" / "canvas_grades.csv").exists()


def test_points_possible_that_disagree_are_warned_about(course):
    export = course.parent / "export.csv"
    export.write_text(export.read_text().replace("    Points Possible,,,,,5.00,5.00", "    Points Possible,,,,,10,5"))
    assert run(course, "roster", "import", str(export)).exit_code == 0
    book = run(course, "gradebook", "--to", str(course.parent / "book"))
    assert book.exit_code == 0, book.output
    assert "'N-Queens (501)' is worth 10 points" in book.output
    released = run(course, "release", "--out", str(course / "grades" / "n-queens"), "--to", str(course.parent / "r"))
    assert released.exit_code == 0 and "is worth 10 points" in released.output


def test_extension_dates_and_what_an_extension_cannot_do_without_hand_in_times(course):
    early = run(course, "extend", "--assignment", "n-queens", "--student", "cking", "--until", "2026-10-30")
    assert early.exit_code == 1 and "not after n-queens's own deadline" in early.output
    given = run(course, "extend", "--assignment", "n-queens", "--student", "cking", "--until", "2026-11-04")
    assert given.exit_code == 0, given.output
    assert "until 2026-11-04T23:59:00-05:00" in given.output        # the deadline's zone, not UTC
    # Canvas's download has no hand-in times: the extension cannot change Carol's lateness, and says so now.
    assert "cannot change the lateness of Carol King (canvas:1003)" in given.output
    assert "--times FILE" in given.output
    assert grades(course)["Carol King"]["late"] == "yes"
    accommodated = run(course, "accommodate", "--group", "extra", "--extra-days", "3", "--student", "cking")
    assert "cannot change the lateness of Carol King" in accommodated.output
    # Her feedback page says what it means for her, and names no command.
    assert run(course, "feedback", "--out", str(course / "grades" / "n-queens")).exit_code == 0
    page = next((course / "grades" / "n-queens" / "feedback").glob("Carol_King*/feedback.md")).read_text()
    assert "recorded no hand-in time" in page and "grade --times" not in page and "autograder" not in page


def test_times_apply_to_graded_hand_ins_and_find_students_as_student_does(course):
    times = course.parent / "times.csv"
    times.write_text("name,submitted_at\ncarol king,2026-11-02T10:00:00-05:00\n"
                     "asmith,2026-11-01T09:00:00-05:00\n")
    download = course.parent / "nq.zip"
    again = cli(course, "grade", "--assignment", "n-queens", "--out", str(course / "grades" / "n-queens"),
                "--times", str(times), str(download))
    assert "graded 0 hand-in(s)" in again.stdout
    assert "2 hand-in(s) graded earlier took their time from --times" in again.stdout
    rows = grades(course)
    assert rows["Carol King"]["handed_in_at"].startswith("2026-11-02T10:00")
    assert rows["Alice Smith"]["handed_in_at"].startswith("2026-11-01T09:00")
    assert rows["Carol King"]["penalty"] == "1"          # 10 h 1 min late: one started day, no longer 1 by default
    extended = run(course, "extend", "--assignment", "n-queens", "--student", "Carol King", "--until",
                   "2026-11-03")
    assert "cannot change the lateness" not in extended.output
    assert grades(course)["Carol King"]["late"] == "no"


def test_an_accommodation_s_reason_stays_with_the_instructor(course):
    done = run(course, "accommodate", "--group", "extra-time", "--extra-days", "2", "--reason",
               "letter from disability services", "--student", "dlee")
    assert done.exit_code == 0 and "disability" in done.output
    assert "disability" in run(course, "accommodate", "--list").output
    out = course / "grades" / "n-queens"
    assert run(course, "feedback", "--out", str(out)).exit_code == 0
    assert run(course, "report", "--out", str(out)).exit_code == 0
    assert run(course, "gradebook", "--to", str(course.parent / "book")).exit_code == 0
    shown = [out / "grades.csv", out / "report.html", *(out / "feedback").rglob("*.*"),
             *(course.parent / "book").rglob("*.*")]
    assert [p for p in shown if "disability" in p.read_bytes().decode("utf-8", "replace")] == []
    page = next((out / "feedback").glob("Dave_Lee*/feedback.md")).read_text()
    assert "accommodation 'extra-time': 2 days extra" in page


@pytest.mark.parametrize("args", [["--late-penalty", "nan"], ["--late-cap", "inf"], ["--timeout", "inf"],
                                  ["--submission-timeout", "1e400"], ["--limit-factor", "nan"]])
def test_grade_refuses_numbers_that_are_not_finite(course, args):
    done = run(course, "grade", "--assignment", "n-queens", "--out", str(course.parent / "try"), *args,
               str(course.parent / "nq.zip"))
    assert done.exit_code == 2 and "finite" in done.output and not (course.parent / "try").exists()


def test_a_bare_deadline_flag_is_read_in_the_course_deadline_s_zone(course):
    from autograder.core.course import late_rules, load_course
    rules = late_rules(load_course(course), "n-queens", deadline="2026-11-03")
    assert rules.deadline.isoformat() == "2026-11-03T23:59:00-05:00"
    assert late_rules(load_course(course), "n-queens", deadline="2026-11-03 12:00").deadline.isoformat() \
        == "2026-11-03T12:00:00-05:00"
