"""The files `gradebook --to` writes: each LMS's import file checked against that LMS's documented rules,
the course gradebook read back (csv, and xlsx with openpyxl), and the semester report."""

import csv
import io
import re
from dataclasses import replace

import openpyxl

from autograder.core.csv_cells import safe_cell
from autograder.publish.course.report import semester_report, why_to_look
from autograder.publish.course.sheets import course_grade_files
from autograder.publish.course.imports import import_files
from coursebooks import sample_book

COLUMNS = {"bitwise-queens": "Bitwise (502)", "n-queens": "N-Queens (501)", "no-three-in-line": "No three (503)"}


def rows(text):
    return list(csv.reader(io.StringIO(text)))


def canvas_would_import(table):
    """What Canvas's Grades → Import makes of a CSV (canvas-lms lib/gradebook_importer.rb): the header rule,
    the student-info columns ending at Section, the ignored totals, and each assignment by `Title (id)`."""
    header = table[0]
    assert len(header) > 3 and "Student" in header[0] and "ID" in header[1]
    info = header.index("Section")
    assert header[:info + 1] == ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]
    totals = re.compile(r"Current Score|Current Points|Current Grade|Final Score|Final Points|Final Grade|"
                        r"Override Score|Override Grade|Override Status")
    assignments = {}
    for column, title in enumerate(header[info + 1:], info + 1):
        if totals.search(title):
            continue
        match = re.fullmatch(r"(.*)\s\((\d+)\)", title)
        assignments[column] = match.group(2) if match else f"NEW: {title}"
    students = {}
    for row in table[1:]:
        if "Points Possible" in row[0]:
            continue
        scores = {}
        for column, assignment in assignments.items():
            value = row[column].strip()
            if value in ("", "-"):
                continue
            scores[assignment] = "excused" if value.upper() == "EX" else float(value.replace(",", "."))
        students[row[1]] = scores
    return students


def test_canvas_imports_every_assignment_of_every_roster_student_and_no_one_else():
    book = sample_book()
    files = import_files(book, COLUMNS)
    table = rows(files.files["canvas_import.csv"])
    assert table[1] == ["    Points Possible", "", "", "", "", "5", "5", "5"]
    imported = canvas_would_import(table)
    roster = [r.student for r in book.rows if r.student.on_roster]
    assert sorted(imported) == sorted(s.lms_id for s in roster)            # no Test Student, no stray hand-in
    # the roster's own values (a name that starts like a formula keeps its guard: Canvas matches by ID)
    assert [row[:5] for row in table[2:]] == [[safe_cell(s.sortable_name), s.lms_id, s.sis_id, s.login, s.section]
                                               for s in roster]
    assert imported["1003"] == {"502": 0.0, "501": 0.0}                    # missing: 0; not-yet: no score
    assert imported["1000"]["501"] == 3.5
    assert any("stray" in p and "not on the roster" in p for p in files.problems)


def test_a_canvas_column_canvas_would_ignore_or_create_is_reported():
    files = import_files(sample_book(), {**COLUMNS, "n-queens": "Final Score project (501)"})
    assert any("would ignore the column 'Final Score project (501)'" in p for p in files.problems)
    files = import_files(sample_book(), {})
    assert canvas_would_import(rows(files.files["canvas_import.csv"]))["1000"]["NEW: Title of n-queens"] == 3.5
    assert any("creates a new assignment" in p for p in files.problems)


def test_moodle_gets_emails_id_numbers_grades_and_feedback():
    table = rows(import_files(sample_book(), COLUMNS).files["moodle_import.csv"])
    assert table[0][:4] == ["Email address", "ID number", "Title of bitwise-queens",
                            "Title of bitwise-queens feedback"]
    by_email = {row[0]: row for row in table[1:]}
    assert by_email["s3@uni.example"][2:4] == ["0", "missing: nothing handed in by the deadline"]
    # Canvas's SIS id is not Moodle's ID number, and Moodle stops the whole import at an unknown one.
    assert by_email["s3@uni.example"][1] == "" and "S1003" not in import_files(sample_book(), COLUMNS).files[
        "moodle_import.csv"]
    assert by_email["s3@uni.example"][6] == "-"                            # not-yet: no grade
    assert "adjusted: +1 point(s): case 3's wording" in by_email["s1@uni.example"][5]
    assert "late, 1 point(s) off" in by_email["s0@uni.example"][5]


