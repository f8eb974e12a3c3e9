"""Moodle right in both download layouts, and the Test Student in no file.

Moodle's two "Download all submissions" layouts (folders, and flat files when "download submissions in
folders" is off) each give feedback files that Moodle's bulk feedback upload pairs with the participant
(mod/assign/feedback/file/importziplib.php, is_valid_filename_for_import, replayed here), and `release`
writes Moodle's grading worksheet (mod/assign/feedback/offline/importgradeslib.php: Identifier
"Participant <id>", Grade, Last modified (grade)) and no Canvas file.  Importing the grading worksheet
after the participants list keeps the ID numbers moodle_import.csv maps by.

Canvas's Test Student is in no file `release` or `gradebook` writes, and both list the same students; a
Moodle student who is called "Test Student" is a student like any other.
"""

import csv
import io
import json
import zipfile

import pytest

from semesters import CANVAS_ROSTER, EXAMPLES, MOODLE_ROSTER, WHO, canvas_zip, cli, configure, moodle_zip

pytestmark = pytest.mark.slow

MOODLE_ROSTER_WITH_TEST = MOODLE_ROSTER + "Test,Student,test.student@uni.example,S1007\n"


def table(path):
    return list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"), newline="")))


def participant(student, assignment):
    return 4700 + WHO[student][1] % 100 + (100 if assignment == "bitwise-queens" else 0)


def flat_moodle_zip(path, assignment, students, extra=()):
    """Moodle's download with "download submissions in folders" off: `Full Name_<id>_assignsubmission_file_<file>`."""
    with zipfile.ZipFile(path, "w") as archive:
        for student in students:
            last, first = WHO[student][0].split(", ")
            archive.write(EXAMPLES / assignment / "submissions" / f"{student}.ipynb",
                          f"{first} {last}_{participant(student, assignment)}_assignsubmission_file_{assignment}.ipynb")
        for name, source, number in extra:
            archive.write(EXAMPLES / assignment / "submissions" / f"{source}.ipynb",
                          f"{name}_{number}_assignsubmission_file_{assignment}.ipynb")
    return path


def worksheet(assignment, students, extra=()):
    rows = [(f"Participant {participant(s, assignment)}", f"{WHO[s][0].split(', ')[1]} {WHO[s][0].split(', ')[0]}",
             f"{WHO[s][0].split(', ')[1].lower()}@uni.example") for s in students] + list(extra)
    return ("Identifier,Full name,Email address,Status,Grade,Maximum Grade,Grade can be changed,"
            "Last modified (submission),Last modified (grade),Feedback comments\n"
            + "".join(f"{i},{n},{e},Submitted for grading,,5.00,Yes,\"Sunday, 1 November 2026, 9:00 AM\",-,\n"
                      for i, n, e in rows))


def moodle_pairs(feedback_zip):
    """{participant id: file name} as Moodle's feedback-zip import reads each entry (is_valid_filename_for_import):
    every path part split on `_` into at most five pieces, the second one the participant id when numeric."""
    paired = {}
    with zipfile.ZipFile(feedback_zip) as archive:
        for entry in archive.namelist():
            parts = entry.split("/")
            while parts:
                info = parts.pop(0).split("_", 4)
                if len(info) < 4 or not info[1].isdigit():
                    continue
                assert (info[2], info[3]) == ("assignsubmission", "file"), entry
                paired[int(info[1])] = "/".join([info[4] if len(info) == 5 else "", *parts]).lstrip("/")
                break
    return paired


@pytest.mark.parametrize("layout", ["folders", "flat"])
def test_moodle_release_in_both_layouts(course_copy, tmp_path, layout):
    course = course_copy
    configure(course)
    (course / "course.toml").write_text((course / "course.toml").read_text().replace('lms = "other"',
                                                                                      'lms = "moodle"'))
    (tmp_path / "participants.csv").write_text(MOODLE_ROSTER_WITH_TEST)
    cli(course, "roster", "import", str(tmp_path / "participants.csv"))
    students = ["alice", "bob", "carol", "dave"]
    sheet = tmp_path / "Grades-N-Queens.csv"
    sheet.write_text(worksheet("n-queens", students, [("Participant 4799", "Test Student",
                                                       "test.student@uni.example")]))
    # The worksheet after the participants list: it pairs participant ids, and keeps every ID number.
    cli(course, "roster", "import", str(sheet))
    listed = {s["email"]: s for s in json.loads(cli(course, "roster", "--json").stdout)}
    assert listed["alice@uni.example"]["sis_id"] == "S1001" and listed["test.student@uni.example"]["sis_id"] == "S1007"
    assert not any(s["test_student"] for s in listed.values())       # Moodle has no test account
    make = moodle_zip if layout == "folders" else flat_moodle_zip
    if layout == "folders":
        download = make(tmp_path / "nq.zip", "n-queens", students)
        with zipfile.ZipFile(download, "a") as archive:
            archive.write(EXAMPLES / "n-queens" / "submissions" / "alice.ipynb",
                          "Test Student_4799_assignsubmission_file/n-queens.ipynb")
    else:
        download = make(tmp_path / "nq.zip", "n-queens", students, [("Test Student", "alice", 4799)])
    out = course / "grades" / "n-queens"
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--times", str(sheet), str(download))
    released = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"))
    assert "test account" not in released.stdout
    files = {p.name for p in (tmp_path / "release").iterdir()}
    assert "moodle_grades.csv" in files and "canvas_grades.csv" not in files
    pairs = moodle_pairs(tmp_path / "release" / "n-queens-feedback.zip")
    expected = {participant(s, "n-queens") for s in students} | {4799}
    assert set(pairs) == expected and set(pairs.values()) == {"feedback.html"}, pairs
    sheet_out = table(tmp_path / "release" / "moodle_grades.csv")
    assert list(sheet_out[0])[:1] == ["Identifier"]
    assert "Grade" in sheet_out[0] and "Last modified (grade)" in sheet_out[0]
    by_id = {r["Identifier"]: r for r in sheet_out}
    assert set(by_id) == {f"Participant {p}" for p in expected}
    assert by_id["Participant 4799"]["Full name"] == "Test Student" and by_id["Participant 4799"]["Grade"] == "5"
    assert by_id[f"Participant {participant('bob', 'n-queens')}"]["Grade"] == "0"
    # The course gradebook: the ID numbers survived, and the student called Test Student is in it.
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    moodle = {r["Email address"]: r for r in table(tmp_path / "book" / "lms" / "moodle_import.csv")}
    assert moodle["alice@uni.example"]["ID number"] == "S1001"
    assert moodle["test.student@uni.example"]["ID number"] == "S1007"
    assert [v for k, v in moodle["test.student@uni.example"].items() if k.startswith("The n-queens")][0] == "5"
    cli(course, "report", "--out", str(out))
    report = (out / "report.html").read_text()
    assert "test account" not in report.lower() or "0 test account" in report.lower()


