"""Plain backtracking over columns: easy to read, the reference for the others."""

from collections.abc import Iterator


def solutions(n: int) -> Iterator[list[int]]:
    """Yield every solution in lexicographic order of ``pos``.

    Each yielded list is a fresh copy: a generator that yields its one working
    list (as the conjoin-based ``Queens`` in CPython's test suite does) makes
    ``list(solutions(n))`` hold n copies of whatever that list last became.
    """
    pos: list[int] = []
    used_rows = [False] * n
    used_sums = [False] * (2 * n)  # row + col is constant along one diagonal
    used_diffs = [False] * (2 * n)  # row - col (+ n) along the other

    def place(col: int) -> Iterator[list[int]]:
        if col == n:
            yield pos.copy()
            return
        for row in range(n):
            s, d = row + col, row - col + n
            if used_rows[row] or used_sums[s] or used_diffs[d]:
                continue
            used_rows[row] = used_sums[s] = used_diffs[d] = True
            pos.append(row)
            yield from place(col + 1)
            pos.pop()
            used_rows[row] = used_sums[s] = used_diffs[d] = False

    return place(0)


def first_solution(n: int) -> list[int] | None:
    return next(solutions(n), None)
