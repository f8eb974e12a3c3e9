"""`autograder roster`: import the class list an LMS exports, list it, and place hand-ins it cannot place."""

import csv
import io
from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..core.assignment import load_assignment
from ..core.errors import AutograderError
from ..core.listing import names
from ..grade.refresh import changing, handin_keys, not_graded_here, place, refresh_all, unplaced
from ..intake.files import UnsafeFile, read_capped
from ..roster.lms_files import read_roster
from ..roster.store import CourseRecords
from .options import grading_course
from .output import JSON, NORMAL, emit_json, say


@click.group("roster", invoke_without_command=True)
@JSON
@click.option("--all", "everyone", is_flag=True, help="Also list students no longer on the roster.")
@click.pass_context
def roster_group(ctx, as_json, everyone):
    """List the roster (grades/course.db), or import one: `autograder roster import FILE`."""
    if ctx.invoked_subcommand is not None:
        return
    with CourseRecords.of(grading_course(ctx.obj), create=False) as records:
        students = records.students(include_off_roster=everyone)
        accommodations = {s: [a.name for a in records.accommodations() if s in a.members] for s in
                          (st.key for st in students)}
    if as_json:
        emit_json([{**student.__dict__, "accommodations": accommodations[student.key]} for student in students])
        return
    table = Table(title=f"Roster: {sum(1 for s in students if not s.test_student)} student(s)")
    for column in ("key", "name", "LMS id", "SIS id", "login / email", "section", "note"):
        table.add_column(column, no_wrap=column in ("key", "LMS id", "SIS id"))
    for s in students:
        note = ", ".join((["test account (no grades)"] if s.test_student else [])
                         + ([] if s.on_roster else ["no longer on the roster"]) + accommodations[s.key])
        table.add_row(*(escape(v) for v in (s.key, s.name, s.lms_id, s.sis_id, s.login or s.email, s.section, note)))
    Console().print(table)


@roster_group.command("import")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@JSON
@click.pass_obj
def import_command(course_root, file, as_json):
    """Import FILE: Canvas's gradebook export, Moodle's participants list or grading worksheet,
    Gradescope's roster or GitHub Classroom's roster (recognised by its header)."""
    course = grading_course(course_root)
    roster = read_roster(file)
    # Every graded assignment follows the new roster at once (who is missing or excused), never at some later,
    # unrelated command; not while one is being graded (gradebook/lock.py).
    with CourseRecords.of(course) as records, changing(course, course.assignment_ids()):
        added, updated, left, duplicates = records.import_roster(roster, file.name)
        tests = [e.name for e in roster.entries if e.test_student]
        left_names = [records.who(key) for key in left]
        refreshed = refresh_all(course, records)
    by_key = {e.key: f"{e.name} ({e.key})" if e.name and e.name != e.key else e.key for e in roster.entries}
    if as_json:
        emit_json({"format": roster.kind, "added": added, "updated": updated, "left": left,
                   "duplicates": duplicates, "skipped": [{"row": n, "why": w} for n, w in roster.skipped],
                   "test_students": tests, "lms_columns": roster.lms_columns})
        return
    click.echo(f"{roster.kind}: {len(added)} student(s) added, {len(updated)} updated"
               + (f", {len(left)} no longer listed (kept, marked so)" if left else ""))
    if tests:
        say(f"test account(s) flagged, left out of grades and statistics: {names(tests)}", NORMAL)
    if left:
        click.echo(f"warning: no longer in the class list: {names(left_names)}", err=True)
    for number, why in roster.skipped:
        click.echo(f"warning: row {number} skipped: {why}", err=True)
    if duplicates:
        click.echo(f"warning: listed twice (the first row kept): {names([by_key.get(k, k) for k in duplicates])}",
                   err=True)
    if roster.lms_columns:
        say(f"{roster.lms.capitalize() if roster.lms != 'd2l' else 'D2L'} grade columns seen: "
            f"{names(roster.lms_columns)}", NORMAL)
    if refreshed and added:
        say(f"applied to the graded assignment(s): {', '.join(r.assignment for r in refreshed)}", NORMAL)


@roster_group.command("place")
@click.option("--assignment", "assignment_id", required=True, help="Assignment id.")
@click.argument("key", required=False)
@click.option("--student", "students", multiple=True, metavar="WHO",
              help="Whose it is: roster key, LMS or SIS id, login, email or name (repeat it for each member of a "
                   "team).")
