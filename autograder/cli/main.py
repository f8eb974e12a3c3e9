"""The `autograder` group: the course folder option, the version, and every verb."""

from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from .audit import audit_command
from .build import build_command
from .errors import OneLineErrors
from .export import export
from .feedback import feedback_command
from .grade import grade_command
from .init import init_command
from .release import release_command
from .report import report_command


def _version():
    try:
        return version("nqueens-course")
    except PackageNotFoundError:      # run from a checkout that was never installed
        return "unknown"


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(_version(), "--version", prog_name="autograder")
@click.option("--course", "course_root", type=click.Path(file_okay=False, path_type=Path),
              help="The course folder (default: the one holding course.toml, at or above here).")
@click.pass_context
def main(ctx, course_root):
    """Build and grade the course's notebook assignments."""
    ctx.obj = course_root


for _command in (build_command, grade_command, feedback_command, report_command, release_command, export,
                 audit_command, init_command):
    main.add_command(_command)