def test_gradescope_classroom_and_plain_files():
    files = import_files(sample_book(), COLUMNS).files
    assert rows(files["gradescope_scores.csv"])[0] == ["Name", "SID", "Email", "Title of bitwise-queens",
                                                       "Title of n-queens", "Title of no-three-in-line"]
    # Canvas logins are not GitHub logins: with a Canvas roster, Classroom's file is its header alone, said so.
    canvas_roster = import_files(sample_book(), COLUMNS)
    assert rows(canvas_roster.files["classroom_grades.csv"]) == [rows(files["classroom_grades.csv"])[0]]
    assert any("classroom_grades.csv has no rows" in note for note in canvas_roster.notes)
    book = sample_book()
    for row in book.rows:
        row.student = replace(row.student, lms="classroom")
    # The repository is the one the hand-in came from (the trial: n-queens-puzzle-alice was written as an
    # invented n-queens-alice); a mark with no clone behind it names none.
    first = book.rows[0]
    first.marks["bitwise-queens"] = replace(first.marks["bitwise-queens"],
                                            source="bitwise-queens-puzzle-login0/bitwise-queens.ipynb",
                                            repository="bitwise-queens-puzzle-login0")
    classroom = rows(import_files(book, COLUMNS).files["classroom_grades.csv"])
    assert classroom[0][:5] == ["assignment_name", "assignment_url", "starter_code_url", "github_username",
                                "roster_identifier"]
    assert classroom[1][3:6] == ["login0", "S1000", "bitwise-queens-puzzle-login0"]
    assert all(row[5] != f"{row[0]}-{row[3]}" for row in classroom[1:])     # never made up from the login
    plain = {row[0]: row for row in rows(files["plain_grades.csv"])}
    assert plain["stray"][-4] == "no" and plain["canvas:1003"][-3] == "bitwise-queens n-queens"


def test_a_name_that_looks_like_a_formula_stays_text_everywhere():
    book = sample_book()
    for name, text in import_files(book, COLUMNS).files.items():
        assert "\n=" not in text and ',=' not in text, name
    files = course_grade_files(book)
    sheet = openpyxl.load_workbook(io.BytesIO(files["course_grades.xlsx"]))["Grades"]
    cell = next(c for c in sheet["B"] if isinstance(c.value, str) and "HYPERLINK" in c.value)
    assert cell.data_type == "s" and cell.value.startswith("=HYPERLINK")


def test_the_course_gradebook_reads_back_with_numbers_marks_and_colours():
    book = sample_book()
    files = course_grade_files(book)
    table = list(csv.DictReader(io.StringIO(files["course_grades.csv"].decode())))
    assert [r["student"] for r in table] == [r.student.key for r in book.rows]
    three = table[3]
    assert (three["bitwise-queens"], three["bitwise-queens mark"], three["no-three-in-line"],
            three["no-three-in-line mark"], three["missing"], three["out_of"]) == ("0", "missing", "", "not-yet", "2",
                                                                                  "20")
    workbook = openpyxl.load_workbook(io.BytesIO(files["course_grades.xlsx"]))
    assert workbook.sheetnames == ["Grades", "Assignments", "History"]
    sheet = workbook["Grades"]
    header = [c.value for c in sheet[1]]
    late = sheet.cell(2, header.index("n-queens") + 1)
    assert late.value == 3.5 and late.fill.start_color.rgb.endswith("FFF3CD")
    assert sheet.freeze_panes == "A2" and sheet.auto_filter.ref
    assert course_grade_files(sample_book())["course_grades.xlsx"] == files["course_grades.xlsx"]   # same bytes


