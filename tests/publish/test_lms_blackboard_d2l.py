"""Blackboard Learn's and D2L Brightspace's files: their rosters read as they export them, and their import
files checked against what each LMS documents (release/blackboard.py and release/d2l.py cite the sources)."""

import csv
import io
import re

from autograder.publish.course.imports import import_files
from autograder.roster.lms_files import read_roster
from autograder.roster.store import Student
from coursebooks import mark, sample_book
from autograder.publish.course.book import CourseRow

BLACKBOARD_DOWNLOAD = ('"Last Name","First Name","Username","Student ID","Last Access","Availability",'
                       '"N-Queens [Total Pts: 5 Score] |664617","Weighted Total [Total Pts: up to 0 Percentage] |6541"\n'
                       '"Smith","Alice","asmith","S1","2026-03-01 10:00:00","Yes","",""\n'
                       '"Jones","Bob","bjones","","","Yes","",""\n')
D2L_EXPORT = ("OrgDefinedId,Username,Last Name,First Name,Email,N-Queens Points Grade <Numeric MaxPoints:5 Weight:10>,"
              "End-of-Line Indicator\n#0012345,#asmith,Smith,Alice,asmith@uni.example,,#\n"
              "#0067890,#bjones,Jones,Bob,bjones@uni.example,,#\n")


def write(tmp_path, text, name, encoding="utf-8"):
    path = tmp_path / name
    path.write_bytes(text.encode(encoding))
    return path


def test_blackboard_s_grade_centre_download_is_a_roster_in_csv_or_its_utf16_tab_separated_xls(tmp_path):
    for path in (write(tmp_path, BLACKBOARD_DOWNLOAD, "gc.csv"),
                 write(tmp_path, BLACKBOARD_DOWNLOAD.replace('","', '"\t"'), "gc.xls", "utf-16")):
        roster = read_roster(path)
        assert (roster.lms, [e.key for e in roster.entries]) == ("blackboard", ["blackboard:asmith", "blackboard:bjones"])
        assert (roster.entries[0].name, roster.entries[0].login, roster.entries[0].sis_id) == ("Alice Smith", "asmith",
                                                                                                "S1")
        assert roster.lms_columns == ["N-Queens [Total Pts: 5 Score] |664617",
                                      "Weighted Total [Total Pts: up to 0 Percentage] |6541"]


def test_d2l_s_grades_export_is_a_roster_its_hashes_are_not_part_of_the_ids(tmp_path):
    roster = read_roster(write(tmp_path, D2L_EXPORT, "d2l.csv"))
    assert roster.lms == "d2l" and [e.key for e in roster.entries] == ["d2l:asmith", "d2l:bjones"]
    assert (roster.entries[0].sis_id, roster.entries[0].login, roster.entries[0].email) == (
        "0012345", "asmith", "asmith@uni.example")
    assert roster.lms_columns == ["N-Queens Points Grade <Numeric MaxPoints:5 Weight:10>"]


def test_classroom_50_s_roster_imports(tmp_path):
    roster = read_roster(write(tmp_path, "username,first_name,last_name,email,section,github_id\n"
                                         "alice,Alice,Smith,alice@uni.example,A,101\n", "c50.csv"))
    (entry,) = roster.entries
    assert (roster.kind, entry.key, entry.login, entry.lms_id, entry.name) == (
        "Classroom 50 roster", "alice", "alice", "101", "Alice Smith")


def book_of(lms):
    """sample_book with its roster students from `lms` (logins and ids as that LMS has them)."""
    book = sample_book(5)
    rows = []
    for number, row in enumerate(book.rows):
        s = row.student
        if not s.on_roster:
            rows.append(row)
            continue
        login = f"user{number}"
        key = f"{lms}:{login}"
        rows.append(CourseRow(Student(key, s.name, s.sortable_name, lms, login if lms == "blackboard" else "",
                                      f"00{number}", login, s.email, s.section), row.marks))
    book.rows[:] = rows
    return book


def blackboard_would_upload(text):
    """What Blackboard's Work Offline upload makes of a comma-separated file ("Uploading External Grade Center
    Items"): every value inside quotes, students by Username, a column by the id after `|`, else a new one."""
    assert all(line.startswith('"') and line.endswith('"') for line in text.splitlines())
    table = list(csv.reader(io.StringIO(text)))
    assert table[0][:3] == ["Last Name", "First Name", "Username"]
    columns = {i: (re.search(r"\|\s*(\d+)$", h).group(1) if re.search(r"\|\s*(\d+)$", h) else f"NEW: {h}")
               for i, h in enumerate(table[0]) if i >= 3}
    return {row[2]: {columns[i]: float(v) for i, v in enumerate(row) if i in columns and v != ""} for row in table[1:]}


def test_blackboard_s_upload_has_every_roster_student_with_a_username_and_its_grade_centre_columns():
    book = book_of("blackboard")
    seen = ["N-Queens [Total Pts: 5 Score] |664617"]
    files = import_files(book, {}, seen=seen)
    uploaded = blackboard_would_upload(files.files["blackboard_upload.csv"])
    assert sorted(uploaded) == ["user0", "user1", "user2", "user3", "user4"]           # no stray hand-in
    assert uploaded["user0"]["664617"] == 3.5
    assert uploaded["user3"] == {"664617": 0.0, "NEW: Title of bitwise-queens": 0.0}   # missing: 0; not-yet: blank
    assert any("blackboard_upload.csv" in p and "new text column" in p for p in files.problems)


