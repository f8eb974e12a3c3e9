"""`autograder audit`: how many student-like bugs each assignment's cases catch."""

import os
import sys
from pathlib import Path

import click
from rich.console import Console

from ..core.assignment import load_assignment
from ..core.course import load_course
from ..engine import MAX_SLOTS, Sandbox
from ..audit import run_audit

console = Console(stderr=True)


@click.command("audit")
@click.option("--assignment", "assignment_ids", multiple=True,
              help="Assignment id (repeatable; default: every assignment of the course).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Folder for the reports, <id>.md and <id>.html (default: build/audit in the course).")
@click.option("--jobs", type=click.IntRange(1, MAX_SLOTS), default=None,
              help="Mutants graded at once (default: the number of cores).")
@click.pass_obj
def audit_command(course_root, assignment_ids, out_dir, jobs):
    """Measure how strong each assignment's cases are: constant answers, a table of the public answers, mutants,
    lint, mutation score."""
    course = load_course(course_root)
    assignments = [load_assignment(course, i) for i in (assignment_ids or course.assignment_ids())]
    out_dir = (out_dir or course.root / "build" / "audit").resolve()
    jobs = jobs or len(os.sched_getaffinity(0))
    below = []
    with Sandbox() as sandbox:
        for assignment in assignments:
            result = run_audit(assignment, sandbox, jobs, out_dir,
                               progress=lambda m: console.print(f"[dim]{m}[/dim]"))
            rate = len(result.mutants) / result.mutant_seconds if result.mutant_seconds else 0.0
            click.echo(result.summary_line() + f" [{result.seconds:.1f} s; {rate:.1f} mutants/s]")
            if result.count("survived"):
                click.echo(f"  {result.count('survived')} unexplained survivor(s): "
                           + ", ".join(m.mutant.id for m in result.mutants if m.verdict == "survived"))
            for mutant in (m for m in result.mutants if m.marked_but_killed):
                click.echo(f"  {mutant.mutant.id} is marked equivalent but {mutant.killer!r} kills it")
            for mutant_id in result.stale_equivalents:
                click.echo(f"  {mutant_id} is marked equivalent but no mutant has that id")
            click.echo(result.constants_line())
            for line in result.constants_table():
                click.echo(line)
            for line in result.lookup_lines():
                click.echo(line)
            if result.below_floor():
                below.append(f"{assignment.id} (mutation floor)")
            if result.constants_above_floor():
                below.append(f"{assignment.id} (constant answers earn points)")
            if result.lookup_above_floor():
                below.append(f"{assignment.id} (a table of the public answers earns more than "
                             f"{result.lookup_floor:g} point(s))")
    click.echo(f"reports: {out_dir}/<assignment>.md and .html")
    if below:
        click.echo(f"below a floor: {', '.join(below)}", err=True)
        sys.exit(1)
