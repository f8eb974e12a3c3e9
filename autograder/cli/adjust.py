"""`autograder adjust`: change one score by hand, with a reason, kept through every regrade."""

import click

from ..core.assignment import load_assignment
from ..core.numbers import shown
from ..grade.refresh import changing, current_score, not_graded_here, refresh
from ..roster.store import CourseRecords, RecordsError
from .numbers import POINTS_CHANGE, SCORE
from .options import grading_course
from .output import JSON, emit_json, say


@click.command("adjust")
@click.option("--assignment", "assignment_id", default=None, help="Assignment id.  [required to adjust]")
@click.option("--student", "who", default=None,
              help="The student: roster key, LMS or SIS id, login, email or name.  [required to adjust]")
@click.option("--points", type=POINTS_CHANGE, default=None, help="Points to add (negative to take off), e.g. +0.5.")
@click.option("--score", type=SCORE, default=None, help="The score to set instead.")
@click.option("--allow-over", is_flag=True,
              help="Accept a score above the assignment's maximum (or an adjustment that would go below 0, "
                   "which is kept at 0).")
@click.option("--reason", default=None,
              help="Why: shown on the student's feedback and in every release file.  [required]")
@click.option("--list", "listing", is_flag=True,
              help="Show the history of adjustments (withdrawn ones too), filtered by --assignment and --student.")
@click.option("--withdraw", type=click.IntRange(min=1), default=None, metavar="ID",
              help="Withdraw adjustment ID (see --list); --reason says why.")
@JSON
@click.pass_obj
def adjust_command(course_root, assignment_id, who, points, score, allow_over, reason, listing, withdraw, as_json):
    """Add points to, or set, one student's score; it is applied on top of the computed score, never into it,
    so it survives `grade --regrade`, new cases and a changed late policy."""
    course = grading_course(course_root)
    with CourseRecords.of(course) as records:
        if listing:
            _list(records, assignment_id, who, as_json)
            return
        if withdraw is not None:
            assignment_id = next((a.assignment for a in records.adjustments(all_of_them=True, ids=[withdraw])),
                                 assignment_id)
        # Not while the assignment is being graded: the change and its refresh wait (gradebook/lock.py).
        with changing(course, [assignment_id] if assignment_id else []):
            if withdraw is not None:
                adjustment = records.withdraw_adjustment(withdraw, reason)
                message = (f"withdrew adjustment #{withdraw} ({records.who(adjustment.student)}, "
                           f"{adjustment.assignment})")
            else:
                adjustment, message = _adjust(course, records, assignment_id, who, points, score, reason, allow_over)
            done = refresh(course, load_assignment(course, adjustment.assignment), records)
        not_here = None if done else not_graded_here(course, records, adjustment.assignment)
    now = next((r for r in done.rows if r.student == adjustment.student), None) if done else None
    if as_json:
        emit_json({**adjustment.__dict__, "active": adjustment.active, "score_now": None if now is None else now.score})
        return
    click.echo(message + ("" if now is None or now.status == "not-graded"
                          else f"; score now {now.score:g} / {now.max_score:g}"))
    say(f"applied to {done.out_dir / 'grades.csv'}" if done else not_here, err=True)


def _adjust(course, records, assignment_id, who, points, score, reason, allow_over):
    missing = [flag for flag, value in (("--assignment", assignment_id), ("--student", who), ("--reason", reason))
               if not value]
    if missing:
        raise click.UsageError(f"missing {', '.join(missing)} (or give --list or --withdraw)")
    if (points is None) == (score is None):
        raise click.UsageError("give --points or --score (one of them)")
    assignment = load_assignment(course, assignment_id)
    student = records.find(who)
    before = current_score(course, assignment, student.key)
    after = score if score is not None else None if before is None else round(before + points, 4)
    if after is None and points is not None:
        after = points if points > assignment.max_score or points < -assignment.max_score else None
    if after is not None and not allow_over and not 0 <= after <= assignment.max_score:
        where = "above the maximum" if after > assignment.max_score else "below 0"
        raise RecordsError(f"{student.who} would get {shown(after)} / {assignment.max_score:g} in {assignment.id}, "
                           f"{where}: nothing changed. Give --allow-over if that is meant")
    adjustment = records.adjust(assignment.id, student.key, reason, points=points, score=score, score_before=before)
    return adjustment, (f"adjustment #{adjustment.id}: {student.who}, {assignment.id}: {adjustment.describe()}"
                        + ("" if before is None else f" (score before: {before:g})"))


def _list(records, assignment_id, who, as_json):
    student = records.find(who).key if who else None
    found = records.adjustments(assignment_id, student, all_of_them=True)
    if as_json:
        emit_json([{**a.__dict__, "name": records.who(a.student), "active": a.active, "problem": a.problem}
                   for a in found])
        return
    for a in found:
        state = (f"withdrawn by {a.withdrawn_by} at {a.withdrawn_at}"
                 + (f": {a.withdraw_reason}" if a.withdraw_reason else "")) if not a.active else "standing"
        if a.problem and a.active:
            state += f"; UNUSABLE, withdraw it: autograder adjust --withdraw {a.id} --reason ..."
        before = "" if a.score_before is None else f", score before {a.score_before:g}"
        click.echo(f"#{a.id} {a.assignment} {records.who(a.student)}: {a.describe()} (by {a.made_by} at "
                   f"{a.made_at}{before}) [{state}]")
    if not found:
        click.echo("no adjustments")
