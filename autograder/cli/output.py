"""How much a command says (`--quiet`, `--verbose` on the `autograder` group) and `--json` for scripts.

Quiet keeps errors, warnings and each command's one-line result; verbose adds
a line per hand-in even on a terminal, and every note in full.  `--json`
writes one JSON document to standard output and nothing else there, so a
script can read it whatever the verbosity.
"""

import json

import click

QUIET, NORMAL, VERBOSE = 0, 1, 2


def verbosity():
    context = click.get_current_context(silent=True)
    return context.find_root().meta.get("verbosity", NORMAL) if context is not None else NORMAL


def say(text, level=NORMAL, err=False):
    """Print `text` when the verbosity is at least `level`."""
    if verbosity() >= level:
        click.echo(text, err=err)


def emit_json(document):
    click.echo(json.dumps(document, indent=1, ensure_ascii=False, default=str))


JSON = click.option("--json", "as_json", is_flag=True, help="Write the result as JSON on standard output, for scripts.")
