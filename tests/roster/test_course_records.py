"""An assignment's grades live in one place, named by the course; grading elsewhere never touches them.

The course's gradebook folder for an assignment is its grades/<id>/ (or what course.toml says), never the
last `grade --out`: `make demo`, or a trial run into a scratch folder with the real roster, leaves the
course's Canvas import file byte for byte as it was, and course.db too.
"""

import hashlib
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT
from semesters import CANVAS_ROSTER, canvas_zip, cli, configure

pytestmark = pytest.mark.slow


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def with_canvas_roster(course, folder):
    """The course with test_semester's deadlines and its Canvas roster imported; returns the course."""
    configure(course)
    (folder / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(folder / "export.csv"))
    return course


def test_the_demo_and_a_trial_run_leave_the_course_s_grades_as_they_were(course_copy, tmp_path):
    course = with_canvas_roster(course_copy, tmp_path)
    graded = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave", "erin"], late=["carol"])
    cli(course, "grade", "--assignment", "n-queens", "--out", str(course / "grades" / "n-queens"), str(graded))
    cli(course, "extend", "--assignment", "n-queens", "--student", "cking", "--until", "2026-11-04",
        "--reason", "illness")
    book = tmp_path / "book"
    first = cli(course, "gradebook", "--to", str(book))
    assert f"n-queens: read {course / 'grades' / 'n-queens'}" in first.stdout
    before = {name: digest(book / "lms" / name) for name in ("canvas_import.csv", "moodle_import.csv")}
    records = digest(course / "grades" / "course.db")

    # `make demo`, as a new instructor runs it in the course (the grader of this checkout).
    for name in ("Makefile", "pyproject.toml"):
        shutil.copy2(ROOT / name, course / name)       # copy2: older than the venv, so nothing reinstalls
    # One example class: the demo runs the same three commands for each, and each class costs a minute here.
    shutil.copytree(ROOT / "examples" / "n-queens", course / "examples" / "n-queens")
    # -o: the venv is this checkout's, installed already (make would otherwise reinstall it after a pull).
    demo = subprocess.run(["make", "-C", str(course), "-o", f"{ROOT / '.venv'}/.installed", "demo",
                           f"VENV={ROOT / '.venv'}", "PYTHON=false"],
                          capture_output=True, text=True, timeout=900)
    assert demo.returncode == 0, demo.stdout[-3000:] + demo.stderr[-3000:]
    assert "is not the course's gradebook for n-queens" in demo.stdout
    # A trial run with the real roster into a scratch folder, then every verb that reads the course's grades.
    scratch = tmp_path / "scratch"
    trial = cli(course, "grade", "--assignment", "n-queens", "--out", str(scratch), "--regrade",
                str(canvas_zip(tmp_path / "other.zip", "n-queens", ["alice", "carol"], files={"carol": "bob"})))
    assert "not the course's gradebook" in trial.stdout
    cli(course, "adjust", "--assignment", "n-queens", "--student", "asmith", "--points", "-1", "--reason", "test")
    cli(course, "adjust", "--withdraw", "1", "--reason", "only a test")
    second = cli(course, "gradebook", "--to", str(book))
    assert {name: digest(book / "lms" / name) for name in before} == before, second.stdout
    assert "build/demo" not in second.stdout and str(scratch) not in second.stdout
    # The adjustment and its withdrawal are the only changes to the course's records.
    assert digest(course / "grades" / "course.db") != records
    with_records = cli(course, "adjust", "--list").stdout
    assert "Alice Smith (canvas:1001)" in with_records and "withdrawn" in with_records


