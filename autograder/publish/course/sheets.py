"""The course gradebook for the teaching team: course_grades.csv and .xlsx, and history.csv.

One row per student (roster students, then hand-ins that matched nobody on
it, flagged), every assignment's score and mark (`late`, `missing`,
`not-yet`, `adjusted`), the total out of what was due and out of the
course's maximum.  The spreadsheet has the same Grades sheet with numbers as
numbers and missing, late, not-yet and adjusted cells coloured, an
Assignments sheet (each assignment's deadline and counts) and a History
sheet (every hand-in, extension and adjustment, in time order).

The same book gives the same bytes: the workbook's dates and its zip
entries' times are fixed, so writing again changes no file.
"""

import io
import zipfile
from datetime import datetime

from openpyxl import Workbook
from openpyxl.cell.cell import ILLEGAL_CHARACTERS_RE
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.writer.excel import ExcelWriter

from ...core.csv_cells import csv_text
from ...feedback.write import zip_bytes

STUDENT_COLUMNS = ("student", "name", "sortable_name", "lms_id", "sis_id", "login", "email", "section", "on_roster")
TOTAL_COLUMNS = ("total", "due", "out_of", "missing", "late", "excused")
SLIP_COLUMNS = ("slip_days_used", "slip_days_left")     # when the course gives slip days
HISTORY_COLUMNS = ("student", "name", "assignment", "at", "event", "detail")
# Cell colours, as the class report uses them (light, so the numbers stay readable).
FILLS = {"missing": "F8D7DA", "late": "FFF3CD", "not-yet": "E9ECEF", "adjusted": "CFE2FF", "excused": "D1E7DD"}
# A fixed date for the workbook's own properties: the file says nothing about when it was written.
FIXED_DATE = datetime(2000, 1, 1)


def mark_word(mark):
    """`missing`, `not-yet`, or what else a TA should see at a glance (`late`, `adjusted`, `late adjusted`)."""
    if mark is None:
        return ""
    if mark.excused:
        return "excused"
    if mark.missing or not mark.due:
        return mark.status
    return " ".join(word for word, on in (("late", mark.late), ("adjusted", bool(mark.adjust_note))) if on)


def _header(book):
    header = list(STUDENT_COLUMNS)
    for assignment in book.assignments:
        header += [assignment.id, f"{assignment.id} mark"]
    return header + list(TOTAL_COLUMNS) + (list(SLIP_COLUMNS) if _slip_days(book) else [])


def _slip_days(book):
    return any(row.slip_pool is not None for row in book.rows)


def _student_cells(student):
    return [student.key, student.name, student.sortable_name, student.lms_id, student.sis_id, student.login,
            student.email, student.section, "yes" if student.on_roster else "no"]


def _rows(book):
    """Each row as values: numbers stay numbers (the CSV writes them shortest, the workbook as numbers)."""
    for row in book.rows:
        cells = _student_cells(row.student)
        for assignment in book.assignments:
            mark = row.marks.get(assignment.id)
            cells += [mark.score if mark is not None and mark.due else None, mark_word(mark)]
        cells += [row.total, row.possible, book.max_total, len(row.missing), " ".join(row.late), " ".join(row.excused)]
        yield row, cells + ([row.slip_used, row.slip_left] if _slip_days(book) else [])


def _text(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:g}"
    return value if isinstance(value, str) else str(value)


def _history(book):
    names = {row.student.key: row.student.name for row in book.rows}
    return [[h.student, names.get(h.student, h.student), h.assignment, h.at, h.event, h.detail]
            for h in book.history]


def course_grades_csv(book):
    return csv_text(_header(book), [[_text(v) for v in cells] for _, cells in _rows(book)])


def history_csv(book):
    return csv_text(HISTORY_COLUMNS, _history(book))


EXCEL_CELL_CHARS = 32767  # the most text a cell holds; Excel "repairs" (empties) a longer one


def _put(sheet, row, column, value):
    """A value into a cell, text as text: a name like `=HYPERLINK(...)` must never become a formula."""
    if isinstance(value, str):
        value = ILLEGAL_CHARACTERS_RE.sub("", value)[:EXCEL_CELL_CHARS]   # what XML cannot hold, openpyxl refuses
    cell = sheet.cell(row, column, value)
    if isinstance(value, str):
        cell.data_type = "s"
    return cell


def _table(sheet, header, rows, widths=None):
    for column, title in enumerate(header, 1):
        _put(sheet, 1, column, title).font = Font(bold=True)
    for number, values in enumerate(rows, 2):
        for column, value in enumerate(values, 1):
            _put(sheet, number, column, value)
    sheet.freeze_panes = "A2"
    sheet.auto_filter.ref = f"A1:{get_column_letter(len(header))}{max(len(rows) + 1, 1)}"
    for column, title in enumerate(header, 1):
        width = (widths or {}).get(title) or min(max(len(str(title)), 8) + 2, 40)
        sheet.column_dimensions[get_column_letter(column)].width = width


def course_grades_xlsx(book):
    workbook = Workbook()
    grades = workbook.active
    grades.title = "Grades"
    header = _header(book)
    rows = list(_rows(book))
    _table(grades, header, [cells for _, cells in rows], {"name": 28, "sortable_name": 28, "email": 26})
    fills = {word: PatternFill("solid", start_color=colour, end_color=colour) for word, colour in FILLS.items()}
    for number, (row, _) in enumerate(rows, 2):
        for assignment in book.assignments:
            word = mark_word(row.marks.get(assignment.id))
            fill = fills.get(word.split(" ")[0]) if word else None
            if fill is not None:
                column = header.index(assignment.id) + 1
                grades.cell(number, column).fill = fill
                grades.cell(number, column + 1).fill = fill
    assignments = workbook.create_sheet("Assignments")
    _table(assignments, ("assignment", "title", "max_score", "deadline", "graded", "handed_in", "missing",
                         "not_yet", "late", "adjusted", "mean", "excused"),
           [_assignment_row(book, a) for a in book.assignments], {"title": 44, "deadline": 26})
    history = workbook.create_sheet("History")
    _table(history, HISTORY_COLUMNS, _history(book), {"name": 28, "at": 26, "detail": 60})
    return _fixed_bytes(workbook)


def _assignment_row(book, assignment):
    marks = [row.marks[assignment.id] for row in book.rows if assignment.id in row.marks]
    due = [m.score for m in marks if m.due]
    return [assignment.id, assignment.title, assignment.max_score, assignment.deadline or "",
            "yes" if assignment.gradebook is not None else "no",
            sum(1 for m in marks if m.due and not m.missing), sum(1 for m in marks if m.missing),
            sum(1 for m in marks if not m.due and not m.excused), sum(1 for m in marks if m.late),
            sum(1 for m in marks if m.adjust_note), round(sum(due) / len(due), 2) if due else None,
            sum(1 for m in marks if m.excused)]


def _fixed_bytes(workbook):
    """The workbook's bytes with fixed dates and zip times: openpyxl stamps both with the time of saving."""
    workbook.properties.created = workbook.properties.modified = FIXED_DATE
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(workbook, archive).write_data()
    with zipfile.ZipFile(io.BytesIO(buffer.getvalue())) as archive:
        return zip_bytes({name: archive.read(name) for name in archive.namelist()})


def course_grade_files(book):
    """{file name: bytes} of the course gradebook: course_grades.csv, course_grades.xlsx, history.csv."""
    return {"course_grades.csv": course_grades_csv(book).encode("utf-8"),
            "course_grades.xlsx": course_grades_xlsx(book),
            "history.csv": history_csv(book).encode("utf-8")}
