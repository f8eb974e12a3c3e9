"""The SAT encoding of plain n-queens."""

from itertools import combinations, product
from math import gcd

import pytest

from nqueens import board, sat

A000170 = [1, 0, 0, 2, 10, 4, 40, 92, 352]


def test_sat_counts_match_oeis():
    assert [sat.count(n) for n in range(1, 10)] == A000170


@pytest.mark.parametrize("n", [1, 4, 8, 30])
def test_sat_first_solution_is_valid(n):
    assert board.is_solution(sat.first_solution(n))


@pytest.mark.parametrize("n", range(1, 9))
def test_every_square_lies_on_one_line_of_each_basic_step(n):
    for step in sat.ROOK_STEPS + sat.DIAGONAL_STEPS:
        squares = [square for line in sat.lines(n, step) for square in line]
        assert sorted(squares) == [(c, r) for c in range(n) for r in range(n)]


@pytest.mark.parametrize("n", range(1, 8))
def test_other_steps_are_the_slopes_of_every_three_squares_in_line(n):
    steps = set()
    for (c1, r1), (c2, r2), (c3, r3) in combinations(product(range(n), repeat=2), 3):
        if (c2 - c1) * (r3 - r1) == (c3 - c1) * (r2 - r1):  # collinear
            dc, dr = c3 - c1, r3 - r1
            if dc < 0 or (dc == 0 and dr < 0):
                dc, dr = -dc, -dr
            g = gcd(dc, dr)
            steps.add((dc // g, dr // g))
    basic = set(sat.ROOK_STEPS + sat.DIAGONAL_STEPS)
    assert set(sat.other_steps(n)) == steps - basic
