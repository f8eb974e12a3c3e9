"""The `autograder` group: the course folder option, the version, and every verb."""

import importlib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import click

from .errors import OneLineErrors
from .output import NORMAL, QUIET, VERBOSE

# Each verb's module, imported when that verb runs (or `--help` lists it): `autograder grade` need not load
# matplotlib, openpyxl and the audit, which cost a second of CPU at every start of any verb.
VERBS = {"accommodate": "accommodate:accommodate_command", "adjust": "adjust:adjust_command",
         "audit": "audit:audit_command", "build": "build:build_command", "canvas": "canvas:canvas_group",
         "excuse": "excuse:excuse_command", "export": "export:export",
         "extend": "extend:extend_command", "feedback": "feedback:feedback_command",
         "grade": "grade:grade_command", "gradebook": "gradebook:gradebook_command", "init": "init:init_command",
         "release": "release:release_command", "report": "report:report_command", "roster": "roster:roster_group",
         "similarity": "similarity:similarity_command", "slip": "slip:slip_command"}


class Verbs(OneLineErrors):
    """The top-level group: its verbs are loaded by name, when asked for (click's "lazily loading
    subcommands" pattern)."""

    def list_commands(self, ctx):
        return sorted({*super().list_commands(ctx), *VERBS})

    def get_command(self, ctx, name):
        if name in VERBS and name not in self.commands:
            module, attribute = VERBS[name].split(":")
            self.add_command(getattr(importlib.import_module(f".{module}", __package__), attribute), name)
        return super().get_command(ctx, name)


def _version():
    try:
        return version("nqueens-course")
    except PackageNotFoundError:      # run from a checkout that was never installed
        return "unknown"


@click.group(cls=Verbs, context_settings={"help_option_names": ["-h", "--help"]})
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

