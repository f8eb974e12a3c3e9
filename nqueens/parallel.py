"""Counting on every core: the two-column subproblems go to a process pool."""

import logging
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor, as_completed

from nqueens import bitmask

log = logging.getLogger(__name__)

# Below this a pool costs more to start than the whole count takes on one core.
MIN_PARALLEL_N = 12


def default_workers() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def count(n: int, workers: int | None = None) -> int:
    """Number of solutions, spread over ``workers`` processes (default: all cores)."""
    bitmask.check_count_size(n)
    workers = workers or default_workers()
    if workers == 1 or n < MIN_PARALLEL_N:
        return bitmask.count(n)
    tasks = bitmask.subproblems(n)
    bitmask.free_rows_table(n)  # built once here; forked workers inherit it
    log.debug("n=%d: %d subproblems on %d processes", n, len(tasks), workers)
    with ProcessPoolExecutor(workers, mp_context=_fast_start_context()) as pool:
        futures = {pool.submit(bitmask.count_subproblem, n, r, u, d): w for w, r, u, d in tasks}
        total = 0
        for done, future in enumerate(as_completed(futures), 1):
            total += futures[future] * future.result()
            if done * 10 // len(tasks) > (done - 1) * 10 // len(tasks):
                log.debug("%d of %d subproblems done", done, len(tasks))
    return total


def _fast_start_context():
    # fork starts a worker in milliseconds, spawn re-imports Python first.
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)
