"""`autograder accommodate`: a course-wide rule (extra time for a group of students), not one command each."""

import click

from ..core.assignment import load_assignment
from ..core.listing import names
from ..grade.refresh import changing, refresh
from ..roster.store import CourseRecords
from .extend import warn_untimed
from .numbers import DAYS, HOURS
from .options import grading_course
from .output import JSON, emit_json, say


@click.command("accommodate")
@click.option("--group", "group", default=None, help="The accommodation's name, e.g. extra-time.  [required to set]")
@click.option("--extra-days", type=DAYS, default=None,
              help="Days added to every assignment's deadline for its members (0 to 366).")
@click.option("--extra-hours", type=HOURS, default=None, help="Hours added (with or instead of days).")
@click.option("--reason", default="",
              help="Why (kept in course.db for the teaching team; never shown in grades files, reports or feedback).")
@click.option("--student", "add", multiple=True, metavar="WHO", help="Add a member (repeat the option).")
@click.option("--remove", multiple=True, metavar="WHO", help="Remove a member (repeat the option).")
@click.option("--list", "listing", is_flag=True, help="List the accommodations and their members.")
@JSON
@click.pass_obj
def accommodate_command(course_root, group, extra_days, extra_hours, reason, add, remove, listing, as_json):
    """Extra time on every deadline for the students of a group (members: --student, repeated)."""
    course = grading_course(course_root)
    with CourseRecords.of(course) as records:
        if listing or group is None:
            found = records.accommodations()
            if as_json:
                emit_json([{**a.__dict__, "members": list(a.members), "names": [records.who(m) for m in a.members],
                            "problem": a.problem} for a in found])
            elif not found:
                click.echo("no accommodations")
            for a in [] if as_json else found:
                click.echo(f"{a.describe()}: {names([records.who(m) for m in a.members]) or 'no members yet'}")
            return
        existing = {a.name: a for a in records.accommodations()}.get(group)
        if extra_days is None and extra_hours is None and existing is None:
            raise click.UsageError(f"a new accommodation needs --extra-days or --extra-hours ({group!r} is new)")
        seconds = ((extra_days or 0) * 86400 + (extra_hours or 0) * 3600
                   if extra_days is not None or extra_hours is not None else existing.extra_seconds)
        # Every assignment's deadline moves: none may be being graded meanwhile (gradebook/lock.py).
        with changing(course, course.assignment_ids()):
            _set(course, records, group, seconds, reason, add, remove, as_json)


def _set(course, records, group, seconds, reason, add, remove, as_json):
    """The accommodation changed, and every graded assignment's gradebook refreshed."""
    members = [records.find(who).key for who in add]
    records.accommodate(group, seconds, reason, members)
    if remove:
        records.remove_from_group(group, [records.find(who).key for who in remove])
    rule = {a.name: a for a in records.accommodations()}[group]
    if as_json:
        emit_json({**rule.__dict__, "members": list(rule.members)})
    else:
        click.echo(f"{rule.describe()}: {len(rule.members)} member(s)")
    for assignment_id in course.assignment_ids():
        done = refresh(course, load_assignment(course, assignment_id), records)
        if done:
            say(f"applied to {done.out_dir / 'grades.csv'}", err=True)
            warn_untimed(course, assignment_id, rule.members, records, f"the accommodation {group!r}")
