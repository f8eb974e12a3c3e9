"""Every student who handed something in gets exactly one row, their own, with when and how late.

Each situation is built from the example notebooks, graded with the real
command, and checked in grades.csv (and the gradebook where it matters).
"""

import csv
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import zipfile

import pytest
from click.testing import CliRunner

from autograder.cli.main import main
from conftest import ROOT, copy_course, set_assignment_table, solution_in_a_module

pytestmark = pytest.mark.usefixtures("one_sandbox_per_process")
SUBMISSIONS = ROOT / "examples" / "n-queens" / "submissions"
OTHER_ASSIGNMENT = ROOT / "examples" / "uninformed-search" / "submissions" / "alice.ipynb"
AUTOGRADER = [sys.executable, "-m", "autograder"]   # the grader of the interpreter running the tests
ALICE, BOB = SUBMISSIONS / "alice.ipynb", SUBMISSIONS / "bob.ipynb"      # 5 and 0 points (bob's get_n is off by one)


def run(out, *paths, extra=(), course=ROOT):
    return CliRunner().invoke(main, ["--course", str(course), "grade", "--assignment", "n-queens",
                                     "--out", str(out), *extra, *map(str, paths)])


def read_rows(out):
    with open(out / "grades.csv", newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def grade(out, *paths, extra=(), course=ROOT):
    result = run(out, *paths, extra=extra, course=course)
    assert result.exit_code == 0, result.output
    rows = read_rows(out)
    assert len({r["student"] for r in rows}) == len(rows)        # one row per student, always
    return {r["student"]: r for r in rows}, result.output


def add(bundle, source, name, when=(2026, 3, 1, 12, 0, 0)):
    info = zipfile.ZipInfo(name, date_time=when)
    bundle.writestr(info, source.read_bytes() if hasattr(source, "read_bytes") else source)


# --- same names, different students --------------------------------------------------------------


def test_canvas_students_with_the_same_name_keep_their_own_rows(tmp_path):
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "smithjohn_111_9001_n-queens.ipynb", (2026, 3, 1, 10, 0, 0))
        add(bundle, BOB, "smithjohn_222_9002_n-queens.ipynb", (2026, 3, 1, 11, 0, 0))
    rows, _ = grade(tmp_path / "out", archive)
    assert {k: (r["name"], r["score"]) for k, r in rows.items()} == {
        "canvas:111": ("smithjohn", "5"), "canvas:222": ("smithjohn", "0")}
    assert rows["canvas:111"]["handed_in_at"] == ""      # a zip entry's time is the download's, never a hand-in time


def test_moodle_participants_with_the_same_name_keep_their_own_rows(tmp_path):
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "Jane Doe_501_assignsubmission_file_/n-queens.ipynb")
        add(bundle, BOB, "Jane Doe_502_assignsubmission_file_/n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", archive)
    assert {k: (r["name"], r["score"]) for k, r in rows.items()} == {
        "moodle:501": ("Jane Doe", "5"), "moodle:502": ("Jane Doe", "0")}


def gradescope_export(folder, submitters):
    """submitters: {submission id: (notebook, [(name, sid, email)], created_at)}."""
    folder.mkdir(parents=True)
    lines = []
    for key, (notebook, people, created) in submitters.items():
        (folder / key).mkdir()
        shutil.copy(notebook, folder / key / "n-queens.ipynb")
        lines.append(f"{key}:\n  :submitters:")
        for name, sid, email in people:
            lines.append(f"  - :name: '{name}'\n    :sid: '{sid}'\n    :email: '{email}'")
        lines.append(f"  :created_at: {created}")
    (folder / "submission_metadata.yml").write_text("\n".join(lines) + "\n")
    return folder


@pytest.mark.slow
def test_gradescope_submitters_with_the_same_name_and_hostile_names(tmp_path):
    export = gradescope_export(tmp_path / "export", {
        "submission_1": (ALICE, [("Sam Lee", "1001", "sam.lee@example.edu")], "2026-03-01 10:00:00.0 -08:00"),
        "submission_2": (BOB, [("Sam Lee", "1002", "sam.lee2@example.edu")], "2026-03-01 11:00:00.0 -08:00"),
        "submission_3": (ALICE, [("Mallory [/]", "1003", "m@example.edu")], "2026-03-01 12:00:00.0 -08:00"),
        "submission_4": (BOB, [("=1+1", "1004", "f@example.edu")], "2026-03-01 12:30:00.0 -08:00"),
    })
    rows, output = grade(tmp_path / "out", export)
    assert {k: (r["name"], r["score"]) for k, r in rows.items()} == {
        "gradescope:1001": ("Sam Lee", "5"), "gradescope:1002": ("Sam Lee", "0"),
        "gradescope:1003": ("Mallory [/]", "5"), "gradescope:1004": ("'=1+1", "0")}   # not a formula
    assert rows["gradescope:1001"]["handed_in_at"] == "2026-03-01T18:00:00+00:00"
    assert "Mallory [/]" in output


# --- folders of files ----------------------------------------------------------------------------


@pytest.mark.slow
def test_one_folder_per_student_is_one_student_each(tmp_path):
    for student, notebook in (("alice", ALICE), ("bob", BOB)):
        (tmp_path / "in" / student).mkdir(parents=True)
        shutil.copy(notebook, tmp_path / "in" / student / "n-queens.ipynb")
    rows, output = grade(tmp_path / "out", tmp_path / "in")
    assert {k: r["score"] for k, r in rows.items()} == {"alice": "5", "bob": "0"}
    assert "note:" not in output


