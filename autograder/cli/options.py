"""Options several verbs share, declared once."""

import os
from pathlib import Path

import click

from ..core.assignment import load_assignment
from ..core.course import load_course
from ..core.sharing import keep_private, repair_shared_tree
from ..gradebook.read import choose_assignment

ASSIGNMENT = click.option("--assignment", "assignment_id", default=None,
                          help="Assignment id (default: the gradebook's only assignment).")
OUT = click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
                   help="The folder `grade --out` wrote: it holds gradebook.db.")


def grading_course(course_root):
    """The course, for a verb that writes names or grades: what it creates is private (core/sharing.py)."""
    course = load_course(course_root)
    previous = keep_private(course)
    context = click.get_current_context(silent=True)
    if context is not None:      # run in-process (a test, a script): the caller's umask comes back after
        context.call_on_close(lambda: os.umask(previous))
    repair_shared_tree(course)   # a course shared after it had grades: its old folders are not setgid
    return course


def graded_assignment(course_root, assignment_id, out_dir):
    """The course and the assignment whose grades `out_dir` holds (the only one, unless named)."""
    course = grading_course(course_root)
    return course, load_assignment(course, choose_assignment(out_dir, assignment_id))

