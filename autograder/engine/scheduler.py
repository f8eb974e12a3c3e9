"""Grade many hand-ins at once: one sandbox, `jobs` slots, results in completion order."""

import queue
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed

from ..grading import SubmissionResult, grade


def grade_all(assignment, expected, handins, sandbox, jobs, settings, cancel=None, started=None):
    """Yield (handin, SubmissionResult) as each finishes.

    Threads only wait on their worker processes; the work happens in the
    sandboxed processes, `jobs` at a time, each slot with its own user id.
    `cancel` (a threading.Event) stops starting new hand-ins; leaving the
    loop early (Ctrl-C) sets it and returns at once, without waiting for the
    hand-ins still running (closing the sandbox ends them).  `started(handin)`
    is called as each hand-in starts running.
    """
    cancel = cancel if cancel is not None else threading.Event()
    slots = queue.Queue()
    for slot in range(jobs):
        slots.put(slot)

    def one(handin):
        if handin.status is not None:  # nothing to run: the intake already knows why
            return SubmissionResult(handin.student, assignment.id, handin.source, 0.0, assignment.max_score,
                                    handin.status, handin.message)
        slot = slots.get()
        try:
            if cancel.is_set():
                return None
            if started is not None:
                started(handin)
            return grade(assignment, expected, handin.student, handin.path, sandbox, slot, settings)
        finally:
            slots.put(slot)

    pool = ThreadPoolExecutor(max_workers=jobs)
    try:
        futures = {pool.submit(one, handin): handin for handin in handins}
        for future in as_completed(futures):
            result = future.result()
            if result is not None and not cancel.is_set():
                yield futures[future], result
    finally:
        cancel.set()
        pool.shutdown(wait=False, cancel_futures=True)
