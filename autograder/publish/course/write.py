"""`gradebook --to DIR`: the course gradebook, the semester report and every LMS's import file, in one go.

DIR gets course_grades.csv, course_grades.xlsx, history.csv (sheets.py), semester_report.html
(report.py) and lms/ (imports.py), all from the one CourseBook read by book.py.
Writing again changes only the files whose bytes change.
"""

import re
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from ...core.listing import names
from ...core.lms_columns import ASSIGNMENT_COLUMN, best_column
from .report import semester_report
from ...feedback.write import write_if_changed
from .book import read_course_book
from ...core.assignment import load_assignment
from ...grade.refresh import bring_up_to_date
from ...gradebook import lock
from ...gradebook.read import FeedbackError, gradebook_path
from ...gradebook.store import UNGRADABLE
from ...roster.store import CourseRecords, unusable
from ..canvas_checks import check_canvas_columns
from .sheets import course_grade_files
from .imports import import_files


@dataclass
class CourseGradebook:
    book: object                                   # book.CourseBook
    written: list = field(default_factory=list)    # paths written (str), for people and --json
    problems: list = field(default_factory=list)
    notes: list = field(default_factory=list)


def canvas_columns(course, book, seen):
    """({assignment id: Canvas column}, problems): course.toml's lms_column, else the column of the roster's
    Canvas export that names the assignment (core.lms_columns.best_column, as `autograder init` picks it).
    A column two assignments would share is given to neither: one would overwrite the other in Canvas."""
    seen = [header for header in seen if ASSIGNMENT_COLUMN.match(header)]
    chosen = {a.id: course.lms_column(a.id) for a in book.assignments if course.lms_column(a.id)}
    # A column that names an assignment exactly is that assignment's; only the others compete, for what is
    # left (with one column in the export, every assignment came close enough to it, and none got it).
    for assignment in book.assignments:
        column = best_column(assignment.id, assignment.title, seen)
        if assignment.id not in chosen and column is not None and _names_exactly(column, assignment):
            chosen[assignment.id] = column
    left = [header for header in seen if header not in chosen.values()]
    chosen.update({a.id: best_column(a.id, a.title, left) for a in book.assignments if a.id not in chosen})
    by_column = {}
    for assignment_id, column in chosen.items():
        if column is not None:
            by_column.setdefault(column, []).append(assignment_id)
    shared = {column: ids for column, ids in by_column.items() if len(ids) > 1}
    problems = [f"the Canvas column {column!r} is {' and '.join(ids)}'s alike (course.toml's lms_column, or the "
                "export's column that names each): Canvas would put one's scores over the other's. Give each its "
                "own lms_column in course.toml" for column, ids in shared.items()]
    return {a: c for a, c in chosen.items() if c is not None and c not in shared}, problems, shared


def unplaced_lines(assignment_id, found, limit=8):
    """What to tell about an assignment's unplaced hand-ins [(key, name, source, why)], and how to place each:
    one line per reason, naming the keys to give `roster place`."""
    reasons = {}
    for row in found:
        reasons.setdefault(row[3], []).append(_unplaced_who(row))
    lines = [f"{assignment_id}, unplaced: {names(keys, limit)}: {why}" for why, keys in reasons.items()]
    if found:
        lines.append(f"place each: `autograder roster place --assignment {assignment_id} KEY --student WHO` (a team's: "
                     "--student for each member; `--file` for many), or `... KEY --nobody --reason WHY` when it is "
                     f"no roster student's; no regrade is needed (`autograder roster place --assignment "
                     f"{assignment_id}` lists them)")
    return lines


def _unplaced_who(row):
    key, name = row[0], row[1]
    return key if not name or name == key else f"{name} ({key})"


def _error(message, details=()):
    error = FeedbackError(message)
    error.details = tuple(details)
    return error


def _names_exactly(column, assignment):
    words = lambda text: " ".join(re.findall(r"[a-z0-9]+", text.lower()))    # noqa: E731
    return words(ASSIGNMENT_COLUMN.match(column).group("name")) in (words(assignment.id), words(assignment.title))


def write_course_gradebook(course, target, gradebooks=None, points_possible=True, force=False):
    """Read the roster and every assignment's gradebook, write everything to `target`; a CourseGradebook.

    Refuses (FeedbackError, nothing written) when an assignment has hand-ins not graded yet, unless `force`,
    which writes them as blanks, never as 0; and when a Canvas column is not one of the export's."""
    target = Path(target)
    # Who is missing or excused, and the slip days spent, by the one rule as of now, whatever command ran last
    # (grade/refresh.py): a student added to the roster since is in every file at once.
    notes = [note for assignment_id, folder in _graded(course, gradebooks)
             if (note := bring_up_to_date(course, load_assignment(course, assignment_id), folder))]
    # Each gradebook read while no `grade` or `extend` changes it (gradebook/lock.py).
    with ExitStack() as held:
        for folder in _folders(course, gradebooks):
            held.enter_context(lock.shared(folder))
        done = _write(course, target, gradebooks, points_possible, force)
    done.notes = notes + done.notes
    return done


def _graded(course, gradebooks):
    """[(assignment id, folder)] of every assignment with a gradebook, where the course (or `gradebooks`) says."""
    where = {k: Path(v) for k, v in (gradebooks or {}).items()}
    found = [(a, where.get(a, course.grades_dir(a))) for a in course.assignment_ids()]
    return [(a, folder) for a, folder in found if gradebook_path(folder).is_file()]


