"""Databases written by every earlier version are read right by this one, and upgraded step by step.

schemas/v0 is what the last release (f5257e5) left after a Canvas semester; schemas/v1 what main wrote before
schema versions were recorded; schemas/v2 what it wrote at gradebook version 2, identity on every row; schemas/v3
at version 3, placing hand-ins; schemas/v4 at version 4, what was sent to Canvas; schemas/v5 at version 5,
slip days and excuses (make_semester.py made all six; PROVENANCE.md says how).  Each is opened by
today's code as a course's own records: the same students and names, scores, extension, accommodation and
adjustment, the same course gradebook and Canvas import file, and a release that names every student by
their Canvas id and pairs each feedback file with its submission, from identity the upgrade read once.
"""

import csv
import io
import multiprocessing
import os
import pwd
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.core import database
from autograder.core.course import load_course
from autograder.gradebook import Gradebook, GradebookError
from autograder.gradebook import schema as gradebook_schema
from autograder.gradebook.read import load_submissions
from autograder.roster import schema as roster_schema
from autograder.roster.store import CourseRecords, RecordsError
from conftest import ROOT

from semesters import configure

SCHEMAS = Path(__file__).parent / "schemas"

VERSIONS = sorted(p.name for p in SCHEMAS.iterdir() if p.is_dir())
NQ = "N-Queens (501)"


def csv_rows(text):
    return list(csv.DictReader(io.StringIO(text)))


def semester(course, version):
    """The course with `version`'s records and n-queens' gradebook in their places."""
    configure(course)
    (course / "grades" / "n-queens").mkdir(parents=True)
    shutil.copy(SCHEMAS / version / "course.db", course / "grades" / "course.db")
    shutil.copy(SCHEMAS / version / "n-queens-gradebook.db", course / "grades" / "n-queens" / "gradebook.db")
    # From version 5 a gradebook keeps the rubric it was graded under (rubric_key): its semester comes with the
    # cases n-queens had then, or every command would rightly refuse its grades as graded under another rubric.
    if (SCHEMAS / version / "n-queens").is_dir():
        shutil.copytree(SCHEMAS / version / "n-queens", course / "autograder" / "assignments" / "n-queens",
                        dirs_exist_ok=True)
    return load_course(course)


def user_version(path):
    with sqlite3.connect(path) as db:
        return database.schema_version(db)


def test_every_earlier_version_has_its_fixture():
    assert VERSIONS == [f"v{n}" for n in range(gradebook_schema.VERSION)]
    # (course.db, gradebook.db) versions each recorded: none before v2; v2's records were still version 1.
    recorded = {"v0": (0, 0), "v1": (0, 0), "v2": (1, 2), "v3": (2, 3), "v4": (2, 4), "v5": (3, 5)}
    for version in VERSIONS:
        assert (user_version(SCHEMAS / version / "course.db"),
                user_version(SCHEMAS / version / "n-queens-gradebook.db")) == recorded[version]


