"""D2L Brightspace's grade import (Grades → Import), for `gradebook --to` and `release`.

D2L's own description of the file (community.d2l.com, "Importing grades"; the
same table in every Brightspace help since 10.x): `OrgDefinedId` and/or
`Username` to find the user, one `<grade item> Points Grade` column per
numeric item (a name D2L does not know makes a new item, sized by a
`<Numeric MaxPoints:5>` suffix, as its export writes it), and last the
`End-of-Line Indicator` column, `#` on every row.  Ids are written `#20067930`
as D2L's export writes them, so a spreadsheet keeps their leading zeros; the
`#` is not part of the id (UW–Madison's Learn@UW KB 4330).
"""

import re

from ..core.csv_cells import Verbatim, csv_text

FILE = "d2l_import.csv"
RELEASE_FILE = "d2l_grades.csv"
END = "End-of-Line Indicator"
# A grade item column as D2L's export writes it: `<item> Points Grade <Numeric MaxPoints:5 ...>`.
COLUMN = re.compile(r"^(?P<name>.*\S)\s+Points Grade(?:\s*<.*>)?$")


def column_for(assignment, chosen, seen):
    """The assignment's D2L column: course.toml's lms_column when it is one, else the export's item named like
    the assignment, else a new item named by its title, with its points."""
    if chosen and COLUMN.match(chosen):
        return chosen, True
    fits = [h for h in seen if COLUMN.match(h) and _words(COLUMN.match(h).group("name"))
            in (_words(assignment.id), _words(assignment.title))]
    if len(fits) == 1:
        return fits[0], True
    return f"{assignment.title} Points Grade <Numeric MaxPoints:{assignment.max_score:g}>", False


def course_file(book, graded, roster, seen, lms_columns, score, result):
    """The import for every graded assignment: the roster students with a D2L Username or OrgDefinedId."""
    students = [row for row in roster if row.student.lms == "d2l" and (row.student.login or row.student.sis_id)]
    header = ["OrgDefinedId", "Username"]
    for assignment in graded:
        column, known = column_for(assignment, lms_columns.get(assignment.id), seen)
        if not known and students:
            result.problems.append(f"{FILE}: no D2L grade item is {assignment.title!r} ({assignment.id}), so D2L "
                                   f"would make a new one, {column!r}: import D2L's grades export (`autograder "
                                   "roster import`) or set lms_column in course.toml")
        header.append(column)
    rows = [[_id(row.student.sis_id), _id(row.student.login)] + [score(row, a) for a in graded] + [Verbatim("#")]
            for row in students]
    if roster and not students:
        result.notes.append(f"{FILE} has no rows: no roster student has a D2L Username or OrgDefinedId")
    return csv_text([*header, END], rows)


def release_file(lines, column, assignment, seen=()):
    """(One assignment's import, what keeps D2L from taking it): lms.Line, its graded and missing students, for
    those the roster gives a D2L OrgDefinedId or Username (D2L's download names a student, never an id)."""
    found, known = column_for(assignment, column, seen)
    rows = [[_id(line.who.d2l_org_id), _id(line.who.d2l_username), line.shown_score, Verbatim("#")]
            for line in lines if line.kind not in ("blank", "excused") and (line.who.d2l_org_id or line.who.d2l_username)]
    notes = []
    if not known and rows:
        notes.append(f"{RELEASE_FILE}: no D2L grade item is {assignment.title!r} ({assignment.id}), so D2L would "
                     f"make a new one, {found!r}: import D2L's grades export (`autograder roster import`) or set "
                     "lms_column in course.toml")
    if not rows:
        notes.append(f"{RELEASE_FILE} has no rows: no student has a D2L Username or OrgDefinedId, which only D2L's "
                     "grades export gives (import it with `autograder roster import`)")
    return csv_text(["OrgDefinedId", "Username", found, END], rows), notes


def _id(value):
    return Verbatim(f"#{value}") if value else ""


def _words(text):
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))
