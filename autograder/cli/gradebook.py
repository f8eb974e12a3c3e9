"""`autograder gradebook --to DIR`: the course gradebook, the semester report and an import file for every LMS."""

from pathlib import Path

import click

from ..core.listing import names
from .options import grading_course
from .output import JSON, NORMAL, emit_json, say


@click.command("gradebook")
@click.option("--to", "target", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for course_grades.csv/.xlsx, history.csv, semester_report.html and lms/.")
@click.option("--from", "sources", multiple=True, metavar="ID=DIR",
              help="Where an assignment's gradebook is, when not where `grade` last wrote it (repeatable).")
@click.option("--no-points-row", "points_row", flag_value=False, default=True,
              help="Leave out the Points Possible row of Canvas's import file.")
@click.option("--force", is_flag=True,
              help="Write the files although some hand-ins are not graded yet (a run was stopped): their cells "
                   "are left blank, never 0.")
@JSON
@click.pass_obj
def gradebook_command(course_root, target, sources, points_row, force, as_json):
    """Write the course gradebook for all assignments at once, with a file for each LMS to import."""
    # Imported here: matplotlib and openpyxl would cost every other command's start-up.
    from ..publish.course.write import write_course_gradebook
    course = grading_course(course_root)
    done = write_course_gradebook(course, target, _sources(course, sources), points_row, force)
    book = done.book
    if not as_json:     # which folder each assignment was read from: the course's own, or a --from
        for assignment in book.assignments:
            if assignment.gradebook is not None:
                say(f"{assignment.id}: read {assignment.gradebook}", NORMAL)
    if as_json:
        emit_json({"to": str(target), "written": done.written, "students": len(book.rows),
                   "read": {a.id: str(a.gradebook) for a in book.assignments if a.gradebook is not None},
                   "test_students": [s.key for s in book.test_students], "graded": [a.id for a in book.graded()],
                   "problems": done.problems, "notes": done.notes,
                   "rows": [{"student": r.student.key, "name": r.student.name, "on_roster": r.student.on_roster,
                             "total": r.total, "possible": r.possible, "missing": r.missing, "late": r.late,
                             "scores": {a: None if m.not_graded else m.score for a, m in r.marks.items()}}
                            for r in book.rows]})
        return
    graded = book.graded()
    click.echo(f"course gradebook: {len(book.rows)} student(s), {len(graded)} of {len(book.assignments)} "
               f"assignment(s) graded ({', '.join(a.id for a in graded) or 'none yet'}); "
               + (f"{len(done.written)} file(s) written to {target}" if done.written else f"unchanged in {target}"))
    if book.test_students:
        say(f"left out (test account): {names([s.who for s in book.test_students])}", NORMAL)
    missing = [f"{r.student.who}: {', '.join(r.missing)}" for r in book.rows if r.missing]
    if missing:
        say(f"missing: {'; '.join(missing)}", NORMAL)
    for note in done.notes:
        say(note, NORMAL)
    for problem in done.problems:
        click.echo(f"warning: {problem}", err=True)


def _sources(course, pairs):
    overrides = {}
    for pair in pairs:
        assignment_id, equals, folder = pair.partition("=")
        if not equals or assignment_id not in course.assignment_ids() or not folder.strip():
            raise click.BadParameter(f"{pair!r}: write ID=DIR with one of {', '.join(course.assignment_ids())}",
                                     param_hint="--from")
        overrides[assignment_id] = Path(folder)
    return overrides
