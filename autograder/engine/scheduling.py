"""How the grader's own threads are scheduled beside the workers they wait on.

A grading thread sleeps until its worker answers, then does a few tens of
microseconds of work (read the answer, check it, send the next request).
Woken as an ordinary thread while every core runs a worker, it preempts one at
once, often the worker that has just answered, which then waits for it and for
whatever else is queued on its core: with 2 jobs on 2 cores, that wait was most
of a worker's time outside the student's code (a median 8 to 9.6 ms of a
hand-in, against 2.7 ms with this module).  As SCHED_BATCH (sched(7)),
the thread never preempts on waking: it runs on a core that is free, or when
the running worker's turn ends.  The worker goes on with the requests already
sent ahead, so nothing waits for the grader but the grader itself.

Where a time is judged (a speed case), that lag would count against the
student: `promptly()` makes the thread ordinary again while it is measured.
Neither needs a privilege: any thread may choose SCHED_BATCH or SCHED_OTHER for
itself at its own nice level.  Where the kernel refuses (another OS, a seccomp
policy), threads stay as they were, and only speed is lost.
"""

import contextlib
import os

_BATCH = getattr(os, "SCHED_BATCH", None)


def defer_to_workers():
    """Make the calling thread SCHED_BATCH; True if it now is."""
    return _set(_BATCH)


@contextlib.contextmanager
def promptly():
    """The calling thread wakes as an ordinary one inside the block (then as it was before)."""
    before = _policy()
    changed = before == _BATCH and _BATCH is not None and _set(os.SCHED_OTHER)
    try:
        yield
    finally:
        if changed:
            _set(before)


def _policy():
    try:
        return os.sched_getscheduler(0)
    except (AttributeError, OSError):
        return None


def _set(policy):
    if policy is None:
        return False
    try:
        os.sched_setscheduler(0, policy, os.sched_param(0))  # 0: the calling thread (Linux)
        return True
    except (AttributeError, OSError):
        return False
