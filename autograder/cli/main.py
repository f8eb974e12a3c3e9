"""The `autograder` group: the course folder option, the version, and every verb."""

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from .accommodate import accommodate_command
from .adjust import adjust_command
from .audit import audit_command
from .build import build_command
from .errors import OneLineErrors
from .export import export
from .extend import extend_command
from .feedback import feedback_command
from .grade import grade_command
from .gradebook import gradebook_command
from .init import init_command
from .output import NORMAL, QUIET, VERBOSE
from .release import release_command
from .report import report_command
from .roster import roster_group
from .similarity import similarity_command


def _version():
    try:
        return version("nqueens-course")
    except PackageNotFoundError:      # run from a checkout that was never installed
        return "unknown"


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="autograder")
@click.option("--course", "course_root", type=click.Path(file_okay=False, path_type=Path),
              help="The course folder (default: the one holding course.toml, at or above here).")
@click.option("--quiet", "-q", "quiet", is_flag=True, help="Say only errors, warnings and each command's result.")
@click.option("--verbose", "-v", "verbose", is_flag=True,
              help="Say more: a line per hand-in even on a terminal, every note in full.")
@click.pass_context
def main(ctx, course_root, quiet, verbose):
    """Build and grade the course's notebook assignments, and run the semester: roster, extensions,
    adjustments and the course gradebook."""
    if quiet and verbose:
        raise click.UsageError("--quiet and --verbose contradict each other: give one")
    ctx.obj = course_root
    ctx.meta["verbosity"] = QUIET if quiet else VERBOSE if verbose else NORMAL


for _command in (build_command, grade_command, feedback_command, report_command, release_command, export,
                 audit_command, init_command, roster_group, extend_command, accommodate_command, adjust_command,
                 gradebook_command, similarity_command):
    main.add_command(_command)