def test_duplicate_downloads_are_one_student_and_said(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    first = shutil.copy(BOB, folder / "carol.ipynb")
    second = shutil.copy(ALICE, folder / "carol (1).ipynb")
    os.utime(first, (1_700_000_000, 1_700_000_000))
    os.utime(second, (1_700_100_000, 1_700_100_000))
    rows, output = grade(tmp_path / "out", folder)
    assert list(rows) == ["carol"]
    assert (rows["carol"]["score"], rows["carol"]["handins"]) == ("5", "2")
    assert "taken as downloads of one hand-in by 'carol'" in output


@pytest.mark.slow
def test_an_unclear_layout_is_said_with_a_student_pattern_to_try(tmp_path):
    for student, notebook in (("s1", ALICE), ("s2", BOB)):
        (tmp_path / "in" / "section-2" / student).mkdir(parents=True)
        shutil.copy(notebook, tmp_path / "in" / "section-2" / student / "n-queens.ipynb")
    shutil.copy(ALICE, tmp_path / "in" / "n-queens.ipynb")
    result = run(tmp_path / "out", tmp_path / "in")
    assert result.exit_code == 0, result.output
    assert "section-2/ holds 2 notebooks in different folders" in result.output
    assert "--student-pattern" in result.output
    assert "n-queens.ipynb is named after the assignment, not a student" in result.output
    rows, _ = grade(tmp_path / "out2", tmp_path / "in" / "section-2",
                    extra=("--student-pattern", r"(?P<student>[^/]+)/[^/]+$"))
    assert {k: r["score"] for k, r in rows.items()} == {"s1": "5", "s2": "0"}


# --- GitHub Classroom clones with symbolic links ---------------------------------------------------


def git(repo, *args, date="2026-03-01T12:00:00+00:00"):
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "s", "GIT_AUTHOR_EMAIL": "s@example.edu",
                        "GIT_COMMITTER_NAME": "s", "GIT_COMMITTER_EMAIL": "s@example.edu",
                        "GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date})


def clone(classroom, user, notebook=None, link=None, date="2026-03-01T12:00:00+00:00"):
    repo = classroom / f"n-queens-{user}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "README.md").write_text("# my work\n")
    if notebook:
        shutil.copy(notebook, repo / "n-queens.ipynb")
    if link:
        os.symlink(link, repo / "n-queens.ipynb")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "hand in", date=date)
    return repo


def limited_to_6_gb():
    limit = 6 * 1024 ** 3
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


@pytest.mark.slow
def test_classroom_links_out_of_the_repository_are_never_followed(tmp_path):
    classroom = tmp_path / "classroom"
    clone(classroom, "alice", ALICE)
    clone(classroom, "copycat", link="../n-queens-alice/n-queens.ipynb")
    clone(classroom, "thief", link=str(ROOT / "solutions" / "n-queens" / "n-queens.ipynb"))
    clone(classroom, "zero", link="/dev/zero")
    inner = clone(classroom, "tidy", link="work/final.ipynb")
    (inner / "work").mkdir()
    shutil.copy(ALICE, inner / "work" / "final.ipynb")     # a link inside one's own repository is fine
    os.symlink("/", classroom / "n-queens-root")           # a linked folder is not walked
    out = tmp_path / "out"
    done = subprocess.run([*AUTOGRADER, "--course", str(ROOT), "grade", "--assignment", "n-queens",
                           "--out", str(out), str(classroom)], capture_output=True, text=True, timeout=300,
                          preexec_fn=limited_to_6_gb)
    assert done.returncode == 0, done.stderr
    rows = {r["student"]: r for r in read_rows(out)}
    assert rows["alice"]["score"] == "5" and rows["tidy"]["score"] == "5"
    for user in ("copycat", "thief", "zero"):
        assert (rows[user]["score"], rows[user]["status"]) == ("0", "unsafe-path"), user
    assert "outside the student's own folder" in rows["copycat"]["message"]
    assert "/dev/zero" in rows["zero"]["message"]
    assert rows["alice"]["handed_in_at"] == "2026-03-01T12:00:00+00:00"     # the commit, not the clone
    assert "n-queens-root (a link, not followed)" in done.stdout


# --- nothing dropped without a word ------------------------------------------------------------------


def test_a_zip_inside_a_folder_is_unpacked(tmp_path):
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    with zipfile.ZipFile(downloads / "submissions.zip", "w") as bundle:
        add(bundle, ALICE, "smithalice_1001_5001_n-queens.ipynb")
    (downloads / "notes.txt").write_text("to do")
    rows, output = grade(tmp_path / "out", downloads)
    assert rows["canvas:1001"]["score"] == "5"
    assert "graded 1 hand-in(s)" in output and "notes.txt" in output


def test_an_empty_folder_is_a_one_line_error(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / ".DS_Store").write_bytes(b"\0")
    result = run(tmp_path / "out", tmp_path / "empty")
    assert result.exit_code == 1
    assert result.output.count("\n") == 1 and "no hand-ins found in" in result.output


def test_macos_forks_and_dotfiles_are_ignored_but_their_students_get_rows(tmp_path):
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "Jane Doe_501_assignsubmission_file_/n-queens.ipynb")
        add(bundle, b"\0\5\26\7 resource fork", "__MACOSX/Jane Doe_501_assignsubmission_file_/._n-queens.ipynb")
        add(bundle, b"{}", "Ann Lee_503_assignsubmission_file_/.n-queens.ipynb")
        add(bundle, b"\0\5\26\7", "__MACOSX/Raj Patel_504_assignsubmission_file_/._n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", archive)
    assert rows["moodle:501"]["score"] == "5" and rows["moodle:501"]["handins"] == "1"
    assert (rows["moodle:503"]["name"], rows["moodle:503"]["status"]) == ("Ann Lee", "no-notebook")
    assert (rows["moodle:504"]["name"], rows["moodle:504"]["status"]) == ("Raj Patel", "no-notebook")
    assert "resource-fork" in rows["moodle:504"]["message"]


