"""`autograder release`: feedback and grades to the LMS or to Classroom clones, or the student bundle."""

import sys
from pathlib import Path

import click

from ..core.course import load_course
from ..core.listing import names
from ..feedback.pages import build_pages
from ..core.lms_columns import ASSIGNMENT_COLUMN, best_column
from ..gradebook import lock
from ..gradebook.read import FeedbackError, gradebook_path, load_absent, load_pending
from ..publish.classroom import release_classroom, write_manifest
from ..publish.canvas_checks import check_canvas_columns
from ..roster.store import CourseRecords, unusable
from ..publish.lms import release_lms
from ..publish.students import release_students
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
@click.option("--force", is_flag=True,
              help="Release although some hand-ins are not graded yet (a run was stopped): those students get a "
                   "blank grade, never 0, and no feedback.")
@click.pass_obj
def release_command(course_root, assignment_id, out_dir, target, kind, lms_column, students_bundle, force):
    """Release feedback and grades (LMS files or Classroom branches), or the student bundle."""
    if students_bundle:
        written = release_students(load_course(course_root), target)
        click.echo(f"leak check passed; student bundle in {target}: "
                   + (f"{len(written)} file(s) written" if written else "nothing changed"))
        return
    if out_dir is None:
        raise click.UsageError("--out is required (the folder holding gradebook.db), unless --students")
    course, assignment = graded_assignment(course_root, assignment_id, out_dir)
    click.echo(f"{assignment.id}: read {gradebook_path(out_dir)}" + (
        "" if course.is_grades_dir(assignment.id, out_dir)
        else f" (not the course's gradebook for {assignment.id}, {course.grades_dir(assignment.id)})"))
    with lock.shared(out_dir):       # never while `grade` or `extend` changes it (gradebook/lock.py)
        kind, result, pages = _release(course, assignment, out_dir, target, kind, lms_column, force)
    _say_what_changed(kind, result, {page.student: page.who for page in pages.pages})


def _release(course, assignment, out_dir, target, kind, lms_column, force):
    """(the kind released, its result, the pages) of one assignment's release, to the LMS or to clones."""
    waiting = _not_graded_yet(out_dir, assignment, force)
    pages = build_pages(course, assignment, out_dir)
    waiting_keys = {row.student for row in waiting}
    pages.pages = [page for page in pages.pages if page.student not in waiting_keys]
    roster, column = _canvas_checks(course, assignment, lms_column or course.lms_column(assignment.id))
    kind = kind or ("classroom" if course.lms == "classroom" else "lms")
    if kind == "lms":
        result = release_lms(assignment, pages, target, column, load_absent(out_dir, assignment.id), course.lms,
                             waiting, roster)
        if result.test_accounts:
            click.echo(f"left out of every file (the LMS's test account): {names(result.test_accounts)}")
        if result.no_grade_row:
            click.echo("warning: not in moodle_grades.csv, as their hand-in did not come from a Moodle download "
                       f"(whose names carry the participant id): {names(result.no_grade_row)}", err=True)
        if result.blank:
            click.echo(f"warning: released with a blank grade, not graded yet (--force): {names(result.blank)}",
                       err=True)
        return kind, result, pages
    if not target.is_dir():
        raise FeedbackError(f"{target} is not a folder of GitHub Classroom clones")
    result = release_classroom(assignment, pages, target)
    write_manifest(out_dir, assignment, target, result)
    return kind, result, pages


def _not_graded_yet(out_dir, assignment, force):
    """[PendingRow] of hand-ins not graded yet; refused (nothing released) unless `force`."""
    waiting = load_pending(out_dir, assignment.id)
    if waiting and not force:
        people = [row.name if row.name == row.student else f"{row.name} ({row.student})" for row in waiting]
        error = FeedbackError(f"{len(waiting)} hand-in(s) of {assignment.id} not graded yet, so nothing is "
                              f"released: {names(people)}")
        error.details = ("the grading run that held them was stopped: run the same `autograder grade ... --out "
                         f"{out_dir}` command again (without --regrade); it grades only what is left",
                         "or give --force to release those students with a blank grade (never 0)")
        raise error
    return waiting


def _canvas_checks(course, assignment, column):
    """({key: roster Student}, the grade column) from the course's records (the roster gives each LMS file its
    ids and flags the LMS's test accounts); a Canvas column that is not in the Canvas export, which Canvas's
    importer would make a new assignment of, is refused."""
    records = CourseRecords.if_any(course)
    if records is None:
        return {}, column
    with records:
        broken = unusable(records, assignment.id)
        if broken:      # the grades this release would write are not known
            raise FeedbackError(broken[0])
        roster = {s.key: s for s in records.students(include_off_roster=True)}
        seen, points = records.lms_columns(), records.lms_points()
    if course.lms == "moodle":
        return roster, column
    if column is None and seen:
        column = best_column(assignment.id, assignment.title, [h for h in seen if ASSIGNMENT_COLUMN.match(h)])
    refusals, warnings = check_canvas_columns(course, {assignment.id: column}, seen, points,
                                              {assignment.id: assignment.max_score})
    if refusals:
        raise FeedbackError(refusals[0])
    for warning in warnings:
        click.echo(f"warning: {warning}", err=True)
    return roster, column


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
