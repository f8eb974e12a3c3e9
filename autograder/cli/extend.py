"""`autograder extend`: one student's later deadline for one assignment."""

import click

from ..core.assignment import load_assignment
from ..core.course import CourseError, load_course, parse_deadline
from ..grade.refresh import refresh
from ..roster.store import CourseRecords
from .output import JSON, emit_json, say


@click.command("extend")
@click.option("--assignment", "assignment_id", default=None,
              help="Assignment id.  [required to grant]")
@click.option("--student", "who", default=None,
              help="The student: roster key, LMS or SIS id, login, email or name.  [required to grant]")
@click.option("--until", default=None, metavar="ISO-TIME",
              help="Their deadline, e.g. 2026-12-04T23:59:00-05:00 (a date alone is 23:59 here).  [required to grant]")
@click.option("--reason", default="", help="Why (kept in the history; shown on the student's feedback).")
@click.option("--list", "listing", is_flag=True, help="List the standing extensions instead.")
@click.option("--withdraw", type=int, default=None, metavar="ID", help="Withdraw extension ID (see --list).")
@JSON
@click.pass_obj
def extend_command(course_root, assignment_id, who, until, reason, listing, withdraw, as_json):
    """Give one student a later deadline for one assignment; lateness and penalties follow it."""
    course = load_course(course_root)
    with CourseRecords.of(course) as records:
        if listing:
            found = records.extensions(assignment_id)
            if as_json:
                emit_json([e.__dict__ for e in found])
            for e in [] if as_json else found:
                click.echo(f"#{e.id} {e.assignment} {e.student}: until {e.until}"
                           + (f" ({e.reason})" if e.reason else "") + f", by {e.granted_by} at {e.granted_at}")
            if not found and not as_json:
                click.echo("no standing extensions")
            return
        if withdraw is not None:
            extension = records.withdraw_extension(withdraw)
            assignment_id = extension.assignment
            click.echo(f"withdrew extension #{withdraw} ({extension.student}, {extension.assignment})")
        else:
            missing = [flag for flag, value in (("--assignment", assignment_id), ("--student", who),
                                                ("--until", until)) if not value]
            if missing:
                raise click.UsageError(f"missing {', '.join(missing)} (or give --list or --withdraw)")
            assignment = load_assignment(course, assignment_id)
            student = records.find(who)
            try:
                moment = parse_deadline(until)
            except CourseError as error:
                raise CourseError(f"--until: {error}") from None
            number = records.extend(assignment.id, student.key, moment, reason)
            if as_json:
                emit_json({"id": number, "assignment": assignment.id, "student": student.key, "until": moment})
            else:
                click.echo(f"extension #{number}: {student.who} has until {moment} for {assignment.id}")
        done = refresh(course, load_assignment(course, assignment_id), records)
        say(f"applied to {done.out_dir / 'grades.csv'}" if done else
            f"{assignment_id} is not graded yet: `grade` applies it", err=True)
