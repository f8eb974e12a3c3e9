"""The bitmask count compiled by numba (optional: importing this needs numba).

The same search as nqueens.bitmask with an explicit stack in place of
recursion, run over the same mirror-halved subproblems, one per thread.
"""

import numba
import numpy as np

from nqueens import bitmask


@numba.njit(cache=True)
def _count_subproblem(n, rows, up, down):
    full = (1 << n) - 1
    depth = 0
    stack_rows = np.empty(n, np.int64)
    stack_up = np.empty(n, np.int64)
    stack_down = np.empty(n, np.int64)
    stack_free = np.empty(n, np.int64)
    stack_rows[0], stack_up[0], stack_down[0] = rows, up, down
    stack_free[0] = full & ~(rows | up | down)
    total = 0
    while depth >= 0:
        free = stack_free[depth]
        if free == 0:
            depth -= 1
            continue
        bit = free & -free
        stack_free[depth] = free ^ bit
        placed = stack_rows[depth] | bit
        if placed == full:
            total += 1
            continue
        up_next = (stack_up[depth] | bit) >> 1
        down_next = ((stack_down[depth] | bit) << 1) & full
        depth += 1
        stack_rows[depth], stack_up[depth], stack_down[depth] = placed, up_next, down_next
        stack_free[depth] = full & ~(placed | up_next | down_next)
    return total


@numba.njit(parallel=True, cache=True)
def _count_subproblems(n, tasks):
    total = 0
    for i in numba.prange(tasks.shape[0]):
        total += tasks[i, 0] * _count_subproblem(n, tasks[i, 1], tasks[i, 2], tasks[i, 3])
    return total


def count(n: int) -> int:
    """Number of solutions, on every core; the first call compiles (a few seconds)."""
    bitmask.check_count_size(n)
    if n < 4:  # too small for the two-column split
        return bitmask.count(n)
    tasks = np.array(bitmask.subproblems(n), dtype=np.int64)
    with numba.parallel_chunksize(1):  # subproblems differ in size: hand them out one by one
        return int(_count_subproblems(n, tasks))
