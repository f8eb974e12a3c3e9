"""`autograder export {otter,gradescope,nbgrader,classroom50} --assignment ID --to DIR`."""

from pathlib import Path

import click

from ..core.assignment import load_assignment
from ..core.course import load_course
from ..export import classroom50 as classroom50_export
from ..export import gradescope as gradescope_export
from ..export import nbgrader as nbgrader_export
from ..export import otter as otter_export
from .errors import OneLineErrors


def _course_root(ctx):
    # Standalone, our own --course; under `autograder`, its --course arrives as ctx.obj.
    return ctx.obj if isinstance(ctx.obj, (str, Path)) else None


_ASSIGNMENT = click.option("--assignment", "assignment_id", required=True, help="Assignment id, e.g. n-queens.")
_TO = click.option("--to", "out_dir", required=True, type=click.Path(file_okay=False, path_type=Path),
                   help="Folder to write into (created if missing).")


def _load(ctx, assignment_id):
    course = load_course(_course_root(ctx))
    return course, load_assignment(course, assignment_id)


# Its own help options too: click keeps a command's help option from the first context it ran in, so the
# group run on its own first (as tests do) would otherwise refuse `autograder export -h` afterwards.
@click.group("export", cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--course", "course_root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The course folder (default: the one holding course.toml, at or above here).")
@click.pass_context
def export(ctx, course_root):
    """Write an assignment for another grader: otter-grader, Gradescope, nbgrader, or Classroom 50's public checks."""
    if course_root is not None:
        ctx.obj = course_root


@export.command()
@_ASSIGNMENT
@_TO
@click.option("--autograder-dir", default="/autograder", show_default=True,
              help="Where the autograder runs (otter's autograder_dir); /autograder on Gradescope.")
@click.option("--no-zip", is_flag=True, help="Write the tests and configuration only, not autograder.zip.")
@click.option("--otter", "otter_command", default=None,
              help="The otter command for `otter generate` (default: .venv-otter/bin/otter, then PATH).")
@click.option("--requirement", "requirements", multiple=True,
              help="A package the student's notebook needs on Gradescope (default: what the course offers, as "
                   "Colab has it: numpy, sympy, scipy, numba... pinned as here). Repeat for more.")
@click.pass_context
def otter(ctx, assignment_id, out_dir, autograder_dir, no_zip, otter_command, requirements):
    """An otter-grader 7 assignment: OK tests, a student notebook with grader.check, autograder.zip."""
    course, assignment = _load(ctx, assignment_id)
    written = otter_export.export(course, assignment, out_dir, autograder_dir=autograder_dir,
                                  make_zip=not no_zip, otter=otter_command,
                                  requirements=list(requirements) or None)
    _report(written)


@export.command()
@_ASSIGNMENT
@_TO
@click.pass_context
def gradescope(ctx, assignment_id, out_dir):
    """A Gradescope autograder zip that grades with this course's own engine."""
    course, assignment = _load(ctx, assignment_id)
    _report(gradescope_export.export(course, assignment, out_dir))


@export.command()
@_ASSIGNMENT
@_TO
@click.pass_context
def nbgrader(ctx, assignment_id, out_dir):
    """An nbgrader 0.9 course folder: source notebook with grade cells, nbgrader_config.py."""
    course, assignment = _load(ctx, assignment_id)
    _report(nbgrader_export.export(course, assignment, out_dir))


@export.command()
@_ASSIGNMENT
@_TO
@click.option("--slug", default=None, help="The assignment's slug in Classroom 50 (default: the assignment id).")
@click.pass_context
def classroom50(ctx, assignment_id, out_dir, slug):
    """Classroom 50's per-assignment autograder.py: the public checks on every push, nothing hidden (its bundle is
    public). Copy DIR/<slug>/ to <classroom>/autograders/<slug>/ in the org's classroom50 repository."""
    course, assignment = _load(ctx, assignment_id)
    _report(classroom50_export.export(course, assignment, out_dir, slug))


def _report(paths):
    for path in paths:
        click.echo(f"wrote {path}")