def test_a_notebook_of_another_assignment_is_said_to_be_one(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(OTHER_ASSIGNMENT, folder / "erin.ipynb")
    shutil.copy(ALICE, folder / "alice.ipynb")
    out = tmp_path / "out"
    rows, _ = grade(out, folder)
    assert (rows["erin"]["status"], rows["erin"]["score"]) == ("wrong-assignment", "0")
    assert "'uninformed-search' assignment" in rows["erin"]["message"]
    result = CliRunner().invoke(main, ["--course", str(ROOT), "feedback", "--out", str(out)])
    assert result.exit_code == 0, result.output
    page = next((out / "feedback").glob("erin*/feedback.html")).read_text()
    assert "uninformed-search" in page and "NameError" not in page


@pytest.mark.slow
def test_a_second_class_in_the_same_output_folder_is_refused(tmp_path):
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    second.mkdir()
    shutil.copy(ALICE, first / "alice.ipynb")
    shutil.copy(BOB, first / "bob.ipynb")
    shutil.copy(ALICE, second / "carol.ipynb")
    shutil.copy(BOB, second / "dave.ipynb")
    grade(tmp_path / "out", first)
    refused = run(tmp_path / "out", second)
    assert refused.exit_code == 1 and refused.output.count("\n") == 1
    assert "another class" in refused.output and "--merge" in refused.output
    rows, output = grade(tmp_path / "out", second, extra=("--merge",))
    assert sorted(rows) == ["alice", "bob", "carol", "dave"]
    assert "2 student(s) new to" in output
    shutil.copy(ALICE, tmp_path / "erin.ipynb")                 # one more hand-in is not another class
    rows, output = grade(tmp_path / "out", tmp_path / "erin.ipynb")
    assert len(rows) == 5 and "1 student(s) new to" in output


def test_an_old_gradebook_is_migrated_and_its_students_re_keyed(tmp_path):
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "smithjohn_111_9001_n-queens.ipynb")
    out = tmp_path / "out"
    grade(out, archive)
    with sqlite3.connect(out / "gradebook.db") as db:     # as the grader before LMS ids wrote it
        db.execute("UPDATE submissions SET student = 'smithjohn'")
        for column in ("name", "email", "late_mark", "time_source", "raw_score", "late", "late_seconds",
                       "penalty", "late_note", "key_version", "lms", "lms_id", "lms_prefix", "repository"):
            db.execute(f"ALTER TABLE submissions DROP COLUMN {column}")
        db.execute("PRAGMA user_version = 0")             # which recorded no schema version
    rows, output = grade(out, archive)
    assert list(rows) == ["canvas:111"] and rows["canvas:111"]["name"] == "smithjohn"
    assert "graded 0 hand-in(s)" in output


# --- when, and how late ----------------------------------------------------------------------------


def late_canvas_zip(path):
    with zipfile.ZipFile(path, "w") as bundle:
        add(bundle, ALICE, "smithalice_1001_5001_n-queens.ipynb", (2026, 3, 1, 12, 0, 0))
        add(bundle, ALICE, "kingcarol_LATE_1002_5002_n-queens.ipynb", (2026, 3, 3, 1, 0, 0))   # 25 h late
    return path


def test_late_hand_ins_without_a_deadline_keep_canvas_s_mark(tmp_path):
    rows, output = grade(tmp_path / "out", late_canvas_zip(tmp_path / "submissions.zip"))
    assert (rows["canvas:1001"]["late"], rows["canvas:1002"]["late"]) == ("no", "yes")
    assert rows["canvas:1002"]["score"] == "5"                  # recorded only: no policy
    assert "lateness: no deadline" in output and "kingcarol (canvas:1002): late" in output


@pytest.mark.slow
def test_late_hand_ins_with_a_deadline_and_a_per_day_penalty(tmp_path):
    # Canvas's zip says who was late (_LATE_) but not when anyone handed in: a times file says when.
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\ncanvas:1001,2026-03-01T12:00:00+00:00\n"
                     "canvas:1002,2026-03-03T01:00:00+00:00\n")
    out = tmp_path / "out"
    rows, output = grade(out, late_canvas_zip(tmp_path / "submissions.zip"),
                         extra=("--deadline", "2026-03-01T23:59:00+00:00", "--late-policy", "per-day",
                                "--late-penalty", "0.5", "--times", str(times)))
    assert (rows["canvas:1001"]["late"], rows["canvas:1001"]["score"]) == ("no", "5")
    late = rows["canvas:1002"]
    assert (late["late"], late["score"], late["penalty"]) == ("yes", "4", "1")   # 2 started days x 0.5
    assert "2 started day(s)" in late["late_note"] and "per-day" in output
    release = CliRunner().invoke(main, ["--course", str(ROOT), "release", "--out", str(out),
                                        "--to", str(tmp_path / "lms")])
    assert release.exit_code == 0, release.output
    lateness = (tmp_path / "lms" / "lateness.csv").read_text()
    assert "kingcarol,1002,2026-03-03T01:00:00+00:00,yes,1," in lateness
    assert ",4,5,graded,2026-03-03T01:00:00+00:00,yes" in (tmp_path / "lms" / "gradescope_grades.csv").read_text()
    feedback = CliRunner().invoke(main, ["--course", str(ROOT), "feedback", "--out", str(out)])
    assert feedback.exit_code == 0, feedback.output
    page = next((out / "feedback").glob("*canvas_1002*/feedback.md")).read_text()
    assert "**Late:** late by 25.0 h" in page and "1 point(s) off" in page
    report = CliRunner().invoke(main, ["--course", str(ROOT), "report", "--out", str(out)])
    assert report.exit_code == 0, report.output
    assert "2 started day(s)" in (out / "report.html").read_text()


def test_canvas_s_late_mark_without_a_time_costs_one_started_day_never_the_zip_s_time(tmp_path):
    """Canvas writes every zip entry with the download's time: lateness is never judged from it."""
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:      # downloaded 3.4 days after the deadline
        add(bundle, ALICE, "smithalice_1001_5001_n-queens.ipynb", (2026, 3, 5, 10, 0, 0))
        add(bundle, ALICE, "kingcarol_LATE_1002_5002_n-queens.ipynb", (2026, 3, 5, 10, 0, 0))
    rows, _ = grade(tmp_path / "out", archive, extra=("--deadline", "2026-03-01T23:59:00+00:00", "--late-policy",
                                                      "per-day", "--late-penalty", "0.5"))
    assert (rows["canvas:1001"]["late"], rows["canvas:1001"]["score"], rows["canvas:1001"]["handed_in_at"]) == \
        ("no", "5", "")
    assert "after the deadline" not in rows["canvas:1001"]["late_note"]
    late = rows["canvas:1002"]
    assert (late["late"], late["score"], late["penalty"]) == ("yes", "4.5", "0.5")
    assert "counted as 1 day" in late["late_note"]