def d2l_would_import(text):
    """What D2L's Grades → Import reads ("Importing grades"): OrgDefinedId and/or Username to find the user, each
    `<item> Points Grade` column, and End-of-Line Indicator last with `#` on every row."""
    table = list(csv.reader(io.StringIO(text)))
    header = table[0]
    assert header[:2] == ["OrgDefinedId", "Username"] and header[-1] == "End-of-Line Indicator"
    items = {i: re.match(r"(.*\S)\s+Points Grade", h).group(1) for i, h in enumerate(header[2:-1], 2)}
    users = {}
    for row in table[1:]:
        assert row[-1] == "#" and (row[0] or row[1])
        users[row[1].removeprefix("#") or row[0].removeprefix("#")] = {
            items[i]: float(v) for i, v in enumerate(row) if i in items and v != ""}
    return users


def test_d2l_s_import_finds_each_user_by_username_and_orgdefinedid_and_keeps_leading_zeros():
    book = book_of("d2l")
    files = import_files(book, {}, seen=["Title of n-queens Points Grade <Numeric MaxPoints:5 Weight:10>"])
    text = files.files["d2l_import.csv"]
    imported = d2l_would_import(text)
    assert sorted(imported) == ["user0", "user1", "user2", "user3", "user4"]
    assert imported["user0"]["Title of n-queens"] == 3.5
    assert '"#000",#user0' in text or "#000,#user0" in text                        # 000, not 0
    assert any("d2l_import.csv" in p and "<Numeric MaxPoints:5>" in p for p in files.problems)   # a new item


def test_a_blackboard_or_d2l_roster_import_names_its_own_lms_s_columns(tmp_path):
    # The trial: both imports said "Canvas grade columns seen: ...".
    from click.testing import CliRunner
    from autograder.cli.main import main
    from conftest import copy_course
    for text, name, lms in ((BLACKBOARD_DOWNLOAD, "gc.csv", "Blackboard"), (D2L_EXPORT, "d2l.csv", "D2L")):
        course = copy_course(tmp_path / lms / "course")
        done = CliRunner().invoke(main, ["--course", str(course), "roster", "import", str(write(tmp_path, text, name))])
        assert done.exit_code == 0, done.output
        assert f"{lms} grade columns seen: " in done.output and "Canvas" not in done.output


def test_an_excused_student_is_blank_in_blackboard_d2l_and_classroom_files_and_ex_in_canvas():
    """Canvas's importer reads EX as excused; Blackboard's, D2L's and Classroom's files have no such value: a
    blank cell (nothing entered), and a note that the LMS exempts them by hand."""
    from dataclasses import replace
    for lms, name in (("blackboard", "blackboard_upload.csv"), ("d2l", "d2l_import.csv"),
                      ("classroom", "classroom_grades.csv")):
        book = book_of(lms)
        excused = book.rows[1]
        excused.marks["n-queens"] = replace(excused.marks["n-queens"], excused="excused: dean's note (by ta)")
        files = import_files(book, {}, seen=["N-Queens [Total Pts: 5 Score] |664617",
                                             "Title of n-queens Points Grade <Numeric MaxPoints:5 Weight:10>"])
        table = list(csv.reader(io.StringIO(files.files[name])))
        if lms == "classroom":
            cells = [row[8] for row in table[1:] if row[3] == "user1" and row[0] == "n-queens"]
        else:
            column = next(i for i, h in enumerate(table[0]) if "n-queens" in h.lower() or "N-Queens" in h)
            cells = [row[column] for row in table[1:] if "user1" in row[2 if lms == "blackboard" else 1]]
        assert cells == [""], (lms, table)
        assert any("excused" in note and excused.student.name in note for note in files.notes), lms


def test_the_release_files_write_an_excused_student_as_each_lms_takes_it():
    from autograder.publish import blackboard, d2l
    from autograder.publish.lms import Line, canvas_csv, gradescope_csv, moodle_csv
    from autograder.publish.who import Who
    from types import SimpleNamespace
    who = Who("canvas:1005", "Erin Ng", "Ng, Erin", "erin@uni.example", canvas_id="1005", moodle_participant="4705",
              gradescope_sid="S1005", blackboard_username="eng", d2l_username="eng")
    lines = [Line(who, "excused", None, 5.0, "excused"),
             Line(replace_who(who, "Bob Jones", "1002"), "graded", 3.0, 5.0, "graded")]
    canvas = list(csv.reader(io.StringIO(canvas_csv(lines, "N-Queens (501)"))))
    assert canvas[1][-1] == "EX" and canvas[2][-1] == "3"
    gradescope = list(csv.DictReader(io.StringIO(gradescope_csv(lines))))
    assert (gradescope[0]["Total Score"], gradescope[0]["Status"]) == ("", "excused")
    moodle, _ = moodle_csv(lines, 5.0)
    assert "Participant 4705" not in moodle           # nothing entered for them
    assignment = SimpleNamespace(id="n-queens", title="N-Queens", max_score=5.0)
    bb, _ = blackboard.release_file(lines, "N-Queens [Total Pts: 5 Score] |664617", assignment)
    assert "eng" not in bb and "bjones" in bb
    dl, _ = d2l.release_file(lines, None, assignment)
    assert "eng" not in dl and "bjones" in dl


def replace_who(who, name, canvas_id):
    from dataclasses import replace
    return replace(who, key=f"canvas:{canvas_id}", name=name, canvas_id=canvas_id, blackboard_username="bjones",
                   d2l_username="bjones", moodle_participant="4702")
