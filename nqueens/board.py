"""Checking and printing boards (``pos[c]`` is the row of the queen in column c)."""

from collections.abc import Sequence
from itertools import combinations

QUEEN = "♛"
EMPTY = "·"


def render(pos: Sequence[int]) -> str:
    """The board as text: row 0 first, squares separated by single spaces."""
    n = len(pos)
    return "\n".join(
        " ".join(QUEEN if pos[col] == row else EMPTY for col in range(n))
        for row in range(n)
    )


def is_solution(pos: Sequence[int]) -> bool:
    """True if the queens fill every row and column once and share no diagonal."""
    n = len(pos)
    return (
        sorted(pos) == list(range(n))
        and len({row + col for col, row in enumerate(pos)}) == n
        and len({row - col for col, row in enumerate(pos)}) == n
    )


def has_three_in_line(pos: Sequence[int]) -> bool:
    """True if some three queens lie on one straight line, of any slope."""
    for (x1, y1), (x2, y2), (x3, y3) in combinations(enumerate(pos), 3):
        # Collinear exactly when the cross product of the two edge vectors is 0.
        if (x2 - x1) * (y3 - y1) == (x3 - x1) * (y2 - y1):
            return True
    return False
