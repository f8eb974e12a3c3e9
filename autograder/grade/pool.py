"""Grade many hand-ins at once: one sandbox, `jobs` slots, results in completion order."""

import logging
import queue
import threading
import traceback
from concurrent.futures import ThreadPoolExecutor, as_completed

from ..engine import defer_to_workers
from .handin import SubmissionResult, grade

log = logging.getLogger(__name__)


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
            return _graded_or_again(assignment, expected, handin, sandbox, slot, settings, cancel)
        except Exception as error:  # noqa: BLE001 - one hand-in's failure is its own row, never the run's end
            if cancel.is_set():     # Ctrl-C closed the sandbox under it: not this hand-in's failure
                return None
            return grader_error(assignment, handin, error)
        finally:
            slots.put(slot)

    # Its threads only wait on workers and do a little work per answer: they never preempt a worker on
    # waking (engine/scheduling.py), which cut the grader's overhead per hand-in by 1.3 to 1.7 times with
    # every core busy (docs/engines.md).
    pool = ThreadPoolExecutor(max_workers=jobs, initializer=defer_to_workers)
    try:
        futures = {pool.submit(one, handin): handin for handin in handins}
        for future in as_completed(futures):
            try:
                result = future.result()
            except Exception as error:  # noqa: BLE001 - as above, for what fails outside grade()
                result = None if cancel.is_set() else grader_error(assignment, futures[future], error)
            if result is not None and not cancel.is_set():
                yield futures[future], result
    finally:
        cancel.set()
        pool.shutdown(wait=False, cancel_futures=True)


def _graded_or_again(assignment, expected, handin, sandbox, slot, settings, cancel):
    """grade(), and where the grader itself failed (grade() never raises for anything a hand-in does: a slot left
    unclean, a worker that could not be made or given the hand-in's files), once more in a fresh slot, with user ids
    and folders of its own: the hand-in is never charged for what the grader could not do, and a failure that
    happens again is its `grader-error` row."""
    def attempt():
        return grade(assignment, expected, handin.student, handin.path, sandbox, slot, settings,
                     cells=handin.cells, files=handin.companion_files())

    try:
        return attempt()
    except Exception as error:  # noqa: BLE001 - see grade_all
        if cancel.is_set():
            raise
        log.warning("grading %s failed (%s: %s); grading it again in a fresh slot", handin.student,
                    type(error).__name__, str(error)[:300])
        sandbox.renew(slot)
        return attempt()


def grader_error(assignment, handin, error):
    """The recorded result of a hand-in the grader itself failed on: a row that says so."""
    # One line where people look; the traceback for whoever debugs the grader (--verbose shows it).
    log.warning("grading %s failed: %s: %s", handin.student, type(error).__name__, str(error)[:300])
    log.debug("".join(traceback.format_exception(type(error), error, error.__traceback__)))
    message = f"the grader failed on this hand-in ({type(error).__name__}: {str(error)[:300]}); grade it again"
    return SubmissionResult(handin.student, assignment.id, handin.source, 0.0, assignment.max_score,
                            "grader-error", message)
