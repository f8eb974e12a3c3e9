"""Grade many hand-ins at once: one sandbox, `jobs` slots, results in completion order."""

import queue
from concurrent.futures import ThreadPoolExecutor, as_completed

from ..grading import SubmissionResult, grade


def grade_all(assignment, expected, handins, sandbox, jobs, settings):
    """Yield (handin, SubmissionResult) as each finishes.

    Threads only wait on their worker processes; the work happens in the
    sandboxed processes, `jobs` at a time, each slot with its own user id.
    """
    slots = queue.Queue()
    for slot in range(jobs):
        slots.put(slot)

    def one(handin):
        if handin.status is not None:  # nothing to run: the intake already knows why
            return SubmissionResult(handin.student, assignment.id, handin.source, 0.0, assignment.max_score,
                                    handin.status, handin.message)
        slot = slots.get()
        try:
            return grade(assignment, expected, handin.student, handin.path, sandbox, slot, settings)
        finally:
            slots.put(slot)

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {pool.submit(one, handin): handin for handin in handins}
        for future in as_completed(futures):
            yield futures[future], future.result()
