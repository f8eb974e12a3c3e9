"""Apply the course's records again to an assignment already graded: after `extend`, `accommodate` or `adjust`.

Nothing is graded: the gradebook recomputes lateness (each student's own
deadline), the adjustments and the roster's missing rows from the scores it
holds, with the late rules of its last run, and grades.csv is written again.

The gradebook is the course's own for that assignment (Course.grades_dir:
grades/<id>/, or what course.toml says), never where some `grade --out` last
wrote: a trial run or `make demo` elsewhere cannot change what these verbs read.
"""

import os
import shlex
import sys
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..core.assignment import load_assignment
from ..core.course import late_rules
from ..roster.store import CourseRecords
from ..gradebook import Gradebook, lock
from ..gradebook.store import ABSENT, NOT_GRADED, set_aside
from ..gradebook.read import gradebook_path


@dataclass(frozen=True)
class Refreshed:
    assignment: str
    out_dir: Path
    rows: list            # gradebook.GradeRow, after the refresh


def gradebook_dir(course, assignment_id):
    """The course's gradebook folder for `assignment_id` when it holds a gradebook, else None."""
    folder = course.grades_dir(assignment_id)
    return folder if gradebook_path(folder).is_file() else None


def not_graded_here(course, records, assignment_id):
    """Why `assignment_id` has no gradebook yet, for people: where the course looks, and where an older
    version of the grader last graded it when that is elsewhere."""
    folder = course.grades_dir(assignment_id)
    text = f"{assignment_id} has no gradebook in {folder} yet: `grade --out {folder}` applies it"
    legacy = records.legacy_grading_dirs().get(assignment_id) if records is not None else None
    if legacy is not None and legacy != folder and gradebook_path(legacy).is_file():
        text += (f" (it was graded into {legacy}, which is not the course's folder: move that folder to {folder}, "
                 f"or set grades = \"{legacy}\" in course.toml's [assignment.{assignment_id}])")
    return text


@contextmanager
def changing(course, assignment_ids):
    """Hold the lock of each of these assignments' gradebook folders (those graded) while the block changes
    the course's records and refreshes them: refused (GradebookBusy) before anything changes while a `grade`
    run, or another such command, holds one (gradebook/lock.py)."""
    command = shlex.join(["autograder", *sys.argv[1:]])
    with ExitStack() as held:
        for assignment_id in sorted(set(assignment_ids)):     # one order for every command
            folder = gradebook_dir(course, assignment_id)
            if folder is not None:
                held.enter_context(lock.exclusive(folder, command))
        yield


def refresh(course, assignment, records):
    """Re-apply `records` to `assignment`'s gradebook; returns a Refreshed, or None when it is not graded yet."""
    folder = gradebook_dir(course, assignment.id)
    if folder is None:
        return None
    gradebook = Gradebook(gradebook_path(folder))
    try:
        rules = (gradebook.saved_rules(assignment.id) or late_rules(course, assignment.id)).in_zone(course.zone)
        gradebook.apply_lateness(assignment.id, rules, records, assignment.max_score, course)
        gradebook.export_csv(assignment.id, folder / "grades.csv")
        return Refreshed(assignment.id, folder, gradebook.grades(assignment.id))
    finally:
        gradebook.close()


def refresh_all(course, records, assignment_ids=None):
    """Refresh every graded assignment (or those named): after a change that reaches all of them (a roster
    import, a slip-day decision, whose allocation runs across the semester).  [Refreshed]."""
    done = []
    for assignment_id in assignment_ids or course.assignment_ids():
        refreshed = refresh(course, load_assignment(course, assignment_id), records)
        if refreshed is not None:
            done.append(refreshed)
    return done


