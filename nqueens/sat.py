"""The same puzzles as a SAT problem, solved by an off-the-shelf SAT solver.

One Boolean variable per square says "a queen stands here".  Every straight
line through the board gets a cardinality constraint: exactly one queen per
row and column, at most one per diagonal and, for no-three-in-line, at most
two on every line of any other slope.  Solutions are enumerated by adding a
clause that forbids each one found.
"""

import logging
from collections.abc import Iterator
from math import gcd

from pysat.card import CardEnc, EncType
from pysat.formula import IDPool
from pysat.solvers import Solver

log = logging.getLogger(__name__)

SOLVER_NAME = "cadical195"


def square(n: int, col: int, row: int) -> int:
    """The variable of a square; auxiliary variables come after the n*n of them."""
    return col * n + row + 1


ROOK_STEPS = ((0, 1), (1, 0))  # columns and rows: exactly one queen each
DIAGONAL_STEPS = ((1, 1), (1, -1))  # at most one queen each


def other_steps(n: int) -> list[tuple[int, int]]:
    """Primitive steps (dcol, drow) of the other slopes whose lines can hold three squares."""
    reach = (n - 1) // 2  # two steps of this size must fit on the board
    return [
        (dcol, drow)
        for dcol in range(1, reach + 1)
        for drow in range(-reach, reach + 1)
        if gcd(dcol, drow) == 1 and abs(drow) != dcol and drow != 0
    ]


def lines(n: int, step: tuple[int, int]) -> Iterator[list[tuple[int, int]]]:
    """The squares ``(col, row)`` of every line with this step that meets the board."""
    dcol, drow = step
    for col in range(n):
        for row in range(n):
            if 0 <= col - dcol < n and 0 <= row - drow < n:
                continue  # not the first square of its line
            squares = []
            c, r = col, row
            while 0 <= c < n and 0 <= r < n:
                squares.append((c, r))
                c, r = c + dcol, r + drow
            yield squares


def clauses(n: int, no_three_in_line: bool) -> list[list[int]]:
    pool = IDPool(start_from=n * n + 1)
    result: list[list[int]] = []

    def at_most(squares: list[tuple[int, int]], bound: int) -> None:
        if len(squares) > bound:
            lits = [square(n, c, r) for c, r in squares]
            result.extend(CardEnc.atmost(lits, bound, vpool=pool, encoding=EncType.seqcounter).clauses)

    for step in ROOK_STEPS:
        for squares in lines(n, step):
            result.append([square(n, c, r) for c, r in squares])  # at least one
            at_most(squares, 1)
    for step in DIAGONAL_STEPS:
        for squares in lines(n, step):
            at_most(squares, 1)
    if no_three_in_line:
        for step in other_steps(n):
            for squares in lines(n, step):
                at_most(squares, 2)
    return result


def solutions(n: int, no_three_in_line: bool = False) -> Iterator[list[int]]:
    """Yield every solution, in the order the SAT solver finds them."""
    cnf = clauses(n, no_three_in_line)
    log.debug("n=%d: %d clauses, %d square variables", n, len(cnf), n * n)
    with Solver(name=SOLVER_NAME, bootstrap_with=cnf) as solver:
        while solver.solve():
            true = {lit for lit in solver.get_model() if lit > 0}
            pos = [next(r for r in range(n) if square(n, c, r) in true) for c in range(n)]
            yield pos
            solver.add_clause([-square(n, c, r) for c, r in enumerate(pos)])


def first_solution(n: int, no_three_in_line: bool = False) -> list[int] | None:
    return next(solutions(n, no_three_in_line), None)


def count(n: int, no_three_in_line: bool = False) -> int:
    return sum(1 for _ in solutions(n, no_three_in_line))
