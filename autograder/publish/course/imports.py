"""An import file for every LMS, from the one course gradebook (book.py).

Each file holds the roster students that LMS can match, with every graded
assignment at once, written as that LMS documents its import:

  canvas_import.csv      Canvas, Grades → Import (canvas-lms lib/gradebook_importer.rb): the columns
                         `Student,ID,SIS User ID,SIS Login ID,Section` with the roster's own values
                         (Canvas matches a row by ID, then SIS ids), then one column per assignment headed
                         `Title (assignment id)`, as its gradebook export names it; an optional
                         `Points Possible` row, which the importer skips.  A column that is not
                         `Title (id)` makes a new assignment, and one whose title holds "Current Score",
                         "Final Grade" and the like is ignored: both are reported.
  moodle_import.csv      Moodle, Grades → Import → CSV file: `Email address` and `ID number` to map each
                         row to its user, then per assignment a grade column and a `<title> feedback`
                         column, mapped by hand in Moodle's import form.  `-` is Moodle's own "no grade"
                         (load_data.php reads '' and '-' alike as none).
  gradescope_scores.csv  Gradescope, an assignment's "Upload scores" / roster matching: `Name,SID,Email`
                         then one score column per assignment.
  classroom_grades.csv   GitHub Classroom has no import: the columns `gh classroom assignment-grades`
                         writes, one row per student and assignment, for whatever reads that file.
  plain_grades.csv       everyone, on the roster or not, for anything else.

A `not-yet` mark (deadline still ahead) is a blank in every LMS file, so
nothing is entered early; `missing` is 0.  An excused student (`autograder excuse`, or a late joiner) is `EX`
in Canvas's file, which its importer reads as excused (`grade.to_s.casecmp("EX")` in gradebook_importer.rb),
and blank in the others, whose imports have no such value: Blackboard's Grade Center (Exempt Grade), D2L
(Exempt) and Moodle (Excluded) take it by hand, which `notes` says, naming them.  A student an LMS cannot match
(no id, email or login it knows) is left out of that file and named in
`problems`, as is every hand-in not on the roster; a file no roster student
fits (Classroom's, for a Canvas roster) is written with its header alone and
said in `notes`.
"""

import re
from dataclasses import dataclass, field

from ...core.csv_cells import Verbatim, csv_text
from ...core.listing import names
from ...core.lms_columns import ASSIGNMENT_COLUMN
from ...gradebook.store import UNGRADABLE
from .. import blackboard, d2l
from ..lms import CANVAS_COLUMNS

POINTS_POSSIBLE = "    Points Possible"       # Canvas's own spelling, leading spaces included
# Canvas's importer drops every column whose header holds one of these, its gradebook's totals (canvas-lms
# lib/gradebook_importer.rb, NON_ASSIGNMENT_COLUMN_HEADERS, matched anywhere: "Unposted Final Score" too).
CANVAS_IGNORED = re.compile("|".join(("Current Score", "Current Points", "Current Grade", "Final Score",
                                      "Final Points", "Final Grade", "Override Score", "Override Grade",
                                      "Override Status")))
MOODLE_NO_GRADE = Verbatim("-")
CLASSROOM_COLUMNS = ("assignment_name", "assignment_url", "starter_code_url", "github_username",
                     "roster_identifier", "student_repository_name", "student_repository_url",
                     "submission_timestamp", "points_awarded", "points_available")


@dataclass
class ImportFiles:
    files: dict = field(default_factory=dict)       # file name -> CSV text
    problems: list = field(default_factory=list)    # what an instructor must know before importing
    notes: list = field(default_factory=list)       # files left empty because the roster is another LMS's