def test_the_semester_report_lists_who_needs_a_look_and_why():
    book = sample_book()
    assert why_to_look(book, book.rows[2])[0] == "scores falling over the last three assignments"
    assert why_to_look(book, book.rows[3]) == ["missed 2 assignments (bitwise-queens, n-queens)"]
    page = semester_report(book)
    assert page.count("data:image/png;base64,") == 1 and "<script>alert(1)" not in page
    assert "Not on the roster" in page and "stray" in page and "Test Student" not in page


def test_a_canvas_column_two_assignments_would_share_goes_to_neither():
    from types import SimpleNamespace
    from autograder.publish.course.write import canvas_columns
    course = SimpleNamespace(lms_column=lambda assignment_id: "N-Queens (501)" if assignment_id in (
        "n-queens", "no-three-in-line") else None)
    columns, problems, shared = canvas_columns(course, sample_book(), ["N-Queens (501)", "Bitwise Queens (502)"])
    assert columns == {"bitwise-queens": "Bitwise Queens (502)"}
    assert shared == {"N-Queens (501)": ["n-queens", "no-three-in-line"]}
    assert problems[0].startswith("the Canvas column 'N-Queens (501)' is n-queens and no-three-in-line's alike")


def test_a_name_with_control_characters_or_too_long_for_a_cell_still_gives_a_workbook():
    """openpyxl refuses text XML cannot hold (a student's LMS name with \\x01 once ended `gradebook`), and
    Excel empties a cell over 32,767 characters: both are cut to what a cell can hold."""
    from dataclasses import replace
    book = sample_book()
    book.rows[0].student = replace(book.rows[0].student, name="Ann\x01 Lee", section="x" * 40000)
    sheet = openpyxl.load_workbook(io.BytesIO(course_grade_files(book)["course_grades.xlsx"]))["Grades"]
    header = [c.value for c in sheet[1]]
    assert sheet.cell(2, header.index("name") + 1).value == "Ann Lee"
    assert len(sheet.cell(2, header.index("section") + 1).value) == 32767


def test_a_comma_decimal_canvas_export_gives_its_points_possible(tmp_path):
    # The trial: an export in a comma-decimal locale (gradebook_exporter.rb: I18n.n(points, precision: 2), `;`
    # between fields, a BOM) wrote `10,00`, which was not read, so a column worth 10 in Canvas went unchecked.
    from autograder.roster.lms_files import read_roster
    table = [["LastName", "FirstName", "ID", "SIS User ID", "SIS Login ID", "Section", "N-Queens (501)",
              "Bitwise Queens (503)", "Big (504)"],
             ["", "", "", "", "", "", "Manual Posting", "", ""],
             ["    Points Possible", "", "", "", "", "", "5,00", "10,00", "1.000,00"],
             ["Smith", "Alice", "1001", "S1001", "asmith", "Section 1", "", "", ""]]
    text = io.StringIO()
    csv.writer(text, delimiter=";").writerows(table)
    path = tmp_path / "export.csv"
    path.write_text(text.getvalue(), encoding="utf-8-sig", newline="")
    found = read_roster(path)
    assert found.points_possible == {"N-Queens (501)": 5.0, "Bitwise Queens (503)": 10.0, "Big (504)": 1000.0}
    (tmp_path / "dot.csv").write_text(text.getvalue().replace(";", ",").replace('"', "").replace("5,00", "5.00")
                                      .replace("10,00", "10.00").replace("1.000,00", "\"1,000.00\""))
    assert read_roster(tmp_path / "dot.csv").points_possible == found.points_possible


