"""One wrapper for every verb: a known failure is one line and exit status 1, never a traceback."""

import sys

import click

from ..core.errors import AutograderError


class OneLineErrors(click.Group):
    """A group whose commands (and subgroups) report AutograderError and OSError in one line."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except AutograderError as error:
            fail(str(error), error.details)
        except OSError as error:   # a file the user named cannot be read or written
            where = f"{error.filename}: " if error.filename else ""
            fail(f"{where}{error.strerror or error}")


def fail(message, details=()):
    click.echo(f"autograder: error: {message}", err=True)
    for line in details:
        click.echo(f"  {line}", err=True)
    sys.exit(1)