@pytest.mark.slow
def test_a_moodle_worksheet_gives_the_times_and_the_zip_never_does(tmp_path):
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:      # every entry with the download's time
        add(bundle, ALICE, "Jane Doe_501_assignsubmission_file_/n-queens.ipynb", (2026, 3, 5, 10, 0, 0))
        add(bundle, ALICE, "Raj Patel_504_assignsubmission_file_/n-queens.ipynb", (2026, 3, 5, 10, 0, 0))
        add(bundle, ALICE, "Ann Lee_503_assignsubmission_file_/n-queens.ipynb", (2026, 3, 5, 10, 0, 0))
    worksheet = tmp_path / "worksheet.csv"
    worksheet.write_text(
        "Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
        "Last modified (submission),Last modified (grade),Feedback comments\n"
        "Participant 501,Jane Doe,jane@example.edu,Submitted for grading,,5.00,Yes,"
        "\"Sunday, 1 March 2026, 11:00 PM\",-,\n"
        "Participant 504,Raj Patel,raj@example.edu,Submitted for grading,,5.00,Yes,"
        "\"Monday, 2 March 2026, 9:30 AM\",-,\n", encoding="utf-8")
    rows, output = grade(tmp_path / "out", archive, extra=("--deadline", "2026-03-01T23:59:00+00:00",
                                                           "--times", str(worksheet)))
    assert (rows["moodle:501"]["late"], rows["moodle:501"]["handed_in_at"]) == ("no", "2026-03-01T23:00:00")
    assert rows["moodle:504"]["late"] == "yes" and "late by 9.5 h" in rows["moodle:504"]["late_note"]
    assert (rows["moodle:503"]["late"], rows["moodle:503"]["handed_in_at"]) == ("", "")   # no time: not judged
    assert "names no time for 1 hand-in(s)" in output and "unknown: Ann Lee" in output
    # What the times file leaves out is a warning, said even with --quiet (the trial: a note -q hid), naming
    # people as the roster or the LMS names them, not by the download's file keys.
    with open(worksheet, "a", encoding="utf-8") as handle:
        handle.write("Participant 509,Zed Nobody,zed@example.edu,Submitted for grading,,5.00,Yes,"
                     "\"Sunday, 1 March 2026, 10:00 PM\",-,\n")
    quiet = CliRunner().invoke(main, ["-q", "--course", str(ROOT), "grade", "--assignment", "n-queens", "--out",
                                      str(tmp_path / "quiet"), "--times", str(worksheet), str(archive)])
    assert quiet.exit_code == 0, quiet.output
    said = " ".join(quiet.output.split())
    assert "warning: the times file names no time for 1 hand-in(s)" in said and "Ann Lee (moodle:503)" in said
    assert "warning: 1 row(s) of the times file match no hand-in" in said and "Zed Nobody (moodle:509)" in said


@pytest.mark.slow
def test_a_course_toml_deadline_and_cap_apply_to_classroom_commit_times(course_copy, tmp_path):
    set_assignment_table(course_copy, 'deadline = "2026-03-01T23:59:00-05:00"\nlate_policy = "cap"\nlate_cap = 2.5\n')
    classroom = tmp_path / "classroom"
    clone(classroom, "early", ALICE, date="2026-03-01T23:00:00-05:00")
    clone(classroom, "late", ALICE, date="2026-03-02T06:00:00+01:00")        # 0:00 in New York: 1 min late
    rows, output = grade(tmp_path / "out", classroom, course=course_copy)
    assert (rows["early"]["late"], rows["early"]["score"]) == ("no", "5")
    assert (rows["late"]["late"], rows["late"]["score"], rows["late"]["penalty"]) == ("yes", "2.5", "2.5")
    assert "late by 1 min" in rows["late"]["late_note"] and "cap" in output


def test_a_deadline_flag_is_read_as_init_reads_it_and_a_bad_one_blames_the_flag(tmp_path):
    shutil.copy(ALICE, tmp_path / "alice.ipynb")
    result = run(tmp_path / "out", tmp_path / "alice.ipynb", extra=("--deadline", "Sept 20"))
    assert result.exit_code == 1 and result.output.count("\n") == 1
    assert "--deadline" in result.output and "course.toml" not in result.output
    rows, output = grade(tmp_path / "out2", tmp_path / "alice.ipynb", extra=("--deadline", "2027-09-20"))
    assert "deadline 2027-09-20T23:59:00" in output          # a date alone: 23:59 there, as `init` takes it


# --- Classroom release of a repository with no notebook ---------------------------------------------


def test_classroom_release_reaches_a_repository_with_no_notebook(tmp_path):
    classroom = tmp_path / "classroom"
    clone(classroom, "alice", ALICE)
    bob = clone(classroom, "bob")
    out = tmp_path / "out"
    rows, _ = grade(out, classroom)
    assert rows["bob"]["status"] == "no-notebook"
    result = CliRunner().invoke(main, ["--course", str(ROOT), "release", "--out", str(out), "--to", str(classroom),
                                       "--format", "classroom"])
    assert result.exit_code == 0, result.output
    shown = subprocess.run(["git", "-C", str(bob), "show", "feedback:feedback/feedback.md"],
                           capture_output=True, text=True, check=True).stdout
    assert "bob" in shown


@pytest.mark.parametrize("cell", ["=HYPERLINK(\"x\")", "+1", "-1", "@SUM(A1)", "\tx", "\rx"])
def test_csv_cells_never_become_formulas(cell):
    from autograder.core.csv_cells import csv_text
    assert csv_text(["a"], [[cell]]).splitlines()[1].lstrip('"').startswith("'")


