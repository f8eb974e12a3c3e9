"""`autograder roster`: import the class list an LMS exports, and list it."""

from pathlib import Path

import click
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..core.listing import names
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
    with CourseRecords.of(course) as records:
        added, updated, left, duplicates = records.import_roster(roster, file.name)
        tests = [e.name for e in roster.entries if e.test_student]
        left_names = [records.who(key) for key in left]
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
        say(f"Canvas grade columns seen: {names(roster.lms_columns)}", NORMAL)
