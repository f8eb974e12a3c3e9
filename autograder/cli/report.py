"""`autograder report`: the class report for the teaching team."""

import click

from ..feedback.report import class_report
from ..feedback.write import write_if_changed
from ..grade.refresh import bring_up_to_date
from .options import ASSIGNMENT, OUT, graded_assignment


@click.command("report")
@ASSIGNMENT
@OUT
@click.pass_obj
def report_command(course_root, assignment_id, out_dir):
    """Write the class report for the teaching team: DIR/report.html."""
    course, assignment = graded_assignment(course_root, assignment_id, out_dir)
    _say(bring_up_to_date(course, assignment, out_dir))      # who is missing, excused; slip days
    path = out_dir / "report.html"
    changed = write_if_changed(path, class_report(course, assignment, out_dir))
    click.echo(f"{'wrote' if changed else 'unchanged:'} {path}")


def _say(note):
    if note:
        click.echo(note, err=True)
