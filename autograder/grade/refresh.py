"""Apply the course's records again to an assignment already graded: after `extend`, `accommodate` or `adjust`.

Nothing is graded: the gradebook recomputes lateness (each student's own
deadline), the adjustments and the roster's missing rows from the scores it
holds, with the late rules of its last run, and grades.csv is written again.
"""

from dataclasses import dataclass
from pathlib import Path

from ..core.course import late_rules
from ..gradebook import Gradebook
from ..gradebook.read import gradebook_path


@dataclass(frozen=True)
class Refreshed:
    assignment: str
    out_dir: Path
    rows: list            # gradebook.GradeRow, after the refresh


def gradebook_dir(course, records, assignment_id):
    """Where `assignment_id` was last graded (the course's records), else grades/<id>; None when neither has one."""
    for folder in (records.grading_dirs().get(assignment_id), Path(course.root) / "grades" / assignment_id):
        if folder is not None and gradebook_path(folder).is_file():
            return folder
    return None


def refresh(course, assignment, records):
    """Re-apply `records` to `assignment`'s gradebook; returns a Refreshed, or None when it is not graded yet."""
    folder = gradebook_dir(course, records, assignment.id)
    if folder is None:
        return None
    gradebook = Gradebook(gradebook_path(folder))
    try:
        rules = gradebook.saved_rules(assignment.id) or late_rules(course, assignment.id)
        gradebook.apply_lateness(assignment.id, rules, records, assignment.max_score)
        gradebook.export_csv(assignment.id, folder / "grades.csv")
        return Refreshed(assignment.id, folder, gradebook.grades(assignment.id))
    finally:
        gradebook.close()


def current_score(course, assignment, records, student):
    """The student's score in the assignment's gradebook now (None: not graded, or no row)."""
    folder = gradebook_dir(course, records, assignment.id)
    if folder is None:
        return None
    gradebook = Gradebook(gradebook_path(folder))
    try:
        return next((row.score for row in gradebook.grades(assignment.id) if row.student == student), None)
    finally:
        gradebook.close()