def import_files(book, lms_columns, points_possible=True, seen=()):
    """Every LMS's import file for `book` (a CourseBook); `lms_columns` maps an assignment id to its Canvas
    column (`Title (id)`); an assignment without one is headed by its title.  `seen`: the grade columns of
    the rosters imported (Blackboard's and D2L's are found there)."""
    result = ImportFiles()
    graded = book.graded()
    roster = [row for row in book.rows if row.student.on_roster]
    off = [row.student.who for row in book.rows if not row.student.on_roster]
    if off and not roster:
        result.problems.append("no student is on a roster, so the LMS files have no rows (only plain_grades.csv "
                               "has them): import the class list first, `autograder roster import FILE`")
    elif off:
        result.problems.append(f"not on the roster, so in plain_grades.csv only: {names(off)}")
    if not graded:
        result.problems.append("no assignment has been graded yet: the LMS files have no grade column")
    for name, write in (("canvas_import.csv", _canvas), ("moodle_import.csv", _moodle),
                        ("gradescope_scores.csv", _gradescope), ("classroom_grades.csv", _classroom)):
        result.files[name] = write(book, graded, roster, lms_columns, points_possible, result)
    for module in (blackboard, d2l):
        result.files[module.FILE] = module.course_file(book, graded, roster, seen, lms_columns, _score, result)
    result.files["plain_grades.csv"] = _plain(book)
    excused = [f"{row.student.who} ({', '.join(row.excused)})" for row in roster if row.excused]
    if excused and roster:
        result.notes.append(f"excused, EX in canvas_import.csv and blank in the other files: {names(excused)}; "
                            "an LMS whose import has no excused takes it by hand: "
                            + "; ".join(EXCUSED_BY_HAND.values()))
    return result


def _canvas_score(row, assignment):
    mark = row.marks.get(assignment.id)
    return CANVAS_EXCUSED if mark is not None and mark.excused else _score(row, assignment)


CANVAS_EXCUSED = "EX"          # Canvas's importer: an excused submission
# Where each LMS whose import has no "excused" takes it by hand, for the note naming the excused students.
EXCUSED_BY_HAND = {"moodle_import.csv": "Moodle (grader report: edit the grade, tick Excluded)",
                   "gradescope_scores.csv": "Gradescope (it has no excused: the score stays blank)",
                   blackboard.FILE: "Blackboard's Grade Centre (the cell's menu: Exempt Grade)",
                   d2l.FILE: "D2L (Grades → Enter Grades: Exempt)"}


def _score(row, assignment, blank=""):
    """A score as the LMS files write it: the number, 0 for missing, blank when not due yet, not graded or
    excused."""
    mark = row.marks.get(assignment.id)
    if mark is None or not mark.due:
        return blank
    return f"{mark.score:g}"


def _matchable(rows, has_id, file_name, what, result):
    kept = [row for row in rows if has_id(row.student)]
    left = [row.student.who for row in rows if not has_id(row.student)]
    if left and not kept:     # a roster from another LMS: a note, not a warning naming the whole class
        result.notes.append(f"{file_name} has no rows: no roster student has {what}")
    elif left:
        result.problems.append(f"{file_name}: left out, as they have no {what.split(' ', 1)[1]}: {names(left)}")
    return kept


def _canvas_header(assignment, lms_columns, result):
    """The assignment's Canvas column; what Canvas would make of it is said when the file has rows."""
    column = lms_columns.get(assignment.id) or assignment.title
    if result is None:
        pass
    elif CANVAS_IGNORED.search(column):
        result.problems.append(f"canvas_import.csv: Canvas would ignore the column {column!r} (its title looks "
                               f"like one of Canvas's totals); set lms_column for {assignment.id} in course.toml")
    elif not ASSIGNMENT_COLUMN.match(column):
        # Canvas then looks for an assignment with exactly this title, and creates one if there is none.
        result.problems.append(f"canvas_import.csv: the column {column!r} ({assignment.id}) names no Canvas "
                               "assignment id, so Canvas matches it by its exact title or creates a new assignment: "
                               "import a Canvas gradebook export (`autograder roster import`) or set lms_column "
                               "in course.toml")
    return column


