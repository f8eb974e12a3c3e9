"""public_rubric.xlsx: one sheet per assignment, public cases only.

Hidden cases appear as a single row with their count and points, never their
inputs or expected values. When course.toml gives the assignment a deadline,
two rows after the total say when it is due and what lateness costs.
"""

from openpyxl import Workbook, load_workbook
from openpyxl.styles import Alignment, Font

from .. import runtime
from ..core.course_file import deadline_text, late_policy_text

HEADER = ("Function", "Arguments", "Expected value", "Points", "Time limit (s)")


def rubric_rows(assignment, expected, settings=None, case_limits=None):
    """`settings`: the assignment's table in course.toml (deadline, late policy), if any.
    `case_limits`: each case's CPU-time limit on the building machine (see limits.py), in order."""
    limit_of = dict(zip((c.name for c in assignment.cases), case_limits or ()))
    rows = [HEADER]
    for case in assignment.public_cases:
        arguments = case.call.text[len(case.function):].strip()
        rows.append((case.function, arguments, _cell_value(expected[case.name]), case.points,
                     limit_of.get(case.name, "")))
    hidden = assignment.hidden_cases
    if hidden:
        rows.append(("hidden cases", f"{len(hidden)} cases, not shown", "", _points(hidden), ""))
    rows.append(("Total", "", "", _points(assignment.cases), ""))
    if settings and settings.get("deadline"):
        rows.append(("Due", deadline_text(settings["deadline"]), "", "", ""))
        rows.append(("Late hand-ins", late_policy_text(settings), "", "", ""))
    return rows


def _points(cases):
    return round(sum(c.points for c in cases), 6)


def _cell_value(plain):
    # Numbers and booleans stay typed in the sheet; everything else is shown as text.
    if type(plain) in (bool, int, float):
        return plain
    return runtime.show(plain, limit=30000)


def write_rubric(sheets, path):
    """`sheets` maps a sheet title (the assignment id) to its rows."""
    book = Workbook()
    book.remove(book.active)
    for title, rows in sheets.items():
        sheet = book.create_sheet(title[:31])
        for row in rows:
            sheet.append(list(row))
        for cell in sheet[1]:
            cell.font = Font(bold=True)
        for row in sheet.iter_rows(min_row=2):
            if row[0].value == "Total":
                for cell in row:
                    cell.font = Font(bold=True)
        for row in sheet.iter_rows(min_row=2):
            for cell in row:
                cell.alignment = Alignment(wrap_text=True, vertical="top")
        for column, width in zip("ABCDE", (18, 34, 40, 8, 12)):
            sheet.column_dimensions[column].width = width
    book.save(path)


def read_rubric(path):
    """The sheets of an existing rubric as {title: [row tuples]}, for staleness checks."""
    book = load_workbook(path, read_only=True)
    try:
        return {sheet.title: [tuple("" if v is None else v for v in row) for row in sheet.iter_rows(values_only=True)]
                for sheet in book.worksheets}
    finally:
        book.close()