@pytest.mark.parametrize("version", VERSIONS)
def test_an_earlier_version_s_semester_reads_right(course_copy, version, tmp_path):
    from autograder.cli.main import main
    from click.testing import CliRunner

    course = semester(course_copy, version)
    expected_book = {r["student"]: r for r in csv_rows((SCHEMAS / version / "course_grades.csv").read_text())}
    expected_import = {r["ID"]: r for r in csv_rows((SCHEMAS / version / "canvas_import.csv").read_text())
                       if r["ID"]}      # not the Points Possible row

    with CourseRecords.of(course, create=False) as records:
        students = records.students(include_off_roster=True)
        assert [s.name for s in students] == ["Bob Jones", "Carol King", "Dave Lee", "Erin Ng", "Alice Smith",
                                              "Test Student"]
        assert [s.key for s in students if s.test_student] == ["canvas:1099"]
        [extension] = records.extensions("n-queens")
        assert (extension.student, extension.until, extension.reason) == \
            ("canvas:1003", "2026-11-04T23:59:00-05:00", "illness")
        [accommodation] = records.accommodations()
        assert (accommodation.name, accommodation.extra_seconds, accommodation.members) == \
            ("extra-time", 2 * 86400, ("canvas:1004",))
        [adjustment] = records.adjustments("n-queens")
        assert (adjustment.student, adjustment.points, adjustment.reason) == ("canvas:1002", 1.0, "ambiguous")
    assert user_version(course.grades_root / "course.db") == roster_schema.VERSION

    # Refreshed by today's code (as `extend`, `adjust` and `grade` do): the same scores as that version's.
    run = CliRunner().invoke(main, ["--course", str(course.root), "adjust", "--list"], catch_exceptions=False)
    assert run.exit_code == 0 and "Bob Jones" in run.output and "+1 point(s): ambiguous" in run.output, run.output
    from autograder.grade.refresh import refresh
    from autograder.core.assignment import load_assignment
    with CourseRecords.of(course, create=False) as records:
        refreshed = refresh(course, load_assignment(course, "n-queens"), records)
    scores = {row.student: row.score for row in refreshed.rows if row.student != "canvas:1099"}
    assert scores == {key: float(row["n-queens"]) for key, row in expected_book.items()}
    assert user_version(course.grades_dir("n-queens") / "gradebook.db") == gradebook_schema.VERSION

    run = CliRunner().invoke(main, ["--course", str(course.root), "gradebook", "--to", str(tmp_path / "book")],
                             catch_exceptions=False)
    assert run.exit_code == 0, run.output
    book = {r["student"]: r for r in csv_rows((tmp_path / "book" / "course_grades.csv").read_text())}
    for key, row in expected_book.items():
        for column in ("name", "sortable_name", "lms_id", "sis_id", "login", "section", "n-queens",
                       "n-queens mark"):
            assert book[key][column] == row[column], (key, column)
    canvas = {r["ID"]: r for r in csv_rows((tmp_path / "book" / "lms" / "canvas_import.csv").read_text())
              if r["ID"]}
    assert {i: r[NQ] for i, r in canvas.items()} == {i: r[NQ] for i, r in expected_import.items()}

    # Released from the upgraded gradebook: every Canvas id, and files named as Canvas pairs them.
    grades = course.grades_dir("n-queens")
    for verb in (["feedback", "--out", str(grades)],
                 ["release", "--out", str(grades), "--to", str(tmp_path / "release")]):
        run = CliRunner().invoke(main, ["--course", str(course.root), *verb], catch_exceptions=False)
        assert run.exit_code == 0, run.output
    released = {r["ID"]: r for r in csv_rows((tmp_path / "release" / "canvas_grades.csv").read_text())}
    assert {i: r[NQ] for i, r in released.items()} == {i: r[NQ] for i, r in expected_import.items()}
    files = sorted(p.name for p in (tmp_path / "release" / "feedback").iterdir())
    assert files == ["jonesbob_1002_7001_feedback.html", "kingcarol_LATE_1003_7002_feedback.html",
                     "leedave_1004_7003_feedback.html", "ngerin_1005_7004_feedback.html",
                     "smithalice_1001_7000_feedback.html"]      # the Test Student's is in no file


@pytest.mark.parametrize("version", VERSIONS)
def test_the_upgrade_keeps_what_each_hand_in_came_with(tmp_path, version):
    shutil.copy(SCHEMAS / version / "n-queens-gradebook.db", tmp_path / "gradebook.db")
    rows = {row.student: row for row in load_submissions(tmp_path, "n-queens")}
    alice = rows["canvas:1001"]
    assert (alice.lms, alice.lms_id, alice.lms_prefix, alice.repository) == \
        ("canvas", "1001", "smithalice_1001_7000_", "")
    assert rows["canvas:1003"].lms_prefix == "kingcarol_LATE_1003_7002_"
    assert user_version(tmp_path / "gradebook.db") == gradebook_schema.VERSION


def test_identity_of_rows_written_before_it_was_kept():
    """Read once, by the upgrade, the way the release stage of those versions read it."""
    legacy = gradebook_schema.legacy_identity
    assert legacy("canvas:1001", "n-queens", "nq.zip:smithalice_1001_7000_n-queens.ipynb") == \
        ("canvas", "1001", "smithalice_1001_7000_", "")
    assert legacy("email:jane@uni.example", "n-queens",
                  "m.zip:Jane Doe_501_assignsubmission_file_/sub/n-queens.ipynb") == \
        ("moodle", "501", "Jane Doe_501_assignsubmission_file_/", "")
    assert legacy("moodle:502", "n-queens", "Ann Lee_502_assignsubmission_file_n-queens.ipynb") == \
        ("moodle", "502", "Ann Lee_502_assignsubmission_file_", "")
    assert legacy("canvas:1001", "n-queens", "alice.ipynb") == ("canvas", "1001", "", "")   # matched by name
    assert legacy("gradescope:ada@uni.example", "n-queens", "x/n-queens.ipynb") == ("gradescope", "", "", "")
    assert legacy("blackboard:bjones", "n-queens", "bb.zip:x.ipynb") == ("blackboard", "bjones", "", "")
    assert legacy("d2l:name:Ada Lovelace", "n-queens", "d.zip:1-2 - Ada/x.ipynb") == ("d2l", "", "", "")
    assert legacy("alice", "n-queens", "n-queens-alice/n-queens.ipynb") == ("classroom", "", "", "n-queens-alice")
    assert legacy("alice", "n-queens", "alice.ipynb") == ("", "", "", "")