def test_a_zip_in_a_student_s_folder_is_that_student_s(tmp_path):
    (tmp_path / "in" / "alice").mkdir(parents=True)
    (tmp_path / "in" / "bob").mkdir()
    with zipfile.ZipFile(tmp_path / "in" / "alice" / "work.zip", "w") as bundle:
        add(bundle, ALICE, "n-queens.ipynb")
    shutil.copy(BOB, tmp_path / "in" / "bob" / "n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", tmp_path / "in")
    assert {k: r["score"] for k, r in rows.items()} == {"alice": "5", "bob": "0"}


@pytest.mark.slow
def test_the_live_progress_names_what_runs_and_survives_markup_in_names(tmp_path, monkeypatch):
    import io
    from types import SimpleNamespace

    from rich.console import Console

    from autograder.cli import grade as cli

    export = gradescope_export(tmp_path / "export", {
        "submission_1": (ALICE, [("Mallory [/]", "1003", "m@example.edu")], "2026-03-01 12:00:00.0 -08:00"),
        "submission_2": (BOB, [("[bold red]Eve", "1004", "e@example.edu")], "2026-03-01 12:00:00.0 -08:00")})
    rows, _ = grade(tmp_path / "out", export)
    assert rows["gradescope:1003"]["name"] == "Mallory [/]" and rows["gradescope:1004"]["name"] == "[bold red]Eve"
    # The bar itself, drawn while a hand-in runs (a real run may end before its first refresh).
    screen = io.StringIO()
    monkeypatch.setattr(cli, "console", Console(file=screen, force_terminal=True, width=120))
    events = cli._ConsoleEvents("n-queens")
    with events.grading(2):
        events.started(SimpleNamespace(name="Mallory [/]", source="submission_1"))
        events.bar.refresh()
    assert "running: Mallory [/]" in screen.getvalue()


def test_a_refused_zip_entry_keeps_its_moodle_student(tmp_path):
    archive = tmp_path / "moodle.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "Jane Doe_501_assignsubmission_file_/n-queens.ipynb")
        add(bundle, b"{}", "Raj Patel_504_assignsubmission_file_/../../n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", archive)
    assert (rows["moodle:504"]["name"], rows["moodle:504"]["status"]) == ("Raj Patel", "unsafe-path")


# --- real LMS downloads, as each vendor writes them (the fidelity issue) ------------------------------------


@pytest.mark.slow
def test_canvas_names_keep_underscores_anonymous_ids_and_text_or_url_entries(tmp_path):
    """content_zipper.rb: <name>[_LATE]_<user id>_<attachment id>_<file>, [LATE_]anon_<id>_... under anonymous
    grading, and <name>_<user id>_text.html / _link.html for text-entry and URL submissions."""
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "team_a_1007_50007_n-queens.ipynb")
        add(bundle, ALICE, "anon_xk2Pq_50008_n-queens.ipynb")
        add(bundle, ALICE, "LATE_anon_b7Rt9_50009_n-queens.ipynb")
        add(bundle, b"<p>my answer</p>", "smithbob_1009_text.html")
        add(bundle, b"<a href='x'>x</a>", "jonescat_LATE_1010_link.html")
    rows, _ = grade(tmp_path / "out", archive)
    assert (rows["canvas:1007"]["name"], rows["canvas:1007"]["score"]) == ("team_a", "5")
    assert (rows["canvas:anon_xk2Pq"]["late"], rows["canvas:anon_b7Rt9"]["late"]) == ("no", "yes")
    assert rows["canvas:anon_b7Rt9"]["score"] == "5"
    for key, kind in (("canvas:1009", "only online text"), ("canvas:1010", "only a website URL")):
        assert rows[key]["status"] == "no-notebook" and kind in rows[key]["message"]
    assert rows["canvas:1010"]["late"] == "yes"


def test_a_helper_file_beside_the_notebook_is_its_companion_not_the_hand_in(tmp_path):
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "itoben_701_7001_n-queens.ipynb")
        add(bundle, b"def helper():\n    return 1\n", "itoben_701_7001_utils.py")
    moodle = tmp_path / "moodle.zip"
    with zipfile.ZipFile(moodle, "w") as bundle:
        add(bundle, ALICE, "Jane Doe_501_assignsubmission_file_/n-queens.ipynb")
        add(bundle, b"x = 1\n", "Jane Doe_501_assignsubmission_file_/scratch.py")
    rows, output = grade(tmp_path / "out", archive, moodle)
    assert (rows["canvas:701"]["score"], rows["canvas:701"]["handins"]) == ("5", "1")
    assert rows["canvas:701"]["source"].endswith("n-queens.ipynb")
    assert (rows["moodle:501"]["score"], rows["moodle:501"]["handins"]) == ("5", "1")
    assert "graded 2 hand-in(s)" in output and "utils" not in output.split("Grades")[0]
    from autograder.intake import IntakeOptions, collect
    intake = collect([archive], tmp_path / "unpacked", IntakeOptions("n-queens", "n-queens.ipynb"))
    (handin,) = intake.handins
    assert [name for name, _ in handin.companions] == ["utils.py"]     # Canvas's prefix taken off


@pytest.mark.slow
def test_a_helper_module_handed_in_beside_the_notebook_is_beside_it_when_it_runs(tmp_path):
    # Canvas names every file of one hand-in <name>_<user id>_<submission id>_<original name>; Moodle puts
    # them in one <name>_<id>_assignsubmission_file_ folder; a Classroom clone holds them in its repository.
    notebook, module = solution_in_a_module("queens_helpers")
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, notebook, "itoben_701_7001_n-queens.ipynb")
        add(bundle, module, "itoben_701_7001_queens_helpers.py")
    moodle = tmp_path / "moodle.zip"
    with zipfile.ZipFile(moodle, "w") as bundle:
        add(bundle, notebook, "Jane Doe_501_assignsubmission_file_/n-queens.ipynb")
        add(bundle, module, "Jane Doe_501_assignsubmission_file_/queens_helpers.py")
    alone = tmp_path / "alone"
    alone.mkdir()
    (alone / "ann.ipynb").write_bytes(notebook)           # the same notebook without its module
    rows, _ = grade(tmp_path / "out", archive, moodle, alone / "ann.ipynb")
    assert (rows["canvas:701"]["score"], rows["canvas:701"]["handins"]) == ("5", "1")
    assert (rows["moodle:501"]["score"], rows["moodle:501"]["handins"]) == ("5", "1")
    assert rows["ann"]["score"] == "0"                    # so the module, and only it, made the difference


