"""`gradebook --to DIR`: the course gradebook, the semester report and every LMS's import file, in one go.

DIR gets course_grades.csv, course_grades.xlsx, history.csv (release/course_grades.py),
semester_report.html (feedback/semester.py) and lms/ (release/course_imports.py).
Writing again changes only the files whose bytes change.
"""

from dataclasses import dataclass, field
from pathlib import Path

from ..feedback.semester import semester_report
from ..feedback.write import write_if_changed
from ..gradebook.course_book import read_course_book
from ..roster.match import folded
from ..roster.store import CourseRecords
from .course_grades import course_grade_files
from .course_imports import CANVAS_ASSIGNMENT, import_files


@dataclass
class CourseGradebook:
    book: object                                   # gradebook.course_book.CourseBook
    written: list = field(default_factory=list)    # paths written (str), for people and --json
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def canvas_columns(course, book, seen):
    """{assignment id: Canvas column}: course.toml's lms_column, else the column of the roster's Canvas export
    whose title is the assignment's id or title (letters and digits compared: `Bitwise Queens (502)` is
    bitwise-queens).  Returns the columns and what could not be matched."""
    columns, problems = {}, []
    by_title = {}
    for header in seen:
        match = CANVAS_ASSIGNMENT.fullmatch(header)
        if match:
            by_title.setdefault(folded(match.group(1)), []).append(header)
    for assignment in book.assignments:
        chosen = course.lms_column(assignment.id)
        if chosen is None:
            found = list(dict.fromkeys(by_title.get(folded(assignment.id), []) + by_title.get(
                folded(assignment.title), [])))
            if len(found) == 1:
                chosen = found[0]
            elif len(found) > 1:
                problems.append(f"{assignment.id}: several Canvas columns fit ({', '.join(found)}); set "
                                "lms_column in course.toml")
        if chosen is not None:
            columns[assignment.id] = chosen
    return columns, problems


def write_course_gradebook(course, target, gradebooks=None, points_possible=True):
    """Read the roster and every assignment's gradebook, write everything to `target`; a CourseGradebook."""
    target = Path(target)
    records = CourseRecords.if_any(course)
    try:
        book = read_course_book(course, records, gradebooks)
        seen = records.lms_columns() if records is not None else []
    finally:
        if records is not None:
            records.close()
    done = CourseGradebook(book)
    columns, problems = canvas_columns(course, book, seen)
    done.problems += problems
    imports = import_files(book, columns, points_possible)
    done.problems += imports.problems
    done.notes += imports.notes
    outputs = dict(course_grade_files(book))
    outputs["semester_report.html"] = semester_report(book)
    outputs.update({f"lms/{name}": text for name, text in imports.files.items()})
    for name, data in outputs.items():
        if write_if_changed(target / name, data):
            done.written.append(str(target / name))
    return done