@click.option("--nobody", is_flag=True, help="It is no roster student's (a visitor's, a test upload): set it aside.")
@click.option("--reason", default="", help="Why (kept in course.db and the course's history).")
@click.option("--file", "mapping", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="A CSV with `key` and `student` columns (a row per member; `nobody` for none) instead of KEY.")
@JSON
@click.pass_obj
def place_command(course_root, assignment_id, key, students, nobody, reason, mapping, as_json):
    """Say whose hand-in KEY is, when the roster could not place it (an anonymous, team or group hand-in, a file
    named by whoever saved it); without KEY, list the assignment's hand-ins the roster cannot place.

    While one is unplaced, the roster students with no hand-in are `unresolved` (blank, never 0), and `release`
    and `gradebook` refuse.  A placement is applied at once, without grading again, and by every later `grade`."""
    course = grading_course(course_root)
    assignment = load_assignment(course, assignment_id)
    with CourseRecords.of(course, create=False) as records:
        if key is None and mapping is None:
            _list_unplaced(course, assignment.id, records, as_json)
            return
        decisions = _read_mapping(mapping, records) if mapping is not None else \
            {key: _placed_on(records, students, nobody)}
        known = handin_keys(course, assignment.id)
        strangers = [k for k in decisions if known and k not in known]
        if strangers:
            left = unplaced(course, assignment.id, records)
            raise AutograderError(f"no hand-in keyed {', '.join(map(repr, strangers))} in {assignment.id}'s "
                                  "gradebook: the keys are the `student` column of grades.csv" + (
                                      f"; its unplaced hand-ins: {', '.join(row[0] for row in left[:8])}" if left
                                      else ""))
        done = None
        for handin, chosen in decisions.items():
            done = place(course, assignment, records, handin, chosen, reason)
            shown = handin if handin not in known else f"{known[handin][0]} ({handin}), {known[handin][1]}"
            whose = names([s.who for s in chosen]) if chosen else "nobody on the roster (set aside)"
            if not as_json:
                click.echo(f"{assignment.id}: hand-in {shown} placed on {whose}")
        left = unplaced(course, assignment.id, records)
        if as_json:
            emit_json({"assignment": assignment.id, "placed": {k: [s.key for s in v] for k, v in decisions.items()},
                       "unplaced": [row[0] for row in left], "applied": done is not None})
            return
        say(f"applied to {done.out_dir / 'grades.csv'}" if done else not_graded_here(course, records, assignment.id),
            err=True)
        if left:
            click.echo(f"{len(left)} hand-in(s) of {assignment.id} still unplaced: "
                       f"{names([row[0] for row in left])}", err=True)


def _placed_on(records, students, nobody):
    """The roster Students --student names, or [] with --nobody (exactly one of them)."""
    if bool(students) == bool(nobody):
        raise click.UsageError("give --student WHO (repeat it for a team's members) or --nobody, not both")
    return [records.find(who) for who in students]


def _read_mapping(path, records):
    """{key: [Student]} from a CSV with `key` and `student` columns; `nobody` as the student sets one aside."""
    try:
        text = read_capped(path, 5 * 1024 * 1024).decode("utf-8-sig")
    except (UnsafeFile, UnicodeDecodeError) as error:
        raise AutograderError(f"{path}: {error}") from None
    rows = list(csv.DictReader(io.StringIO(text)))
    if not rows or not {"key", "student"} <= set(rows[0]):
        raise AutograderError(f"{path}: a placement file has a `key` and a `student` column, and a row per student")
    decisions = {}
    for number, row in enumerate(rows, 2):
        key, who = (row.get("key") or "").strip(), (row.get("student") or "").strip()
        if not key or not who:
            raise AutograderError(f"{path}, row {number}: give a key and a student (or `nobody`)")
        chosen = decisions.setdefault(key, [])
        if who.casefold() != "nobody":
            chosen.append(records.find(who))
    return decisions


def _list_unplaced(course, assignment_id, records, as_json):
    left = unplaced(course, assignment_id, records)
    standing = records.placement_rows(assignment_id)
    if as_json:
        emit_json({"unplaced": [dict(zip(("key", "name", "source", "why"), row)) for row in left],
                   "placed": [dict(zip(("assignment", "key", "student", "reason", "by", "at"), row))
                              for row in standing]})
        return
    for key, name, source, why in left:
        click.echo(f"unplaced: {key}" + (f" ({name})" if name and name != key else "") + f", {source}: {why}")
    for _, handin, student, why, by, at in standing:
        click.echo(f"placed: {handin} on {records.who(student) if student else 'nobody on the roster'} "
                   f"(by {by} at {at}" + (f": {why}" if why else "") + ")")
    if not left and not standing:
        click.echo(f"{assignment_id}: every hand-in is placed on the roster")
