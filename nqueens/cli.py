"""The ``nqueens`` command."""

import logging
import os
import re
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import click

from nqueens import __version__, board, solvers

log = logging.getLogger("nqueens")


class BadBoardSize(click.ClickException):
    """A bad N: one line on stderr, and the exit code of a usage error."""

    exit_code = 2


class SolveCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        # click would read "-3" as an unknown option and answer "No such option".
        for arg in args:
            if arg == "--":
                break
            if re.fullmatch(r"-\d+", arg):
                raise BadBoardSize(f"N must be at least 1, got {arg}")
        return super().parse_args(ctx, args)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="nqueens")
def main() -> None:
    """Place n queens on an n×n chessboard so that no two attack each other."""


@main.command(cls=SolveCommand)
@click.argument("n", metavar="N")
@click.option("--no-three-in-line", is_flag=True, help="Also keep any three queens off one straight line, of any slope.")
@click.option(
    "--solver",
    type=click.Choice(solvers.SOLVERS),
    help="Default: bitmask, or backtracking with --no-three-in-line.",
)
@click.option("--all", "every", is_flag=True, help="Print every solution, separated by blank lines.")
@click.option("--count", is_flag=True, help="Print the number of solutions.")
@click.option("--debug", is_flag=True, help="Log progress to stderr.")
@click.version_option(__version__, prog_name="nqueens")
def solve(n: str, no_three_in_line: bool, solver: str | None, every: bool, count: bool, debug: bool) -> None:
    """Print a solution for an N×N board (♛ a queen, · an empty square), or "no solution".

    Row 0 is printed first; the exit status is 0 whether or not a solution exists.
    """
    if every and count:
        raise click.UsageError("--all and --count exclude each other")
    solver = solver or solvers.default_solver(no_three_in_line)
    try:
        limit = solvers.max_n(solver, no_three_in_line, every or count)
    except solvers.UnsupportedError as error:
        raise click.UsageError(str(error)) from None
    size = _board_size(n)
    if size > limit:
        raise BadBoardSize(_too_large(size, solver, no_three_in_line, every, count))

    with _debug_logging(debug), _quiet_broken_pipe():
        log.debug("n=%d, solver=%s, no three in line: %s", size, solver, no_three_in_line)
        started = time.perf_counter()
        if count:
            click.echo(solvers.count(size, solver, no_three_in_line))
        else:
            _print_solutions(solvers.solutions(size, solver, no_three_in_line), every)
        log.debug("done in %.3f s", time.perf_counter() - started)


def _print_solutions(found: Iterator[list[int]], every: bool) -> None:
    """Print boards as they are found, a blank line between two."""
    number = 0
    for number, pos in enumerate(found, 1):
        log.debug("solution %d: %s", number, pos)
        click.echo(("\n" if number > 1 else "") + board.render(pos))
        if not every:
            break
    if number == 0:
        click.echo("no solution")


def _board_size(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise BadBoardSize(f"N must be a whole number, got {text!r}") from None
    if n < 1:
        raise BadBoardSize(f"N must be at least 1, got {n}")
    return n


def _too_large(n: int, solver: str, no_three_in_line: bool, every: bool, count: bool) -> str:
    task = "count solutions" if count else "list all solutions" if every else "find a solution"
    limit = solvers.max_n(solver, no_three_in_line, every or count)
    message = f"N = {n} is too large for the {solver} solver to {task} (at most {limit}"
    roomiest, most = solvers.roomiest(no_three_in_line, every or count)
    if most > limit:
        message += f"; --solver {roomiest} takes up to {most}"
    return message + ")"


@contextmanager
def _debug_logging(enabled: bool) -> Iterator[None]:
    """Send the nqueens loggers to the current stderr while the command runs."""
    if not enabled:
        yield
        return
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(relativeCreated)7.0f ms %(name)s: %(message)s"))
    log.addHandler(handler)
    log.setLevel(logging.DEBUG)
    try:
        yield
    finally:
        log.removeHandler(handler)
        log.setLevel(logging.NOTSET)


@contextmanager
def _quiet_broken_pipe() -> Iterator[None]:
    """``nqueens solve 12 --all | head`` should stop quietly, not with a traceback."""
    try:
        yield
    except BrokenPipeError:
        # Python would complain again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
