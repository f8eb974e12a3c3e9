"""`autograder feedback`: one page per student, HTML and Markdown, from the gradebook."""

import sys

import click

from ..core.listing import names
from ..feedback.pages import build_pages, write_feedback
from ..grade.refresh import bring_up_to_date
from .options import ASSIGNMENT, OUT, graded_assignment


@click.command("feedback")
@ASSIGNMENT
@OUT
@click.pass_obj
def feedback_command(course_root, assignment_id, out_dir):
    """Write each student's feedback report (HTML and Markdown) into DIR/feedback/<student>/."""
    course, assignment = graded_assignment(course_root, assignment_id, out_dir)
    _say(bring_up_to_date(course, assignment, out_dir))      # who is missing, excused; slip days
    pages = build_pages(course, assignment, out_dir)
    changed = write_feedback(pages, out_dir)
    for student, leaks in sorted(pages.withheld.items()):
        click.echo(f"withheld the feedback of {student}: it would show a hidden case ({leaks[0]})", err=True)
    who = {page.student: page.who for page in pages.pages}
    click.echo(f"feedback for {len(pages.pages)} student(s) in {out_dir / 'feedback'}: "
               + (f"{len(changed)} written ({names([who[s] for s in changed])})" if changed else "all unchanged"))
    if pages.withheld:
        sys.exit(1)


def _say(note):
    if note:
        click.echo(note, err=True)
