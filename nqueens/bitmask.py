"""Bitmask n-queens: a column's free rows are the zero bits of three masks.

Columns are filled left to right.  ``rows`` marks the rows already taken,
``up`` and ``down`` the squares of the next column that a placed queen
attacks along a diagonal; moving one column right shifts them by one row.
"""

import functools
from collections.abc import Iterator

# Counting beyond this takes hours in pure Python, and the table of free rows
# (one tuple per row mask) would grow past tens of megabytes.
MAX_COUNT_N = 18


def solutions(n: int) -> Iterator[list[int]]:
    """Yield every solution (fresh lists), in lexicographic order of ``pos``."""
    full = (1 << n) - 1
    pos: list[int] = []

    def place(rows: int, up: int, down: int) -> Iterator[list[int]]:
        if rows == full:
            yield pos.copy()
            return
        free = full & ~(rows | up | down)
        while free:
            bit = free & -free  # lowest free row
            free ^= bit
            pos.append(bit.bit_length() - 1)
            yield from place(rows | bit, (up | bit) >> 1, ((down | bit) << 1) & full)
            pos.pop()

    return place(0, 0, 0)


def first_solution(n: int) -> list[int] | None:
    return next(solutions(n), None)


@functools.cache
def free_rows_table(n: int) -> list[tuple[int, ...]]:
    """``table[mask]`` lists the set bits of ``mask`` (as powers of two).

    Iterating over a tuple runs in C; stepping with ``bit = free & -free``
    in Python costs several bytecodes per square.
    """
    table: list[tuple[int, ...]] = [()] * (1 << n)
    for mask in range(1, 1 << n):
        low = mask & -mask
        table[mask] = (low,) + table[mask ^ low]
    return table


def _counter_source(levels: int) -> str:
    """Source of ``count(rows, up, down, table, full)`` for ``levels`` >= 2 columns.

    One nested for-loop per column instead of recursion: a Python call costs
    more than the work done at most nodes.  The last column is only tested.
    """
    lines = ["def count(r, u, d, table, full):", "    total = 0"]
    indent, r, u, d = "    ", "r", "u", "d"
    for k in range(levels - 2):
        lines += [
            f"{indent}for b in table[full & ~({r} | {u} | {d})]:",
            f"{indent}    r{k}, u{k}, d{k} = {r} | b, ({u} | b) >> 1, ({d} | b) << 1",
        ]
        indent += "    "
        r, u, d = f"r{k}", f"u{k}", f"d{k}"
    lines += [
        f"{indent}for b in table[full & ~({r} | {u} | {d})]:",
        f"{indent}    if full & ~({r} | b | ({u} | b) >> 1 | ({d} | b) << 1):",
        f"{indent}        total += 1",
        "    return total",
    ]
    return "\n".join(lines)


@functools.cache
def _completion_counter(levels: int):
    namespace: dict = {}
    exec(_counter_source(levels), namespace)
    return namespace["count"]


def subproblems(n: int) -> list[tuple[int, int, int, int]]:
    """``(weight, rows, up, down)`` after the first two columns, for n >= 4.

    A mirror image (row r -> n-1-r) of a solution is another solution, so
    only first queens in the top half are tried and counted twice.  For odd
    n a first queen in the middle row is its own mirror image; there the
    second queen is kept in the top half instead.
    """
    full = (1 << n) - 1
    half = n // 2
    tasks = []
    for row in range(half):
        tasks += _second_column(n, 1 << row, full)
    if n % 2:
        tasks += _second_column(n, 1 << half, (1 << half) - 1)
    return tasks


def _second_column(n: int, first: int, allowed: int) -> list[tuple[int, int, int, int]]:
    full = (1 << n) - 1
    free = allowed & ~(first | first >> 1 | first << 1)
    tasks = []
    while free:
        bit = free & -free
        free ^= bit
        tasks.append((2, first | bit, (first >> 1 | bit) >> 1, ((first << 1 | bit) << 1) & full))
    return tasks


def count_subproblem(n: int, rows: int, up: int, down: int) -> int:
    """Completions of a board whose first two columns are filled."""
    return _completion_counter(n - 2)(rows, up, down, free_rows_table(n), (1 << n) - 1)


def count(n: int) -> int:
    """Number of solutions, on one core."""
    check_count_size(n)
    if n < 4:  # too small for the two-column split
        return sum(1 for _ in solutions(n))
    return sum(w * count_subproblem(n, r, u, d) for w, r, u, d in subproblems(n))


def check_count_size(n: int) -> None:
    if not 1 <= n <= MAX_COUNT_N:
        raise ValueError(f"can count boards from 1 to {MAX_COUNT_N} wide, not {n}")
