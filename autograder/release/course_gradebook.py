"""`gradebook --to DIR`: the course gradebook, the semester report and every LMS's import file, in one go.

DIR gets course_grades.csv, course_grades.xlsx, history.csv (release/course_grades.py),
semester_report.html (feedback/semester.py) and lms/ (release/course_imports.py).
Writing again changes only the files whose bytes change.
"""

from dataclasses import dataclass, field
from pathlib import Path

from ..core.lms_columns import ASSIGNMENT_COLUMN, best_column
from ..feedback.semester import semester_report
from ..feedback.write import write_if_changed
from ..gradebook.course_book import read_course_book
from ..roster.store import CourseRecords
from .course_grades import course_grade_files
from .course_imports import import_files


@dataclass
class CourseGradebook:
    book: object                                   # gradebook.course_book.CourseBook
    written: list = field(default_factory=list)    # paths written (str), for people and --json
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def canvas_columns(course, book, seen):
    """({assignment id: Canvas column}, problems): course.toml's lms_column, else the column of the roster's
    Canvas export that names the assignment (core.lms_columns.best_column, as `autograder init` picks it).
    A column two assignments would share is given to neither: one would overwrite the other in Canvas."""
    seen = [header for header in seen if ASSIGNMENT_COLUMN.match(header)]
    chosen = {a.id: course.lms_column(a.id) or best_column(a.id, a.title, seen) for a in book.assignments}
    by_column = {}
    for assignment_id, column in chosen.items():
        if column is not None:
            by_column.setdefault(column, []).append(assignment_id)
    shared = {column: ids for column, ids in by_column.items() if len(ids) > 1}
    problems = [f"the Canvas column {column!r} fits {' and '.join(ids)}: set each one's lms_column in course.toml"
                for column, ids in shared.items()]
    return {a: c for a, c in chosen.items() if c is not None and c not in shared}, problems


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
    columns, done.problems = canvas_columns(course, book, seen)
    imports = import_files(book, columns, points_possible, seen)
    done.problems += imports.problems
    done.notes += imports.notes
    outputs = dict(course_grade_files(book))
    outputs["semester_report.html"] = semester_report(book)
    outputs.update({f"lms/{name}": text for name, text in imports.files.items()})
    for name, data in outputs.items():
        if write_if_changed(target / name, data):
            done.written.append(str(target / name))
    return done