def _folders(course, gradebooks):
    """The folder of each assignment's gradebook that exists: the course's own, or the one `gradebooks` says."""
    where = {k: Path(v) for k, v in (gradebooks or {}).items()}
    folders = {where.get(a, course.grades_dir(a)) for a in course.assignment_ids()}
    return sorted(f for f in folders if gradebook_path(f).is_file())


def _write(course, target, gradebooks, points_possible, force):
    records = CourseRecords.if_any(course)
    try:
        book = read_course_book(course, records, gradebooks)
        broken = unusable(records) if records is not None else []
        seen = records.lms_columns() if records is not None else []
        points = records.lms_points() if records is not None else {}
    finally:
        if records is not None:
            records.close()
    if broken:
        raise _error(broken[0] + ("" if len(broken) == 1 else f" (and {len(broken) - 1} more)"), broken[1:])
    waiting = book.not_graded()
    if waiting and not force:
        raise _error(
            "hand-ins not graded yet, so no grade file is written: "
            + "; ".join(f"{a}: {names([row.student.who for row in rows])}" for a, rows in waiting.items()),
            [f"finish {a}: run `autograder grade --assignment {a} --out {course.grades_dir(a)} PATHS` again "
             "(the command that was stopped); it grades only what is left" for a in waiting]
            + ["or give --force to write those students' cells blank (never 0)"])
    unresolved = book.unresolved()
    if unresolved and not force:
        raise _error("hand-ins the roster cannot place, so whether these students handed in is not known and no "
                     "grade file is written: " + "; ".join(f"{a}: {names([r.student.who for r in rows])}"
                                                           for a, rows in unresolved.items()),
                     [line for a in unresolved for line in unplaced_lines(a, book.unplaced.get(a, []))]
                     + ["or give --force to write those students' cells blank (never 0)"])
    if book.stale and not force:
        raise _error("scores graded under cases, points, expected values or limits that are no longer the "
                     "assignment's (cases.toml, expected.json or timing.json changed since), so no grade file is "
                     "written: " + "; ".join(f"{a}: {names([name for _, name in rows])}"
                                             for a, rows in book.stale.items()),
                     [f"regrade {a}: run `autograder grade --assignment {a} --out {course.grades_dir(a)} PATHS`, "
                      "PATHS every download of the class: it grades again each hand-in graded under the former "
                      "rubric, and says why" for a in book.stale]
                     + ["or give --force to write the former scores as they are"])
    if book.graded_apart and not force:
        raise _error("scores not all graded with the same cases, expected values and limits (a `grade --student` "
                     "after a change?), so no grade file is written: "
                     + "; ".join(f"{a}: {names([name for _, name in rows])}" for a, rows in book.graded_apart.items()),
                     [f"regrade {a}: run `autograder grade --assignment {a} --out {course.grades_dir(a)} PATHS` "
                      "without --student, PATHS every download of the class" for a in book.graded_apart]
                     + ["or give --force to write them as they are"])
    done = CourseGradebook(book)
    columns, done.problems, shared = canvas_columns(course, book, seen)
    graded = {a.id for a in book.graded()}
    clashes = [p for p, ids in zip(done.problems, shared.values()) if graded & set(ids)]
    if clashes:             # said as it is, not as "has no column": both assignments have the one column
        raise _error(clashes[0], clashes[1:])
    refusals, warnings = check_canvas_columns(course, {a: columns.get(a) for a in graded}, seen, points,
                                              {a.id: a.max_score for a in book.assignments})
    if refusals:
        raise _error(refusals[0] + ("" if len(refusals) == 1 else f" (and {len(refusals) - 1} more)"),
                     refusals[1:])
    done.problems += warnings
    if waiting:
        done.problems += [f"{a}: written blank, not graded yet: {names([r.student.who for r in rows])}"
                          for a, rows in waiting.items()]
    done.problems += [f"{a}: written as graded under the assignment's former cases, points, expected values or "
                      f"limits: {names([name for _, name in rows])}" for a, rows in book.stale.items()]
    done.problems += [f"{a}: written as graded, with other cases or limits than the rest: "
                      f"{names([name for _, name in rows])}" for a, rows in book.graded_apart.items()]
    if unresolved:
        done.problems += [f"{a}: written blank, unresolved (a hand-in the roster cannot place may be theirs): "
                          f"{names([r.student.who for r in rows])}" for a, rows in unresolved.items()]
    for assignment in book.graded():
        ungradable = [f"{r.student.who} ({r.marks[assignment.id].status})" for r in book.rows
                      if assignment.id in r.marks and r.marks[assignment.id].status in UNGRADABLE]
        if ungradable:
            done.notes.append(f"{assignment.id}: 0 points, as what they handed in holds no notebook that could be "
                              f"graded (grades.csv says what it was): {names(ungradable)}")
    for assignment_id, found in book.unplaced.items():
        if assignment_id not in unresolved:     # nobody's grade waits on them, but their grades reach no LMS file
            done.problems.append(f"{assignment_id}: hand-ins the roster cannot place, in plain_grades.csv only: "
                                 + names([_unplaced_who(row) for row in found]))

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