def test_canvas_s_test_student_is_in_no_file(course_copy, tmp_path):
    course = course_copy
    configure(course)
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(tmp_path / "export.csv"))
    out = course / "grades" / "n-queens"
    download = canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol", "dave", "erin", "test"])
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), str(download))
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out), "--regrade", "--student", "bjones",
        str(download))
    released = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"))
    assert "left out of every file (the LMS's test account): Test Student (canvas:1099)" in released.stdout
    for name in ("canvas_grades.csv", "gradescope_grades.csv", "lateness.csv", "adjustments.csv",
                 "release_manifest.json"):
        text = (tmp_path / "release" / name).read_text()
        assert "1099" not in text and "Test Student" not in text and "studenttest" not in text, name
    with zipfile.ZipFile(tmp_path / "release" / "n-queens-feedback.zip") as archive:
        assert not [n for n in archive.namelist() if "1099" in n or "studenttest" in n]
    assert not [p for p in (tmp_path / "release" / "feedback").iterdir() if "1099" in p.name]
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    for path in (tmp_path / "book").rglob("*.csv"):
        assert "1099" not in path.read_text() and "Test Student" not in path.read_text(), path
    # release and gradebook list the same students.
    released_ids = {r["ID"] for r in table(tmp_path / "release" / "canvas_grades.csv")}
    book_ids = {r["ID"] for r in table(tmp_path / "book" / "lms" / "canvas_import.csv") if r["ID"]}
    assert released_ids == book_ids == {"1001", "1002", "1003", "1004", "1005"}
    # History: the LMS gave no hand-in time, so none is made up; bob's regrade is a regrade, not a hand-in.
    history = table(tmp_path / "book" / "history.csv")
    bob = [h for h in history if h["student"] == "canvas:1002"]
    assert [h["event"] for h in bob] == ["handed-in", "regraded"], bob
    assert bob[0]["at"] == "" and bob[0]["detail"].startswith("time unknown")
    assert all(h["at"] == "" for h in history if h["event"] == "handed-in")


def test_a_student_dropped_after_grading_is_in_no_grade_file_of_release_as_of_gradebook(course_copy, tmp_path):
    """The trial: Erin left the class list after n-queens was graded; `release` still wrote her grade into
    canvas_grades.csv, from the gradebook row that said she was on the roster, while `gradebook` left her out.
    Dave handed in nothing: his `missing` 0 is his, and goes once he has left too."""
    course = course_copy
    configure(course)
    (tmp_path / "export.csv").write_text(CANVAS_ROSTER)
    cli(course, "roster", "import", str(tmp_path / "export.csv"))
    out = course / "grades" / "n-queens"
    cli(course, "grade", "--assignment", "n-queens", "--out", str(out),
        str(canvas_zip(tmp_path / "nq.zip", "n-queens", ["alice", "bob", "carol", "erin"])))
    dropped = "".join(line for line in CANVAS_ROSTER.splitlines(keepends=True) if "Erin" not in line
                      and "Dave" not in line)
    (tmp_path / "export2.csv").write_text(dropped)
    cli(course, "roster", "import", str(tmp_path / "export2.csv"))
    released = cli(course, "release", "--out", str(out), "--to", str(tmp_path / "release"))
    assert "Erin Ng" in released.stderr and "or have left it" in released.stderr
    cli(course, "gradebook", "--to", str(tmp_path / "book"))
    released_ids = {r["ID"] for r in table(tmp_path / "release" / "canvas_grades.csv")}
    book_ids = {r["ID"] for r in table(tmp_path / "book" / "lms" / "canvas_import.csv") if r["ID"]}
    assert released_ids == book_ids == {"1001", "1002", "1003"}
