"""Queens with no three on one straight line, of any slope.

Columns are filled left to right.  Each future column keeps a mask of the
rows it may no longer use: the rows and diagonals a placed queen attacks,
and the squares on the line through any two placed queens.  A future column
with no row left prunes the branch at once.
"""

from collections.abc import Iterator

# Number of solutions for n = 1, 2, ...: counted by this module and, on its
# own, by the SAT encoding in nqueens.sat; both agree up to n = 14 (n = 14
# takes each about 10 s, so the tests check the quick ones).
KNOWN_COUNTS = dict(enumerate([1, 0, 0, 2, 0, 0, 0, 8, 32, 40, 96, 410, 1392, 4416], start=1))

# One solution comes quickly for larger boards, but a count must visit every
# branch: n = 14 takes about 10 s, and each step up about 4 times that.
MAX_COUNT_N = 14


def solutions(n: int) -> Iterator[list[int]]:
    """Yield every solution (fresh lists), in lexicographic order of ``pos``."""
    full = (1 << n) - 1
    pos: list[int] = []

    def place(blocked: list[int]) -> Iterator[list[int]]:
        col = len(pos)
        if col == n:
            yield pos.copy()
            return
        free = full & ~blocked[0]
        while free:
            bit = free & -free
            free ^= bit
            row = bit.bit_length() - 1
            later = _block_from(pos, col, row, blocked[1:], n)
            if later is not None:
                pos.append(row)
                yield from place(later)
                pos.pop()

    return place([0] * n)


def _block_from(pos: list[int], col: int, row: int, blocked: list[int], n: int) -> list[int] | None:
    """``blocked`` for the columns after ``col`` once a queen stands at (col, row).

    None if some later column is left with no row at all.
    """
    full = (1 << n) - 1
    later = []
    for step, mask in enumerate(blocked, 1):
        mask |= (1 << row) | (1 << row >> step) | (1 << row + step)  # row, diagonals
        for other_col, other_row in enumerate(pos):
            # The line through (other_col, other_row) and (col, row) meets
            # column col + step at a whole row only when the division is exact.
            rise, run = row - other_row, col - other_col
            if rise * step % run == 0:
                target = row + rise * step // run
                if 0 <= target < n:
                    mask |= 1 << target
        if mask & full == full:
            return None
        later.append(mask)
    return later


def first_solution(n: int) -> list[int] | None:
    return next(solutions(n), None)


def count(n: int) -> int:
    return sum(1 for _ in solutions(n))
