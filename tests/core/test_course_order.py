"""Assignments in course order everywhere: by deadline, then by their order in course.toml.

Alphabetical order read the semester backwards (bitwise-queens before n-queens): the semester report
flagged a student whose score went up as "a drop", and missed one who fell.  Here one student improves
and one falls, in course order, and the report flags exactly the one who fell.
"""

import csv
import io
from pathlib import Path

import openpyxl
from click.testing import CliRunner

from autograder.cli.main import main
from autograder.core.course import load_course
from autograder.publish.course.report import why_to_look
from autograder.gradebook import Gradebook
from autograder.publish.course.book import read_course_book
from autograder.grade.handin import SubmissionResult
from autograder.intake.collect import Handin
from autograder.publish.course.write import write_course_gradebook
from autograder.publish.students import student_readme
from autograder.roster.lms_files import read_roster
from autograder.roster.store import CourseRecords
from conftest import ROOT

COURSE_ORDER = ["n-queens", "uninformed-search", "bitwise-queens", "no-three-in-line"]


def set_deadlines(root, deadlines):
    text = (root / "course.toml").read_text()
    for assignment, deadline in deadlines.items():
        text = text.replace(f'[assignment.{assignment}]\n# deadline = "2026-12-01T23:59:00-05:00"\n',
                            f'[assignment.{assignment}]\ndeadline = "{deadline}"\n')
    (root / "course.toml").write_text(text)


def test_the_shipped_course_is_in_teaching_order_and_so_is_every_generated_file():
    course = load_course(ROOT)
    assert course.assignment_ids() == COURSE_ORDER
    assert openpyxl.load_workbook(ROOT / "public_rubric.xlsx", read_only=True).sheetnames == COURSE_ORDER
    readme = student_readme(course)
    assert sorted(COURSE_ORDER, key=readme.index) == COURSE_ORDER


def test_deadlines_come_first_then_course_toml_order(course_copy):
    set_deadlines(course_copy, {"no-three-in-line": "2026-09-01T23:59:00-04:00",
                                "bitwise-queens": "2026-10-01T23:59:00+02:00",
                                "n-queens": "2026-10-01T23:59:00-04:00"})     # bitwise's is 6 h earlier
    assert load_course(course_copy).assignment_ids() == ["no-three-in-line", "bitwise-queens", "n-queens",
                                                         "uninformed-search"]
    # An assignment course.toml does not list comes after those it does.
    extra = course_copy / "autograder" / "assignments" / "aaa-warmup"
    extra.mkdir()
    (extra / "cases.toml").write_text("")
    assert load_course(course_copy).assignment_ids()[-1] == "aaa-warmup"


def test_init_asks_in_course_order(course_copy):
    done = CliRunner().invoke(main, ["--course", str(course_copy), "init", "--yes", "--no-build", "--repository",
                                     "https://github.com/prof/queens"])
    assert done.exit_code == 0, done.output
    listed = [line.split(":")[0].strip() for line in done.output.splitlines() if line.startswith("  ")]
    assert listed == COURSE_ORDER


def record(gradebook, assignment, student, name, score):
    handin = Handin(student, f"{student}.ipynb", None, None, sha256=f"{student}-{assignment}", name=name)
    result = SubmissionResult(student, assignment, handin.source, score, 5.0, "graded")
    gradebook.record(gradebook.start_run(assignment, "test", 1, "namespaces"), handin, result, "key")