def bring_up_to_date(course, assignment, folder):
    """Apply the course's records and today's date again to the gradebook in `folder` before it is read (by
    `release`, `gradebook`, `feedback`, `report`): whoever ran last, and however long ago, a roster student with no
    hand-in is `missing`, `excused` or `not-yet` by the one rule (gradebook/semester.py), and the slip days
    spent are those the semester's hand-ins call for now.  A gradebook graded without the roster (`--no-roster`,
    `make demo`) is refreshed without it.  Returns a note for people, or "" (nothing to say)."""
    folder = Path(folder)
    path = gradebook_path(folder)
    if not path.is_file():
        return ""
    if not (os.access(path, os.W_OK) and os.access(folder, os.W_OK | os.X_OK)):
        return (f"note: {path} is read-only for this user: read as its last refresh left it (who is missing or "
                "excused, and slip days, as of then)")
    records = CourseRecords.if_any(course)
    try:
        with lock.exclusive_unless_read(folder, shlex.join(["autograder", *sys.argv[1:]])) as alone:
            if not alone:           # readers hold it, each brought it up to date as it started
                return ""
            gradebook = Gradebook(path)
            try:
                if assignment.id not in gradebook.assignments():
                    return ""
                mine = course.is_grades_dir(assignment.id, folder) or gradebook.graded_with_roster(assignment.id)
                rules = (gradebook.saved_rules(assignment.id) or late_rules(course, assignment.id)).in_zone(course.zone)
                gradebook.apply_lateness(assignment.id, rules, records if mine else None, assignment.max_score, course)
                gradebook.export_csv(assignment.id, folder / "grades.csv")
            finally:
                gradebook.close()
    finally:
        if records is not None:
            records.close()
    return ""


def slip_days_spent(course):
    """{student: {assignment: slip days its counted hand-in spent}} of the course's gradebooks, as their last
    refresh left them."""
    spent = {}
    for assignment_id in course.assignment_ids():
        folder = gradebook_dir(course, assignment_id)
        if folder is None:
            continue
        gradebook = Gradebook(gradebook_path(folder))
        try:
            for row in gradebook.grades(assignment_id):
                if row.slip_days:
                    spent.setdefault(row.student, {})[assignment_id] = row.slip_days
        finally:
            gradebook.close()
    return spent


def handin_keys(course, assignment_id):
    """{key: (name, source)} of every hand-in in the course's gradebook of `assignment_id` ({} before grading)."""
    folder = gradebook_dir(course, assignment_id)
    if folder is None:
        return {}
    gradebook = Gradebook(gradebook_path(folder))
    try:
        rows = gradebook.db.execute("SELECT student, name, source FROM submissions WHERE assignment = ? UNION "
                                    "SELECT student, name, source FROM pending WHERE assignment = ? ORDER BY 1",
                                    (assignment_id, assignment_id)).fetchall()
    finally:
        gradebook.close()
    return {key: (name or key, source) for key, name, source in reversed(rows)}


def place(course, assignment, records, key, students, reason=""):
    """Record the teaching team's placement of the hand-in keyed `key` (roster Students, or [] for nobody on the
    roster) and apply it to the course's gradebook without grading again; returns a Refreshed, or None when the
    assignment is not graded yet (`grade` applies it then)."""
    records.place(assignment.id, key, [s.key for s in students], reason)
    folder = gradebook_dir(course, assignment.id)
    if folder is None:
        return None
    gradebook = Gradebook(gradebook_path(folder))
    try:
        gradebook.place(assignment.id, key, [(s.key, s.name or s.key) for s in students])
    finally:
        gradebook.close()
    return refresh(course, assignment, records)


def unplaced(course, assignment_id, records):
    """[(key, name, source, why)] of the assignment's hand-ins the roster cannot place, in the course's gradebook."""
    folder = gradebook_dir(course, assignment_id)
    if folder is None:
        return []
    gradebook = Gradebook(gradebook_path(folder))
    try:
        return gradebook.unplaced(assignment_id, set_aside(records, assignment_id))
    finally:
        gradebook.close()


def current_score(course, assignment, student):
    """The student's score in the assignment's gradebook now (None: not graded, or no row)."""
    folder = gradebook_dir(course, assignment.id)
    if folder is None:
        return None
    gradebook = Gradebook(gradebook_path(folder))
    try:
        return next((row.score for row in gradebook.grades(assignment.id)
                     if row.student == student and row.status != "not-graded"), None)
    finally:
        gradebook.close()


def untimed(course, assignment_id, students):
    """The students among `students` (keys) whose counted hand-in is late by the LMS's mark alone, with no hand-in
    time: a deadline of their own cannot be judged for them, and the mark (judged against the course's deadline)
    stands.  [] when the assignment is not graded yet."""
    folder = gradebook_dir(course, assignment_id)
    if folder is None:
        return []
    gradebook = Gradebook(gradebook_path(folder))
    try:
        return [row for row in gradebook.grades(assignment_id) if row.student in set(students)
                and row.status not in (*ABSENT, NOT_GRADED) and not row.handed_in_at
                and row.late == 1]
    finally:
        gradebook.close()