@pytest.mark.slow
def test_a_databricks_source_file_is_split_at_its_command_lines(tmp_path):
    cells = [c for c in json.loads(ALICE.read_text())["cells"] if c["cell_type"] == "code"]
    chunks = ["# Databricks notebook source"]
    chunks.append("# MAGIC %md\n# MAGIC # The n-queens puzzle")
    chunks += ["".join(c["source"]) for c in cells]
    chunks.append("# MAGIC %sh\n# MAGIC ls /dbfs")
    (tmp_path / "dana.py").write_text("\n\n# COMMAND ----------\n\n".join(chunks) + "\n")
    rows, _ = grade(tmp_path / "out", tmp_path / "dana.py")
    assert (rows["dana"]["score"], rows["dana"]["status"]) == ("5", "graded")


def test_a_notebook_for_another_language_says_so(tmp_path):
    notebook = json.loads(ALICE.read_text())
    notebook["metadata"] = {"kernelspec": {"display_name": "R", "language": "R", "name": "ir"},
                            "language_info": {"name": "R"}}
    (tmp_path / "rita.ipynb").write_text(json.dumps(notebook))
    rows, _ = grade(tmp_path / "out", tmp_path / "rita.ipynb")
    assert (rows["rita"]["status"], rows["rita"]["score"]) == ("wrong-language", "0")
    assert "for R" in rows["rita"]["message"]


@pytest.mark.slow
def test_the_folder_where_gh_classroom_clone_ran_and_a_slug_unlike_the_assignment(tmp_path):
    """`gh classroom clone student-repos` writes <slug>-submissions/<slug>-<user>/."""
    where = tmp_path / "course-work"
    submissions = where / "n-queens-submissions"
    clone(submissions, "alice", ALICE)
    clone(submissions, "bob", BOB)
    puzzle = where / "n-queens-puzzle-submissions"
    repo = puzzle / "n-queens-puzzle-dave"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    shutil.copy(ALICE, repo / "n-queens.ipynb")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "hand in")
    rows, output = grade(tmp_path / "out", where)
    assert {k: r["score"] for k, r in rows.items()} == {"alice": "5", "bob": "0", "dave": "5"}
    assert "n-queens-puzzle-<user>" in output


def test_one_zip_per_student_is_keyed_by_the_zip_s_own_name(tmp_path):
    folder = tmp_path / "zips"
    folder.mkdir()
    for student, notebook in (("alice", ALICE), ("bob", BOB)):
        with zipfile.ZipFile(folder / f"{student}.zip", "w") as bundle:     # as otter's grader.export() makes
            add(bundle, notebook, "n-queens.ipynb")
            add(bundle, b"", ".OTTER_LOG")
    rows, _ = grade(tmp_path / "out", folder)
    assert {k: r["score"] for k, r in rows.items()} == {"alice": "5", "bob": "0"}


def test_an_output_folder_inside_the_graded_folder_is_never_read(tmp_path):
    folder = tmp_path / "class"
    folder.mkdir()
    shutil.copy(ALICE, folder / "alice.ipynb")
    shutil.copy(BOB, folder / "bob.ipynb")
    grade(folder / "grades", folder)
    rows, output = grade(folder / "grades", folder)       # again: grades/ now holds a gradebook and handins/
    assert sorted(rows) == ["alice", "bob"]
    assert {r["handins"] for r in rows.values()} == {"1"}
    assert "is the output folder" in " ".join(output.split())     # (rich wraps it where the path's length puts it)


