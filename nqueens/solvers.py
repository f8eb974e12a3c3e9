"""Which solver answers which question, and how large a board each may take."""

import logging
from collections.abc import Iterator
from typing import NamedTuple

from nqueens import backtracking, bitmask, parallel, sat, three_in_line

log = logging.getLogger(__name__)

SOLVERS = ("backtracking", "bitmask", "sat")

# From here on the optional numba counter pays for its start-up.
COMPILED_MIN_N = 15


class Limits(NamedTuple):
    """Largest n that takes at most seconds (counting: minutes) on one machine."""

    first: int  # one solution
    every: int  # all solutions, or their count


# Measured on a 2-core machine; the searches slow down sharply past these.
LIMITS = {
    ("bitmask", False): Limits(first=29, every=bitmask.MAX_COUNT_N),
    ("backtracking", False): Limits(first=29, every=14),
    ("sat", False): Limits(first=100, every=12),
    ("backtracking", True): Limits(first=22, every=three_in_line.MAX_COUNT_N),
    ("sat", True): Limits(first=40, every=three_in_line.MAX_COUNT_N),
}


class UnsupportedError(ValueError):
    pass


def default_solver(no_three_in_line: bool) -> str:
    return "backtracking" if no_three_in_line else "bitmask"


def max_n(solver: str, no_three_in_line: bool, every: bool) -> int:
    try:
        limits = LIMITS[solver, no_three_in_line]
    except KeyError:
        raise UnsupportedError(f"the {solver} solver does not handle --no-three-in-line") from None
    return limits.every if every else limits.first


def roomiest(no_three_in_line: bool, every: bool) -> tuple[str, int]:
    """The solver that takes the largest boards for this question, and its limit."""
    fits = [(max_n(s, no_three_in_line, every), s) for s in SOLVERS if (s, no_three_in_line) in LIMITS]
    most, solver = max(fits)
    return solver, most


def solutions(n: int, solver: str, no_three_in_line: bool) -> Iterator[list[int]]:
    max_n(solver, no_three_in_line, every=False)  # rejects unsupported pairs
    if solver == "sat":
        return sat.solutions(n, no_three_in_line)
    if no_three_in_line:
        return three_in_line.solutions(n)
    return (bitmask if solver == "bitmask" else backtracking).solutions(n)


def count(n: int, solver: str, no_three_in_line: bool) -> int:
    if solver == "bitmask" and not no_three_in_line:
        return _count_fast(n)
    return sum(1 for _ in solutions(n, solver, no_three_in_line))


def _count_fast(n: int) -> int:
    if n >= COMPILED_MIN_N:
        try:
            from nqueens import compiled
        except ImportError:  # numba is optional
            log.debug("numba is not installed: counting in pure Python")
        else:
            log.debug("counting with the numba-compiled counter")
            return compiled.count(n)
    return parallel.count(n)