def test_course_toml_names_the_folder_and_the_verbs_say_which_they_read(course_copy, tmp_path):
    course = course_copy
    configure(course)
    text = (course / "course.toml").read_text()
    (course / "course.toml").write_text(text.replace("[assignment.n-queens]\n",
                                                     '[assignment.n-queens]\ngrades = "semester/nq"\n'))
    roster = tmp_path / "export.csv"
    roster.write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(roster))
    graded = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave", "erin"])
    run = cli(course, "grade", "--assignment", "n-queens", "--out", str(course / "semester" / "nq"), str(graded))
    assert "not the course's gradebook" not in run.stdout
    extended = cli(course, "extend", "--assignment", "n-queens", "--student", "Carol King", "--until", "2026-11-05")
    assert str(course / "semester" / "nq" / "grades.csv") in extended.stderr
    not_yet = cli(course, "extend", "--assignment", "bitwise-queens", "--student", "Carol King", "--until",
                  "2026-11-05")
    assert f"no gradebook in {course / 'grades' / 'bitwise-queens'} yet" in not_yet.stderr
    released = cli(course, "release", "--out", str(course / "semester" / "nq"), "--to", str(tmp_path / "rel"))
    assert f"n-queens: read {course / 'semester' / 'nq' / 'gradebook.db'}" in released.stdout
    assert "not the course's" not in released.stdout
    book = cli(course, "gradebook", "--to", str(tmp_path / "book"))
    assert f"n-queens: read {course / 'semester' / 'nq' / 'gradebook.db'}" in book.stdout


def test_an_older_course_that_graded_elsewhere_is_told_where_to_move_it(course_copy, tmp_path):
    """Older versions recorded the last `grade --out`; the course now reads only its own folder, and says so."""
    import sqlite3
    course = with_canvas_roster(course_copy, tmp_path)
    elsewhere = tmp_path / "elsewhere"
    cli(course, "grade", "--assignment", "n-queens", "--out", str(elsewhere),
        str(canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob"])))
    with sqlite3.connect(course / "grades" / "course.db") as db:
        db.execute("INSERT INTO gradings VALUES ('n-queens', ?, '2026-11-02T00:00:00+00:00')", (str(elsewhere),))
    said = cli(course, "adjust", "--assignment", "n-queens", "--student", "asmith", "--points", "1", "--reason", "x")
    assert f"it was graded into {elsewhere}, which is not the course's folder" in said.stderr


def test_grades_and_rosters_are_private_when_made(course_copy, tmp_path):
    course = course_copy
    roster = tmp_path / "export.csv"
    roster.write_text(CANVAS_ROSTER)
    old = os.umask(0o022)          # what a shell usually gives: the grader must not rely on it
    try:
        cli(course, "roster", "import", str(roster))
        cli(course, "grade", "--assignment", "n-queens", "--out", str(course / "grades" / "n-queens"),
            "--keep-unpacked", str(canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob"])))
        cli(course, "gradebook", "--to", str(tmp_path / "book"))
    finally:
        os.umask(old)
    for path in (tmp_path / "book", tmp_path / "book" / "lms"):
        assert path.stat().st_mode & 0o777 == 0o700, path
    # On the way to --out: a slot's own user id (as root) passes through, no one lists them.
    for path in (course / "grades", course / "grades" / "n-queens"):
        assert path.stat().st_mode & 0o777 == 0o711, path
    for path in (course / "grades" / "n-queens" / "handins",):      # (kept: removed after grading otherwise)
        assert path.stat().st_mode & 0o777 == 0o700, path
    for path in (course / "grades" / "course.db", course / "grades" / "n-queens" / "gradebook.db",
                 course / "grades" / "n-queens" / "grades.csv", tmp_path / "book" / "course_grades.csv"):
        assert path.stat().st_mode & 0o777 == 0o600, path


def test_a_roster_that_lists_no_student_changes_nothing(course_copy, tmp_path):
    course = course_copy
    roster = tmp_path / "export.csv"
    roster.write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(roster))
    before = digest(course / "grades" / "course.db")
    header = CANVAS_ROSTER.splitlines()[0]
    for text in (header + "\n", header + "\n    Points Possible,,,,,5,5\n", 'Student,ID\n"Smith, Alice,1001\n',
                 '"""""""\n""\n'):
        bad = tmp_path / "bad.csv"
        bad.write_text(text)
        done = cli(course, "roster", "import", str(bad), check=False)
        assert done.returncode == 1, done.stdout + done.stderr
        assert "no longer listed" not in done.stdout + done.stderr
        assert digest(course / "grades" / "course.db") == before, text
    listed = cli(course, "roster").stdout
    assert "no longer on the roster" not in listed