def _canvas(book, graded, roster, lms_columns, points_possible, result):
    students = _matchable(roster, lambda s: s.lms_id and s.lms in ("canvas", ""), "canvas_import.csv",
                          "a Canvas user id", result)
    header = [*CANVAS_COLUMNS] + [_canvas_header(a, lms_columns, result if students else None) for a in graded]
    rows = []
    if points_possible:
        rows.append([Verbatim(POINTS_POSSIBLE), "", "", "", ""] + [f"{a.max_score:g}" for a in graded])
    for row in students:
        s = row.student
        rows.append([s.sortable_name or s.name, s.lms_id, s.sis_id, s.login, s.section]
                    + [_canvas_score(row, a) for a in graded])
    return csv_text(header, rows)


def _feedback(mark):
    """Moodle's feedback text for one mark: what a number alone does not say."""
    if mark is not None and mark.excused:
        return "excused"
    if mark is None or not mark.due:
        return ""
    if mark.missing:
        return "missing: nothing handed in by the deadline"
    parts = []
    if mark.status in UNGRADABLE:       # a 0 that says why: what was handed in was no notebook
        said = [line for line in (mark.message or "").splitlines() if line and not line.startswith("handed in: ")]
        parts.append(f"{mark.status}: {said[0]}" if said else mark.status)
    elif mark.status != "graded":
        parts.append(mark.status)
    if mark.late:
        parts.append(f"late, {mark.penalty:g} point(s) off" if mark.penalty else "late")
    if mark.adjust_note:
        parts.append(f"adjusted: {mark.adjust_note}")
    return "; ".join(parts)


def _moodle(book, graded, roster, lms_columns, points_possible, result):
    header = ["Email address", "ID number"]
    for assignment in graded:
        header += [assignment.title, f"{assignment.title} feedback"]
    rows = []
    # Moodle ends the whole import at the first user it cannot find (grade/import/csv load_data.php,
    # check_user_exists), so an ID number is written only when it is Moodle's own: an SIS id from
    # another LMS's roster may not be.  A row whose mapped field is blank, Moodle skips.
    for row in _matchable(roster, lambda s: s.email or (s.lms == "moodle" and s.sis_id), "moodle_import.csv",
                          "an email address or a Moodle ID number", result):
        line = [row.student.email, row.student.sis_id if row.student.lms == "moodle" else ""]
        for assignment in graded:
            mark = row.marks.get(assignment.id)
            line += [_score(row, assignment, MOODLE_NO_GRADE), _feedback(mark)]
        rows.append(line)
    return csv_text(header, rows)


def _gradescope(book, graded, roster, lms_columns, points_possible, result):
    header = ["Name", "SID", "Email"] + [a.title for a in graded]
    rows = [[row.student.name, row.student.sis_id, row.student.email] + [_score(row, a) for a in graded]
            for row in _matchable(roster, lambda s: s.email or s.sis_id, "gradescope_scores.csv",
                                  "an email address or SID", result)]
    return csv_text(header, rows)


def _classroom(book, graded, roster, lms_columns, points_possible, result):
    students = _matchable(roster, lambda s: s.login and s.lms == "classroom", "classroom_grades.csv",
                          "a GitHub login (from a GitHub Classroom roster)", result)
    rows = []
    for assignment in graded:
        for row in students:
            s, mark = row.student, row.marks.get(assignment.id)
            # The repository the hand-in came from (its clone's folder), never one made up from the login.
            repository = mark.repository if mark is not None else ""
            rows.append([assignment.id, "", "", s.login, s.sis_id or s.email, repository, "",
                         mark.handed_in_at if mark else "", _score(row, assignment), f"{assignment.max_score:g}"])
    return csv_text(CLASSROOM_COLUMNS, rows)


def _plain(book):
    header = ["student", "name", "lms_id", "sis_id", "login", "email", "section"]
    header += [a.id for a in book.assignments] + ["total", "due", "out_of", "on_roster", "missing", "late",
                                                   "excused"]
    rows = []
    for row in book.rows:
        s = row.student
        rows.append([s.key, s.name, s.lms_id, s.sis_id, s.login, s.email, s.section]
                    + [_canvas_score(row, a) for a in book.assignments]
                    + [f"{row.total:g}", f"{row.possible:g}", f"{book.max_total:g}",
                       "yes" if s.on_roster else "no", " ".join(row.missing), " ".join(row.late),
                       " ".join(row.excused)])
    return csv_text(header, rows)
