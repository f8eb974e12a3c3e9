"""How fast this machine runs Python: the measure every time limit is scaled by.

Standard library only, and kept apart from limits.py because its text is also
pasted into the check module other engines' exports run (export/checks.py):
their checks scale a case's limit on the grading machine by the same measure.
"""
import time as _time

_CALIBRATION_LOOPS = 200_000


def calibrate(runs=5):
    """CPU seconds this machine takes for a fixed pure-Python workload (the fastest of `runs`:
    the least disturbed by other work)."""
    times = []
    for _ in range(runs):
        started = _time.process_time()
        total = 0
        for i in range(_CALIBRATION_LOOPS):
            total += i * i % 7
        times.append(_time.process_time() - started)
    return min(times)