def test_the_semester_report_flags_the_student_who_fell_not_the_one_who_rose(course_copy, tmp_path):
    set_deadlines(course_copy, {"n-queens": "2026-09-20T23:59:00-04:00",
                                "bitwise-queens": "2026-10-18T23:59:00-04:00"})
    course = load_course(course_copy)
    roster = tmp_path / "export.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n"
                      "\"Rose, Ann\",1,,rises,A\n\"Fall, Bo\",2,,falls,A\n")
    with CourseRecords.of(course) as records:
        records.import_roster(read_roster(roster), roster.name)
    scores = {"n-queens": {"canvas:1": 3, "canvas:2": 4.3}, "bitwise-queens": {"canvas:1": 5, "canvas:2": 2}}
    for assignment, by_student in scores.items():
        folder = course.grades_dir(assignment)
        folder.mkdir(parents=True)
        gradebook = Gradebook(folder / "gradebook.db")
        for student, score in by_student.items():
            record(gradebook, assignment, student, f"Student who {student}", score)
        gradebook.close()
    with CourseRecords.of(course) as records:
        book = read_course_book(course, records)
    assert [a.id for a in book.graded()] == ["n-queens", "bitwise-queens"]
    flagged = {row.student.key: why_to_look(book, row) for row in book.rows}
    assert flagged["canvas:1"] == []
    assert flagged["canvas:2"] == ["a drop of 46 points in 100 from n-queens to bitwise-queens"]
    done = write_course_gradebook(course, tmp_path / "book")
    report = (tmp_path / "book" / "semester_report.html").read_text()
    assert "a drop of 46 points" in report and report.count("a drop of") == 1
    header = next(csv.reader(io.StringIO((tmp_path / "book" / "course_grades.csv").read_text())))
    # Those with a deadline first, by deadline; then the others in course.toml's order.
    assert [h for h in header if h in COURSE_ORDER] == ["n-queens", "bitwise-queens", "uninformed-search",
                                                        "no-three-in-line"]
    assert done.book.rows


def test_lists_and_lookups_speak_names(course_copy, tmp_path):
    roster = tmp_path / "export.csv"
    roster.write_text("Student,ID,SIS User ID,SIS Login ID,Section\n\"Núñez, Erin\",2003,S2003,enunez,A\n"
                      "\"Nunes, Erik\",2004,S2004,enunes,A\n")
    runner = CliRunner()
    assert runner.invoke(main, ["--course", str(course_copy), "roster", "import", str(roster)]).exit_code == 0
    with CourseRecords.of(load_course(course_copy)) as records:
        assert records.find("Erin Nunez").key == "canvas:2003"          # accents and case aside
        assert records.find("  erin   NÚÑEZ ").key == "canvas:2003"
        try:
            records.find("Erin Nunnez")
        except Exception as error:      # noqa: BLE001 - the message is what is tested
            assert "did you mean Erin Núñez (canvas:2003)" in str(error)
        else:
            raise AssertionError("a misspelt name was matched")
    set_deadlines(course_copy, {"n-queens": "2026-09-20T23:59:00-04:00"})
    granted = runner.invoke(main, ["--course", str(course_copy), "extend", "--assignment", "n-queens", "--student",
                                   "erin nunez", "--until", "2026-09-25"])
    assert granted.exit_code == 0, granted.output
    listed = runner.invoke(main, ["--course", str(course_copy), "extend", "--list"]).output
    assert "Erin Núñez (canvas:2003)" in listed
    # A date alone is 23:59 in the course deadline's zone, not this machine's nor UTC.
    assert "until 2026-09-25T23:59:00-04:00" in listed
    accommodated = runner.invoke(main, ["--course", str(course_copy), "accommodate", "--group", "extra", "--extra-days",
                                        "1", "--student", "Erik Nunes", "--reason", "a private letter"])
    assert accommodated.exit_code == 0, accommodated.output
    assert "Erik Nunes (canvas:2004)" in runner.invoke(main, ["--course", str(course_copy), "accommodate",
                                                               "--list"]).output
    assert Path(course_copy / "grades" / "course.db").is_file()


def test_the_grade_table_keeps_every_key_whole_at_80_columns(monkeypatch, capsys):
    from autograder.cli.grade import _print_table
    from autograder.gradebook.store import GradeRow
    monkeypatch.setenv("COLUMNS", "80")
    rows = [GradeRow(f"canvas:{2000 + n}", "n-queens", 4.3, 5.0, "graded",
                     "1 notebook cell(s) raised an error or were stopped", "Erin Núñez-Castellanos de la Vega",
                     None, None, None, None, None, "x.ipynb", 1, None) for n in range(3)]
    _print_table(rows)
    shown = capsys.readouterr().out
    assert all(f"canvas:{2000 + n}" in shown for n in range(3)), shown
    assert max(len(line) for line in shown.splitlines()) <= 80