def test_the_wrong_assignment_for_the_whole_class_is_said_once_with_the_right_id(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    for student in ("erin", "fay"):
        shutil.copy(OTHER_ASSIGNMENT, folder / f"{student}.ipynb")
    rows, output = grade(tmp_path / "out", folder)
    assert {r["status"] for r in rows.values()} == {"wrong-assignment"}
    assert "did you mean --assignment uninformed-search?" in output


@pytest.mark.slow
def test_notes_for_two_downloads_given_by_name_and_a_lone_assignment_named_file(tmp_path):
    shutil.copy(BOB, tmp_path / "carol.ipynb")
    shutil.copy(ALICE, tmp_path / "carol (1).ipynb")
    os.utime(tmp_path / "carol.ipynb", (1_700_000_000, 1_700_000_000))
    os.utime(tmp_path / "carol (1).ipynb", (1_700_100_000, 1_700_100_000))
    rows, output = grade(tmp_path / "out", tmp_path / "carol.ipynb", tmp_path / "carol (1).ipynb")
    assert (rows["carol"]["score"], rows["carol"]["handins"]) == ("5", "2")
    assert "taken as downloads of one hand-in by 'carol'" in output
    shutil.copy(ALICE, tmp_path / "n-queens.ipynb")
    _, output = grade(tmp_path / "out2", tmp_path / "n-queens.ipynb")
    assert "n-queens.ipynb is named after the assignment, not a student" in output


def test_a_mistyped_path_leaves_no_output_folder_behind(tmp_path):
    result = run(tmp_path / "out", tmp_path / "no-such-folder")
    assert result.exit_code == 1 and "no such file or folder" in result.output
    assert not (tmp_path / "out").exists()


@pytest.mark.slow
def test_moodle_as_it_writes_today_folders_without_a_trailing_underscore_online_text_and_blind_marking(tmp_path):
    """downloader.php: <Full Name>_<participant>_assignsubmission_<plugin>/ (folders on, the default);
    online text as onlinetext.html; "Participant" under blind marking; a folder with no notebook is a row."""
    archive = tmp_path / "CS101-N-Queens-42.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "Jane Doe_1234567_assignsubmission_file/n-queens.ipynb")
        add(bundle, b"x = 1\n", "Jane Doe_1234567_assignsubmission_file/src/util.py")
        add(bundle, b"<p>hi</p>", "Jane Doe_1234567_assignsubmission_onlinetext/onlinetext.html")
        add(bundle, b"<p>I could not do it</p>", "Raj Patel_1234568_assignsubmission_onlinetext/onlinetext.html")
        add(bundle, b"%PDF-1.4", "Ann Lee_1234569_assignsubmission_file/report.pdf")
        add(bundle, ALICE, "Participant_1234570_assignsubmission_file/n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", archive)
    assert (rows["moodle:1234567"]["score"], rows["moodle:1234567"]["handins"]) == ("5", "1")
    assert rows["moodle:1234570"]["score"] == "5"
    assert rows["moodle:1234568"]["status"] == "no-notebook" and "online text" in rows["moodle:1234568"]["message"]
    assert rows["moodle:1234569"]["status"] == "wrong-file-type" and "report.pdf" in rows["moodle:1234569"]["message"]


def test_helper_modules_reach_the_worker_within_their_cap(tmp_path):
    from autograder.intake.collect import MAX_COMPANION_BYTES, MAX_COMPANIONS, Handin
    helpers = []
    for number in range(MAX_COMPANIONS + 5):
        path = tmp_path / f"helper{number}.py"
        path.write_bytes(b"#" * (MAX_COMPANION_BYTES // 8))
        helpers.append((path.name, path))
    handin = Handin("ann", "ann.ipynb", ALICE, None, companions=tuple(helpers))
    files = handin.companion_files()
    assert 0 < len(files) <= MAX_COMPANIONS and sum(map(len, files.values())) <= MAX_COMPANION_BYTES
    assert list(files) == [name for name, _ in helpers[:len(files)]]      # the first ones, in order


@pytest.mark.slow
def test_two_downloads_without_hand_in_times_are_ordered_by_the_lms_never_by_their_score(tmp_path):
    # The trial: alice 5/5 in one download, 0 in a later one, no hand-in times: the better score won silently.
    # Canvas numbers every upload, a later one higher (the attachment id of `<name>_<user>_<attachment>_...`).
    first, later = tmp_path / "submissions.zip", tmp_path / "submissions (1).zip"
    with zipfile.ZipFile(first, "w") as bundle:
        add(bundle, ALICE, "smithalice_1001_9001_n-queens.ipynb")
    with zipfile.ZipFile(later, "w") as bundle:
        add(bundle, BOB, "smithalice_1001_9002_n-queens.ipynb")
    for order in ((first, later), (later, first)):
        out = tmp_path / f"out-{order[0].stem}"
        rows, _ = grade(out, *order)
        alice = rows["canvas:1001"]
        assert (alice["score"], alice["handins"]) == ("0", "2")
        assert "the later upload counts, by the LMS's order of uploads" in alice["message"]


def test_two_downloads_nothing_orders_count_as_given_and_say_the_order_is_unknown(tmp_path):
    # Nothing tells which came last (no time, no LMS order, the same file times): the download given to `grade`
    # later counts, whatever its score, and the row and a warning say so.
    first, later = tmp_path / "one", tmp_path / "two"
    for folder, notebook in ((first, ALICE), (later, BOB)):
        folder.mkdir()
        shutil.copy(notebook, folder / "alice.ipynb")
        os.utime(folder / "alice.ipynb", (1772366400, 1772366400))     # the same file time: it tells nothing
    for order, score in (((first, later), "0"), ((later, first), "5")):
        out = tmp_path / f"out-{order[0].name}"
        rows, output = grade(out, *order)
        (alice,) = rows.values()
        assert (alice["score"], alice["handins"]) == (score, "2")
        assert alice["message"].startswith("order unknown") and "never the better one" in alice["message"]
        assert "warning: 1 student(s) with hand-ins from several downloads" in output


@pytest.mark.parametrize("flat", [False, True])
def test_a_hand_in_with_no_notebook_says_the_same_in_moodle_s_two_layouts(tmp_path, flat):
    # The trial: online text alone was `no-notebook` with folders but `wrong-file-type` without; a PDF the reverse.
    # Either layout now says what was handed in, with the same status (intake/assemble.py, nothing_to_grade).
    sep = "_" if flat else "/"
    archive = tmp_path / "CS101-N-Queens-42.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, f"Jane Doe_1234567_assignsubmission_file{sep}n-queens.ipynb")
        add(bundle, b"<p>I could not do it</p>", f"Raj Patel_1234568_assignsubmission_onlinetext{sep}onlinetext.html")
        add(bundle, b"%PDF-1.4", f"Ann Lee_1234569_assignsubmission_file{sep}report.pdf")
    course = copy_course(tmp_path / "course")
    (course / "course.toml").write_text((course / "course.toml").read_text().replace('lms = "other"', 'lms = "moodle"'))
    rows, _ = grade(tmp_path / "out", archive, course=course)
    raj, ann = rows["moodle:1234568"], rows["moodle:1234569"]
    assert (raj["status"], raj["score"]) == ("no-notebook", "0") and "only online text" in raj["message"]
    assert (ann["status"], ann["score"]) == ("wrong-file-type", "0") and "only report.pdf" in ann["message"]
    assert rows["moodle:1234567"]["score"] == "5" and len(rows) == 3
    # The 0 reaches the LMS saying why, not as if nothing had been handed in.
    released = CliRunner().invoke(main, ["--course", str(course), "release", "--assignment", "n-queens", "--out",
                                         str(tmp_path / "out"), "--to", str(tmp_path / "release")])
    assert released.exit_code == 0, released.output
    assert "0 points, as what they handed in holds no notebook" in released.output
    with open(tmp_path / "release" / "moodle_grades.csv", newline="", encoding="utf-8-sig") as handle:
        sheet = {row["Full name"]: row for row in csv.DictReader(handle)}
    assert sheet["Raj Patel"]["Grade"] == "0" and "no-notebook: no notebook was handed in, only online text" \
        in sheet["Raj Patel"]["Feedback comments"]
    assert "wrong-file-type: no notebook was handed in, only report.pdf" in sheet["Ann Lee"]["Feedback comments"]


@pytest.mark.parametrize("where", ["grades", "grades/", "."])
def test_out_at_the_course_s_grades_folder_is_refused_with_the_assignment_s_folder(tmp_path, where, monkeypatch):
    # The trial: README's `grade --out grades/` put a gradebook beside course.db, a trial run nobody meant;
    # `gradebook` then said "0 of 4 assignment(s) graded".  Refused, naming the folder the course reads.
    course = copy_course(tmp_path / "course")
    monkeypatch.chdir(course)
    result = run(where, ALICE, course=course)
    assert result.exit_code != 0 and "give --out grades/n-queens" in " ".join(result.output.split())
    assert not (course / "grades" / "gradebook.db").exists() and not (course / "gradebook.db").exists()
    rows, _ = grade(tmp_path / "elsewhere", ALICE, course=course)      # a trial run outside the course still works
    assert rows["alice"]["score"] == "5"


def test_a_sandbox_folder_a_killed_run_left_is_swept_and_a_live_one_kept(tmp_path):
    # The trial: kill -9 left an autograder-sandbox-* folder in --out for good.  The next `grade` removes one
    # that no live process works in (pid gone), and never one a running grader still uses.
    out = tmp_path / "out"
    dead, live = out / "autograder-sandbox-dead1", out / "autograder-sandbox-live1"
    for folder in (dead, live):
        (folder / "work").mkdir(parents=True)
        (folder / "work" / "x.py").write_text("x = 1\n")
        os.chmod(folder / "work", 0o500)           # a hand-in may leave a folder without write permission
        os.utime(folder, (1_700_000_000, 1_700_000_000))
    worker = subprocess.Popen(["sleep", "60"], cwd=live)
    try:
        rows, output = grade(out, ALICE)
    finally:
        worker.kill()
        worker.wait()
    assert not dead.exists() and live.exists() and rows["alice"]["score"] == "5"
    assert "autograder-sandbox-dead1" in output and "autograder-sandbox-live1" not in output
    os.chmod(live / "work", 0o700)


@pytest.mark.slow
def test_canvas_names_by_content_zipper_s_grammar_late_in_a_name_and_digits_only_names(tmp_path):
    # The trial (finding 11): Canvas writes its mark as `LATE`; a lower-case `late` is the name's (user "Jo_Late",
    # a student named Late), and a name of digits only (`2024`) is a name, not the user id.
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, ALICE, "jo_late_1014_9014_n-queens.ipynb")
        add(bundle, ALICE, "late_1013_9013_n-queens.ipynb")
        add(bundle, ALICE, "2024_1009_9009_n-queens.ipynb")
        add(bundle, ALICE, "kingcarol_LATE_1003_9003_n-queens.ipynb")
    rows, _ = grade(tmp_path / "out", archive, extra=("--late-policy", "per-day", "--late-penalty", "0.5"))
    assert set(rows) == {"canvas:1014", "canvas:1013", "canvas:1009", "canvas:1003"}
    assert [rows[k]["late"] for k in ("canvas:1014", "canvas:1013", "canvas:1009")] == ["no", "no", "no"]
    assert (rows["canvas:1003"]["late"], rows["canvas:1003"]["score"]) == ("yes", "4.5")


@pytest.mark.slow
def test_a_second_canvas_upload_of_the_same_name_is_named_like_the_assignment(tmp_path):
    # The trial (finding 6): one submission of n-queens.ipynb (bob's, 0) and n-queens-1.ipynb (Canvas's name for
    # a file uploaded again under that name, 5/5) scored 0: the -1 file was not "named like the assignment".
    archive = tmp_path / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as bundle:
        add(bundle, BOB, "smithalice_1001_9001_n-queens.ipynb")
        add(bundle, ALICE, "smithalice_1001_9002_n-queens-1.ipynb")
        add(bundle, BOB, "jonesbob_1002_9003_n-queens.ipynb")
        add(bundle, ALICE, "jonesbob_1002_9004_n-queens (1).ipynb")
    rows, _ = grade(tmp_path / "out", archive)
    assert (rows["canvas:1001"]["score"], rows["canvas:1002"]["score"]) == ("5", "5")


@pytest.mark.slow
def test_a_time_an_earlier_run_gave_does_not_outrank_a_later_upload_graded_without_one(tmp_path):
    """The trial: bob's first upload (wrong) was graded with --times, his re-upload (right, a higher Canvas
    attachment id) in a later download without; the first counted, as 0, because a known time ranked above
    none, and the row said nothing.  Only what both hand-ins have orders them: here Canvas's upload order."""
    first, later = tmp_path / "submissions.zip", tmp_path / "submissions (1).zip"
    with zipfile.ZipFile(first, "w") as bundle:
        add(bundle, BOB, "smithalice_1001_9001_n-queens.ipynb")
    with zipfile.ZipFile(later, "w") as bundle:
        add(bundle, ALICE, "smithalice_1001_9002_n-queens.ipynb")
    times = tmp_path / "times.csv"
    times.write_text("student,submitted_at\ncanvas:1001,2026-11-01T20:00:00-05:00\n")
    out = tmp_path / "out"
    grade(out, first, extra=("--times", str(times)))
    rows, _ = grade(out, later)
    alice = rows["canvas:1001"]
    assert (alice["score"], alice["handins"]) == ("5", "2")
    assert "the later upload counts, by the LMS's order of uploads" in alice["message"]
