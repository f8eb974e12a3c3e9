"""The `feedback`, `report` and `release` commands.

They take the course root from the main group's context object (a Path or
None), like `grade`; register them with

    main.add_command(feedback_command)
    main.add_command(report_command)
    main.add_command(release_command)
"""

import functools
import json
import sys
from pathlib import Path

import click

from ..assignment import AssignmentError, load_assignment
from ..course import CourseError, load_course
from ..gradebook import GradebookError
from .leak_guard import LeakError
from ..gradebook.read import FeedbackError, choose_assignment
from .pages import build_pages, write_feedback
from .release_classroom import release_classroom
from .release_lms import release_lms
from .release_students import release_students
from .report import class_report
from .write import write_if_changed


def _one_line_errors(command):
    """Known failures print one line and exit 1, never a traceback."""
    @functools.wraps(command)
    def wrapper(*args, **kwargs):
        try:
            return command(*args, **kwargs)
        except LeakError as error:
            click.echo("autograder: error: leak check failed, nothing was written:", err=True)
            for leak in error.leaks:
                click.echo(f"  {leak}", err=True)
            sys.exit(1)
        except (FeedbackError, CourseError, AssignmentError, GradebookError, OSError) as error:
            click.echo(f"autograder: error: {error}", err=True)
            sys.exit(1)
    return wrapper


def _assignment(course_root, assignment_id, out_dir):
    course = load_course(course_root)
    return course, load_assignment(course, choose_assignment(out_dir, assignment_id))


def _report_withheld(pages):
    for student, leaks in sorted(pages.withheld.items()):
        click.echo(f"withheld the feedback of {student}: it would show a hidden case ({leaks[0]})", err=True)


def _names(students, limit=12):
    return ", ".join(students[:limit]) + (f" and {len(students) - limit} more" if len(students) > limit else "")


ASSIGNMENT = click.option("--assignment", "assignment_id", default=None,
                          help="Assignment id (default: the gradebook's only assignment).")
OUT = click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
                   help="The folder `grade --out` wrote: it holds gradebook.db.")


@click.command("feedback")
@ASSIGNMENT
@OUT
@click.pass_obj
@_one_line_errors
def feedback_command(course_root, assignment_id, out_dir):
    """Write each student's feedback report (HTML and Markdown) into DIR/feedback/<student>/."""
    if out_dir is None:
        raise click.UsageError("--out is required")
    course, assignment = _assignment(course_root, assignment_id, out_dir)
    pages = build_pages(course, assignment, out_dir)
    changed = write_feedback(pages, out_dir)
    _report_withheld(pages)
    click.echo(f"feedback for {len(pages.pages)} student(s) in {out_dir / 'feedback'}: "
               + (f"{len(changed)} written ({_names(changed)})" if changed else "all unchanged"))
    if pages.withheld:
        sys.exit(1)


@click.command("report")
@ASSIGNMENT
@OUT
@click.pass_obj
@_one_line_errors
def report_command(course_root, assignment_id, out_dir):
    """Write the class report for the teaching team: DIR/report.html."""
    if out_dir is None:
        raise click.UsageError("--out is required")
    course, assignment = _assignment(course_root, assignment_id, out_dir)
    path = out_dir / "report.html"
    changed = write_if_changed(path, class_report(course, assignment, out_dir))
    click.echo(f"{'wrote' if changed else 'unchanged:'} {path}")


@click.command("release")
@ASSIGNMENT
@OUT
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
@_one_line_errors
def release_command(course_root, assignment_id, out_dir, target, kind, lms_column, students_bundle):
    """Release feedback and grades (LMS files or Classroom branches), or the student bundle."""
    if students_bundle:
        course = load_course(course_root)
        written = release_students(course, target)
        click.echo(f"leak check passed; student bundle in {target}: "
                   + (f"{len(written)} file(s) written" if written else "nothing changed"))
        return
    if out_dir is None:
        raise click.UsageError("--out is required (the folder holding gradebook.db), unless --students")
    course, assignment = _assignment(course_root, assignment_id, out_dir)
    pages = build_pages(course, assignment, out_dir)
    kind = kind or ("classroom" if course.lms == "classroom" else "lms")
    if kind == "lms":
        result = release_lms(assignment, pages, target, lms_column or course.lms_column(assignment.id))
    else:
        if not target.is_dir():
            raise FeedbackError(f"{target} is not a folder of GitHub Classroom clones")
        result = release_classroom(assignment, pages, target)
        _write_classroom_manifest(out_dir, assignment, target, result)
    if result.changed:
        click.echo(f"released {kind} feedback for {len(result.changed)} student(s) whose results changed: "
                   f"{_names(result.changed)}")
    else:
        click.echo(f"nothing changed since the last release ({len(result.unchanged)} student(s) up to date)")
    if getattr(result, "removed", None):
        click.echo(f"removed the feedback of student(s) no longer in the gradebook: {_names(result.removed)}")
    for student, problem in sorted(result.problems.items()):
        if not isinstance(problem, str):     # leaks found in the rendered page
            problem = f"withheld: it would show a hidden case ({problem[0]})"
        click.echo(f"not released for {student}: {problem}", err=True)
    if result.problems:
        sys.exit(1)


def _write_classroom_manifest(out_dir, assignment, target, result):
    students = {s: {"commit": result.commits.get(s), "sha256": result.hashes.get(s)} for s in result.hashes}
    write_if_changed(out_dir / "classroom_release.json",
                     json.dumps({"assignment": assignment.id, "format": "classroom",
                                 "target": str(Path(target).resolve()), "students": students},
                                indent=1, sort_keys=True, ensure_ascii=False) + "\n")


COMMANDS = (feedback_command, report_command, release_command)