def test_gradescope_s_email_column_never_holds_a_key():
    # The trial (finding 16): a missing student's row had `email:tstudent@uni.example`, the key, as Email.
    from types import SimpleNamespace
    from autograder.publish.lms import gradescope_csv, missing_line
    from autograder.roster.store import Student
    absent = [SimpleNamespace(student="email:tstudent@uni.example", name="Terry Student", status="missing",
                              score=0.0, max_score=5.0, adjust_note=""),
              SimpleNamespace(student="moodle:501", name="Jane Doe", status="missing", score=0.0, max_score=5.0,
                              adjust_note="")]
    table = rows(gradescope_csv([missing_line(a, {}) for a in absent]))
    assert [row[2] for row in table[1:]] == ["", ""] and not any("email:" in cell for row in table for cell in row)
    roster = {"moodle:501": Student("moodle:501", "Jane Doe", lms="moodle", email="jane@uni.example")}
    assert rows(gradescope_csv([missing_line(absent[1], roster)]))[1][2] == "jane@uni.example"


def test_a_student_at_0_in_every_graded_assignment_needs_a_look():
    """Ivan had 0 of 10 and was under no heading: all three graded assignments handed in, all 0."""
    book = sample_book()
    ivan = book.rows[5]
    ivan.marks = {a: replace(m, score=0.0) for a, m in ivan.marks.items()}
    assert why_to_look(book, ivan) == ["0 points in every graded assignment (3 of 3)"]
    page = semester_report(book)
    assert "0 points in every graded assignment (3 of 3)" in page and ivan.student.name in page.split('id="look"')[1]
    # Missing twice is said as it is, once; one 0 among other scores is nothing to look at.
    assert why_to_look(book, book.rows[3]) == ["missed 2 assignments (bitwise-queens, n-queens)"]
    ivan.marks["n-queens"] = replace(ivan.marks["n-queens"], score=1.0)
    assert why_to_look(book, ivan) == []


def test_an_excused_student_is_ex_in_canvas_blank_elsewhere_and_in_no_mean_or_total():
    book = sample_book()
    for row in book.rows:
        row.student = replace(row.student, email=f"{row.student.key.split(':')[-1]}@uni.example",
                              login=f"login{row.student.key.split(':')[-1]}")
    erin = book.rows[6]
    erin.marks["n-queens"] = replace(erin.marks["n-queens"], status="excused", score=0.0,
                                     excused="excused: dean's note (by ta)")
    heidi = book.rows[7]      # excused with a hand-in: graded, counted nowhere
    heidi.marks["n-queens"] = replace(heidi.marks["n-queens"], score=4.0, excused="excused: joined late (by ta)")
    assert erin.total == sum(m.score for a, m in erin.marks.items() if a != "n-queens")
    assert erin.possible == 10 and heidi.possible == 10
    result = import_files(book, COLUMNS)
    canvas = {row[1]: row for row in rows(result.files["canvas_import.csv"])}
    column = rows(result.files["canvas_import.csv"])[0].index("N-Queens (501)")
    assert canvas[erin.student.lms_id][column] == "EX" and canvas[heidi.student.lms_id][column] == "EX"
    moodle = {row[0]: row for row in rows(result.files["moodle_import.csv"])}
    nq = rows(result.files["moodle_import.csv"])[0].index("Title of n-queens")
    assert moodle[erin.student.email][nq:nq + 2] == ["-", "excused"]      # Moodle's own "no grade"
    scores = {row[1]: row for row in rows(result.files["gradescope_scores.csv"])}
    gs = rows(result.files["gradescope_scores.csv"])[0].index("Title of n-queens")
    assert scores[erin.student.sis_id][gs] == "" and scores[heidi.student.sis_id][gs] == ""
    plain = {row[0]: row for row in rows(result.files["plain_grades.csv"])}
    assert plain[erin.student.key][-1] == "n-queens"
    assert any("excused, EX in canvas_import.csv" in note and erin.student.name in note
               and "Exempt Grade" in note for note in result.notes)
    page = semester_report(book)
    assert ">excused<" in page
    # The mean leaves them out: the others' scores only.
    others = [r.marks["n-queens"].score for r in book.rows if "n-queens" in r.marks and r.marks["n-queens"].due]
    assert len(others) == len(book.rows) - 2
    assert f"{sum(others) / len(others):.2f} / 5" in page
