"""public_rubric.xlsx: one sheet per assignment, public cases only.

Hidden cases appear as a single row with their count and points, never their
inputs or expected values.  The last column says which checks a case requires
(cases.toml's `requires`): its points count only when those pass too. When course.toml gives the assignment a deadline,
two rows after the total say when it is due and what lateness costs.
"""

from openpyxl import Workbook, load_workbook
from openpyxl.styles import Alignment, Font

from .. import runtime
from ..core.course_file import deadline_text, late_policy_text

HEADER = ("Function", "Arguments", "Expected value", "Points", "Time limit (s)", "Counts only when these pass")


def rubric_rows(assignment, expected, settings=None, case_limits=None):
    """`settings`: the assignment's table in course.toml (deadline, late policy), if any.
    `case_limits`: each case's CPU-time limit on the building machine (see limits.py), in order."""
    limit_of = dict(zip((c.name for c in assignment.cases), case_limits or ()))
    rows = [HEADER]
    for case in assignment.public_cases:
        arguments = case.call.text[len(case.function):].strip()
        rows.append((case.function, arguments, _cell_value(expected[case.name]), case.points,
                     limit_of.get(case.name, ""), _required(assignment, case.requires)))
    hidden = assignment.hidden_cases
    if hidden:
        required = list(dict.fromkeys(name for case in hidden for name in case.requires))
        rows.append(("hidden cases", f"{len(hidden)} cases, not shown", "", _points(hidden), "",
                     _required(assignment, required, "some of them: ")))
    rows.append(("Total", "", "", _points(assignment.cases), "", ""))
    if settings and settings.get("deadline"):
        rows.append(("Due", deadline_text(settings["deadline"]), "", "", "", ""))
        rows.append(("Late hand-ins", late_policy_text(settings), "", "", "", ""))
    return rows


def _required(assignment, names, lead=""):
    """The public calls among `names`, one a line; hidden ones are only counted (their inputs stay hidden)."""
    by_name = {c.name: c for c in assignment.cases}
    public = [by_name[n].call.text for n in names if not by_name[n].hidden]
    hidden = sum(1 for n in names if by_name[n].hidden)
    parts = public + ([f"{hidden} other hidden case{'s' * (hidden > 1)}"] if hidden else [])
    return lead + "\n".join(parts) if parts else ""


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
        for column, width in zip("ABCDEF", (18, 34, 40, 8, 12, 34)):
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
