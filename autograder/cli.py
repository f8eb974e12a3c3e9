"""The `autograder` command: build, grade."""

import sys
from pathlib import Path

import click
from rich.console import Console
from rich.table import Table

from .assignment import AssignmentError, load_assignment
from .build import build as run_build
from .course import CourseError, load_course
from .errors import BuildError
from .gradebook import write_grades_csv
from .grading import grade as grade_one
from .intake import IntakeError, find_handins

console = Console(stderr=True)


class _OneLineErrors(click.Group):
    """Known failures print one line and exit 1, never a traceback."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (CourseError, AssignmentError, BuildError, IntakeError) as error:
            click.echo(f"autograder: error: {error}", err=True)
            sys.exit(1)


@click.group(cls=_OneLineErrors)
@click.option("--course", "course_root", type=click.Path(file_okay=False, path_type=Path),
              help="The course folder (default: the one holding course.toml, at or above here).")
@click.pass_context
def main(ctx, course_root):
    """Build and grade the course's notebook assignments."""
    ctx.obj = course_root


@main.command()
@click.option("--check", is_flag=True, help="Write nothing; fail and name the files that are out of date.")
@click.pass_obj
def build(course_root, check):
    """Regenerate student notebooks, expected values and the public rubric."""
    course = load_course(course_root)
    report = run_build(course, check=check, progress=lambda m: console.print(f"[dim]{m}[/dim]"))
    if check and report.stale:
        click.echo("out of date (run `autograder build`):", err=True)
        for path in report.stale:
            click.echo(f"  {path}", err=True)
        sys.exit(1)
    if check:
        click.echo("all generated files are up to date")
    else:
        for path in report.written:
            click.echo(f"wrote {path}")
        if not report.written:
            click.echo("nothing to do: all generated files are up to date")


@main.command()
@click.option("--assignment", "assignment_id", required=True, help="Assignment id, e.g. n-queens.")
@click.option("--out", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="Folder for grades.csv.")
@click.argument("paths", nargs=-1, required=True)
@click.pass_obj
def grade(course_root, assignment_id, out_dir, paths):
    """Grade hand-ins (notebooks, .py files or folders of them)."""
    course = load_course(course_root)
    assignment = load_assignment(course, assignment_id)
    expected = assignment.load_expected()
    handins = find_handins(paths)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise IntakeError(f"cannot create {out_dir}: {error.strerror}") from None
    results = []
    with console.status("grading") as status:
        for number, handin in enumerate(handins, 1):
            status.update(f"grading {handin.student} ({number}/{len(handins)})")
            results.append(grade_one(assignment, expected, handin.student, handin.path))
    write_grades_csv(results, out_dir / "grades.csv")
    _print_table(results)
    click.echo(f"wrote {out_dir / 'grades.csv'}")


def _print_table(results):
    table = Table(title="Grades")
    for column in ("student", "score", "status"):
        table.add_column(column)
    for r in sorted(results, key=lambda r: r.student):
        table.add_row(r.student, f"{r.score:g} / {r.max_score:g}", r.status)
    Console().print(table)
