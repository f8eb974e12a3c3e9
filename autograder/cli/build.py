"""`autograder build`: regenerate every generated file, or check that none is stale."""

import sys

import click
from rich.console import Console

from ..generate.generate import build
from ..core.course import EXAMPLE_REPOSITORY, load_course

console = Console(stderr=True)


@click.command("build")
@click.option("--check", is_flag=True, help="Write nothing; fail and name the files that are out of date.")
@click.pass_obj
def build_command(course_root, check):
    """Regenerate student notebooks, expected values and the public rubric."""
    course = load_course(course_root)
    if course.is_example:
        click.echo(f"warning: course.toml still names the example repository {EXAMPLE_REPOSITORY}: badges and "
                   "links point there until you run `autograder init`", err=True)
    report = build(course, check=check, progress=lambda m: console.print(f"[dim]{m}[/dim]"))
    if check and report.stale:
        click.echo("out of date (run `autograder build`):", err=True)
        for path in report.stale:
            click.echo(f"  {path}", err=True)
    for problem in report.failures:
        click.echo(problem, err=True)
    if (check and report.stale) or report.failures:
        sys.exit(1)
    if check:
        click.echo("all generated files are up to date")
        return
    for path in report.written:
        click.echo(f"wrote {path}")
    if not report.written:
        click.echo("nothing to do: all generated files are up to date")
