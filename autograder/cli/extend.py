"""`autograder extend`: one student's later deadline for one assignment."""

from datetime import datetime

import click

from ..core.assignment import load_assignment
from ..core.course import CourseError, late_rules, parse_deadline
from ..grade.refresh import changing, gradebook_dir, not_graded_here, refresh, refresh_all, untimed
from ..gradebook import Gradebook
from ..gradebook.read import gradebook_path
from ..roster.store import CourseRecords
from .options import grading_course
from .output import JSON, emit_json, say


@click.command("extend")
@click.option("--assignment", "assignment_id", default=None,
              help="Assignment id.  [required to grant]")
@click.option("--student", "who", default=None,
              help="The student: roster key, LMS or SIS id, login, email or name.  [required to grant]")
@click.option("--until", default=None, metavar="ISO-TIME",
              help="Their deadline, e.g. 2026-12-04T23:59:00-05:00; without a time or an offset it is read in the "
                   "course deadline's zone (a date alone is 23:59 there).  [required to grant]")
@click.option("--reason", default="", help="Why (kept in the history; shown on the student's feedback).")
@click.option("--list", "listing", is_flag=True, help="List the standing extensions instead.")
@click.option("--withdraw", type=click.IntRange(min=1), default=None, metavar="ID",
              help="Withdraw extension ID (see --list).")
@JSON
@click.pass_obj
def extend_command(course_root, assignment_id, who, until, reason, listing, withdraw, as_json):
    """Give one student a later deadline for one assignment; lateness and penalties follow it."""
    course = grading_course(course_root)
    with CourseRecords.of(course) as records:
        if listing:
            _list(records, assignment_id, as_json)
            return
        if withdraw is not None:
            assignment_id = next((e.assignment for e in records.extensions(all_of_them=True, ids=[withdraw])),
                                 assignment_id)
        # Not while the assignment is being graded: the change and its refresh wait (gradebook/lock.py).  With
        # slip days, every assignment's may follow (a day this one no longer needs is left for the others).
        reached = course.assignment_ids() if course.slip_days is not None else [assignment_id] if assignment_id else []
        with changing(course, reached):
            _change(course, records, assignment_id, who, until, reason, withdraw, as_json)


def _change(course, records, assignment_id, who, until, reason, withdraw, as_json):
    """Grant or withdraw the extension, and refresh the assignment's gradebook."""
    student = None
    if withdraw is not None:
        extension = records.withdraw_extension(withdraw)
        assignment_id = extension.assignment
        click.echo(f"withdrew extension #{withdraw} ({records.who(extension.student)}, {extension.assignment})")
    else:
        student = _grant(course, records, assignment_id, who, until, reason, as_json)
    assignment = load_assignment(course, assignment_id)
    done = refresh(course, assignment, records)
    if course.slip_days is not None:
        refresh_all(course, records, [a for a in course.assignment_ids() if a != assignment.id])
    say(f"applied to {done.out_dir / 'grades.csv'}" if done else not_graded_here(course, records, assignment.id),
        err=True)
    if student is not None:
        warn_untimed(course, assignment.id, [student.key], records, "the extension")


def _list(records, assignment_id, as_json):
    found = records.extensions(assignment_id)
    if as_json:
        emit_json([{**e.__dict__, "name": records.who(e.student)} for e in found])
        return
    for e in found:
        click.echo(f"#{e.id} {e.assignment} {records.who(e.student)}: until {e.until}"
                   + (f" ({e.reason})" if e.reason else "") + f", by {e.granted_by} at {e.granted_at}")
    if not found:
        click.echo("no standing extensions")


def _grant(course, records, assignment_id, who, until, reason, as_json):
    """Record the extension, its date read in the deadline's zone and after the deadline; returns the student."""
    missing = [flag for flag, value in (("--assignment", assignment_id), ("--student", who), ("--until", until))
               if not value]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (or give --list or --withdraw)")
    assignment = load_assignment(course, assignment_id)
    student = records.find(who)
    deadline = _own_deadline(course, assignment.id)
    if deadline is None:
        raise CourseError(f"{assignment.id} has no deadline (course.toml's [assignment.{assignment.id}]), "
                          "so there is nothing to extend: set its deadline first")
    try:
        moment = parse_deadline(until, deadline.tzinfo)
    except CourseError as error:
        raise CourseError(f"--until: {error}") from None
    if datetime.fromisoformat(moment) <= deadline:
        raise CourseError(f"--until {moment} is not after {assignment.id}'s own deadline "
                          f"({deadline.isoformat()}): an extension gives more time, never less")
    number = records.extend(assignment.id, student.key, moment, reason)
    if as_json:
        emit_json({"id": number, "assignment": assignment.id, "student": student.key, "until": moment})
    else:
        click.echo(f"extension #{number}: {student.who} has until {moment} for {assignment.id}")
    return student


def _own_deadline(course, assignment_id):
    """The assignment's deadline: course.toml's, else the one its last grading run applied (`grade --deadline`)."""
    deadline = late_rules(course, assignment_id).deadline
    folder = gradebook_dir(course, assignment_id)
    if deadline is None and folder is not None:
        gradebook = Gradebook(gradebook_path(folder))
        try:
            saved = gradebook.saved_rules(assignment_id)
        finally:
            gradebook.close()
        deadline = saved.in_zone(course.zone).deadline if saved is not None else None
    return deadline


def warn_untimed(course, assignment_id, students, records, what):
    """Say at once when a deadline of a student's own cannot take effect: their hand-in has no time from the LMS
    (Canvas's download carries none), so only the LMS's late mark, judged against the course's deadline, counts."""
    rows = untimed(course, assignment_id, students)
    if not rows:
        return
    folder = course.grades_dir(assignment_id)
    click.echo(f"warning: {what} cannot change the lateness of {', '.join(records.who(r.student) for r in rows)} "
               f"in {assignment_id} yet: the LMS gave no hand-in time to compare with the new deadline (a Canvas "
               f"download has none; its _LATE_ mark is judged against the course's deadline). It takes effect "
               f"once `autograder grade --assignment {assignment_id} --out {folder} --times FILE PATHS` gives the "
               "LMS's hand-in times (Moodle's grading worksheet, or a CSV with student and submitted_at columns); "
               "no regrade is needed", err=True)
