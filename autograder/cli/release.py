"""`autograder release`: feedback and grades to the LMS or to Classroom clones, or the student bundle."""

import sys
from pathlib import Path

import click

from ..core.course import load_course
from ..core.listing import names
from ..feedback.pages import build_pages
from ..gradebook.read import FeedbackError, load_absent
from ..release.classroom import release_classroom, write_manifest
from ..release.lms import release_lms
from ..release.students import release_students
from .options import ASSIGNMENT, graded_assignment


@click.command("release")
@ASSIGNMENT
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              help="The folder `grade --out` wrote: it holds gradebook.db (not needed with --students).")
@click.option("--to", "target", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Where to release: a folder for the LMS files or the student bundle, "
                   "or the folder holding the GitHub Classroom clones.")
@click.option("--format", "kind", type=click.Choice(["lms", "classroom"]), default=None,
              help="lms: feedback files, a zip and grade CSVs; classroom: a `feedback` branch in each clone "
                   "(default: classroom when course.toml says lms = \"classroom\", else lms).")
@click.option("--lms-column", default=None, metavar="NAME",
              help="Header of the grade column in canvas_grades.csv (default: the assignment's lms_column "
                   "in course.toml, else its title).")
@click.option("--students", "students_bundle", is_flag=True,
              help="Release what students may see instead (assignments/, public_rubric.xlsx, README.md), "
                   "after a leak check.")
@click.pass_obj
def release_command(course_root, assignment_id, out_dir, target, kind, lms_column, students_bundle):
    """Release feedback and grades (LMS files or Classroom branches), or the student bundle."""
    if students_bundle:
        written = release_students(load_course(course_root), target)
        click.echo(f"leak check passed; student bundle in {target}: "
                   + (f"{len(written)} file(s) written" if written else "nothing changed"))
        return
    if out_dir is None:
        raise click.UsageError("--out is required (the folder holding gradebook.db), unless --students")
    course, assignment = graded_assignment(course_root, assignment_id, out_dir)
    pages = build_pages(course, assignment, out_dir)
    kind = kind or ("classroom" if course.lms == "classroom" else "lms")
    if kind == "lms":
        result = release_lms(assignment, pages, target, lms_column or course.lms_column(assignment.id),
                             load_absent(out_dir, assignment.id))
    else:
        if not target.is_dir():
            raise FeedbackError(f"{target} is not a folder of GitHub Classroom clones")
        result = release_classroom(assignment, pages, target)
        write_manifest(out_dir, assignment, target, result)
    _say_what_changed(kind, result, {page.student: page.who for page in pages.pages})


def _say_what_changed(kind, result, who):
    if result.changed:
        click.echo(f"released {kind} feedback for {len(result.changed)} student(s) whose results changed: "
                   f"{names([who.get(s, s) for s in result.changed])}")
    else:
        click.echo(f"nothing changed since the last release ({len(result.unchanged)} student(s) up to date)")
    if getattr(result, "removed", None):
        click.echo(f"removed the feedback of student(s) no longer in the gradebook: {names(result.removed)}")
    for student, problem in sorted(result.problems.items()):
        if not isinstance(problem, str):     # leaks found in the rendered page
            problem = f"withheld: it would show a hidden case ({problem[0]})"
        click.echo(f"not released for {student}: {problem}", err=True)
    if result.problems:
        sys.exit(1)