def test_a_database_from_a_newer_grader_is_refused_unchanged(tmp_path):
    path = tmp_path / "gradebook.db"
    Gradebook(path).close()
    with sqlite3.connect(path) as db:
        db.execute(f"PRAGMA user_version = {gradebook_schema.VERSION + 1}")
    before = path.read_bytes()
    with pytest.raises(GradebookError, match="newer version of the grader"):
        Gradebook(path)
    assert path.read_bytes() == before
    records = tmp_path / "course.db"
    CourseRecords(records).close()
    with sqlite3.connect(records) as db:
        db.execute(f"PRAGMA user_version = {roster_schema.VERSION + 1}")
    with pytest.raises(RecordsError, match="newer version of the grader"):
        CourseRecords(records)


def test_a_step_that_fails_leaves_the_previous_version_whole(tmp_path):
    path = tmp_path / "gradebook.db"
    shutil.copy(SCHEMAS / "v0" / "n-queens-gradebook.db", path)

    def broken(db):
        db.execute("ALTER TABLE submissions ADD COLUMN half_done TEXT")
        raise OSError("the disk is full")

    db = sqlite3.connect(path)
    with pytest.raises(OSError):
        database.upgrade(db, (gradebook_schema.STEPS[0], broken), path, GradebookError)
    db.close()
    assert user_version(path) == 1                   # the first step stands, the second left no trace
    with sqlite3.connect(path) as db:
        assert "half_done" not in database.columns(db, "submissions")
        assert "pending" in {r[0] for r in db.execute("SELECT name FROM sqlite_master")}
    assert len(load_submissions(tmp_path, "n-queens")) == 6    # and the next open finishes the upgrade
    assert user_version(path) == gradebook_schema.VERSION


def _open(path):
    Gradebook(path).close()


def test_two_processes_upgrading_at_once_upgrade_once(tmp_path):
    path = tmp_path / "gradebook.db"
    shutil.copy(SCHEMAS / "v0" / "n-queens-gradebook.db", path)
    context = multiprocessing.get_context("fork")      # each a process of its own, without a new interpreter
    workers = [context.Process(target=_open, args=(path,)) for _ in range(3)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(60)
    assert [w.exitcode for w in workers] == [0, 0, 0]
    assert user_version(path) == gradebook_schema.VERSION
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT COUNT(*) FROM submissions WHERE lms = 'canvas'").fetchone()[0] == 6


@pytest.mark.conditions
# The ordinary user runs this checkout's code: a class graded at the same time in the users layer (which `auto`
# falls to as root when a user namespace cannot be made, as under CI's load) makes the checkout private meanwhile.
@pytest.mark.alone
def test_a_gradebook_this_user_may_not_write_is_read_as_it_is_and_not_released():
    """A gradebook of an earlier version that this user may only read stays as it is: what it kept is read,
    and `release`, which needs each hand-in's LMS id, refuses in one line rather than write blank ids."""
    user = os.environ.get("AUTOGRADER_TEST_USER")
    if os.geteuid() != 0 or not user or not shutil.which("setpriv"):
        pytest.skip("needs root and AUTOGRADER_TEST_USER (.ci/run creates one)")
    entry = pwd.getpwnam(user)
    base = Path(tempfile.mkdtemp(prefix="autograder-schemas-"))
    try:
        base.chmod(0o755)
        (base / "old").mkdir(mode=0o755)
        shutil.copy(SCHEMAS / "v1" / "n-queens-gradebook.db", base / "old" / "gradebook.db")
        (base / "old" / "gradebook.db").chmod(0o644)
        (base / "to").mkdir()
        os.chown(base / "to", entry.pw_uid, entry.pw_gid)
        before = (base / "old" / "gradebook.db").read_bytes()
        as_user = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--init-groups", "--",
                   sys.executable]
        env = {**os.environ, "HOME": str(base / "to"), "MPLCONFIGDIR": str(base / "to")}
        probe = ("import sys; from autograder.gradebook.read import load_submissions; "
                 "rows = load_submissions(sys.argv[1], 'n-queens'); "
                 "print(len(rows), sorted({(r.lms, r.name) for r in rows})[0])")
        read = subprocess.run([*as_user, "-c", probe, str(base / "old")], capture_output=True, text=True,
                              env=env, cwd=base)
        assert read.returncode == 0, read.stderr[-3000:]      # what went wrong, when it does, said whole
        assert read.stdout.split("\n")[0] == "6 (None, 'Alice Smith')"
        release = subprocess.run([*as_user, "-m", "autograder", "--course", str(ROOT), "release", "--out",
                                  str(base / "old"), "--to", str(base / "to" / "release")],
                                 capture_output=True, text=True, env=env, cwd=base)
        assert release.returncode == 1 and "could not be upgraded" in release.stderr, release.stderr
        assert "Traceback" not in release.stderr
        assert (base / "old" / "gradebook.db").read_bytes() == before
    finally:
        shutil.rmtree(base, ignore_errors=True)
