"""`autograder slip`: a student's slip days, as course.toml's [slip_days] gives them (core/slip_days.py)."""

import click

from ..core.assignment import load_assignment
from ..core.course import CourseError
from ..core.slip_days import MAX_POOL
from ..grade.refresh import changing, refresh_all, slip_days_spent
from ..roster.store import CourseRecords, RecordsError
from .options import grading_course
from .output import JSON, emit_json, say


@click.command("slip")
@click.option("--student", "who", default=None, help="The student: roster key, LMS or SIS id, login, email or name.")
@click.option("--assignment", "assignment_id", default=None,
              help="With --days: the assignment the days are spent on.")
@click.option("--days", type=click.IntRange(min=0, max=MAX_POOL), default=None,
              help="Spend exactly this many of the student's slip days on --assignment (0: none), instead of "
                   "what they would spend by themselves; it replaces an earlier choice, never adds to it.")
@click.option("--grant", type=click.IntRange(min=-MAX_POOL, max=MAX_POOL), default=None,
              help="Add this many days to the student's pool (negative: take some back).")
@click.option("--reason", default=None, help="Why: kept in the history.  [required to change anything]")
@click.option("--list", "listing", is_flag=True,
              help="Each student's slip days: spent on each assignment, and left (with --student: theirs, and "
                   "every decision about them).")
@click.option("--withdraw", type=click.IntRange(min=1), default=None, metavar="ID",
              help="Withdraw the decision ID (see --list --student); --reason says why.")
@JSON
@click.pass_obj
def slip_command(course_root, who, assignment_id, days, grant, reason, listing, withdraw, as_json):
    """Choose the slip days a student spends on an assignment, grant more, or list who has spent what.

    Days are otherwise spent by themselves, in deadline order, by the hand-ins that are late after extensions
    and accommodations; every refresh counts them again from the hand-ins that count, so a regrade or a new
    upload never spends a day twice."""
    course = grading_course(course_root)
    policy = course.slip_days
    if policy is None:
        raise CourseError("the course gives no slip days: add a [slip_days] table to course.toml "
                          "(pool = 4, max_per_assignment = 2; docs/semester.md)")
    with CourseRecords.of(course) as records:
        if listing or (days is None and grant is None and withdraw is None):
            _list(course, records, who, as_json)
            return
        if not (reason and reason.strip()):
            raise click.UsageError("missing --reason: every slip-day decision is kept in the history with why")
        with changing(course, course.assignment_ids()):    # every assignment's allocation may follow
            decision, message = _decide(course, records, policy, who, assignment_id, days, grant, reason, withdraw)
            done = refresh_all(course, records)
        left = _balances(course, records, [decision.student])
        name = records.who(decision.student)
    if as_json:
        emit_json({**decision.__dict__, "active": decision.active, "balance": left.get(decision.student)})
        return
    click.echo(message)
    balance = left.get(decision.student)
    if balance is not None:
        click.echo(f"{name}: {balance['left']} of {balance['pool']} slip day(s) left")
    say(f"applied to {', '.join(str(r.out_dir / 'grades.csv') for r in done)}" if done
        else "no assignment is graded yet: `grade` applies it", err=True)


def _decide(course, records, policy, who, assignment_id, days, grant, reason, withdraw):
    """(the decision recorded, what to say of it): a withdrawal, a choice of days or a grant."""
    if withdraw is not None:
        decision = records.withdraw_slip_days(withdraw, reason)
        return decision, f"withdrew slip-day decision #{withdraw} ({records.who(decision.student)}: " \
                         f"{decision.describe()})"
    if who is None or (days is None) == (grant is None):
        raise click.UsageError("give --student with --days (and --assignment) or --grant")
    student = records.find(who)
    if days is not None:
        decision = _choose(course, records, policy, student, assignment_id, days, reason)
    else:
        decision = records.grant_slip_days(student.key, grant, reason)
    return decision, f"slip days #{decision.id}: {student.who}: {decision.describe()}"


def _choose(course, records, policy, student, assignment_id, days, reason):
    """Record that `student` spends exactly `days` on the assignment, refused beyond the assignment's maximum
    or the student's pool (the other choices counted): a choice made twice is one choice."""
    if assignment_id is None:
        raise click.UsageError("--days needs --assignment: the assignment the days are spent on")
    assignment = load_assignment(course, assignment_id)
    if days > policy.max_per_assignment:
        raise RecordsError(f"{days} slip day(s) on {assignment.id} is more than the {policy.max_per_assignment} "
                           "one assignment may take (course.toml's [slip_days] max_per_assignment): nothing changed")
    chosen, granted = records.slip_choices()
    others = sum(d for a, d in chosen.get(student.key, {}).items() if a != assignment.id)
    pool = policy.pool + granted.get(student.key, 0)
    if others + days > pool:
        raise RecordsError(f"{student.who} has {pool} slip day(s), {others} of them chosen for other assignments: "
                           f"{days} more on {assignment.id} is more than is left ({max(pool - others, 0)}): nothing "
                           "changed. `autograder slip --student ... --grant N --reason ...` adds days")
    return records.choose_slip_days(assignment.id, student.key, days, reason)


def _balances(course, records, students=None):
    """{student: {"pool", "spent": {assignment: days}, "left"}} from the course's gradebooks (after a refresh)."""
    spent = slip_days_spent(course)
    _, granted = records.slip_choices()
    keys = students or [s.key for s in records.students() if not s.test_student]
    found = {}
    for key in keys:
        pool = course.slip_days.pool + granted.get(key, 0)
        mine = spent.get(key, {})
        found[key] = {"pool": pool, "spent": mine, "left": pool - sum(mine.values())}
    return found


def _list(course, records, who, as_json):
    student = records.find(who) if who else None
    balances = _balances(course, records, [student.key] if student else None)
    decisions = records.slip_decisions(student.key, all_of_them=True) if student else []
    if as_json:
        emit_json({"policy": course.slip_days.__dict__, "students": balances,
                   "decisions": [{**d.__dict__, "active": d.active} for d in decisions]})
        return
    click.echo(course.slip_days.describe())
    for key, balance in balances.items():
        spent = ", ".join(f"{a} {d}" for a, d in balance["spent"].items() if d) or "none spent"
        click.echo(f"{records.who(key)}: {balance['left']} of {balance['pool']} left ({spent})")
    for d in decisions:
        state = "standing" if d.active else (f"withdrawn by {d.withdrawn_by} at {d.withdrawn_at}"
                                             + (f": {d.withdraw_reason}" if d.withdraw_reason else ""))
        click.echo(f"#{d.id} {d.describe()} (by {d.made_by} at {d.made_at}) [{state}]")
