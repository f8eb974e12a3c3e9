"""Blackboard Learn's grade upload (Grade Centre → Work Offline → Upload), for `gradebook --to` and `release`.

Blackboard matches each row to a student by `Username` and each grade column
by the column id after `|` in its header (`N-Queens [Total Pts: 5 Score]
|664617`, as its Work Offline download writes it); a column with no id
becomes a new text column worth 0 points ("Uploading External Grade Center
Items", Blackboard Learn's help; nbeaver/offline-grades-upload shows real
files).  A comma-separated upload must have every value inside quotes, so
every field of this file is quoted.  The first columns are the download's:
`Last Name`, `First Name`, `Username`.
"""

import re

from ..core.csv_cells import csv_text

FILE = "blackboard_upload.csv"
RELEASE_FILE = "blackboard_grades.csv"
COLUMNS = ("Last Name", "First Name", "Username")
# A Grade Centre column as the download writes its header: `<name> [Total Pts: 5 Score] |<column id>`.
COLUMN = re.compile(r"^(?P<name>.*?)\s*\[Total Pts:.*\|\s*(?P<id>\d+)$")


def column_for(assignment, chosen, seen):
    """The assignment's Blackboard column: course.toml's lms_column when it is one, else the roster's
    download's column whose name is the assignment's, else None (a new column would be made)."""
    if chosen and COLUMN.match(chosen):
        return chosen
    fits = [h for h in seen if COLUMN.match(h) and _words(COLUMN.match(h).group("name"))
            in (_words(assignment.id), _words(assignment.title))]
    return fits[0] if len(fits) == 1 else None


def course_file(book, graded, roster, seen, lms_columns, score, result):
    """The upload for every graded assignment: the roster students with a Blackboard username."""
    students = [row for row in roster if row.student.lms == "blackboard" and row.student.login]
    header = [*COLUMNS]
    for assignment in graded:
        column = column_for(assignment, lms_columns.get(assignment.id), seen)
        if column is None and students:
            result.problems.append(f"{FILE}: no Blackboard column is {assignment.title!r} ({assignment.id}), so "
                                   "Blackboard would make a new text column worth 0 points: import the Grade "
                                   "Centre download (`autograder roster import`) or set lms_column in course.toml")
        header.append(column or assignment.title)
    rows = [[*_names(row.student.sortable_name, row.student.name), row.student.login]
            + [score(row, a) for a in graded] for row in students]
    if roster and not students:
        result.notes.append(f"{FILE} has no rows: no roster student has a Blackboard username")
    return _csv(header, rows)


def release_file(lines, column, assignment, seen=()):
    """(One assignment's upload, what keeps Blackboard from taking it): lms.Line, its graded and missing
    students, for those with a Blackboard username (the roster's, or the one Blackboard's download named the
    hand-in with); the column as column_for finds it, else the assignment's title (a new column)."""
    found = column_for(assignment, column, seen)
    rows = [[*_names(line.who.sortable_name, line.who.name), line.who.blackboard_username, line.shown_score]
            for line in lines if line.kind not in ("blank", "excused") and line.who.blackboard_username]
    notes = []
    if found is None and rows:
        notes.append(f"{RELEASE_FILE}: no Blackboard column is {assignment.title!r} ({assignment.id}), so Blackboard "
                     "would make a new text column worth 0 points: import the Grade Centre download (`autograder "
                     "roster import`) or set lms_column in course.toml")
    if not rows:
        notes.append(f"{RELEASE_FILE} has no rows: no student has a Blackboard username (import the Grade Centre "
                     "download with `autograder roster import`)")
    return _csv([*COLUMNS, found or assignment.title], rows), notes


def _absent_score(row):
    return f"{row.score:g}" if row.status == "missing" else ""


def _names(sortable, name):
    """(last, first) from a sortable "Doe, Jane", else from "Jane Doe"."""
    last, comma, first = sortable.partition(",")
    if comma:
        return last.strip(), first.strip()
    first, _, last = name.strip().rpartition(" ")
    return last, first


def _words(text):
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def _csv(header, rows):
    return csv_text(header, rows, quote_all=True)
