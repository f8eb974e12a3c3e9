"""`autograder excuse`: one student excused from one assignment, with a reason, kept in the history."""

import click

from ..core.assignment import load_assignment
from ..grade.refresh import changing, not_graded_here, refresh
from ..roster.store import CourseRecords
from .options import grading_course
from .output import JSON, emit_json, say


@click.command("excuse")
@click.option("--assignment", "assignment_id", default=None, help="Assignment id.  [required to excuse]")
@click.option("--student", "who", default=None,
              help="The student: roster key, LMS or SIS id, login, email or name.  [required to excuse]")
@click.option("--reason", default=None,
              help="Why (a dean's note, joined the course late): kept in the history and on the student's "
                   "feedback.  [required]")
@click.option("--list", "listing", is_flag=True,
              help="Show every excuse, withdrawn ones too (filtered by --assignment and --student).")
@click.option("--withdraw", type=click.IntRange(min=1), default=None, metavar="ID",
              help="Withdraw excuse ID (see --list); --reason says why.")
@JSON
@click.pass_obj
def excuse_command(course_root, assignment_id, who, reason, listing, withdraw, as_json):
    """Excuse one student from one assignment: no score is due from them, they are in no mean or total, and
    every LMS file has EX (Canvas) or a blank cell; a hand-in of theirs is graded and its feedback released."""
    course = grading_course(course_root)
    with CourseRecords.of(course) as records:
        if listing:
            _list(records, assignment_id, who, as_json)
            return
        if withdraw is not None:
            assignment_id = next((e.assignment for e in records.excuses(all_of_them=True, ids=[withdraw])),
                                 assignment_id)
        elif not (assignment_id and who and reason and reason.strip()):
            missing = [flag for flag, value in (("--assignment", assignment_id), ("--student", who),
                                                ("--reason", reason and reason.strip())) if not value]
            raise click.UsageError(f"missing {', '.join(missing)} (or give --list or --withdraw)")
        # Not while the assignment is being graded: the change and its refresh wait (gradebook/lock.py).
        with changing(course, [assignment_id] if assignment_id else []):
            if withdraw is not None:
                excuse = records.withdraw_excuse(withdraw, reason)
                message = f"withdrew excuse #{withdraw} ({records.who(excuse.student)}, {excuse.assignment})"
            else:
                assignment = load_assignment(course, assignment_id)
                student = records.find(who)
                excuse = records.excuse(assignment.id, student.key, reason)
                message = f"excuse #{excuse.id}: {student.who} is excused from {assignment.id}: {excuse.reason}"
            done = refresh(course, load_assignment(course, excuse.assignment), records)
        not_here = None if done else not_graded_here(course, records, excuse.assignment)
    if as_json:
        emit_json({**excuse.__dict__, "active": excuse.active})
        return
    click.echo(message)
    say(f"applied to {done.out_dir / 'grades.csv'}" if done else not_here, err=True)


def _list(records, assignment_id, who, as_json):
    student = records.find(who).key if who else None
    found = [e for e in records.excuses(assignment_id, all_of_them=True) if student in (None, e.student)]
    if as_json:
        emit_json([{**e.__dict__, "name": records.who(e.student), "active": e.active} for e in found])
        return
    for e in found:
        state = "standing" if e.active else (f"withdrawn by {e.withdrawn_by} at {e.withdrawn_at}"
                                             + (f": {e.withdraw_reason}" if e.withdraw_reason else ""))
        click.echo(f"#{e.id} {e.assignment} {records.who(e.student)}: {e.reason} (by {e.made_by} at {e.made_at}) "
                   f"[{state}]")
    if not found:
        click.echo("no excuses")
